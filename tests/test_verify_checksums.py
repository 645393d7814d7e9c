"""`harness verify` names missing, changed and unlisted result files and exits non-zero."""
from __future__ import annotations

import shutil

from click.testing import CliRunner

from harness.cli import main
from harness.store import ResultStore, record_key, results_path


def build_results(root):
    for arm in ("gold-lib", "open-book"):
        store = ResultStore(results_path(root, "m", arm, 42))
        for i in range(3):
            store.append({"key": record_key(arm=arm, i=i), "model": "m", "arm": arm, "seed": 42, "case_id": f"c{i}",
                          "calculator_id": 2, "outcome": "answered", "correct": True, "scorer": "paper"})


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_verify_passes_then_fails_naming_a_one_byte_change_a_missing_and_an_unlisted_file(tmp_path):
    root, manifest = tmp_path / "results", tmp_path / "results.sha256"
    build_results(root)
    assert run("checksums", "update", "--results", str(root), "--manifest", str(manifest)).exit_code == 0
    ok = run("verify", "--results", str(root), "--manifest", str(manifest))
    assert ok.exit_code == 0, ok.output
    assert "2 files match" in ok.output

    target = root / "m" / "open-book" / "seed42.jsonl"
    data = bytearray(target.read_bytes())
    data[10] ^= 0x01
    target.write_bytes(bytes(data))
    bad = run("verify", "--results", str(root), "--manifest", str(manifest))
    assert bad.exit_code == 1
    assert "CHANGED  results/m/open-book/seed42.jsonl" in bad.output

    shutil.rmtree(root / "m" / "gold-lib")
    (root / "m" / "extra.csv").write_text("x\n")
    worse = run("verify", "--results", str(root), "--manifest", str(manifest))
    assert worse.exit_code == 1
    assert "MISSING  results/m/gold-lib/seed42.jsonl" in worse.output
    assert "UNLISTED results/m/extra.csv" in worse.output


def test_verify_without_manifest_is_a_clear_error(tmp_path):
    build_results(tmp_path / "results")
    res = run("verify", "--results", str(tmp_path / "results"), "--manifest", str(tmp_path / "nope.sha256"))
    assert res.exit_code == 1
    assert "checksum manifest not found" in res.output
