"""The dev split is defined by the kit (v1.0 Row Numbers) and built from the pinned v1.0 test_data.csv, so
`--dataset dev` works in a clone that has no ../shared directory."""

from __future__ import annotations

import hashlib
import os

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.data import dev_split
from harness.data.conventions import KNOWN_DATASETS
from harness.data.dataset import DatasetError, load_dataset
from harness.data.pins import load_pins
from tests.fixtures_data import read_rows

# The real v1.0 file, when a copy is at hand (the test below then builds from it byte for byte).
V1_SOURCE = os.environ.get("MEDCALC_V1_TEST_DATA", "")


def test_definition_is_the_pinned_dev_file(shared_data_dir):
    spec = dev_split.definition()
    pins = load_pins()["datasets"]["dev"]
    assert spec["sha256"] == pins["sha256"] and spec["rows"] == pins["rows"] == 625
    assert spec["source_sha256"] == dev_split.V1_TEST_DATA_SHA256
    assert dev_split.V1_TEST_DATA_SHA256 in {k.sha256 for k in KNOWN_DATASETS}
    assert spec["row_numbers"] == [int(r["Row Number"]) for r in read_rows(shared_data_dir / "test_dev_v1.0.csv")]


def test_build_selects_the_rows_verbatim(shared_data_dir, tmp_path):
    # The selection and serialisation, run on the one real file at hand that holds all 625 rows (the dev file
    # itself, with its own sha256 as the "source" pin): the result must be the same bytes.
    src = shared_data_dir / "test_dev_v1.0.csv"
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    out = dev_split.build_dev(src, tmp_path / "built", source_sha256=sha)
    assert out == tmp_path / "built" / "test_dev_v1.0.csv"  # a directory gets the file name
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.skipif(not V1_SOURCE, reason="set MEDCALC_V1_TEST_DATA to a copy of MedCalc-Bench v1.0 test_data.csv")
def test_build_from_the_real_v1_file(tmp_path):
    out = dev_split.build_dev(V1_SOURCE, tmp_path / "dev.csv")
    assert hashlib.sha256(out.read_bytes()).hexdigest() == dev_split.definition()["sha256"]


def test_a_source_of_other_content_is_refused_and_nothing_written(tmp_path):
    src = tmp_path / "test_data.csv"
    src.write_text("Row Number\n1\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"test_data\.csv: sha256 \w+ is not the pinned MedCalc-Bench v1\.0"):
        dev_split.build_dev(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_built_split_lands_in_the_data_cache_where_dev_resolves(shared_data_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("MEDCALC_SHARED_DIR", raising=False)
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(tmp_path / "cache"))
    src = shared_data_dir / "test_dev_v1.0.csv"
    built = dev_split.build_dev(src, source_sha256=hashlib.sha256(src.read_bytes()).hexdigest())
    assert built == tmp_path / "cache" / "test_dev_v1.0.csv"
    ds = load_dataset("dev")
    assert ds.path == built and len(ds) == 625


def test_cli_build_dev_refuses_another_file_naming_it(tmp_path):
    src = tmp_path / "my_copy.csv"
    src.write_text("Row Number\n1\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["data", "build-dev", "--source", str(src), "--out", str(tmp_path / "o")])
    assert r.exit_code == 1
    assert f"{src}: sha256" in r.output and "not the pinned MedCalc-Bench v1.0 test_data.csv" in r.output
    assert dev_split.V1_TEST_DATA_URL in r.output and not (tmp_path / "o").exists()


def test_dev_not_built_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_SHARED_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"has not been built.*harness data build-dev --source test_data\.csv"):
        load_dataset("dev")


@pytest.mark.skipif(not V1_SOURCE, reason="set MEDCALC_V1_TEST_DATA to a copy of MedCalc-Bench v1.0 test_data.csv")
def test_shipped_row_fingerprints_regenerate_from_the_real_v1_file(tmp_path):
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT
    from harness.data.row_fingerprints import FINGERPRINTS_FILE

    out = tmp_path / "fp.json"
    subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "make_row_fingerprints.py"), "--v1", V1_SOURCE, "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == FINGERPRINTS_FILE.read_bytes()
