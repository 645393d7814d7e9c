"""`harness formulas ...`: inspect the formula catalogue and check its completeness.

``check`` runs every calculator's literal implementation of its catalogue text on the gold
variables of every row and prints per-calculator agreement with the gold answers (a report: exit 0
unless ``--min-agreement`` is given and some calculator with rows falls below it). ``show`` prints
one entry. ``table`` prints the markdown table used in docs/FORMULAS.md.
"""

from __future__ import annotations

import json

import click

from harness.calculators.catalogue import CATALOGUE
from harness.calculators.check import V1_ERRATA, check_cases
from harness.cli.convention import announce, convention_option


@click.group("formulas")
def formulas() -> None:
    """The formula catalogue for all 55 calculators: texts, sources, audit flags, completeness check."""


def _fmt_value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


@formulas.command("check")
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    default=("dev",),
    show_default=True,
    help="A pinned name (dev, one-shot, bundled-test, verified) or a CSV/Parquet path; repeatable.",
)
@click.option(
    "--min-agreement",
    type=float,
    default=None,
    help="Exit 1 if any calculator with rows agrees on less than this fraction (0-1), "
    "not counting calculators listed as v1.0 errata when --allow-errata is set.",
)
@click.option(
    "--allow-errata", is_flag=True, help="With --min-agreement, exempt the known MedCalc-Bench v1.0 errata calculators."
)
@click.option(
    "--failures",
    "show_failures",
    type=int,
    default=0,
    metavar="N",
    help="Print up to N disagreeing cases per calculator.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of a table.")
@convention_option
def check(
    datasets: tuple[str, ...],
    min_agreement: float | None,
    allow_errata: bool,
    show_failures: int,
    as_json: bool,
    convention: str | None,
) -> None:
    """Per-calculator agreement of the literal implementations with the gold answers."""
    from harness.data.dataset import DatasetError, load_dataset

    worst_ok = True
    reports = []
    for spec in datasets:
        try:
            ds = load_dataset(str(spec))
        except (DatasetError, FileNotFoundError) as exc:
            raise click.ClickException(str(exc)) from None
        name, cases = str(ds.name), list(ds.cases)
        choice = announce(ds, convention, quiet=as_json)
        res = check_cases(cases, choice.convention)
        rows = []
        for cid, entry in CATALOGUE.items():
            r = res.get(cid)
            n, agree = (r.n, r.agree) if r else (0, 0)
            rate = agree / n if n else None
            rows.append(
                {
                    "calculator_id": cid,
                    "name": entry.name,
                    "n": n,
                    "agree": agree,
                    "rate": rate,
                    "errors": r.errors if r else 0,
                    "v1_erratum": V1_ERRATA.get(cid),
                    "failures": [
                        {
                            "case_id": f.case_id,
                            "value": _fmt_value(f.value),
                            "gold": _fmt_value(f.gold),
                            "error": f.error,
                        }
                        for f in (r.failures if r else [])
                    ][: max(show_failures, 0)],
                }
            )
            if min_agreement is not None and rate is not None and rate < min_agreement:
                if not (allow_errata and cid in V1_ERRATA):
                    worst_ok = False
        total = sum(r["n"] for r in rows)
        agreed = sum(r["agree"] for r in rows)
        present = [r for r in rows if r["n"]]
        reports.append(
            {
                "dataset": name,
                "convention": choice.to_dict(),
                "cases": total,
                "agree": agreed,
                "rate": agreed / total if total else None,
                "calculators_with_rows": len(present),
                "calculators_at_95": sum(1 for r in present if r["rate"] >= 0.95),
                "calculators": rows,
            }
        )

    if as_json:
        click.echo(json.dumps(reports, indent=2, default=str))
    else:
        for rep in reports:
            click.echo(
                f"dataset: {rep['dataset']} (unit convention {rep['convention']['name']}: "
                f"{rep['convention']['reason']})"
            )
            click.echo(f"{'id':>3}  {'calculator':<58} {'agree':>9} {'rate':>7}  note")
            for r in rep["calculators"]:
                rate = f"{100 * r['rate']:6.1f}%" if r["rate"] is not None else "    n/a"
                note = ""
                if r["rate"] is not None and r["rate"] < 0.95:
                    note = "v1.0 erratum: " + r["v1_erratum"] if r["v1_erratum"] else "BELOW 95%"
                if r["errors"]:
                    note = (note + f"; {r['errors']} raised").lstrip("; ")
                click.echo(f"{r['calculator_id']:>3}  {r['name'][:58]:<58} {r['agree']:>4}/{r['n']:<4} {rate}  {note}")
                for f in r["failures"]:
                    click.echo(
                        f"       {f['case_id']}: literal {f['value']} gold {f['gold']}"
                        + (f" ({f['error']})" if f["error"] else "")
                    )
            rate = f"{100 * rep['rate']:.1f}%" if rep["rate"] is not None else "n/a"
            click.echo(
                f"overall: {rep['agree']}/{rep['cases']} cases agree ({rate}); "
                f"{rep['calculators_at_95']}/{rep['calculators_with_rows']} calculators with rows at >= 95%; "
                f"{len(CATALOGUE)} calculators in the catalogue"
            )
            click.echo("")
    if not worst_ok:
        raise SystemExit(1)


