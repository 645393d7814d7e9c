"""Error details a new user meets (issue 23, item 13): a folder without records names itself and the folder
below that holds them; a full disk names the file; a read-only report folder does not talk about finished
rows; the torn-line warning is one line that echoes no source; `executor run` says the same about the same
bytes from a file or stdin. The CLIs run as a user runs them (subprocesses); the full and read-only disks
are real tmpfs mounts (skipped where this process may not mount)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_errors import assert_short_error, harness, seeded_root, snapshot
from tests.conftest import ROOT

EXECUTOR = str(ROOT / ".venv" / "bin" / "executor")


@contextlib.contextmanager
def tmpfs(path: Path, *options: str):
    """A real tmpfs mounted at `path` (options e.g. "size=64k", "ro"), unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(("size=64k", *options)), "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def test_a_folder_without_records_names_itself_and_the_results_folder_below(tmp_path):
    outer = tmp_path / "rehearsal"  # `make rehearse` writes its records one level down
    seeded_root(outer)  # -> outer/results/library/gold-lib/seed*.jsonl
    for command in ("tables", "report", "stats", "figures"):
        proc = harness(command, "--results", str(outer), "--out", str(tmp_path / f"out-{command}"))
        err = assert_short_error(
            proc, f"no result records found under {outer}", f"did you mean --results {outer / 'results'}?"
        )
        assert "move the named file" not in err, (command, err)


def test_a_full_disk_names_the_results_file_and_keeps_finished_rows(tmp_path):
    with tmpfs(tmp_path / "full") as out:
        proc = harness(
            "run", "--arm", "gold-lib", "--dataset", "bundled-test", "--seeds", "42", "--out", str(out), "--no-progress"
        )
        results = out / "library" / "gold-lib" / "seed42.jsonl"
        assert_short_error(proc, f"cannot write {results} (No space left on device)", "finished rows are kept")
        lines = results.read_bytes().split(b"\n")
        kept = [json.loads(x) for x in lines[:-1]]  # every complete line is a whole record
        assert 0 < len(kept) < 110


def test_a_read_only_report_folder_does_not_promise_finished_rows(tmp_path):
    root, before = seeded_root(tmp_path)
    with tmpfs(tmp_path / "ro", "ro") as ro:
        proc = harness("report", "--results", str(root), "--out", str(ro / "report"))
        err = assert_short_error(proc, "(Read-only file system)", "nothing under --results was changed")
        assert "finished rows are kept" not in err
    assert snapshot(root) == before


def test_the_torn_line_warning_is_one_line_without_source(tmp_path):
    root, _ = seeded_root(tmp_path)
    path = next(root.rglob("seed*.jsonl"))
    with open(path, "ab") as fh:
        fh.write(b'{"key": "torn-by-a-crash", "case_id": ')
    proc = harness("tables", "--results", str(root), "--out", str(tmp_path / "tables"))
    assert proc.returncode == 0, proc.stderr
    warned = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert warned == [f"warning: {path}: ignoring an incomplete last line"], proc.stderr


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"answer = 1\n\x00\xff\xfe", "is not UTF-8 text ('utf-8' codec can't decode byte 0xff in position 12"),
        (b"answer = 1\n\x00", "program contains a NUL character"),
    ],
)
def test_executor_run_says_the_same_about_the_same_bytes_from_a_file_or_stdin(tmp_path, content, expected):
    prog = tmp_path / "prog.bin"
    prog.write_bytes(content)
    from_file = subprocess.run([EXECUTOR, "run", "--backend", "process", str(prog)], capture_output=True, timeout=120)
    from_stdin = subprocess.run(
        [EXECUTOR, "run", "--backend", "process", "-"], input=content, capture_output=True, timeout=120
    )
    said = [(p.stdout + p.stderr).decode() for p in (from_file, from_stdin)]
    assert all(expected in s for s in said), said
    assert from_file.returncode == from_stdin.returncode
    assert said[0].replace(str(prog), "standard input") == said[1] or "NUL" in expected
