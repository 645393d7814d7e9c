"""The paper's tables (and the ones beyond it), formatted from one analysis (harness.analysis.results_analysis).

`TABLES` is the one table registry (a `Registry[TableSpec]`, harness.core.registry): every table id with its group,
its builder and whether the paper has it, in the paper's order (table1, table1-other, table2, s1, ..., s19), then
the tables beyond the paper (s20-s22). Each group is one module of this package (harness.analysis.tables.spec says
which tables each holds): `ladder`, `gaps`, `ledger`, `audit`, `router`.

`build_tables` builds every table the analysis determines and says why each paper table it cannot build is omitted;
`write_tables` writes each as Markdown, LaTeX (booktabs) and CSV, the sheets tables write beside themselves, and an
`index.md`; `build_all` does both from a results root. The same results, draws and seed give byte-identical files
(`make verify` relies on it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.analysis.results_analysis import Analysis, analyse
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats.labels import model_label, synthetic_notice
from harness.analysis.table_format import Omit, Table
from harness.analysis.tables import audit, gaps, ladder, ledger, router
from harness.analysis.tables.spec import GROUPS, TableSpec, paper_order
from harness.core.registry import Registry

__all__ = ["GROUPS", "PAPER_TABLES", "TABLES", "TableSpec", "build_all", "build_tables", "write_tables"]

TABLES: Registry[TableSpec] = Registry("table", TableSpec)
for _spec in sorted(
    ladder.SPECS + gaps.SPECS + ledger.SPECS + audit.SPECS + router.SPECS,
    key=lambda s: (not s.paper, paper_order(s.name)),
):
    TABLES.register(_spec)
TABLES.freeze()

# Every table id of the paper, in its order (the index lists each: built, or omitted with the reason).
PAPER_TABLES = tuple(name for name, spec in TABLES.items() if spec.paper)


def build_tables(an: Analysis) -> tuple[list[Table], dict[str, str]]:
    """Every table the analysis determines, and {name: reason} for the paper tables it does not (a table beyond the
    paper that the results do not determine is left out silently)."""
    tables, omitted = [], {}
    for name, spec in TABLES.items():
        try:
            tables.append(spec.build(an))
        except Omit as exc:
            if spec.paper:
                omitted[name] = str(exc)
    notice = synthetic_notice(an.data.models)
    if notice:  # said first, in every table: the title and the first note
        tables = [dataclasses.replace(t, title=f"SYNTHETIC - {t.title}", notes=[notice, *t.notes]) for t in tables]
    return tables, omitted


def write_tables(
    tables: list[Table], omitted: dict[str, str], out_dir: str | Path, an: Analysis | None = None
) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for t in tables:
        for ext, text in (("md", t.to_markdown()), ("tex", t.to_latex()), ("csv", t.to_csv())):
            p = out / f"{t.name}.{ext}"
            p.write_text(text, encoding="utf-8")
            paths.append(p)
    index = ["# Tables", ""]
    notice = synthetic_notice(an.data.models) if an is not None else None
    if notice:
        index += [f"**{notice}**", ""]
    if an is not None:
        r = an.resampler.describe()
        index += [
            f"Derived from per-case results by `harness tables`: {an.data.n_cases} cases, "
            f"{len(an.data.calculators)} calculators, models {', '.join(model_label(m) for m in an.data.models)}. "
            f"Bootstrap: {r['draws']:,} draws, seed {r['seed']}, {r['interval']} ({r['quantile_method']}).",
            "",
        ]
    index += [f"- [{t.name}]({t.name}.md): {t.title}" for t in tables]
    if omitted:
        index += ["", "Omitted:"] + [f"- {k}: {v}" for k, v in omitted.items()]
    for t in tables:
        sheet = TABLES[t.name].sheet if t.name in TABLES else None
        if an is not None and sheet is not None:
            p = out / sheet.name
            p.write_text(sheet.text(an), encoding="utf-8")
            paths.append(p)
            index += ["", sheet.index_note]
    p = out / "index.md"
    p.write_text("\n".join(index) + "\n", encoding="utf-8")
    paths.append(p)
    return paths


def build_all(
    results_dir: str | Path,
    out_dir: str | Path,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    dataset: str | None = None,
) -> list[Path]:
    """Re-derive every table from `results_dir` into `out_dir` (Markdown, LaTeX, CSV); return the paths.

    Same results, draws and seed give byte-identical files."""
    an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
    tables, omitted = build_tables(an)
    return write_tables(tables, omitted, out_dir, an)