@formulas.command("show")
@click.argument("calculator_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the entry as JSON.")
def show(calculator_id: int, as_json: bool) -> None:
    """Print one catalogue entry: text, source, version, audit flags, completeness."""
    entry = CATALOGUE.get(calculator_id)
    if entry is None:
        raise click.ClickException(f"no calculator {calculator_id}; known: {', '.join(map(str, CATALOGUE))}")
    if as_json:
        click.echo(json.dumps(entry.to_dict(), indent=2, ensure_ascii=False))
        return
    f = entry.flags
    click.echo(f"[{entry.calculator_id}] {entry.name}")
    click.echo(f"source: {entry.source}")
    click.echo(f"guideline: {entry.guideline_version} ({entry.guideline_date})")
    click.echo(
        f"audit group: {entry.audit_group}; concern: {f['concern'] or 'none'}"
        + (f"; replaced by: {f['replacing_guideline']}" if f["replaced_by_guideline"] else "")
    )
    if f["note"]:
        click.echo(f"concern note: {f['note']}")
    click.echo(f"completeness: {entry.completeness}" + (f"; repair: {entry.repair}" if entry.repair else ""))
    if entry.history:
        click.echo(f"history: {entry.history}")
    click.echo("")
    click.echo(entry.text)


@formulas.command("table")
@click.option("--write", is_flag=True, help="Rewrite the generated block of docs/FORMULAS.md instead of printing.")
def table(write: bool) -> None:
    """Print the markdown table of all 55 entries (source, version, flags, completeness)."""
    from harness.calculators.docs import DOC_PATH, markdown_table, rewrite_doc

    if write:
        try:
            rewrite_doc()
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"wrote the catalogue table into {DOC_PATH}")
        return
    click.echo(markdown_table())


@formulas.command("versions")
@click.option("--json", "as_json", is_flag=True, help="Print every version entry as JSON.")
def versions(as_json: bool) -> None:
    """The versioned formula entries (`--formula-version CALC_ID=VERSION` choices) with source and date."""
    from harness.calculators.versions import VERSIONS

    if as_json:
        click.echo(
            json.dumps(
                {str(c): {v: fv.to_dict() for v, fv in vs.items()} for c, vs in VERSIONS.items()},
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for cid, vs in VERSIONS.items():
        click.echo(f"{cid} {CATALOGUE[cid].name}")
        for v, fv in vs.items():
            click.echo(f"  {v:<22} {'benchmark' if fv.benchmark else 'option   '} {fv.date:<8} {fv.title}")


@formulas.command("version-effects")
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    default=("bundled-test",),
    show_default=True,
    help="A pinned name or a CSV/Parquet path; repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the per-case rows as JSON.")
def version_effects(datasets: tuple[str, ...], as_json: bool) -> None:
    """Gold-Solve under each non-benchmark version, from the gold variables: how many answers change
    (outside the benchmark tolerance of the benchmark version's value) and how many differ at all."""
    from harness.analysis.stats.version_effects import case_rows, summarise
    from harness.data.dataset import DatasetError, load_dataset

    rows = []
    for name in datasets:
        try:
            rows += case_rows(load_dataset(name))
        except DatasetError as exc:
            raise click.BadParameter(str(exc), param_hint="--dataset") from None
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    click.echo(
        "dataset | calc | benchmark version -> version | cases | benchmark-correct | change | differ | no reference"
    )
    for s in summarise(rows):
        click.echo(
            f"{s['dataset']} | {s['calculator_id']}{'' if s['in_gold_solve'] else '*'} | "
            f"{s['benchmark_version']} -> {s['version']} | {s['cases']} | {s['benchmark_correct']} | "
            f"{s['changes']} | {s['differs']} | {s['cases'] - s['reference_available']}"
            + (f" ({s['unavailable_reasons']})" if s["unavailable_reasons"] else "")
        )
    click.echo("* outside Gold-Solve's 22 calculators: the library-derived reference only")
