"""The one manifest reader (harness.run.manifest.read_manifests): one depth rule, one error path, and the
committed result sets read through it."""
from __future__ import annotations

import json

import pytest

from harness.analysis.tables_supplementary import load_manifests
from harness.analysis.table_format import Omit
from harness.run.manifest import ManifestError, manifest_paths, read_manifests, write_run_manifest
from harness.verify.rescore import _manifest_conventions
from tests.conftest import ROOT


def test_reads_the_manifests_directly_in_the_result_set(tmp_path):
    write_run_manifest(tmp_path, "run-b", arms={"blind": {}})
    write_run_manifest(tmp_path, "run-a", arms={"open-book": {}})
    (tmp_path / "manifest-reproduce-x.json").write_text(json.dumps({"runs": ["manifest-run-a.json"]}))
    deeper = tmp_path / "merged"
    deeper.mkdir()
    (deeper / "manifest-run-c.json").write_text(json.dumps({"arms": {"blind": {}}}))
    (tmp_path / "manifest-run-d.json.tmp").write_text("{")  # a write in progress is not a manifest
    got = read_manifests(tmp_path)
    assert [m.path.name for m in got] == ["manifest-reproduce-x.json", "manifest-run-a.json", "manifest-run-b.json"]
    assert [m.is_run for m in got] == [False, True, True]
    assert got[1].data["run_id"] == "run-a"
    assert manifest_paths(tmp_path) == [m.path for m in got]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_an_unreadable_manifest_is_one_error_naming_the_file(tmp_path, text):
    write_run_manifest(tmp_path, "run-a", arms={"blind": {}})
    bad = tmp_path / "manifest-run-b.json"
    bad.write_text(text)
    with pytest.raises(ManifestError, match=rf"^{bad}: unreadable manifest"):
        read_manifests(tmp_path)
    # the ledger tables omit themselves with the same message; the convention check does not skip it
    with pytest.raises(Omit, match=rf"^{bad}: unreadable manifest"):
        load_manifests(tmp_path)
    with pytest.raises(ManifestError, match=str(bad)):
        _manifest_conventions(tmp_path)


@pytest.mark.parametrize("result_set, runs", [("results/gold-solve", 1), ("results/cpu-demo", 2)])
def test_committed_result_sets_read_through_the_one_reader(result_set, runs):
    got = read_manifests(ROOT / result_set)
    assert sum(m.is_run for m in got) == runs
    assert all(m.data["run_id"] for m in got)
