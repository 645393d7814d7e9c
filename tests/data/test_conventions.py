"""harness.data.conventions: the unit convention of a dataset comes from an explicit choice or from its content
sha256, never from its file name."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from harness.core.paths import REPO_ROOT
from harness.core.units import EXACT, MEDCALC_V1
from harness.data.conventions import (
    KNOWN_DATASETS,
    MixedConventionsError,
    default_convention,
    known_dataset,
    resolve_convention,
)
from harness.data.dataset import load_dataset
from harness.data.pins import load_pins
from tests.fixtures_data import read_rows, write_rows

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
    rows = read_rows(BUNDLED / "test_slice.csv")
    for r in rows:  # content the kit does not know: every note edited
        r["Patient Note"] += " (edited)"
    edited = write_rows(tmp_path / "test_slice.csv", rows)  # a v1.0-looking name, other content
    ds = load_dataset(str(edited))
    choice = default_convention(ds)
    assert choice.convention is EXACT and choice.source == "default"
    assert "not a file the kit knows and no row is a known row" in choice.reason and ds.sha256[:12] in choice.reason


def _resaved(rows, path):
    """The rows as a user's own CSV: reordered and written by pandas (other quoting, other bytes)."""
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_subset_reordered_and_resaved_gets_v1_by_its_rows(tmp_path, shared_data_dir):
    rows = read_rows(shared_data_dir / "test_dev_v1.0.csv")[:374][::-1]
    for r in rows[:50]:
        r["Row Number"] = str(5000 + int(r["Row Number"]))  # renumbered rows are still recognised
    ds = load_dataset(str(_resaved(rows, tmp_path / "my_slice.csv")))
    assert known_dataset(ds.sha256) is None
    choice = default_convention(ds)
    assert choice.convention is MEDCALC_V1 and choice.source == "dataset"
    assert choice.reason == "374 of 374 rows are known rows of MedCalc-Bench v1.0 test split (1047 rows) by content"


def test_a_subset_of_the_verified_one_shot_split_gets_exact_by_its_rows(tmp_path):
    rows = read_rows(BUNDLED / "one_shot_verified.csv")[10:40]
    rows[0]["Patient Note"] += " (edited)"  # known Verified rows next to an unknown one: exact
    choice = default_convention(load_dataset(str(_resaved(rows, tmp_path / "mine.csv"))))
    assert choice.convention is EXACT and choice.source == "dataset"
    assert "29 of 30 rows are known rows of MedCalc-Bench Verified one-shot split" in choice.reason
    assert "1 row the kit does not know" in choice.reason


def test_a_file_mixing_known_conventions_is_refused_with_the_counts(tmp_path):
    rows = read_rows(BUNDLED / "test_slice.csv")[:20] + read_rows(BUNDLED / "one_shot_verified.csv")[:7]
    for i, r in enumerate(rows):
        r["Row Number"] = str(i + 1)
    ds = load_dataset(str(_resaved(rows, tmp_path / "mixed.csv")))
    with pytest.raises(MixedConventionsError) as info:
        default_convention(ds)
    msg = str(info.value)
    assert msg.startswith(
        f"{tmp_path / 'mixed.csv'}: the rows mix unit conventions: 7 known exact rows, "
        "20 known medcalc-v1.0 rows (of 27;"
    ), msg
    assert "--convention" in msg
    # an explicit option decides, and its reason keeps the counts
    choice = resolve_convention(ds, "exact")
    assert (
        choice.convention is EXACT
        and "rows mix conventions (7 known exact rows, 20 known medcalc-v1.0" in choice.reason
    )


def test_v1_rows_next_to_unknown_rows_are_refused(tmp_path):
    rows = read_rows(BUNDLED / "test_slice.csv")[:12]
    rows[5]["Ground Truth Answer"] = "1"  # one gold the kit does not know
    rows[5]["Lower Limit"] = rows[5]["Upper Limit"] = "1"
    ds = load_dataset(str(_resaved(rows, tmp_path / "edited.csv")))
    with pytest.raises(MixedConventionsError, match=r"11 known medcalc-v1\.0 rows, 1 row the kit does not know"):
        default_convention(ds)


def test_explicit_option_wins():
    ds = load_dataset("bundled-test")
    choice = resolve_convention(ds, "exact")
    assert choice.convention is EXACT and choice.source == "option"
    assert "dataset's own would be medcalc-v1.0" in choice.reason
    assert resolve_convention(ds, None).convention is MEDCALC_V1
    assert resolve_convention(ds, MEDCALC_V1).source == "option"
    with pytest.raises(ValueError, match="unknown unit convention"):
        resolve_convention(ds, "v2")


def test_shipped_fingerprints_cover_the_known_files_and_hold_no_text(shared_data_dir):
    from harness.data.row_fingerprints import FINGERPRINTS_FILE, known_rows, row_fingerprint

    text = FINGERPRINTS_FILE.read_text(encoding="utf-8")
    sets = {s.convention: s for s in known_rows()}
    assert {len(s.fingerprints) for s in sets.values()} == {1039, 55}  # 1,047 v1.0 rows, 8 duplicated in content
    for name, conv in (("dev", "medcalc-v1.0"), ("bundled-test", "medcalc-v1.0"), ("one-shot", "exact")):
        ds = load_dataset(name)
        assert all(row_fingerprint(c) in sets[conv].fingerprints for c in ds), name
        assert not any(c.note[:40] in text or c.question in text for c in ds.cases[:20]), name


def test_the_fetched_verified_split_adds_its_rows(tmp_path, pins_copy, monkeypatch):
    """Once the Verified test split is pinned and downloaded, its rows are known `exact` rows too. The split is
    not reachable here: a stand-in (v1.0 decimal rows with changed golds, as Verified corrected some) takes
    its place in a copy of the pins file."""
    import hashlib
    import json as _json

    rows = [r for r in read_rows(BUNDLED / "test_slice.csv") if r["Output Type"] == "decimal"][:6]
    for r in rows:
        r["Ground Truth Answer"] = str(float(r["Ground Truth Answer"]) + 1)
        r["Lower Limit"] = r["Upper Limit"] = r["Ground Truth Answer"]
    rev = "a" * 40
    (tmp_path / "cache" / "verified" / rev).mkdir(parents=True)
    stand_in = write_rows(tmp_path / "cache" / "verified" / rev / "test.csv", rows)
    pins = _json.loads(pins_copy.read_text())
    pins["datasets"]["verified"].update(
        revision=rev, filename="data/test.csv", sha256=hashlib.sha256(stand_in.read_bytes()).hexdigest()
    )
    pins_copy.write_text(_json.dumps(pins))
    mine = load_dataset(str(_resaved(rows[::-1], tmp_path / "mine.csv")))
    assert default_convention(mine).source == "default"  # unknown rows before the split is fetched
    monkeypatch.setenv("MATHSOLVER_PINS_FILE", str(pins_copy))
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(tmp_path / "cache"))
    choice = default_convention(mine)
    assert choice.convention is EXACT and choice.source == "dataset"
    assert "6 of 6 rows are known rows of MedCalc-Bench Verified test split (pinned, fetched)" in choice.reason
