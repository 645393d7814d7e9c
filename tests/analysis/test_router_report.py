"""The router tables (s20, s21) and risk-coverage figure from stored records, on synthetic results.

Synthetic records only (model "synthetic/router", dataset "synthetic", `"synthetic": true`): the point
is a result set whose curve is known, not a result."""

from __future__ import annotations

import dataclasses

from harness.analysis.results_analysis import analyse
from harness.analysis.stats.risk_coverage import curve, level_rows
from harness.analysis.stats.synthetic_records import synthetic_records, write_records
from harness.analysis.tables import build_tables
from tests.analysis.test_risk_coverage import DESIGN, design_records

SEEDS = (42, 43)


def results(tmp_path, with_router=True):
    sizes = tuple(len(DESIGN[c]) for c in sorted(DESIGN))
    recs = synthetic_records(
        models=("synthetic/router",), arms=("program-solve", "gold-lib"), seeds=SEEDS, sizes=sizes, library=(1,), seed=3
    )
    if with_router:
        for r in design_records(seeds=SEEDS):
            calc, row = (int(x) for x in r.case_id.split("-"))
            recs.append(
                dataclasses.replace(
                    r,
                    row_number=100 * calc + row,
                    calculator_name=f"Synthetic calculator {calc}",
                    key=f"router|{r.seed}|{r.case_id}",
                )
            )
    return write_records(tmp_path / "results", recs)


def test_router_tables_from_records(tmp_path):
    root = results(tmp_path)
    an = analyse(root, draws=300, seed=5)
    tables, omitted = build_tables(an)
    by = {t.name: t for t in tables}
    assert {"s20", "s21"} <= set(by) and "s20" not in omitted
    # s21 reproduces the curve computed directly from the records
    c = curve(level_rows(design_records(seeds=SEEDS))[("synthetic/router", "routed-gold")], draws=300, seed=5)
    s21 = by["s21"]
    body = [r for r in s21.rows if r[0] != "__section__"]
    for p in c.points:
        row = next(r for r in body if r[0] == p.label)
        assert row[1] == f"{100 * p.coverage:.2f}" and row[3] == f"{100 * p.accuracy:.2f}"
    assert f"AURC {c.aurc:.4f}" in s21.rows[0][1]
    assert any(r[0].startswith("program only") for r in body)
    # s20: the default threshold (m = 3): 18 of 28 rows answered (4 library + 5 program rows per seed)
    s20 = by["s20"].rows[0]
    assert s20[1] == "Routed, formula given" and s20[2] == f"{100 * 18 / 28:.2f}"
    assert s20[5] == f"{100 * 8 / 28:.1f} / {100 * 10 / 28:.1f} / {100 * 10 / 28:.1f}"
    assert s20[6] != "\u2013" and s20[7] != "\u2013"  # both paired gaps computed
    from harness.analysis.figures import build_figures

    paths = build_figures(an, tmp_path / "fig")
    assert (tmp_path / "fig" / "fig-risk-coverage.png").exists() and len(paths) == 6


def test_no_router_no_extension_tables(tmp_path):
    root = results(tmp_path, with_router=False)
    an = analyse(root, draws=100, seed=5)
    tables, omitted = build_tables(an)
    names = {t.name for t in tables}
    assert not names & {"s20", "s21", "s22"} and not set(omitted) & {"s20", "s21", "s22"}
