"""Loading the real datasets: dev (625 rows), one-shot (55), the bundled slice, Parquet, pinned names."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from collections import Counter

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli.dataset_option import dataset_option
from harness.core.paths import REPO_ROOT
from harness.data.dataset import Dataset, DatasetError, load_dataset
from harness.data.locations import BUNDLED_DIR
from tests.fixtures_data import read_rows


def _assert_typed(ds):
    for c in ds:
        assert c.case_id == f"{c.calculator_id}-{c.row_number}"
        assert isinstance(c.entities, dict) and c.entities
        if c.output_type in ("decimal", "integer"):
            assert isinstance(c.gold_value, float) and c.gold_value == float(c.gold_answer)
        elif c.output_type == "date":
            assert isinstance(c.gold_value, dt.date)
            assert c.gold_value.strftime("%m/%d/%Y") == c.gold_answer
        else:
            weeks, days = c.gold_value
            assert c.gold_answer == f"('{weeks} weeks', '{days} days')"
    assert len({c.case_id for c in ds}) == len(ds)


def test_all_625_dev_rows_load(shared_data_dir):
    ds = load_dataset(shared_data_dir / "test_dev_v1.0.csv")
    assert len(ds) == 625
    assert len(ds.calculator_ids()) == 55
    assert Counter(c.output_type for c in ds) == {"decimal": 370, "integer": 216, "date": 24, "weeks_days": 15}
    # gestational age is stored with Output Type "integer" in v1.0 and is mapped, not dropped
    ga = [c for c in ds if c.calculator_id == 69]
    assert (
        len(ga) == 15
        and {c.output_type for c in ga} == {"weeks_days"}
        and {c.raw_output_type for c in ga} == {"integer"}
    )
    first = ds.by_case_id()["69-1028"]
    assert first.gold_value == (0, 6) and first.entities["Last menstrual date"] == "03/23/2020"
    assert ds.by_case_id()["13-" + str(next(c.row_number for c in ds if c.calculator_id == 13))].gold_value == dt.date(
        2007, 1, 9
    )
    _assert_typed(ds)


def test_dev_pinned_name_uses_shared_dir(shared_data_dir, monkeypatch):
    monkeypatch.setenv("MEDCALC_SHARED_DIR", str(shared_data_dir))
    ds = load_dataset("dev")
    assert ds.name == "dev" and len(ds) == 625
    assert ds.sha256 == "df9c3d74fb15a7641cb527382a6edce84d75d066d70ae520015be00e539dfd28"


def test_dev_absent_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_SHARED_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"test_dev_v1\.0\.csv.*MEDCALC_SHARED_DIR"):
        load_dataset("dev")


def test_all_55_one_shot_rows_load():
    ds = load_dataset("one-shot")
    assert ds.name == "one-shot" and len(ds) == 55
    assert ds.calculator_ids() == sorted({int(r["Calculator ID"]) for r in read_rows(ds.path)})
    assert len(ds.calculator_ids()) == 55
    ga = ds.by_case_id()["69-55"]
    # Verified stores gestational age with Output Type "date"; still mapped to weeks_days
    assert (ga.raw_output_type, ga.output_type, ga.gold_value) == ("date", "weeks_days", (34, 3))
    _assert_typed(ds)


def test_one_shot_is_byte_copy_of_shared(shared_data_dir):
    assert (BUNDLED_DIR / "one_shot_verified.csv").read_bytes() == (
        shared_data_dir / "one_shot_verified.csv"
    ).read_bytes()


def test_bundled_slice_covers_all_55_calculators_two_lowest_rows(shared_data_dir):
    ds = load_dataset("bundled-test")
    dev = pd.read_csv(shared_data_dir / "test_dev_v1.0.csv", dtype=str, keep_default_na=False)
    dev["rn"] = dev["Row Number"].astype(int)
    expected = set(dev.sort_values("rn").groupby("Calculator ID").head(2)["rn"])
    assert {c.row_number for c in ds} == expected
    assert len(ds.calculator_ids()) == 55
    per_calc = Counter(c.calculator_id for c in ds)
    assert set(per_calc.values()) <= {1, 2}
    # rows are verbatim dev rows
    dev_rows = {r["Row Number"]: r for r in read_rows(shared_data_dir / "test_dev_v1.0.csv")}
    for r in read_rows(ds.path):
        assert r == dev_rows[r["Row Number"]]


def test_bundled_slice_alone_covers_all_55_calculators():
    ds = load_dataset("bundled-test")
    assert len(ds.calculator_ids()) == 55 and len(ds) == 110
    groups = ds.by_calculator_id()
    assert sorted(groups) == ds.calculator_ids()
    assert all(c.calculator_id == cid for cid, cases in groups.items() for c in cases)
    assert sum(len(v) for v in groups.values()) == 110
    assert {c.output_type for c in ds} == {"decimal", "integer", "date", "weeks_days"}


def test_make_test_slice_script_regenerates_identical_bytes(shared_data_dir, tmp_path):
    out = tmp_path / "slice.csv"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "scripts" / "make_test_slice.py"),
            "--source",
            str(shared_data_dir / "test_dev_v1.0.csv"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (BUNDLED_DIR / "test_slice.csv").read_bytes()


def test_parquet_round_trip(tmp_path):
    src = load_dataset("one-shot")
    df = pd.read_csv(src.path, dtype=str, keep_default_na=False)
    df["Row Number"] = df["Row Number"].astype("int64")  # the hub's parquet types
    df["Calculator ID"] = df["Calculator ID"].astype("int64")
    pq = tmp_path / "one_shot.parquet"
    df.to_parquet(pq, index=False)
    back = load_dataset(pq)
    assert back.name == "one_shot" and back.path == pq
    assert back.cases == src.cases


def test_pinned_bundled_name_refuses_changed_bytes(bundled_copy, monkeypatch):
    p = bundled_copy / "test_slice.csv"
    data = bytearray(p.read_bytes())
    data[-2] ^= 0x01
    p.write_bytes(bytes(data))
    monkeypatch.setenv("MATHSOLVER_BUNDLED_DIR", str(bundled_copy))
    with pytest.raises(DatasetError, match=r"test_slice\.csv.*sha256 mismatch for pinned dataset 'bundled-test'"):
        load_dataset("bundled-test")
    assert load_dataset("one-shot").path == bundled_copy / "one_shot_verified.csv"


def test_missing_path_and_directory_and_wrong_suffix(tmp_path):
    with pytest.raises(DatasetError, match=r"nope\.csv: dataset not found"):
        load_dataset(tmp_path / "nope.csv")
    with pytest.raises(DatasetError, match=r"is a directory"):
        load_dataset(tmp_path)
    txt = tmp_path / "cases.txt"
    shutil.copyfile(BUNDLED_DIR / "one_shot_verified.csv", txt)
    with pytest.raises(DatasetError, match=r"cases\.txt: unsupported file type"):
        load_dataset(txt)


def test_dataset_option_accepts_names_and_paths(tmp_path):
    @click.command()
    @dataset_option()
    def cmd(dataset: Dataset) -> None:
        click.echo(f"{dataset.name} {len(dataset)}")

    runner = CliRunner()
    assert runner.invoke(cmd, []).output == "bundled-test 110\n"
    assert runner.invoke(cmd, ["--dataset", "one-shot"]).output == "one-shot 55\n"
    copy = tmp_path / "mine.csv"
    shutil.copyfile(BUNDLED_DIR / "one_shot_verified.csv", copy)
    assert runner.invoke(cmd, ["--dataset", str(copy)]).output == "mine 55\n"
    bad = runner.invoke(cmd, ["--dataset", str(tmp_path / "missing.csv")])
    assert bad.exit_code == 2 and "missing.csv: dataset not found" in bad.output
