"""Schema validation: every error names the file, the row and the column. Bad files are built in tmp_path
from real rows of the bundled one-shot split, each with exactly one defect."""

from __future__ import annotations

import copy
import re

import pandas as pd
import pytest

from harness.data.dataset import COLUMNS, DatasetError, load_dataset
from harness.data.values import parse_weeks_days
from tests.fixtures_data import write_rows


def _rows(one_shot_rows, n=5):
    return copy.deepcopy(one_shot_rows[:n])


def _expect(path, row, column, pattern):
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    err = info.value
    msg = str(err)
    assert str(path) in msg
    assert f"row {row}" in msg
    assert f"column {column!r}" in msg
    assert re.search(pattern, msg), msg
    assert (err.file, err.row, err.column) == (str(path), row, column)
    return err


def _by_calc(rows, calc_id):
    return next(i for i, r in enumerate(rows) if r["Calculator ID"] == str(calc_id))


def test_good_rows_load(one_shot_rows, tmp_path):
    p = write_rows(tmp_path / "good.csv", _rows(one_shot_rows))
    assert len(load_dataset(p)) == 5


def test_missing_column_named(one_shot_rows, tmp_path):
    cols = [c for c in COLUMNS if c != "Relevant Entities"]
    p = write_rows(tmp_path / "nocol.csv", _rows(one_shot_rows), columns=cols)
    with pytest.raises(DatasetError) as info:
        load_dataset(p)
    msg = str(info.value)
    assert str(p) in msg and "column 'Relevant Entities'" in msg and "missing column" in msg


def test_missing_column_in_parquet_named(one_shot_rows, tmp_path):
    df = pd.DataFrame(_rows(one_shot_rows)).drop(columns=["Upper Limit"])
    p = tmp_path / "nocol.parquet"
    df.to_parquet(p, index=False)
    with pytest.raises(DatasetError, match=r"nocol\.parquet.*column 'Upper Limit'.*missing column"):
        load_dataset(p)


def test_unknown_output_type(one_shot_rows, tmp_path):
    rows = _rows(one_shot_rows)
    rows[2]["Output Type"] = "percent"
    p = write_rows(tmp_path / "type.csv", rows)
    err = _expect(p, 3, "Output Type", r"unknown output type 'percent'")
    assert err.row_number == rows[2]["Row Number"]
    assert f"(Row Number {rows[2]['Row Number']})" in str(err)


def test_duplicate_row_numbers(one_shot_rows, tmp_path):
    rows = _rows(one_shot_rows)
    rows[4]["Row Number"] = rows[1]["Row Number"]
    p = write_rows(tmp_path / "dup.csv", rows)
    _expect(p, 5, "Row Number", rf"duplicate Row Number {rows[1]['Row Number']} \(first seen on row 2\)")


def test_non_integer_row_number(one_shot_rows, tmp_path):
    rows = _rows(one_shot_rows)
    rows[0]["Row Number"] = "1a"
    _expect(write_rows(tmp_path / "rn.csv", rows), 1, "Row Number", r"expected an integer, got '1a'")


@pytest.mark.parametrize(
    "text, why",
    [
        ("{'height': [170, 'cm'", r"not a Python-literal dict \(SyntaxError"),
        ("[('height', 170)]", r"expected a dict, got list"),
        ("{'x': float('nan')}", r"not a Python-literal dict \(ValueError"),
    ],
)
def test_unparsable_relevant_entities(one_shot_rows, tmp_path, text, why):
    rows = _rows(one_shot_rows)
    rows[3]["Relevant Entities"] = text
    _expect(write_rows(tmp_path / "ent.csv", rows), 4, "Relevant Entities", why)


def test_relevant_entities_are_never_evaluated(one_shot_rows, tmp_path):
    marker = tmp_path / "pwned"
    rows = _rows(one_shot_rows)
    rows[0]["Relevant Entities"] = f"__import__('pathlib').Path({str(marker)!r}).touch() or {{}}"
    _expect(write_rows(tmp_path / "evil.csv", rows), 1, "Relevant Entities", r"not a Python-literal dict")
    assert not marker.exists()


@pytest.mark.parametrize(
    "column, text, why",
    [
        ("Ground Truth Answer", "('34 weeks', '9 days')", r"days must be 0\.\.6"),
        ("Ground Truth Answer", "('34 weeks', 3)", r"expected a gestational age \('N weeks', 'M days'\)"),
        ("Lower Limit", "('34 weeks')", r"gestational age|2-tuple"),
        ("Upper Limit", "34 weeks, 3 days", r"expected a gestational age"),
    ],
)
def test_bad_gestational_age(one_shot_rows, tmp_path, column, text, why):
    rows = copy.deepcopy(one_shot_rows)
    i = _by_calc(rows, 69)
    rows[i][column] = text
    _expect(write_rows(tmp_path / "ga.csv", rows), i + 1, column, why)


def test_gestational_age_variants_parse():
    assert parse_weeks_days("('1 week', '1 day')") == (1, 1)
    assert parse_weeks_days("(8, 0)") == (8, 0)
    assert parse_weeks_days(" ('40 weeks', '0 days') ") == (40, 0)


