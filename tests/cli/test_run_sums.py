"""Every command that writes into a results root leaves its SHA256SUMS current, through harness.core.sums: `harness run`
when it ends, however it ends (here: a model server that stops answering), the analysis commands writing inside the
root, and no own sums for the repository's results/ and its committed sets (the committed list covers them). So
`harness compare` on a plain run's output has its integrity record without `harness checksums update`."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.analysis.comparison.integrity import check_integrity
from harness.cli import main
from harness.core import sums
from harness.core.sums import SUMS_FILE, SumsOnExit, in_committed_list, read_sums
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import chat_completion
from harness.verify.verification import verify


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _listed_as_on_disk(root: Path) -> dict[str, str]:
    """The root's SHA256SUMS, each entry checked against the file it names."""
    entries = read_sums(root / SUMS_FILE)
    for rel, digest in entries.items():
        assert hashlib.sha256((root / rel).read_bytes()).hexdigest() == digest, rel
    return entries


def test_a_plain_run_leaves_its_sums_and_compare_reads_them(tmp_path):
    out = tmp_path / "plain"
    res = run(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42",
        "--limit",
        "6",
        "--out",
        out,
        "--no-progress",
    )
    assert res.exit_code == 0, res.output
    listed = _listed_as_on_disk(out)
    assert "library/gold-lib/seed42.jsonl" in listed and any(p.startswith("manifest-") for p in listed)
    integrity = check_integrity(out)
    assert integrity.sums is not None and integrity.checked > 0
    assert integrity.summary().startswith("integrity: ") and "not checked" not in integrity.summary()
    # an analysis command writing inside the root adds its outputs to the sums: the root still verifies
    res = run("tables", "--results", out, "--out", out / "tables")
    assert res.exit_code == 0, res.output
    assert any(p.startswith("tables/") for p in _listed_as_on_disk(out))
    report = verify(out)
    assert report.passed, report.problems


def test_a_run_stopped_by_a_failing_server_still_leaves_sums_over_what_it_kept(tmp_path):
    """The server answers two requests, then only 503s: the run stops with the finished rows kept, and its sums
    list them (the finally of SumsOnExit)."""
    out = tmp_path / "stopped"
    script = [(200, chat_completion("Final answer: 4", model="m"), 0)] * 2 + [(503, {"error": "down"}, 0)] * 50
    with ScriptedServer(script, model="m") as srv:
        res = run(
            "run",
            "--arm",
            "note-only",
            "--dataset",
            "bundled-test",
            "--seeds",
            "42",
            "--limit",
            "6",
            "--base-url",
            srv.url,
            "--model",
            "m",
            "--out",
            out,
            "--no-progress",
            "--timeout",
            "5",
        )
    assert res.exit_code == 1 and "model request failed, run stopped" in res.output, res.output
    listed = _listed_as_on_disk(out)
    kept = out / "m" / "note-only" / "seed42.jsonl"
    assert kept.is_file() and len(kept.read_text().splitlines()) == 2
    assert "m/note-only/seed42.jsonl" in listed


def test_the_repositorys_results_and_committed_sets_get_no_sums_of_their_own(tmp_path, monkeypatch):
    results = tmp_path / "repo" / "results"
    (results / "committed" / "library").mkdir(parents=True)
    (results / "mine").mkdir()
    committed = tmp_path / "repo" / "checksums" / "results.sha256"
    committed.parent.mkdir()
    committed.write_text(f"{'0' * 64}  results/committed/library/x.jsonl\n")
    monkeypatch.setattr(sums, "REPO_RESULTS", results)
    assert in_committed_list(results, committed) and in_committed_list(results / "committed", committed)
    assert not in_committed_list(results / "mine", committed) and not in_committed_list(tmp_path, committed)
    monkeypatch.setattr(sums, "COMMITTED_SUMS", committed)
    for root in (results, results / "committed", results / "mine"):
        with SumsOnExit(root) as written:
            (root / "a.txt").write_text("a\n")
        assert (root / SUMS_FILE).is_file() == (root.name == "mine") == (written.written is not None)


def test_sums_that_cannot_be_written_never_hide_the_error_that_ended_the_run(tmp_path, capsys, monkeypatch):
    def refuse(root):
        raise PermissionError(13, "Permission denied", str(root / SUMS_FILE))

    with SumsOnExit(tmp_path) as untouched:  # a block that wrote nothing leaves the root as it was
        pass
    assert untouched.written is None and not (tmp_path / SUMS_FILE).exists()
    monkeypatch.setattr(sums, "write_own_sums", refuse)
    with pytest.raises(KeyboardInterrupt):
        with SumsOnExit(tmp_path):
            (tmp_path / "kept.jsonl").write_text("{}\n")
            raise KeyboardInterrupt
    assert f"could not write {tmp_path / SUMS_FILE}" in capsys.readouterr().err
    with pytest.raises(PermissionError):  # alone, the failure to write them is the error
        with SumsOnExit(tmp_path):
            (tmp_path / "kept.jsonl").write_text("{}\n{}\n")
