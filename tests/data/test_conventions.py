"""harness.data.conventions: the unit convention of a dataset comes from an explicit choice or from its content
sha256, never from its file name."""
from __future__ import annotations

import shutil

import pytest

from harness.core.paths import REPO_ROOT
from harness.core.units import EXACT, MEDCALC_V1
from harness.data.conventions import KNOWN_DATASETS, default_convention, known_dataset, resolve_convention
from harness.data.dataset import load_dataset
from harness.data.pins import load_pins

BUNDLED = REPO_ROOT / "harness" / "data"


def test_known_table_matches_the_pins_file():
    """The bundled and dev shas in the table are the ones checksums/datasets.json pins."""
    pins = load_pins()["datasets"]
    table = {k.sha256 for k in KNOWN_DATASETS}
    for name in ("bundled-test", "one-shot", "dev"):
        assert pins[name]["sha256"] in table, name
    assert "c2d23097f8bdb7ae4a77dbf4a5a767335df7303998d7c7664a73a29fd8e2b31a" in table  # v1.0 test_data.csv
    assert known_dataset(pins["dev"]["sha256"]).convention == "medcalc-v1.0"
    assert known_dataset(pins["one-shot"]["sha256"]).convention == "exact"


def test_v1_file_under_a_neutral_name_gets_v1_by_content(tmp_path, shared_data_dir):
    for src in (BUNDLED / "test_slice.csv", shared_data_dir / "test_dev_v1.0.csv"):
        neutral = tmp_path / "my_cases.csv"
        shutil.copyfile(src, neutral)
        choice = default_convention(load_dataset(str(neutral)))
        assert choice.convention is MEDCALC_V1
        assert choice.source == "dataset" and "v1.0" in choice.reason


def test_verified_file_under_a_v1_looking_name_stays_exact(tmp_path):
    """The name is never read: the Verified one-shot split saved as 'test_dev_v1.0.csv' is still exact."""
    misleading = tmp_path / "test_dev_v1.0.csv"
    shutil.copyfile(BUNDLED / "one_shot_verified.csv", misleading)
    assert default_convention(load_dataset(str(misleading))).convention is EXACT


def test_unknown_file_gets_exact_and_says_why(tmp_path):
    lines = (BUNDLED / "test_slice.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    edited = tmp_path / "test_slice.csv"        # a v1.0-looking name, other content
    edited.write_text("".join(lines[:1] + lines[1:]).replace("\n", "\r\n", 1), encoding="utf-8")
    ds = load_dataset(str(edited))
    choice = default_convention(ds)
    assert choice.convention is EXACT and choice.source == "default"
    assert "not a file the kit knows" in choice.reason and ds.sha256[:12] in choice.reason


def test_explicit_option_wins():
    ds = load_dataset("bundled-test")
    choice = resolve_convention(ds, "exact")
    assert choice.convention is EXACT and choice.source == "option"
    assert "dataset's own would be medcalc-v1.0" in choice.reason
    assert resolve_convention(ds, None).convention is MEDCALC_V1
    assert resolve_convention(ds, MEDCALC_V1).source == "option"
    with pytest.raises(ValueError, match="unknown unit convention"):
        resolve_convention(ds, "v2")
