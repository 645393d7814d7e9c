"""Figures from per-case results, as byte-stable PNG and PDF.

* Figure 2 (`fig2-coverage`): coverage against full-set accuracy for a library of k calculators.
  A library that abstains outside its calculators covers at most the cases of the calculators it
  implements, so its full-set accuracy lies on or under the coverage line; the library arms are
  marked at their k, Program-Solve (which attempts every calculator) at k = all.
* Figure 1b (`fig1b-accuracy`): full-set accuracy bars of the ladder arms per model, with the blind
  arm drawn open (outline only).

Output is deterministic: the Agg backend, a fixed style, and no timestamps or version strings in
the file metadata (`CreationDate`/`Creator` removed from PDFs, `Software` from PNGs), so the same
results give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.router_report import curves, matched_records, router_records
from harness.analysis.stats.labels import arm_label, model_label
from harness.analysis.stats.paired import accuracy
from harness.analysis.stats.risk_coverage import single_arm_point
from harness.arms.registry import ARMS, hybrid_libraries, ladder, matched_arms, table_arms

if TYPE_CHECKING:  # matplotlib itself is imported when a figure is drawn (pyplot())
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

PDF_META = {"CreationDate": None, "Creator": None, "Producer": None}
PNG_META = {"Software": None}
STYLE: dict[RcKeyType, object] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "harness",
    "pdf.compression": 6,
    "figure.dpi": 100,
    "savefig.dpi": 150,
}
COLORS = ("#1b6ca8", "#d1495b", "#66a182", "#edae49", "#6d597a", "#2e4057")


def pyplot() -> ModuleType:
    """matplotlib.pyplot on the Agg backend, imported when a figure is drawn: importing it costs about 0.5 CPU-s,
    which every `harness` command that reaches this module (reproduce, serve, report) would otherwise pay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    png, pdf = out_dir / f"{stem}.png", out_dir / f"{stem}.pdf"
    fig.savefig(png, format="png", metadata=PNG_META)
    fig.savefig(pdf, format="pdf", metadata=PDF_META)
    plt.close(fig)
    return [png, pdf]


LIBRARY_MARKERS = ("s", "^", "D", "v", "P", "X")  # Figure 2's library arms, in their hybrid rank order


def coverage_arms() -> tuple[list[str], list[str]]:
    """Figure 2's arms (those whose paper role lists "fig2"): (the library arms of the hybrids, marked at the
    library's k, in their rank order; the others, marked at k = all, in arm order)."""
    arms = table_arms("fig2")
    libraries = [a for a in hybrid_libraries().values() if a in arms][: len(LIBRARY_MARKERS)]
    return libraries, [a for a in arms if a not in libraries]


def figure_coverage(an: Analysis, out_dir: Path) -> list[Path]:
    """Figure 2: coverage bound against full-set accuracy for a library of k calculators."""
    plt = pyplot()
    d = an.data
    n_calc = len(d.calculators)
    sizes = d.cluster_sizes
    k = np.arange(n_calc + 1)
    mean_line = 100 * k * (d.n_cases / n_calc) / d.n_cases
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        ax.plot(k, mean_line, color="0.3", lw=1.2, label="coverage bound (mean calculator size)")
        if len(set(sizes.tolist())) > 1:  # unbalanced: the bound depends on which calculators
            top = 100 * np.concatenate([[0], np.cumsum(np.sort(sizes)[::-1])]) / d.n_cases
            ax.plot(k, top, color="0.6", lw=0.8, ls="--", label="bound, largest calculators first")
        ax.fill_between(k, 0, mean_line, color="0.92", lw=0)
        lib_k = int(np.sum(np.isin(d.calculators, sorted(an.library))))
        libraries, attempts_all = coverage_arms()
        for i, m in enumerate(d.models):
            color = COLORS[i % len(COLORS)]
            for arm, marker in zip(libraries, LIBRARY_MARKERS):
                acc = accuracy(d, m, arm)
                if acc is None:
                    continue
                ax.plot(
                    [lib_k],
                    [acc["mean"]],
                    marker=marker,
                    color=color,
                    ls="none",
                    ms=6,
                    clip_on=False,
                    zorder=5,
                    label=f"{arm_label(arm, short=True)} {model_label(m)}",
                )
            for arm in attempts_all:
                acc = accuracy(d, m, arm)
                if acc is None:
                    continue
                ax.plot(
                    [n_calc],
                    [acc["mean"]],
                    marker="o",
                    color=color,
                    ls="none",
                    ms=6,
                    clip_on=False,
                    zorder=5,
                    label=f"{arm_label(arm, short=True)} {model_label(m)}",
                )
        ax.set_xlim(0, n_calc + 2)  # markers at k = all and at 0 % are drawn whole (clip_on=False)
        ax.set_ylim(0, 100)
        ax.set_xlabel(f"calculators implemented, k (of {n_calc})")
        ax.set_ylabel("full-set accuracy (%)")
        ax.set_title(f"Coverage bound, {d.n_cases} cases", fontsize=9)
        ax.legend(fontsize=6.5, frameon=False, loc="upper left", ncol=1)
        fig.tight_layout()
        return _save(fig, out_dir, "fig2-coverage")


