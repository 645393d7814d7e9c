"""Results built from the rehearsal server's synthetic records say so where a reader looks first: the report's
top, every table's title and first note, the tables index, and the model's name wherever it is shown."""

from __future__ import annotations

from harness.analysis.stats import catalog


def test_a_rehearsal_runs_report_and_tables_say_synthetic_first(tmp_path, monkeypatch):
    from harness.analysis.report import build_report
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records

    monkeypatch.setattr(catalog, "library_calculators", lambda: {1})
    monkeypatch.setattr(catalog, "audit_groups", lambda: {1: "no_issue", 2: "replaced", 3: "other_concern"})
    recs = synthetic_records(
        models=("rehearsal-alpha",),
        arms=("open-book", "program-solve", "gold-lib", "blind"),
        seeds=(42,),
        sizes=(4, 3, 5),
        library={1},
        seed=3,
    )
    root = write_records(tmp_path / "rehearsal", recs)
    page = build_report(root, tmp_path / "out", draws=200).read_text()
    banner = page.index('<p class="synthetic">SYNTHETIC: rehearsal-alpha is the rehearsal server')
    assert banner < page.index("<h2>Figures</h2>") and banner < page.index('id="table1"')
    table1 = (tmp_path / "out" / "tables" / "table1.md").read_text()
    assert table1.splitlines()[0].startswith("### table1: SYNTHETIC - ")
    assert "rehearsal-alpha (synthetic)" in table1 and "not a model's results" in table1
    index = (tmp_path / "out" / "tables" / "index.md").read_text()
    assert index.splitlines()[2].startswith("**SYNTHETIC: rehearsal-alpha")


def test_a_real_models_tables_carry_no_synthetic_label(tmp_path, monkeypatch):
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records
    from harness.analysis.tables import build_all

    monkeypatch.setattr(catalog, "library_calculators", lambda: {1})
    recs = synthetic_records(
        models=("Qwen/Qwen2.5-7B-Instruct",), arms=("open-book", "program-solve"), seeds=(42,), sizes=(4, 3, 5), seed=3
    )
    paths = build_all(write_records(tmp_path / "real", recs), tmp_path / "t", draws=200)
    assert not any("SYNTHETIC" in p.read_text() or "(synthetic)" in p.read_text() for p in paths)
