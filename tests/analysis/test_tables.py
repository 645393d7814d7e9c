"""Tables and figures from SYNTHETIC record sets in tmp_path: values against pandas, byte-stable
re-derivation, graceful omission, LaTeX/CSV well-formedness, CLI commands."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from click.testing import CliRunner

from harness.analysis.results_analysis import analyse
from harness.analysis.stats import catalog
from harness.analysis.stats.families import arm_label
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import tex_escape
from harness.analysis.tables import build_all
from harness.analysis.tables.ladder import table1

ARMS = (
    "note-only",
    "open-book",
    "program-solve",
    "program-solve-syntax",
    "gold-lib",
    "extract-lib",
    "blind",
    "blind-vote",
)
LIB = {1, 2}
DRAWS = 400


@pytest.fixture
def fake_catalog(monkeypatch):
    monkeypatch.setattr(catalog, "library_calculators", lambda: set(LIB))
    groups = {1: "no_issue", 2: "replaced", 3: "other_concern", 4: "no_issue", 5: "no_issue"}
    monkeypatch.setattr(catalog, "audit_groups", lambda: groups)


@pytest.fixture
def synthetic_results(tmp_path):
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records

    recs = synthetic_records(
        models=("synthetic/Alpha-7B-Instruct", "synthetic/Beta-32B-Instruct"),
        arms=ARMS,
        seeds=(42, 43, 44),
        sizes=(5, 4, 6, 3, 5),
        library=LIB,
        date_calcs={3},
        seed=11,
    )
    write_records(tmp_path / "synthetic-results", recs)
    return tmp_path / "synthetic-results", recs


def test_build_all_is_byte_stable_and_complete(synthetic_results, fake_catalog, tmp_path):
    root, _ = synthetic_results
    a = build_all(root, tmp_path / "a", draws=DRAWS, seed=7)
    b = build_all(root, tmp_path / "b", draws=DRAWS, seed=7)
    assert [p.name for p in a] == [p.name for p in b]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    names = {p.name for p in a}
    for t in ("table1", "table2", "s1", "s2", "s3", "s5", "s6", "s10", "s11", "s12", "s13", "s18", "s19"):
        assert {f"{t}.md", f"{t}.tex", f"{t}.csv"} <= names, t
    index = (tmp_path / "a" / "index.md").read_text()
    assert "s4: no note-budget variant ran beside the arm it caps" in index and "s16:" in index
    c = build_all(root, tmp_path / "c", draws=DRAWS, seed=8)
    assert (tmp_path / "c" / "table2.md").read_bytes() != (tmp_path / "a" / "table2.md").read_bytes()
    assert [p.name for p in c] == [p.name for p in a]


def test_table1_values_match_pandas(synthetic_results, fake_catalog):
    root, recs = synthetic_results
    df = pd.DataFrame([r.to_dict() for r in recs])
    t = table1(analyse(root, draws=DRAWS))
    cols = t.columns
    for row in t.rows:
        arm = next(a for a in ARMS if row[0] == arm_label(a))
        for model in df.model.unique():
            sub = df[(df.model == model) & (df.arm == arm)]
            full = 100 * sub.groupby("seed").correct.mean().mean()
            impl = 100 * sub[sub.calculator_id.isin(LIB)].groupby("seed").correct.mean().mean()
            label = model_label(model)
            assert row[cols.index(f"{label} Full n=23")] == f"{full:.2f}"
            assert row[cols.index(f"{label} Impl. n=9")] == f"{impl:.2f}"
    assert cols[:4] == ["Arm", "Formula", "Variables", "Executes"]
    assert "Alpha-7B Impl. n=9" in cols


def test_a_broken_catalogue_contract_raises_not_omits(synthetic_results, monkeypatch, tmp_path):
    """The library's calculator list and the catalogue's audit groups are part of the kit: when either breaks,
    the analysis stops naming it instead of writing tables with those columns silently omitted."""
    root, _ = synthetic_results

    def broken():
        raise LookupError("harness.calculators.catalogue.CATALOGUE[2] has audit_group 'x' (synthetic test)")

    monkeypatch.setattr(catalog, "audit_groups", broken)
    with pytest.raises(LookupError, match=r"CATALOGUE\[2\] has audit_group"):
        build_all(root, tmp_path / "t", draws=DRAWS)
    assert not (tmp_path / "t").exists()


def test_single_seed_and_partial_arms(tmp_path, fake_catalog):
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records

    recs = synthetic_records(
        models=("synthetic/demo",), arms=("open-book", "program-solve"), seeds=(42,), sizes=(3, 3, 3), seed=1
    )
    recs += [
        r
        for r in synthetic_records(models=("synthetic/demo",), arms=("blind",), seeds=(42,), sizes=(3, 3, 3), seed=2)
        if r.calculator_id == 1
    ]
    write_records(tmp_path / "r", recs)
    paths = build_all(tmp_path / "r", tmp_path / "t", draws=DRAWS)
    index = (tmp_path / "t" / "index.md").read_text()
    assert "s19: no arm ran more than one seed" in index
    assert "Omitted, no results: Note only" in (tmp_path / "t" / "table1.md").read_text()
    s1 = (tmp_path / "t" / "s1.md").read_text()
    assert "^n=3" in s1  # blind covers 3 of 9 cases: marked, saying what the mark counts
    assert any(p.name == "table2.md" for p in paths)


def test_latex_and_csv_are_well_formed(synthetic_results, fake_catalog, tmp_path):
    root, _ = synthetic_results
    build_all(root, tmp_path / "t", draws=DRAWS)
    for tex in (tmp_path / "t").glob("*.tex"):
        text = tex.read_text()
        assert text.count("\\toprule") == 1 and text.count("\\bottomrule") == 1 and "\\midrule" in text
        body = [line for line in text.splitlines() if line.endswith("\\\\") and "multicolumn" not in line]
        ncols = len(text.split("\\begin{tabular}{")[1].split("}")[0])
        assert all(line.count(" & ") == ncols - 1 for line in body), tex.name
        assert "_" not in text.replace("\\_", "").split("\\end{tabular}")[0].split("\\toprule")[1]
    rows = list(csv.reader(io.StringIO((tmp_path / "t" / "s5.csv").read_text())))
    assert rows[0][:3] == ["Model", "Family", "Comparison"] and len({len(r) for r in rows}) == 1
    assert tex_escape("a & b_c 5% -3.2") == "a \\& b\\_c 5\\% $-$3.2"


def test_cli_commands(synthetic_results, fake_catalog, tmp_path):
    from harness.cli import main

    root, _ = synthetic_results
    runner = CliRunner()
    for cmd in ("stats", "tables", "figures"):
        res = runner.invoke(main, [cmd, "--results", str(root), "--out", str(tmp_path / cmd), "--draws", "200"])
        assert res.exit_code == 0, res.output
    assert (tmp_path / "stats" / "stats.json").exists()
    assert (tmp_path / "tables" / "index.md").exists()
    assert (tmp_path / "figures" / "fig2-coverage.pdf").exists()
    bad = tmp_path / "bad" / "synthetic_m" / "blind" / "seed42.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        '{"key": "k", "scorer": "paper", "model": "m", "arm": "blind", "seed": 42, "case_id": "1-1", '
        '"calculator_id": 1, "correct": 1, "outcome": "answered", "record_schema": 2}\n'
    )
    res = runner.invoke(main, ["tables", "--results", str(tmp_path / "bad"), "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "seed42.jsonl:1" in res.output and "correct (int, not bool)" in res.output
    # the store's reader checks the record's required fields first (one reader, one rule for every stage)
    bad.write_text(
        '{"model": "m", "arm": "blind", "seed": 42, "case_id": "1-1", "calculator_id": 1, '
        '"correct": true, "outcome": "answered"}\n'
    )
    res = runner.invoke(main, ["tables", "--results", str(tmp_path / "bad"), "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "seed42.jsonl:1" in res.output and "lacks required field(s) key, scorer" in res.output


def test_figures_are_byte_stable_without_timestamps(synthetic_results, fake_catalog, tmp_path):
    from harness.analysis.figures import build_figures

    an = analyse(synthetic_results[0], draws=200)
    a = build_figures(an, tmp_path / "a")
    b = build_figures(an, tmp_path / "b")
    assert sorted(p.name for p in a) == [
        "fig1b-accuracy.pdf",
        "fig1b-accuracy.png",
        "fig2-coverage.pdf",
        "fig2-coverage.png",
    ]
    for pa, pb in zip(a, b):
        data = pa.read_bytes()
        assert data == pb.read_bytes(), pa.name
        assert b"CreationDate" not in data and b"Software" not in data and b"matplotlib version" not in data
        assert data[:4] in (b"%PDF", b"\x89PNG")
