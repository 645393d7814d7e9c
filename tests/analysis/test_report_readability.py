"""The report as a reader sees it, on the real committed CPU-demo results rendered in headless Chromium: no
table runs past the page's right edge, s8 does not print a degenerate program whole, Table 1's superscripts say
what they count."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import pytest

from harness.analysis.tables.gaps import S8_MAX_LINES, _program_lines
from harness.core.paths import REPO_ROOT

DEMO = REPO_ROOT / "results" / "cpu-demo"

MEASURE = """<script>
window.addEventListener('load', () => {
  const right = document.body.getBoundingClientRect().right + 1;
  const wide = [...document.querySelectorAll('table.res')]
    .filter(t => t.getBoundingClientRect().right > right).map(t => t.id);
  const s8 = document.getElementById('s8');
  document.title = 'WIDE=' + wide.join(',') + ';S8ROWS=' + (s8 ? s8.rows.length : -1);
});
</script></body>"""


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    from harness.analysis.report import build_report

    out = tmp_path_factory.mktemp("report")
    return build_report(DEMO, out, draws=200)


def test_no_table_is_clipped_and_s8_is_bounded_in_the_rendered_page(demo_report, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian package 'chromium')")
    page = tmp_path / "measured.html"
    page.write_text(demo_report.read_text().replace("</body>", MEASURE))
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                f"--user-data-dir={profile}",
                "--window-size=1280,1600",
                "--virtual-time-budget=5000",
                "--dump-dom",
                f"file://{page}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    title = re.search(r"<title>(WIDE=[^<]*)</title>", proc.stdout)
    assert title, proc.stderr[-2000:]
    wide, s8_rows = re.fullmatch(r"WIDE=([^;]*);S8ROWS=(-?\d+)", title.group(1)).groups()
    assert wide == "", f"tables past the right edge at 1280 px: {wide}"
    assert 0 < int(s8_rows) <= S8_MAX_LINES + 4  # header, program lines, outcome heading and row


def test_a_degenerate_program_is_collapsed_and_cut():
    program = "x = {\n" + '"blood urea": 120,\n"blood sodium": 120,\n' * 500 + "}\nprint(x)\n"
    lines = _program_lines(program)
    assert lines[:4] == [
        "x = {",
        '"blood urea": 120,',
        '"blood sodium": 120,',
        "[... the 2 lines above repeated 499 more times]",
    ]
    assert lines[-2:] == ["}", "print(x)"]
    long = "\n".join(f"y{i} = {i}" for i in range(100))
    cut = _program_lines(long)
    assert len(cut) == S8_MAX_LINES and cut[-1] == f"[... {100 - S8_MAX_LINES + 1} more lines not shown]"


def test_table1_superscripts_say_what_they_count(demo_report):
    table1 = (demo_report.parent / "tables" / "table1.md").read_text()
    assert "0.00<sup>n=8</sup>" in table1 or "0.00^{n=8}" in table1 or "n=8" in table1
    assert not re.search(r"\d\.\d\d(<sup>|\^\{?)1\b", table1)


def test_figure_1b_labels_every_bar_with_value_and_cases_and_figure_2_draws_edge_points_whole(tmp_path, monkeypatch):
    """On the committed CPU demo (model arms on 8 cases, the library on 110): each bar's label is its arm's
    accuracy and case count as the stored records give them; Program-Solve's point sits on Figure 2's right edge
    (k = 55, every calculator) and is drawn whole."""
    from harness.analysis import figures
    from harness.analysis.results_analysis import analyse
    from harness.run.store import iter_located_records

    kept = {}

    def keep(fig, out_dir, stem):
        kept[stem] = fig
        return []

    monkeypatch.setattr(figures, "_save", keep)
    an = analyse(DEMO, draws=200)
    figures.figure_accuracy(an, tmp_path)
    figures.figure_coverage(an, tmp_path)
    by_arm: dict[str, list[bool]] = {}
    for _, _, r in iter_located_records(DEMO):
        by_arm.setdefault(r.arm, []).append(r.correct)
    want = sorted(f"{100 * sum(v) / len(v):.0f}%\nn={len(v)}" for v in by_arm.values())
    labels = sorted(t.get_text() for t in kept["fig1b-accuracy"].axes[0].texts)
    assert labels == want and len(want) == 4
    ax = kept["fig2-coverage"].axes[0]
    prog = next(line for line in ax.lines if line.get_label().startswith("Prog."))
    ps = by_arm["program-solve"]
    assert list(prog.get_xdata()) == [55] and list(prog.get_ydata()) == [100 * sum(ps) / len(ps)]
    assert not prog.get_clip_on()
