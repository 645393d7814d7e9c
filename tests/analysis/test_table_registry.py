"""The one table registry (harness.analysis.tables.TABLES, a Registry[TableSpec]): every table id with its group in
the paper's order; a table defined outside the kit is built and indexed like the kit's own; and the note-budget
ablation reads each arm's budget from its spec, so an arm capped at another budget is tabulated with that budget
(SYNTHETIC records, never a model's)."""

from __future__ import annotations

import pytest

from harness.analysis.results_analysis import analyse
from harness.analysis.stats import catalog
from harness.analysis.stats.families import arm_label, budget_comparisons
from harness.analysis.stats.synthetic_records import synthetic_records, write_records
from harness.analysis.table_format import Omit, Table
from harness.analysis.tables import GROUPS, PAPER_TABLES, TABLES, TableSpec, build_tables, write_tables
from harness.analysis.tables.gaps import table_s4
from harness.arms.registry import ARMS, budget_variants, registered
from harness.arms.spec import Display
from harness.core.registry import Registry


@pytest.fixture
def fake_catalog(monkeypatch):
    monkeypatch.setattr(catalog, "library_calculators", lambda: {1})
    monkeypatch.setattr(catalog, "audit_groups", lambda: {1: "no_issue", 2: "replaced", 3: "other_concern"})


def _analysis(tmp_path, arms):
    recs = synthetic_records(
        models=("synthetic/Alpha-7B-Instruct",), arms=arms, seeds=(42, 43), sizes=(4, 3, 5), library={1}, seed=5
    )
    return analyse(write_records(tmp_path / "results", recs), draws=200)


def test_every_table_is_one_spec_of_one_group_in_the_papers_order():
    assert isinstance(TABLES, Registry) and all(isinstance(s, TableSpec) for s in TABLES.values())
    assert PAPER_TABLES == (
        "table1",
        "table1-other",
        "table2",
        "s1",
        "s2",
        "s3",
        "s4",
        "s5",
        "s6",
        "s7",
        "s8",
        "s9",
        "s10",
        "s11",
        "s12",
        "s13",
        "s14",
        "s14b",
        "s15",
        "s15b",
        "s16",
        "s17",
        "s17b",
        "s18",
        "s19",
    )
    assert list(TABLES)[len(PAPER_TABLES) :] == ["s20", "s21", "s22"]  # beyond the paper, after it
    assert {s.group for s in TABLES.values()} == set(GROUPS)
    assert {n for n, s in TABLES.items() if s.group == "ledger"} == {"s14", "s14b"}
    with pytest.raises(ValueError, match="group 'inputs' is not one of ladder, gaps, ledger, audit, router"):
        TableSpec("s99", "inputs", lambda an: None)


def test_a_table_registered_outside_the_kit_is_built_and_indexed(tmp_path, fake_catalog):
    an = _analysis(tmp_path, ("open-book", "program-solve", "gold-lib"))

    def cases(a):
        return Table(
            "s99",
            "Cases per calculator",
            ["Calculator", "Cases"],
            [[str(c), str(int((a.data.calculator_ids == c).sum()))] for c in a.data.calculators],
            [],
        )

    TABLES.register(TableSpec("s99", "ladder", cases))
    try:
        tables, omitted = build_tables(an)
        assert [t.name for t in tables][-1] == "s99" and tables[-1].rows == [["1", "4"], ["2", "3"], ["3", "5"]]
        write_tables(tables, omitted, tmp_path / "tables", an)
        assert "- [s99](s99.md): Cases per calculator" in (tmp_path / "tables" / "index.md").read_text()
    finally:
        TABLES.unregister("s99")
    with pytest.raises(ValueError, match="cannot be removed"):
        TABLES.unregister("s14")


def test_the_note_budget_ablation_reads_the_budget_from_the_arm_spec(tmp_path, fake_catalog):
    """An arm capped at 90 words (defined here, not in the kit) is the budget variant of the arm it caps: its label,
    its declared comparison and table s4 say 90 words, which no table module names."""
    capped = ARMS["extract-lib"].replace(
        name="extract-lib-90", title="Extract-Solve library, 90 words", note_words=90, display=Display()
    )
    with registered(capped):
        assert budget_variants()["extract-lib-90"] == "extract-lib"
        assert arm_label("extract-lib-90") == "Extract-Solve library, 90 words"
        (c,) = list(budget_comparisons(["extract-lib", "extract-lib-90"]))
        assert (c.solver, c.reference, c.access) == ("extract-lib", "extract-lib-90", "whole note vs 90 words")
        an = _analysis(tmp_path, ("extract-lib", "extract-lib-90", "gold-lib"))
        table = table_s4(an)
        (row,) = table.rows
        assert row[1:3] == ["Extract-Solve library", "whole note"] and row[4] == "90 words"
    assert "extract-lib-90" not in budget_variants()
    with pytest.raises(Omit, match="no note-budget variant ran"):
        table_s4(_analysis(tmp_path / "other", ("extract-lib", "gold-lib")))