def test_tuple_answer_with_decimal_type_is_rejected(one_shot_rows, tmp_path):
    rows = copy.deepcopy(one_shot_rows)
    i = _by_calc(rows, 69)
    rows[i]["Output Type"] = "decimal"
    _expect(write_rows(tmp_path / "ga2.csv", rows), i + 1, "Ground Truth Answer", r"tuple-style answer")


@pytest.mark.parametrize(
    "column, text, why",
    [
        ("Ground Truth Answer", "2000-12-02", r"expected a date like 08/23/2021 \(MM/DD/YYYY\), got '2000-12-02'"),
        ("Lower Limit", "13/45/2000", r"month must be in 1\.\.12|day is out of range"),
        ("Upper Limit", "12/02/00", r"MM/DD/YYYY"),
    ],
)
def test_bad_dates(one_shot_rows, tmp_path, column, text, why):
    rows = copy.deepcopy(one_shot_rows)
    i = _by_calc(rows, 13)
    rows[i][column] = text
    _expect(write_rows(tmp_path / "date.csv", rows), i + 1, column, why)


@pytest.mark.parametrize(
    "column, text, why",
    [
        ("Ground Truth Answer", "about 67", r"expected a number, got 'about 67'"),
        ("Lower Limit", "nan", r"expected a finite number"),
        ("Upper Limit", "", r"empty value"),
    ],
)
def test_bad_numbers(one_shot_rows, tmp_path, column, text, why):
    rows = _rows(one_shot_rows)
    assert rows[0]["Output Type"] == "decimal"
    rows[0][column] = text
    _expect(write_rows(tmp_path / "num.csv", rows), 1, column, why)


def test_empty_required_note(one_shot_rows, tmp_path):
    rows = _rows(one_shot_rows)
    rows[1]["Patient Note"] = "   "
    _expect(write_rows(tmp_path / "note.csv", rows), 2, "Patient Note", r"empty value")


def test_header_only_file(tmp_path):
    p = write_rows(tmp_path / "empty.csv", [])
    with pytest.raises(DatasetError, match=r"empty\.csv: no data rows"):
        load_dataset(p)


def test_unreadable_parquet_names_file(tmp_path):
    p = tmp_path / "broken.parquet"
    p.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DatasetError, match=r"broken\.parquet: cannot read file"):
        load_dataset(p)


def test_null_cell_in_parquet_is_an_empty_value(one_shot_rows, tmp_path):
    df = pd.DataFrame(_rows(one_shot_rows))
    df["Row Number"] = df["Row Number"].astype("int64")
    df["Upper Limit"] = df["Upper Limit"].astype("string")
    df.loc[1, "Upper Limit"] = pd.NA
    p = tmp_path / "null.parquet"
    df.to_parquet(p, index=False)
    _expect(p, 2, "Upper Limit", r"empty value")


def test_swapped_limits_are_refused_at_load(one_shot_rows, tmp_path):
    # Real Verified rows with negative golds (Row Numbers 32, 49, 53), their limits recomputed as third-party
    # copies do (gold*0.95, gold*1.05), which puts the larger bound first. Before this check the file loaded
    # and the paper scorer raised ScoringError mid-run.
    rows = copy.deepcopy(one_shot_rows)
    negative = [i for i, r in enumerate(rows) if r["Output Type"] == "decimal" and float(r["Ground Truth Answer"]) < 0]
    assert [rows[i]["Row Number"] for i in negative] == ["32", "49", "53"]
    for i in negative:
        gold = float(rows[i]["Ground Truth Answer"])
        rows[i]["Lower Limit"], rows[i]["Upper Limit"] = repr(gold * 0.95), repr(gold * 1.05)
    p = write_rows(tmp_path / "third_party.csv", rows)
    err = _expect(
        p,
        negative[0] + 1,
        "Lower Limit",
        r"Lower Limit -1\.99499+ exceeds Upper Limit -2\.205 \(gold -2\.1\).*swap.*; 2 later rows too$",
    )
    assert err.row_number == "32" and "(Row Number 32)" in str(err)


def test_ordered_limits_of_negative_golds_load(one_shot_rows, tmp_path):
    rows = copy.deepcopy(one_shot_rows)
    p = write_rows(tmp_path / "official.csv", rows)
    cases = {c.row_number: c for c in load_dataset(p)}
    assert cases[32].lower_value < cases[32].upper_value < 0


def test_calculator_id_outside_the_55_is_refused_at_load(one_shot_rows, tmp_path):
    rows = _rows(one_shot_rows)
    rows[3]["Calculator ID"] = "999"
    p = write_rows(tmp_path / "calc999.csv", rows)
    err = _expect(p, 4, "Calculator ID", r"calculator id 999 is not one of MedCalc-Bench's 55 calculators")
    assert err.row_number == rows[3]["Row Number"]


def test_the_55_calculator_ids_are_the_official_lists_and_the_one_shot_split():
    from harness.data.calculator_ids import CALCULATOR_IDS
    from harness.scoring import official

    assert CALCULATOR_IDS == official._DATE_IDS | official._WEEKS_IDS | official._INTEGER_IDS | official._DECIMAL_IDS
    assert set(load_dataset("one-shot").calculator_ids()) == CALCULATOR_IDS
