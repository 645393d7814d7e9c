"""The comparison figure: the plain sentence per model on top, then one row per compared quantity with the
paper's value and its printed 95% interval (black; where it prints none, its rerun tolerance in grey) beside the
user's value and their 95% calculator-cluster interval (coloured by verdict). One panel for accuracies and shares
(%), one for paired gaps (pp), each only when the results have such numbers; a quantity the paper prints in
several places is drawn once."""

from __future__ import annotations

import textwrap
from pathlib import Path

from harness.analysis.comparison.render import short_model
from harness.analysis.figures import PNG_META, STYLE, pyplot

COLOUR = {"reproduced": "#2a9d4b", "consistent": "#e09f3e", "discrepancy": "#d1495b", "not comparable": "#8a8a8a"}
MAX_ROWS = 60  # per panel; beyond it the panel draws the first ones and says how many it left out
PANEL_W, LABELS_W = 8.0, 3.4  # inches per panel, of which the row labels take


def comparison_figure(rows: list[dict], sentences: list[str], png: Path) -> Path | None:
    """Write the figure to `png`; None (nothing written) when no row has a number of the user's."""
    seen, pts = set(), []
    for r in rows:
        if r["ours"] is None or r["unit"] not in ("%", "pp") or r["key"] in seen:
            continue
        seen.add(r["key"])
        pts.append(r)
    if not pts:
        return None
    plt = pyplot()
    panels = [
        (u, t)
        for u, t in (("%", "Accuracies and shares (%)"), ("pp", "Paired gaps (pp)"))
        if any(r["unit"] == u for r in pts)
    ]
    n = max(min(sum(r["unit"] == u for r in pts), MAX_ROWS) for u, _ in panels)
    head = "\n".join(textwrap.fill(s, 85 * len(panels)) for s in sentences)
    head_lines = head.count("\n") + 1
    width, height = PANEL_W * len(panels), 1.3 + 0.26 * n + 0.16 * head_lines
    with plt.rc_context({**STYLE, "font.size": 9}):
        fig = plt.figure(figsize=(width, height))
        top = (0.16 * head_lines + 0.55) / height
        axes = [
            fig.add_axes(
                (
                    (i * PANEL_W + LABELS_W) / width,
                    0.7 / height,
                    (PANEL_W - LABELS_W - 0.25) / width,
                    1 - top - 0.7 / height,
                )
            )
            for i in range(len(panels))
        ]  # fixed margins: no layout solver
        for ax, (unit, title) in zip(axes, panels):
            sel = [r for r in pts if r["unit"] == unit]
            left = len(sel) - MAX_ROWS
            sel = sel[:MAX_ROWS]
            for i, r in enumerate(sel):
                y = len(sel) - 1 - i
                if r["paper_lo"] is not None:
                    ax.plot([r["paper_lo"], r["paper_hi"]], [y + 0.17] * 2, color="#222", lw=1.4)
                elif r["verdict"] != "not comparable":  # a tolerance for a number of another setting means nothing
                    ax.plot(
                        [r["paper"] - r["tolerance"], r["paper"] + r["tolerance"]],
                        [y + 0.17] * 2,
                        color="#aaa",
                        lw=3,
                        solid_capstyle="butt",
                    )
                ax.plot(r["paper"], y + 0.17, marker="D", color="#222", ms=4)
                colour = COLOUR.get(r["verdict"], "#8a8a8a")
                if r["ours_lo"] is not None:
                    ax.plot([r["ours_lo"], r["ours_hi"]], [y - 0.17] * 2, color=colour, lw=1.4)
                ax.plot(
                    r["ours"],
                    y - 0.17,
                    marker="o",
                    color=colour,
                    ms=4.5,
                    mfc=colour if r["verdict"] != "not comparable" else "none",
                )
            ax.set_yticks(range(len(sel)))
            ax.set_yticklabels([textwrap.shorten(_label(r), 60) for r in reversed(sel)], fontsize=7)
            if unit == "pp":
                ax.axvline(0, color="#555", lw=0.7, ls=":")
            ax.set_ylim(-0.8, len(sel) - 0.2)
            ax.set_xlabel(unit)
            ax.set_title(title + (f" (first {MAX_ROWS}; {left} more in comparison.md)" if left > 0 else ""))
            ax.grid(True, axis="x", color="#eee", lw=0.6)
        handles = [
            plt.Line2D([], [], color="#222", marker="D", lw=1.4, ms=4, label="paper, its 95% interval"),
            plt.Line2D([], [], color="#aaa", lw=3, label="paper, rerun tolerance (no interval printed)"),
        ]
        for verdict, colour in COLOUR.items():
            k = sum(r["verdict"] == verdict for r in pts)
            if k:
                handles.append(
                    plt.Line2D(
                        [],
                        [],
                        color=colour,
                        marker="o",
                        lw=1.4,
                        ms=4.5,
                        mfc=colour if verdict != "not comparable" else "none",
                        label=f"yours, your 95% cluster interval: {verdict} ({k})",
                    )
                )
        fig.legend(
            handles=handles, loc="upper right", bbox_to_anchor=(0.995, 1 - 0.05 / height), fontsize=7, frameon=False
        )
        fig.text(0.01, 1 - 0.1 / height, head, ha="left", va="top", fontsize=8.5)
        png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, format="png", metadata=PNG_META)
        plt.close(fig)
    return png


def _label(r: dict) -> str:
    """'<model>: <what> [<subset>] (<source>)': the subset from the row's quantity key where the text lacks it."""
    subset = r["key"].split("|")[2] if r["key"].count("|") >= 3 else ""
    extra = f" [{subset}]" if subset not in ("", "full", "all") and subset not in r["what"] else ""
    return f"{short_model(r['model'])}: {r['what']}{extra} ({r['source']})"
