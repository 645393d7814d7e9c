"""Beyond the paper: the router arms' tables and risk-coverage figure, from stored records only.

* s20 (router summary): per model and router arm, coverage (answered share), accuracy on answered
  rows, full-set accuracy (abstentions counted wrong), route shares, and paired gaps against the
  matched single-program arm (Program-Solve / Blind Program-Solve) and against the Gold-first
  hybrid (Gold-Solve, else Program-Solve), each with its calculator-cluster 95% interval, on the
  analysis's shared bootstrap draws.
* s21 (risk-coverage): every point of the curve (library only, then m = k .. 1) with cluster
  bands, the program-only end (the matched single-program arm) and the AURC with its interval
  (harness.stats.risk_coverage).
* s22 (formula versions): for rows run at a non-benchmark formula version, accuracy against the
  benchmark gold and, in its own column, agreement with the "library-derived reference"; plus the
  Gold-Solve library's own change counts on the same dataset (harness.stats.version_effects).
* fig-risk-coverage: accuracy on answered rows against coverage, with bands, per model and arm.

These exist only when the results hold router arms (s20, s21, the figure) or non-benchmark
versions (s22); otherwise nothing is written and nothing is listed as omitted, so the paper's
tables and their index stay byte-identical.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.stats.families import Comparison, arm_label
from harness.stats.paired import accuracy, paired_gaps
from harness.stats.risk_coverage import ROUTER_ARMS, curve, level_rows, single_arm_point

MATCHED = {"routed-gold": "program-solve", "routed-blind": "blind"}
GOLD_FIRST = "hybrid:gold-first+program-solve"


def router_records(an) -> list[dict]:
    """Router records of the analysed dataset (full records: the route provenance is needed)."""
    return [r for r in _records(an) if r.get("arm") in ROUTER_ARMS]


def _records(an) -> list[dict]:
    from harness.store import iter_located_records

    if getattr(an, "results_dir", None) is None:
        return []
    cached = getattr(an, "_full_records", None)
    if cached is None:
        from harness.stats.arrays import _dataset_of

        keep = set(an.data.case_ids)
        by: dict[str, list[dict]] = {}
        for _, _, r in iter_located_records(an.results_dir):
            if r.get("case_id") in keep:
                by.setdefault(_dataset_of(r), []).append(r)
        # the analysed dataset: the one whose records cover the analysed cases most
        cached = by[max(by, key=lambda k: (len(by[k]), k))] if by else []
        an._full_records = cached
    return cached


def router_comparisons(arms) -> tuple[Comparison, ...]:
    out = []
    for arm in ROUTER_ARMS:
        if arm not in arms:
            continue
        out.append(Comparison(arm, MATCHED[arm], "router", "same prompt family, single greedy program"))
        out.append(Comparison(arm, GOLD_FIRST, "router", "library first, then Program-Solve"))
    return tuple(out)


def curves(an) -> list:
    rows = level_rows(router_records(an))
    return [curve(rows[key], resampler=None, draws=an.resampler.draws, seed=an.resampler.seed)
            for key in sorted(rows)]


def _fmt(x: float, digits: int = 2) -> str:
    from harness.tables import fmt
    return fmt(x, digits)


def _ci(lo: float, hi: float) -> str:
    from harness.tables import fmt_ci
    return fmt_ci(lo, hi)


def table_s20(an, crvs) -> "Table | None":
    from harness.tables import Table, _gap_cell, model_label

    if not crvs:
        return None
    gaps = paired_gaps(an.data, router_comparisons(an.data.arms), an.resampler).rows
    gap = {(g["model"], g["solver"], g["reference"]): g for g in gaps}
    rows = []
    for c in crvs:
        point = next(p for p in c.points if p.label == f"m={_default_m(an, c)}")
        acc = accuracy(an.data, c.model, c.arm)
        total = sum(c.routes.values())
        shares = " / ".join(f"{100 * c.routes[r] / total:.1f}" for r in ("library", "programs", "abstain"))
        rows.append([model_label(c.model), arm_label(c.arm), _fmt(100 * point.coverage), _fmt(100 * point.accuracy),
                     _fmt(acc["mean"]) if acc else "\u2013", shares,
                     _gap_cell(gap.get((c.model, c.arm, MATCHED[c.arm]))),
                     _gap_cell(gap.get((c.model, c.arm, GOLD_FIRST)))])
    notes = ["Coverage: % of case-seed rows answered; Acc. answered: % correct among them; Full acc.: abstentions "
             "count wrong (mean over seeds). Routes: % library / programs / abstain.",
             "Gaps (pp, full-set accuracy, router minus reference) on the cases and seeds both have, "
             "calculator-cluster 95% interval on the analysis's shared draws. Matched arm: Program-Solve for "
             "routed-gold, Blind Program-Solve for routed-blind. Gold-first: Gold-Solve, else Program-Solve.",
             "Beyond the paper: the paper recommends this configuration but never runs it."]
    return Table("s20", "Beyond the paper: router arms (library, else m of k programs, else abstain)",
                 ["Model", "Arm", "Coverage", "Acc. answered", "Full acc.", "Routes L/P/A", "Gap vs matched",
                  "Gap vs Gold-first"], rows, notes, "ll" + "r" * 6)


def _default_m(an, c) -> int:
    ms = {int(r["detail"]["router"]["m"]) for r in router_records(an)
          if r["model"] == c.model and r["arm"] == c.arm}
    return ms.pop() if len(ms) == 1 else max(ms)


def table_s21(an, crvs) -> "Table | None":
    from harness.tables import SECTION, Table, model_label

    if not crvs:
        return None
    rows = []
    for c in crvs:
        rows.append([SECTION, f"{model_label(c.model)}, {arm_label(c.arm)}: k = {c.k}, {c.n_rows} rows, "
                              f"{c.n_calculators} calculators; AURC {_fmt(c.aurc, 4)} {_ci(*c.aurc_ci)}"])
        for p in c.points:
            rows.append([p.label, _fmt(100 * p.coverage), _ci(*(100 * np.array(p.coverage_ci))),
                         _fmt(100 * p.accuracy), _ci(*(100 * np.array(p.accuracy_ci))), _fmt(100 * p.full_accuracy)])
        matched = [r for r in _records(an) if r["model"] == c.model and r["arm"] == MATCHED[c.arm]]
        if matched:
            e = single_arm_point(matched, MATCHED[c.arm])
            rows.append([f"program only ({arm_label(MATCHED[c.arm], short=True)})", _fmt(100 * e["coverage"]),
                         "\u2013", _fmt(100 * e["accuracy"]), "\u2013", _fmt(100 * e["full_accuracy"])])
    notes = ["Computed from the stored k program outcomes of every router record, without new model calls. "
             "At threshold m the router answers a row from the library, or when at least m of its k programs "
             "agree; 'library only' answers library rows alone. Program only: the matched single-program arm.",
             "Coverage and accuracy on answered rows (%) with calculator-cluster 95% bands; AURC: area under the "
             "risk (1 - accuracy) against coverage curve, rows ranked by agreement (ties in random order), "
             "lower is better."]
    return Table("s21", "Beyond the paper: risk-coverage of the router arms",
                 ["Point", "Coverage", "95% band", "Acc. answered", "95% band", "Full acc."], rows, notes, "lrrrrr")


def table_s22(an) -> "Table | None":
    from harness.dataset import load_dataset
    from harness.stats.version_effects import case_rows, summarise
    from harness.tables import SECTION, Table, model_label

    versioned = [r for r in _records(an) if isinstance(r.get("reference"), dict)]
    if not versioned:
        return None
    rows = [[SECTION, "Rows run at a non-benchmark version: benchmark gold and library-derived reference, "
                      "separate columns"]]
    groups: dict[tuple, list[dict]] = {}
    for r in versioned:
        groups.setdefault((r["model"], r["arm"], r["calculator_id"], r["reference"]["version"]), []).append(r)
    for (model, arm, cid, version), rs in sorted(groups.items()):
        ref_ok = [x["reference"]["correct"] for x in rs if x["reference"]["correct"] is not None]
        rows.append([model_label(model), arm_label(arm, short=True), str(cid), version, str(len(rs)),
                     _fmt(100 * np.mean([bool(x["correct"]) for x in rs])),
                     _fmt(100 * np.mean(ref_ok)) if ref_ok else "n/a",
                     str(sum(1 for x in rs if x["reference"]["value"] is None))])
    dataset_name = versioned[0].get("dataset")
    try:
        ds = load_dataset(dataset_name)
        summary = summarise(case_rows(ds))
    except Exception as exc:  # noqa: BLE001 - a dataset that cannot be loaded only drops this block
        summary, note = [], f"Gold-Solve change counts omitted: dataset {dataset_name!r} not loadable ({exc})."
    else:
        note = ""
    if summary:
        rows.append([SECTION, f"Gold-Solve library on {dataset_name}: answers that change when the version is chosen"])
        for s in summary:
            where = "" if s["in_gold_solve"] else " (outside Gold-Solve's 22)"
            rows.append(["library", "Gold lib.", str(s["calculator_id"]), s["version"], str(s["cases"]),
                         f"{s['benchmark_correct']} correct at {s['benchmark_version']}{where}",
                         f"{s['changes']} change, {s['differs']} differ" if s["reference_available"]
                         else "n/a", str(s["cases"] - s["reference_available"])])
    notes = ["Benchmark acc.: % correct against the benchmark's gold (which exists only for the benchmark's "
             "version). Reference agr.: % of answers within the benchmark's tolerance of the library-derived "
             "reference (the chosen version's library function on the gold variables); never benchmark gold.",
             "Gold-Solve block: 'change' = the chosen version's value lies outside the benchmark tolerance (+-5% "
             "decimals, exact integers) of the benchmark version's value; 'differ' = any difference at 3 decimals. "
             "No ref.: rows whose gold variables lack an input the version needs (e.g. albumin and sex for MELD 3.0, "
             "eGFR for PREVENT)."]
    if note:
        notes.append(note)
    return Table("s22", "Beyond the paper: formula versions as explicit inputs",
                 ["Model", "Arm", "Calc.", "Version", "Rows", "Benchmark acc.", "Reference agr.", "No ref."],
                 rows, notes, "llllrrrr")


def extension_tables(an) -> list:
    """The router and formula-version tables these results determine (possibly none)."""
    crvs = curves(an) if router_records(an) else []
    return [t for t in (table_s20(an, crvs), table_s21(an, crvs), table_s22(an)) if t is not None]


def figure_risk_coverage(an, out_dir: Path) -> list[Path]:
    """Accuracy on answered rows against coverage, with cluster bands, per model and router arm."""
    if not router_records(an):
        return []
    from harness.figures import COLORS, STYLE, _save, plt
    from harness.tables import model_label

    crvs = curves(an)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        for i, c in enumerate(crvs):
            color = COLORS[i % len(COLORS)]
            cov = np.array([100 * p.coverage for p in c.points])
            acc = np.array([100 * p.accuracy for p in c.points])
            lo = np.array([100 * p.accuracy_ci[0] for p in c.points])
            hi = np.array([100 * p.accuracy_ci[1] for p in c.points])
            ok = ~np.isnan(acc)
            ax.plot(cov[ok], acc[ok], marker="o", ms=4, color=color, lw=1.2,
                    label=f"{arm_label(c.arm, short=True)} {model_label(c.model)} (AURC {c.aurc:.3f})")
            ax.fill_between(cov[ok], lo[ok], hi[ok], color=color, alpha=0.15, lw=0)
            for p, x, y in zip(c.points, cov, acc):
                if not np.isnan(y):
                    ax.annotate(p.label.replace("library only", "lib"), (x, y), fontsize=6, color=color,
                                xytext=(3, 3), textcoords="offset points")
            matched = [r for r in _records(an) if r["model"] == c.model and r["arm"] == MATCHED[c.arm]]
            if matched:
                e = single_arm_point(matched, MATCHED[c.arm])
                ax.plot([100 * e["coverage"]], [100 * e["accuracy"]], marker="x", color=color, ls="none", ms=6,
                        label=f"{arm_label(MATCHED[c.arm], short=True)} alone {model_label(c.model)}")
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.set_xlabel("coverage: rows answered (%)")
        ax.set_ylabel("accuracy on answered rows (%)")
        ax.set_title("Risk-coverage of the router (points: agreement threshold m)", fontsize=9)
        ax.legend(fontsize=6.5, frameon=False, loc="lower left")
        fig.tight_layout()
        return _save(fig, Path(out_dir), "fig-risk-coverage")


__all__ = ["extension_tables", "figure_risk_coverage", "router_records", "router_comparisons", "curves",
           "MATCHED", "GOLD_FIRST"]
