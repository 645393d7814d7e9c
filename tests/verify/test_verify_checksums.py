"""`harness verify` on a real Gold-Solve result set (bundled rows, no model): checksums name missing,
changed and unlisted files; rescoring names the file and line of a stored score that no longer
reproduces; tables re-derive byte for byte. Every failure exits non-zero."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from harness.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def result_root(tmp_path):
    root = tmp_path / "results"
    res = run(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42,43",
        "--out",
        root / "gold",
        "--no-progress",
    )
    assert res.exit_code == 0, res.output
    assert run("tables", "--results", root / "gold", "--out", root / "gold" / "tables").exit_code == 0
    sums = tmp_path / "results.sha256"
    assert run("checksums", "update", "--results", root, "--sums", sums).exit_code == 0
    return root, sums


def test_verify_passes_on_a_fresh_result_set(result_root):
    root, sums = result_root
    ok = run("verify", "--results", root, "--sums", sums)
    assert ok.exit_code == 0, ok.output
    assert "220 records" in ok.output and "re-derive byte for byte" in ok.output and "verify OK" in ok.output


def test_one_byte_change_missing_and_unlisted_files_are_named(result_root):
    root, sums = result_root
    target = root / "gold" / "library" / "gold-lib" / "seed42.jsonl"
    data = bytearray(target.read_bytes())
    data[-3] ^= 0x01
    target.write_bytes(bytes(data))
    bad = run("verify", "--results", root, "--sums", sums, "--skip-tables")
    assert bad.exit_code == 1
    assert "CHANGED  results/gold/library/gold-lib/seed42.jsonl" in bad.output
    assert (
        "seed42.jsonl: ignoring an incomplete last line (a committed file must end with a complete record)"
        in bad.output
    )

    (root / "gold" / "library" / "gold-lib" / "seed43.jsonl").unlink()
    (root / "gold" / "extra.csv").write_text("x\n")
    worse = run("verify", "--results", root, "--sums", sums, "--skip-tables")
    assert worse.exit_code == 1
    assert "MISSING  results/gold/library/gold-lib/seed43.jsonl" in worse.output
    assert "UNLISTED results/gold/extra.csv" in worse.output


def test_a_stored_score_that_does_not_reproduce_is_named_by_file_and_line(result_root):
    root, sums = result_root
    target = root / "gold" / "library" / "gold-lib" / "seed42.jsonl"
    lines = target.read_text().splitlines()
    idx = next(i for i, line in enumerate(lines) if json.loads(line)["correct"])
    rec = json.loads(lines[idx])
    rec["correct"] = False
    lines[idx] = json.dumps(rec, sort_keys=True)
    target.write_text("\n".join(lines) + "\n")
    run("checksums", "update", "--results", root, "--sums", sums)  # checksums alone would now pass
    bad = run("verify", "--results", root, "--sums", sums, "--skip-tables")
    assert bad.exit_code == 1
    assert f"RESCORE  {target}:{idx + 1}: gold-lib seed 42 case {rec['case_id']}" in bad.output


def test_a_changed_committed_table_is_named(result_root):
    root, sums = result_root
    table = sorted((root / "gold" / "tables").glob("*.csv"))[0]
    table.write_text(table.read_text() + "tampered\n")
    run("checksums", "update", "--results", root, "--sums", sums)
    bad = run("verify", "--results", root, "--sums", sums)
    assert bad.exit_code == 1
    assert f"TABLE    {table}: differs from the recomputed table" in bad.output


def test_verify_without_sums_is_a_clear_error(result_root, tmp_path):
    root, _ = result_root
    res = run("verify", "--results", root, "--sums", tmp_path / "nope.sha256", "--skip-tables")
    assert res.exit_code == 1
    assert "sums file not found" in res.output


def test_the_committed_result_sets_verify_and_a_one_byte_change_in_a_copy_is_named(tmp_path):
    """The real committed results (CPU demo with the real model, Gold-Solve) pass `harness verify`;
    a copy with one byte changed fails naming that file."""
    from harness.core.paths import REPO_ROOT as ROOT
    from harness.core.sums import COMMITTED_SUMS

    committed = ROOT / "results"
    assert (committed / "cpu-demo").is_dir() and (committed / "gold-solve").is_dir()
    ok = run("verify")
    assert ok.exit_code == 0, ok.output
    assert "cpu-demo/tables re-derive byte for byte" in ok.output

    copy = tmp_path / "results"
    shutil.copytree(committed, copy, ignore=shutil.ignore_patterns(".*"))
    sums = tmp_path / "results.sha256"
    sums.write_text(COMMITTED_SUMS.read_text())  # same relative paths: results/...
    target = copy / "cpu-demo" / "qwen2.5-coder-1.5b-instruct" / "program-solve" / "seed42.jsonl"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x20
    target.write_bytes(bytes(data))
    bad = run("verify", "--results", copy, "--sums", sums, "--skip-tables")
    assert bad.exit_code == 1
    assert "CHANGED  results/cpu-demo/qwen2.5-coder-1.5b-instruct/program-solve/seed42.jsonl" in bad.output


def test_a_users_roots_beside_the_committed_sets_verify_against_their_own_checksums(tmp_path):
    """`make verify` after a normal run: `make reproduce`'s default OUT=results/reproduce (which writes its own
    SHA256SUMS) and the README's `harness run --out results/my-run` (no checksums yet) sit beside the committed
    sets; the committed sets are checked against the committed sums list, the user's root against its own
    SHA256SUMS, and a root without checksums is said, not failed. Before, every user file was UNLISTED."""
    from harness.core.paths import REPO_ROOT as ROOT
    from harness.verify.verification import verify

    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "gold-solve", results / "gold-solve", ignore=shutil.ignore_patterns(".*"))
    for name in ("reproduce", "my-run"):
        res = run(
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            "bundled-test",
            "--seeds",
            "42",
            "--limit",
            "5",
            "--out",
            results / name,
            "--no-progress",
        )
        assert res.exit_code == 0, res.output
        assert (results / name / "SHA256SUMS").is_file()  # `harness run` leaves its root's sums
    shutil.copytree(results / "my-run", results / "no-sums", ignore=shutil.ignore_patterns("SHA256SUMS"))
    (results / "reproduce" / "stats.json").write_text("{}\n")  # a later output...
    assert run("checksums", "update", "--results", results / "reproduce").exit_code == 0  # ... recorded on demand

    ok = run("verify", "--results", results, "--skip-tables")
    assert ok.exit_code == 0, ok.output
    assert f"checksums: 28 files of {results / 'gold-solve'} match checksums/results.sha256" in ok.output
    assert f"files match {results / 'reproduce' / 'SHA256SUMS'}" in ok.output
    assert f"files match {results / 'my-run' / 'SHA256SUMS'}" in ok.output
    assert f"checksums: none for {results / 'no-sums'} (record them with `harness checksums update" in ok.output

    # a copy of the user's root anywhere verifies against its own checksums, and a changed byte is named
    copy = tmp_path / "elsewhere" / "copied-run"
    shutil.copytree(results / "reproduce", copy)
    assert verify(copy, tables=False).passed
    target = copy / "library" / "gold-lib" / "seed42.jsonl"
    target.write_text(target.read_text().replace('"case_id"', '"case_id" ', 1))
    (copy / "stray.txt").write_text("x\n")
    report = verify(copy, tables=False)
    assert f"CHANGED  {target}" in report.problems and f"UNLISTED {copy / 'stray.txt'}" in report.problems


def test_a_committed_set_that_is_gone_is_named(tmp_path):
    """Verifying the repository's results/ still names every file of a committed set that is missing."""
    from harness.verify import verification

    sums = tmp_path / "results.sha256"
    sums.write_text(f"{'0' * 64}  results/no-such-committed-set/library/gold-lib/seed42.jsonl\n")
    notes, problems = verification.check_checksums(verification.REPO_RESULTS, committed_sums=sums)
    assert problems == ["MISSING  results/no-such-committed-set/library/gold-lib/seed42.jsonl"]
