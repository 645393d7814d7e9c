"""The report of the committed CPU demo opens with the demo's about paragraphs (one <p> each: what was run, what it
shows, what it does not) and names each model once in its header."""

from __future__ import annotations

import html
import re

from harness.analysis.report import render_report
from harness.analysis.results_analysis import analyse
from harness.analysis.tables import build_tables
from tests.conftest import ROOT

DEMO = ROOT / "results" / "cpu-demo"


def test_report_opens_with_about_and_names_model_once():
    an = analyse(DEMO, draws=200)
    tables, omitted = build_tables(an)
    page = render_report(an, tables, omitted, [], DEMO)
    paragraphs = [" ".join(p.split()) for p in (DEMO / "about.md").read_text().split("\n\n") if p.strip()]
    assert [p.split(":", 1)[0] for p in paragraphs] == [
        "What was run",
        "What these figures show",
        "What they do not show",
    ]
    after_h1 = page[page.index("</h1>") + len("</h1>") :].lstrip("\n")
    assert after_h1.startswith(
        '<div class="about">' + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs) + "</div>"
    )
    meta = re.search(r'<p class="meta">(.*?)</p>', page).group(1)
    for model in an.data.models:
        label = re.sub(r"-instruct.*$", "", model.rsplit("/", 1)[-1], flags=re.IGNORECASE)
        assert meta.count(label) == 1, meta


def test_committed_summary_opens_with_about():
    assert (DEMO / "summary.md").read_text().startswith((DEMO / "about.md").read_text())
