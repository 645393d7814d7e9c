"""The comparison figure: paper (x) against ours (y), one point per compared number, the identity line and
each point's tolerance band (a vertical bar from the band's low to high end at the paper's value), colour
and marker by verdict. One panel each for accuracies and shares (%) and for paired gaps (pp), when the results
have such numbers. Counts are not drawn."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from harness.analysis.figures import PNG_META, STYLE  # noqa: E402

# verdict head -> (label, colour, marker, filled)
LOOK = {"inside": ("inside the tolerance", "#2a9d4b", "o", True),
        "outside": ("outside the tolerance", "#d1495b", "X", True),
        "not comparable": ("not comparable (arithmetic only)", "#7a7a7a", "o", False)}


def comparison_figure(rows: list[dict], png: Path) -> Path | None:
    """Write the figure to `png`; None (nothing written) when no row has a number of ours."""
    pts = [r for r in rows if r["ours"] is not None and r["unit"] in ("%", "pp")]
    if not pts:
        return None
    with plt.rc_context({**STYLE, "font.size": 10}):
        panels = [(u, t) for u, t in (("%", "Accuracy and shares (%)"), ("pp", "Paired gaps (pp)"))
                  if any(r["unit"] == u for r in pts)]  # a panel only for a kind of number these results have
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.6), constrained_layout=True,
                                 squeeze=False)
        for ax, (unit, title) in zip(axes[0], panels):
            sel = [r for r in pts if r["unit"] == unit]
            lo = min([0.0] + [min(r["paper"], r["ours"], r["band_lo"]) for r in sel])
            hi = max([100.0 if unit == "%" else 10.0] + [max(r["paper"], r["ours"], r["band_hi"]) for r in sel])
            pad = 0.04 * (hi - lo)
            lim = (lo - pad, hi + pad)
            ax.plot(lim, lim, color="#333", lw=0.8, zorder=1, label="identity (ours = paper)")
            for r in sel:
                ax.plot([r["paper"], r["paper"]], [r["band_lo"], r["band_hi"]], color="#9ecae1", lw=4,
                        solid_capstyle="butt", zorder=2, alpha=0.7)
            for head, (label, colour, marker, filled) in LOOK.items():
                grp = [r for r in sel if r["verdict"].split(":")[0] == head]
                if grp:
                    ax.scatter([r["paper"] for r in grp], [r["ours"] for r in grp], s=30, marker=marker,
                               facecolors=colour if filled else "none", edgecolors=colour, linewidths=1.2,
                               zorder=3, label=f"{label}: {len(grp)}")
            ax.plot([], [], color="#9ecae1", lw=4, label="tolerance band at the paper's value")
            ax.set_xlim(lim)
            ax.set_ylim(lim)
            ax.set_aspect("equal")
            ax.set_xlabel(f"paper ({unit})")
            ax.set_ylabel(f"ours ({unit})")
            ax.set_title(f"{title}: {len(sel)} values")
            ax.grid(True, color="#eee", lw=0.6)
            ax.legend(loc="upper left", fontsize=9, frameon=False)
        png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, format="png", metadata=PNG_META)
        plt.close(fig)
    return png