def figure_accuracy(an: Analysis, out_dir: Path) -> list[Path]:
    """Figure 1b: full-set accuracy of the ladder arms by model; the blind arm drawn open."""
    plt = pyplot()
    d = an.data
    arms = [a for a in ladder() if any(d.has(m, a) for m in d.models)]  # the bars are the ladder's arms
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        width = 0.8 / max(len(d.models), 1)
        x = np.arange(len(arms))
        for i, m in enumerate(d.models):
            color = COLORS[i % len(COLORS)]
            for j, arm in enumerate(arms):
                acc = accuracy(d, m, arm)
                if acc is None:
                    continue
                hollow = ARMS[arm].display.hollow  # the blind arm: drawn open
                xpos = x[j] + (i - (len(d.models) - 1) / 2) * width
                ax.bar(
                    xpos,
                    acc["mean"],
                    width * 0.92,
                    color="white" if hollow else color,
                    edgecolor=color,
                    linewidth=1.2,
                    hatch="//" if hollow else None,
                    label=model_label(m)
                    if j == 0 or (j == min(jj for jj, a in enumerate(arms) if d.has(m, a)))
                    else None,
                )
                # the value and the cases under each bar: a 0 % bar has no height, and arms cover different cases
                ax.plot(
                    [xpos - width * 0.46, xpos + width * 0.46],
                    [0, 0],
                    color=color,
                    lw=2.5,
                    solid_capstyle="butt",
                    clip_on=False,
                )
                ax.annotate(
                    f"{acc['mean']:.0f}%\nn={acc['cases']}",
                    (xpos, acc["mean"]),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    color="0.2",
                )
        ax.set_xticks(x)
        ax.set_xticklabels([arm_label(a, short=True) for a in arms], rotation=30, ha="right")
        ax.set_ylim(0, 112)  # room for the labels over a 100 % bar
        ax.set_ylabel("accuracy on the cases each arm ran (%)")
        ax.set_title("Accuracy by arm (blind arm open; n = cases the arm ran)", fontsize=9)
        handles, labels = ax.get_legend_handles_labels()
        seen: dict[str, Artist] = {}
        for h, lab in zip(handles, labels):
            seen.setdefault(lab, h)
        ax.legend(seen.values(), seen.keys(), fontsize=7, frameon=False)
        fig.tight_layout()
        return _save(fig, out_dir, "fig1b-accuracy")


def figure_risk_coverage(an: Analysis, out_dir: Path) -> list[Path]:
    """Accuracy on answered rows against coverage, with cluster bands, per model and router arm."""
    plt = pyplot()
    if not router_records(an):
        return []
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
            ax.plot(
                cov[ok],
                acc[ok],
                marker="o",
                ms=4,
                color=color,
                lw=1.2,
                label=f"{arm_label(c.arm, short=True)} {model_label(c.model)} (AURC {c.aurc:.3f})",
            )
            ax.fill_between(cov[ok], lo[ok], hi[ok], color=color, alpha=0.15, lw=0)
            for p, x, y in zip(c.points, cov, acc):
                if not np.isnan(y):
                    ax.annotate(
                        p.label.replace("library only", "lib"),
                        (x, y),
                        fontsize=6,
                        color=color,
                        xytext=(3, 3),
                        textcoords="offset points",
                    )
            matched = matched_records(an, c)
            if matched:
                e = single_arm_point(matched, matched_arms()[c.arm])
                ax.plot(
                    [100 * e["coverage"]],
                    [100 * e["accuracy"]],
                    marker="x",
                    color=color,
                    ls="none",
                    ms=6,
                    label=f"{arm_label(matched_arms()[c.arm], short=True)} alone {model_label(c.model)}",
                )
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.set_xlabel("coverage: rows answered (%)")
        ax.set_ylabel("accuracy on answered rows (%)")
        ax.set_title("Risk-coverage of the router (points: agreement threshold m)", fontsize=9)
        ax.legend(fontsize=6.5, frameon=False, loc="lower left")
        fig.tight_layout()
        return _save(fig, Path(out_dir), "fig-risk-coverage")


def build_figures(an: Analysis, out_dir: str | Path) -> list[Path]:
    out_dir = Path(out_dir)
    # accuracy by arm first: the figure a reader opening the report looks for
    return figure_accuracy(an, out_dir) + figure_coverage(an, out_dir) + figure_risk_coverage(an, out_dir)
