"""The rehearsal case set from real dev rows: sizes, fresh ids, reuse recorded, schema errors named."""

from __future__ import annotations

import csv
import json

import pytest

from harness.data.conventions import default_convention
from harness.data.dataset import load_dataset
from harness.data.rehearsal_set import RehearsalSetError, build_rehearsal_set


def test_full_set_from_dev_rows(shared_data_dir, tmp_path):
    dev = load_dataset(shared_data_dir / "test_dev_v1.0.csv")
    out = tmp_path / "rehearsal-cases.csv"
    m = build_rehearsal_set(shared_data_dir / "test_dev_v1.0.csv", out, 20)
    ds = load_dataset(out)
    assert len(ds.cases) == 1100 == m["n_cases"] and m["calculators"] == 55
    counts = {}
    for c in ds.cases:
        counts[c.calculator_id] = counts.get(c.calculator_id, 0) + 1
    assert set(counts.values()) == {20}
    assert len({c.case_id for c in ds.cases}) == 1100  # fresh ids, unique
    dev_by_row = {c.row_number: c for c in dev.cases}
    per_calc_dev = {}
    for c in dev.cases:
        per_calc_dev[c.calculator_id] = per_calc_dev.get(c.calculator_id, 0) + 1
    assert m["reused_rows"] == sum(20 - n for n in per_calc_dev.values() if n < 20)
    for row, case in zip(m["rows"], ds.cases):
        src = dev_by_row[row["source_row_number"]]
        assert (case.note, case.question, case.gold_answer) == (src.note, src.question, src.gold_answer)
    on_disk = json.loads((tmp_path / "rehearsal-cases.csv.provenance.json").read_text())
    assert on_disk["synthetic"] is True and "reuse" in on_disk["note"]
    # a new file, not a known one by its sha256, but its rows are known v1.0 rows (harness/data/row_fingerprints.py)
    assert default_convention(ds).name == "medcalc-v1.0" and m["convention"] == "medcalc-v1.0"


def test_set_keeps_an_unknown_sources_convention(shared_data_dir, tmp_path):
    with open(shared_data_dir / "test_dev_v1.0.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    src = tmp_path / "edited.csv"
    with open(src, "w", newline="", encoding="utf-8") as fh:  # one row fewer: a file nobody pinned
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows[1:])
    m = build_rehearsal_set(src, tmp_path / "o.csv", 1)
    assert m["convention"] == "exact" and "source" in m["convention_reason"]


def test_bad_source_is_named(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(RehearsalSetError, match="bad.csv.*missing column"):
        build_rehearsal_set(bad, tmp_path / "o.csv", 2)


def test_command_builds_from_the_dev_rows_and_prints_the_convention(shared_data_dir, tmp_path, monkeypatch):
    """`harness data rehearsal-set OUT --per-calculator N`: the convention on stdout (scripts read it), the summary
    on stderr; a missing count is a usage error, missing dev rows one line naming them."""
    from click.testing import CliRunner

    from harness.cli import main

    monkeypatch.setenv("MEDCALC_SHARED_DIR", str(shared_data_dir))
    runner = CliRunner()
    r = runner.invoke(main, ["data", "rehearsal-set", str(tmp_path / "set.csv"), "--per-calculator", "1"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == "medcalc-v1.0" and json.loads(r.stderr)["n_cases"] == 55
    r = runner.invoke(main, ["data", "rehearsal-set", str(tmp_path / "set.csv")])
    assert r.exit_code == 2 and "--per-calculator" in r.output
    monkeypatch.setenv("MEDCALC_SHARED_DIR", str(tmp_path / "nowhere"))
    r = runner.invoke(main, ["data", "rehearsal-set", str(tmp_path / "other.csv"), "--per-calculator", "1"])
    assert r.exit_code == 1 and "dev rows" in r.stderr
