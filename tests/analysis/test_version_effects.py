"""Gold-Solve under each formula version on the bundled slice: what changes, from the gold variables."""

from __future__ import annotations

from harness.analysis.stats.version_effects import case_rows, summarise
from harness.calculators import LIBRARY, solve_gold
from harness.data.conventions import default_convention
from harness.data.dataset import load_dataset


def test_bundled_slice_version_changes():
    ds = load_dataset("bundled-test")
    rows = case_rows(ds)
    assert {r["calculator_id"] for r in rows} == {3, 9, 23, 44, 46}
    conv = default_convention(ds).convention
    cases = ds.by_case_id()
    for r in rows:
        assert r["reference_label"] == "library-derived reference"
        if r["calculator_id"] in LIBRARY:
            # the benchmark-version value is exactly Gold-Solve's answer, scored against benchmark gold
            assert r["benchmark_value"] == solve_gold(cases[r["case_id"]], convention=conv)
            assert r["benchmark_correct"] is True
            # independent check of "changes": outside +-5% of the benchmark-version value
            b, v = r["benchmark_value"], r["reference_value"]
            assert r["changes"] == (abs(v - b) > 0.05 * abs(b))
        else:
            assert r["reference_value"] is None and r["reference_reason"]
    summary = {(s["calculator_id"], s["version"]): s for s in summarise(rows)}
    assert summary[(23, "meld-3.0")]["reference_available"] == 0
    assert "gold variables lack" in summary[(46, "prevent-2023")]["unavailable_reasons"]
    assert summary[(44, "sampson-2020")]["differs"] == 2  # Sampson never equals Friedewald here
    assert sum(s["gold_solve_changes"] for s in summary.values()) == sum(
        1 for r in rows if r["changes"] and r["in_gold_solve"]
    )


def test_s22_without_a_dataset_name_loads_nothing(tmp_path, monkeypatch):
    """Records that name no dataset omit s22's Gold-Solve block with that reason; the table never tries to load a
    dataset called "None" (load_dataset(None) looked for a file ./None and opened it when there was one)."""
    from types import SimpleNamespace

    from harness.analysis.stats.arrays import StatRecord
    from harness.analysis.tables import router

    (tmp_path / "None").write_text("not a dataset\n")
    monkeypatch.chdir(tmp_path)
    loaded: list[object] = []
    monkeypatch.setattr(router, "load_dataset", lambda name: loaded.append(name))
    ref = {"version": "ckd-epi-2021", "value": 1.0, "correct": True}
    rec = StatRecord("m", "gold-lib", 42, "9-1", 1, 9, "MDRD", "decimal", "answered", True, None, None, ref)
    table = router.table_s22(SimpleNamespace(data=SimpleNamespace(versioned=[rec])))
    assert loaded == []
    assert "Gold-Solve change counts omitted: the records name no dataset." in table.notes
    assert [r[:5] for r in table.rows[1:]] == [["m", table.rows[1][1], "9", "ckd-epi-2021", "1"]]
