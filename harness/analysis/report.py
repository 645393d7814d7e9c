"""One self-contained HTML report: tables, figures (inline base64 PNG) and the run manifests.

Nothing is fetched when the page opens: styles are inline and images are data URIs, so the file can
be mailed or archived alone. `build_report(results_dir, out_dir)` writes `<out>/report.html` and
also the tables and figures it shows (under `<out>/tables` and `<out>/figures`).
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.analysis.comparison import ComparisonFiles, comparison_html, write_comparison
from harness.analysis.figures import build_figures
from harness.analysis.results_analysis import Analysis, analyse
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats.labels import arm_label, model_label, synthetic_notice
from harness.analysis.table_format import Table
from harness.analysis.tables import build_tables, write_tables
from harness.core.typed_json import to_json
from harness.run.manifest import ManifestFile, read_manifests

CSS = """
p.synthetic{background:#fde2e1;border:2px solid #b3261e;color:#7a1410;font-weight:bold;padding:8px}
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222;font-size:14px}
h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:28px}
table.res{border-collapse:collapse;margin:14px 0 4px 0;font-size:12px}
table.res caption{text-align:left;padding-bottom:4px}
table.res th{border-top:2px solid #222;border-bottom:1px solid #222;padding:3px 7px;background:#f6f6f6}
table.res td{padding:2px 7px;border-bottom:1px solid #eee;white-space:nowrap}
table.res td.l{white-space:normal}table.res th{white-space:normal}
table.res{max-width:100%}
table.res tbody tr:last-child td{border-bottom:2px solid #222}
td.r,th.r{text-align:right}td.l,th.l{text-align:left}tr.sec td{background:#fafafa}
ul.notes{font-size:11px;color:#555;margin-top:2px}
figure{display:block;margin:8px 0 16px 0}figure img{max-width:100%;border:1px solid #ddd}
pre{background:#f6f6f6;padding:8px;font-size:11px;overflow-x:auto;max-height:420px}
.meta{color:#555;font-size:12px}
.about{background:#fff8e1;border-left:4px solid #f0b400;padding:2px 10px;max-width:60em}.about p{margin:6px 0}
div.wrap{overflow-x:auto;max-width:100%}
"""


def _manifest_html(manifests: list[ManifestFile], root: Path) -> str:
    if not manifests:
        return '<p class="meta">No manifests were found in the results root.</p>'
    out = []
    for m in manifests:
        text = json.dumps(to_json(m.manifest), indent=2, sort_keys=True)
        out.append(
            f"<details><summary>{html.escape(str(m.path.relative_to(root)))}</summary>"
            f"<pre>{html.escape(text)}</pre></details>"
        )
    return "\n".join(out)


def _figure_html(png: Path, caption: str) -> str:
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


FIGURE_CAPTIONS = {
    "fig1b-accuracy": (
        "Figure 1b: accuracy by arm on the cases each arm ran (value and n cases over each bar), "
        "the blind arm drawn open."
    ),
    "fig2-coverage": "Figure 2: coverage against full-set accuracy for a library of k calculators.",
    "fig-risk-coverage": (
        "Beyond the paper: accuracy on answered rows against coverage for the router arms as the "
        "agreement threshold m goes from k to 1 (library only first), calculator-cluster 95% bands; "
        "crosses: the matched single-program arm."
    ),
}


ABOUT_FILE = "about.md"


def _about_html(root: Path) -> list[str]:
    """The results root's `about.md` (what these results are and are not; the CPU demo writes one) at the top of
    the report, one paragraph per paragraph of the file (what was run / what it shows / what it does not)."""
    about = root / ABOUT_FILE
    if not about.is_file():
        return []
    paragraphs = [" ".join(p.split()) for p in about.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    return ['<div class="about">' + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs) + "</div>"]


def _glance_html(an: Analysis) -> list[str]:
    """At a glance, right under the opening paragraph: per arm and model, correct of the case-seed rows the arm
    ran, so the first screen says what the results show before any figure or statistic."""
    d = an.data
    arms = [a for a in d.arms if any(d.has(m, a) for m in d.models) and not a.startswith("hybrid:")]  # run, not derived
    if not arms or not d.models:
        return []
    rows = []
    for arm in arms:
        cells = []
        for m in d.models:
            block = d.block(m, arm) if d.has(m, arm) else None
            ran = 0 if block is None else int(np.count_nonzero(~np.isnan(block)))
            ok = 0 if block is None else int(np.nansum(block))
            cells.append(
                f'<td class="r">{ok:,}/{ran:,} ({100.0 * ok / ran:.0f}%)</td>' if ran else '<td class="r">not run</td>'
            )
        rows.append(f'<tr><td class="l">{html.escape(arm_label(arm))}</td>{"".join(cells)}</tr>')
    head = "".join(f'<th class="r">{html.escape(model_label(m))}</th>' for m in d.models)
    return [
        "<h2>At a glance</h2>",
        '<div class="wrap"><table class="res" id="glance"><caption>Correct answers of the rows each arm ran '
        "(cases x seeds); the tables below give intervals and the reasons</caption>"
        f'<thead><tr><th class="l">Arm</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>',
    ]


def render_report(
    an: Analysis,
    tables: list[Table],
    omitted: dict,
    figures: list[Path],
    results_dir: str | Path,
    comparison: ComparisonFiles | None = None,
) -> str:
    """The report page as one HTML string."""
    root = Path(results_dir)
    d, r = an.data, an.resampler.describe()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Deterministic math solver: results report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Towards a Deterministic Math Solver for Clinical Language Models: results report</h1>",
        *([f'<p class="synthetic">{html.escape(notice)}</p>'] if (notice := synthetic_notice(d.models)) else []),
        *_about_html(root),
        *_glance_html(an),
        f'<p class="meta">Results root: {html.escape(str(root))}; {d.n_cases} cases in all ({len(d.calculators)} '
        f"calculators; an arm may have run fewer: see At a glance); models and seeds: {html.escape(an.seeds_note())}. "
        f"Bootstrap: {r['draws']:,} draws, seed {r['seed']}, {html.escape(r['interval'])} "
        f"({html.escape(r['quantile_method'])}), unit {html.escape(r['cluster_unit'])}.</p>",
        "<h2>Figures</h2>",
    ]
    for png in [p for p in figures if p.suffix == ".png"]:
        parts.append(_figure_html(png, FIGURE_CAPTIONS.get(png.stem, png.stem)))
    parts.append("<h2>Tables</h2>")
    parts += [t.to_html() for t in tables]
    if omitted:
        parts.append("<h2>Tables not determined by these results</h2><ul>")
        parts += [f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in omitted.items()]
        parts.append("</ul>")
    if an.notes:
        parts.append(
            '<h2>Analysis notes</h2><ul class="notes">'
            + "".join(f"<li>{html.escape(n)}</li>" for n in an.notes)
            + "</ul>"
        )
    parts += comparison_html(comparison) if comparison is not None else []  # the paper beside these results
    parts.append("<h2>Run manifests</h2>")
    parts.append(_manifest_html(read_manifests(root), root))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


@dataclass
class ReportFiles:
    """What `write_outputs` wrote: the tables (and the ones the results do not determine), figures and the page."""

    tables: list
    omitted: dict[str, str]
    table_paths: list[Path]
    figures: list[Path]
    page: Path
    comparison: ComparisonFiles | None = None


def write_outputs(an: Analysis, out_dir: str | Path, results_dir: str | Path) -> ReportFiles:
    """Tables under `out_dir/tables`, figures under `out_dir/figures`, then `out_dir/report.html`, from one analysis."""
    out = Path(out_dir)
    tables, omitted = build_tables(an)
    table_paths = write_tables(tables, omitted, out / "tables", an)
    figures = build_figures(an, out / "figures")
    comparison = write_comparison(an, out / "comparison", read_manifests(results_dir, kind="run"))
    page = out / "report.html"
    page.write_text(render_report(an, tables, omitted, figures, results_dir, comparison), encoding="utf-8")
    return ReportFiles(tables, omitted, table_paths, figures, page, comparison)


def build_report(
    results_dir: str | Path,
    out_dir: str | Path,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    dataset: str | None = None,
) -> Path:
    """Analyse once, write tables and figures under `out_dir`, then `out_dir/report.html`."""
    an = analyse(results_dir, draws=draws, seed=seed, dataset=dataset)
    return write_outputs(an, out_dir, results_dir).page
