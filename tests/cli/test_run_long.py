"""A long run: a bound on seeds, a closing line on SIGTERM naming the records kept and the resume command,
progress lines in a log file, and table s14's seeds from the stored records, not from what a manifest asked."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.run.manifest import read_manifests, run_manifests, write_manifest

HARNESS = [str(Path(sys.executable).parent / "harness")]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_a_million_seeds_is_refused_with_one_line(tmp_path):
    res = run("run", "--arm", "gold-lib", "--dataset", "bundled-test", "--seeds", "42-1000000", "--out", tmp_path / "r")
    assert res.exit_code == 2
    assert "'42-1000000' is 999,959 seeds; at most 100 per run" in res.output
    assert not (tmp_path / "r").exists()
    many = run(
        "run", "--arm", "gold-lib", "--dataset", "bundled-test", "--seeds", "1-60,100-160", "--out", tmp_path / "r"
    )
    assert many.exit_code == 2 and "more than 100 seeds" in many.output


def test_sigterm_says_what_was_kept_and_how_to_resume(tmp_path):
    out = tmp_path / "long"
    args = ["run", "--arm", "gold-lib", "--dataset", "bundled-test", "--seeds", "42-141", "--out", str(out)]
    proc = subprocess.Popen(HARNESS + args, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(p.stat().st_size for p in out.glob("library/gold-lib/seed*.jsonl")):
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout[-2000:] + stderr[-2000:]
    kept = sum(len(p.read_text().splitlines()) for p in out.glob("library/gold-lib/seed*.jsonl"))
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"interrupted (signal {signal.SIGTERM}): ")
    assert " record(s) kept in " in last and f"under {out}; resume with: harness " in last
    assert " ".join(args) in last
    n = int(last.split(": ", 1)[1].split(" ", 1)[0].replace(",", ""))
    assert 0 < n == kept <= 11000
    # the root's sums were written on the way out, over what was kept
    from harness.verify.verification import check_checksums

    notes, problems = check_checksums(out)
    assert problems == [] and notes == [
        f"checksums: {len(list(out.rglob('*.json*')))} files match {out / 'SHA256SUMS'}"
    ]


def test_progress_lines_reach_a_log_file(tmp_path):
    log = tmp_path / "run.log"
    with log.open("w") as fh:
        subprocess.run(
            HARNESS
            + [
                "run",
                "--arm",
                "gold-lib",
                "--dataset",
                "bundled-test",
                "--seeds",
                "42,43",
                "--out",
                str(tmp_path / "r"),
            ],
            cwd=REPO_ROOT,
            stdout=fh,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=300,
        )
    lines = [ln for ln in log.read_text().splitlines() if ln.startswith("progress: ")]
    assert lines and lines[-1].startswith("progress: 220/220 records (100.0%)") and "records/s" in lines[-1]


def test_s14_seeds_come_from_the_records_not_the_manifest(tmp_path):
    root = tmp_path / "r"
    assert (
        run(
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            "bundled-test",
            "--seeds",
            "42,43",
            "--limit",
            "4",
            "--out",
            root,
            "--no-progress",
        ).exit_code
        == 0
    )
    (man,) = run_manifests(root)
    write_manifest(root, replace(man, seeds=tuple(range(42, 1042))))  # what the run asked for, before it stopped
    res = run("tables", "--results", root, "--out", tmp_path / "tables")
    assert res.exit_code == 0, res.output
    s14 = (tmp_path / "tables" / "s14.md").read_text()
    assert "| Seeds | 42, 43 |" in s14


def test_sigterm_to_make_reproduce_names_the_records_kept_and_the_resume_command(tmp_path):
    """The reproduce pipeline against the rehearsal server (a scripted fake): SIGTERM stops the server, the
    reproduction manifest says why, and the closing line names the records kept and the command that resumes."""
    out = tmp_path / "rp"
    args = [
        "reproduce",
        "--launcher",
        "rehearsal",
        "--models",
        "rehearsal-alpha",
        "--arms",
        "open-book",
        "--seeds",
        "42-46",
        "--dataset",
        "bundled-test",
        "--out",
        str(out),
        "--executor-backend",
        "process",
        "--draws",
        "100",
    ]
    proc = subprocess.Popen(HARNESS + args, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while (
        time.monotonic() < deadline
        and proc.poll() is None
        and not any(p.stat().st_size for p in out.glob("rehearsal-alpha/open-book/seed*.jsonl"))
    ):
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130, stdout[-2000:] + stderr[-2000:]
    last = stderr.strip().splitlines()[-1]
    kept = sum(len(p.read_text().splitlines()) for p in out.glob("rehearsal-alpha/open-book/seed*.jsonl"))
    assert last.startswith(f"interrupted: the server was stopped; {kept:,} record(s) kept in ")
    assert f"resume with: harness {' '.join(args)}" in last
    (found,) = read_manifests(out, kind="reproduce")
    assert found.manifest.status == "interrupted"
    assert found.manifest.error == f"KeyboardInterrupt: signal {signal.SIGTERM:d}"
