"""`harness data check` and the pin bookkeeping (no network). Byte changes are made to temp copies only."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner

from harness.cli.data import data
from harness.data import datahub
from harness.data.locations import BUNDLED_DIR


def _flip_one_byte(path):
    b = bytearray(path.read_bytes())
    b[len(b) // 2] ^= 0x20
    path.write_bytes(bytes(b))


def test_shipped_pins_match_bundled_files_and_record_verified_prefix():
    pins = datahub.load_pins()["datasets"]
    for name in ("bundled-test", "one-shot"):
        e = pins[name]
        assert e["required"] is True
        assert hashlib.sha256((BUNDLED_DIR / e["file"]).read_bytes()).hexdigest() == e["sha256"]
    v = pins["verified"]
    assert v["revision_prefix"] == "5488179" and v["repo_id"] == "nsk7153/MedCalc-Bench-Verified"
    assert not datahub.is_pinned(v) and v["status"].startswith("unpinned: run `harness data pin`")


def test_data_check_passes_on_bundled_slice():
    result = CliRunner().invoke(data, ["check"])
    assert result.exit_code == 0, result.output
    assert "ok        bundled-test" in result.output and "ok        one-shot" in result.output
    assert "unpinned  verified" in result.output


def test_data_check_fails_naming_file_when_one_byte_changes(bundled_copy):
    target = bundled_copy / "test_slice.csv"
    ok = CliRunner().invoke(data, ["check", "--bundled-dir", str(bundled_copy)])
    assert ok.exit_code == 0, ok.output
    _flip_one_byte(target)
    bad = CliRunner().invoke(data, ["check", "--bundled-dir", str(bundled_copy)])
    assert bad.exit_code == 1
    assert f"MISMATCH  bundled-test  {target}" in bad.output
    assert f"dataset check failed: bundled-test ({target})" in bad.output
    assert "ok        one-shot" in bad.output  # the untouched file still passes


def test_data_check_via_env_var_and_missing_bundled_file(bundled_copy, monkeypatch):
    (bundled_copy / "one_shot_verified.csv").unlink()
    monkeypatch.setenv("MATHSOLVER_BUNDLED_DIR", str(bundled_copy))
    result = CliRunner().invoke(data, ["check"])
    assert result.exit_code == 1
    assert "MISSING   one-shot" in result.output and "one_shot_verified.csv" in result.output


def test_data_check_reports_absent_dev_without_failing(tmp_path):
    result = CliRunner().invoke(data, ["check", "--shared-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"absent    dev           {tmp_path / 'test_dev_v1.0.csv'} (optional, not checked)" in result.output


def test_data_check_fails_on_changed_dev_copy(shared_data_dir, tmp_path):
    shutil.copyfile(shared_data_dir / "test_dev_v1.0.csv", tmp_path / "test_dev_v1.0.csv")
    assert CliRunner().invoke(data, ["check", "--shared-dir", str(tmp_path)]).exit_code == 0
    _flip_one_byte(tmp_path / "test_dev_v1.0.csv")
    result = CliRunner().invoke(data, ["check", "--shared-dir", str(tmp_path)])
    assert result.exit_code == 1 and "MISMATCH  dev" in result.output


def test_data_check_verifies_fetched_verified_file(pins_copy, tmp_path):
    body = b"pretend parquet bytes"
    rev = "5488179" + "0" * 33
    pins = json.loads(pins_copy.read_text())
    pins["datasets"]["verified"].update(revision=rev, sha256=hashlib.sha256(body).hexdigest(), status="pinned")
    pins_copy.write_text(json.dumps(pins))
    dest = tmp_path / "verified" / rev / "test-00000-of-00001.parquet"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(body)
    args = ["check", "--pins-file", str(pins_copy), "--data-dir", str(tmp_path)]
    result = CliRunner().invoke(data, args)
    assert result.exit_code == 0 and f"ok        verified      {dest}" in result.output
    dest.write_bytes(body + b"!")
    result = CliRunner().invoke(data, args)
    assert result.exit_code == 1 and f"verified ({dest})" in result.output


def test_malformed_pins_file_is_named(tmp_path):
    p = tmp_path / "datasets.json"
    p.write_text("{not json")
    result = CliRunner().invoke(data, ["check", "--pins-file", str(p)])
    assert result.exit_code == 1 and f"{p}: not valid JSON" in result.output


def test_resolve_prefix():
    commits = ["5488179aa" + "0" * 31, "54881aab" + "1" * 32, "0eb5960" + "2" * 33]
    assert datahub.resolve_prefix(commits, "5488179") == commits[0]
    assert datahub.resolve_prefix(commits, "5488179AA") == commits[0]
    with pytest.raises(datahub.DatahubError, match=r"ambiguous: it matches 2 commits"):
        datahub.resolve_prefix(commits, "54881")
    with pytest.raises(datahub.DatahubError, match=r"no commit matches prefix 'ffff' among the 3 commits"):
        datahub.resolve_prefix(commits, "ffff")
    with pytest.raises(datahub.DatahubError, match=r"not 4-40 hex digits"):
        datahub.resolve_prefix(commits, "54z")


def test_find_test_file():
    assert (
        datahub.find_test_file(["README.md", "data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet"])
        == "data/test-00000-of-00001.parquet"
    )
    assert (
        datahub.find_test_file(
            ["data/test-00000-of-00001-0123456789abcdef.parquet", "data/one_shot-00000-of-00001.parquet"]
        )
        == "data/test-00000-of-00001-0123456789abcdef.parquet"
    )
    assert datahub.find_test_file(["dataset/test_data.csv", "README.md"]) == "dataset/test_data.csv"
    with pytest.raises(datahub.DatahubError, match=r"several test files"):
        datahub.find_test_file(["data/test-00000-of-00002.parquet", "data/test-00001-of-00002.parquet"])
    with pytest.raises(datahub.DatahubError, match=r"no test split file found"):
        datahub.find_test_file(["README.md"])


def test_data_list_and_show():
    runner = CliRunner()
    listed = runner.invoke(data, ["list"])
    assert listed.exit_code == 0
    assert "verified      rows=1100  unavailable: dataset 'verified' is not pinned yet" in listed.output
    shown = runner.invoke(data, ["show", "--dataset", "one-shot"])
    assert shown.exit_code == 0 and "rows:        55" in shown.output and "calculators: 55" in shown.output
    case = runner.invoke(data, ["show", "--dataset", "one-shot", "69-55"])
    assert "gold_value: (34, 3)" in case.output and "output_type: weeks_days" in case.output
    missing = runner.invoke(data, ["show", "--dataset", "one-shot", "1-1"])
    assert missing.exit_code == 1 and "no case '1-1'" in missing.output
