"""The report a newcomer opens, laid out by a real browser (headless Chromium) at a laptop's width (1366 x 768), on
the committed CPU demo's report and on a rehearsal result (the rehearsal server: a scripted FAKE, synthetic output):

* the page never scrolls sideways, and every table either fits or sits in a box that scrolls (div.wrap);
* the first screen holds what was run and what it shows: the opening paragraph (demo) or the synthetic notice
  (rehearsal), and the At-a-glance table of correct answers per arm;
* figures are drawn at (nearly) their own size, not shrunk until their labels cannot be read.

A probe script appended to a copy of the page measures the layout in the browser and writes it into the DOM, which
`chromium --dump-dom` prints."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT

WIDTH, HEIGHT = 1366, 768
PROBE = """<script>(function(){
const r={w:window.innerWidth,h:window.innerHeight,scrollW:document.documentElement.scrollWidth,tables:[],imgs:[]};
for(const t of document.querySelectorAll('table')){const w=t.parentElement;
  r.tables.push({id:t.id||(t.caption?t.caption.textContent.slice(0,40):''),inWrap:w.classList.contains('wrap'),
                 tw:t.scrollWidth,ww:w.clientWidth,ox:getComputedStyle(w).overflowX});}
for(const i of document.querySelectorAll('figure img')){r.imgs.push({alt:i.alt.slice(0,40),nw:i.naturalWidth,
  w:i.getBoundingClientRect().width});}
const bottom=(sel)=>{const e=document.querySelector(sel);return e?e.getBoundingClientRect().bottom+window.scrollY:null;};
r.about=bottom('div.about');r.synthetic=bottom('p.synthetic');r.glance=bottom('#glance');
const p=document.createElement('pre');p.id='layout-probe';p.textContent=JSON.stringify(r);document.body.appendChild(p);
})();</script></body>"""


def layout(page: Path) -> dict:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian package 'chromium'; scripts/install-test-tools.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp) / "probed.html"
        probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE), encoding="utf-8")
        proc = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={tmp}/profile",
                f"--window-size={WIDTH},{HEIGHT}",
                "--dump-dom",
                f"file://{probed}",
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    found = re.search(r'<pre id="layout-probe">([^<]*)</pre>', proc.stdout)
    assert found, proc.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def check_layout(got: dict, first_screen: str) -> None:
    assert got["w"] == WIDTH
    assert got["scrollW"] <= got["w"], "the page scrolls sideways"
    for t in got["tables"]:
        assert t["inWrap"] and t["ox"] in ("auto", "scroll"), f"table {t['id']!r} is not in a scrolling box"
        assert t["tw"] <= t["ww"] or t["ox"] in ("auto", "scroll"), t
    assert got[first_screen] is not None and got[first_screen] <= got["h"], (
        f"{first_screen} ends at {got[first_screen]} px, below the first screen ({got['h']} px)"
    )
    assert got["glance"] is not None and got["glance"] <= got["h"] + 120, (
        f"the At-a-glance table ends at {got['glance']} px, far below the first screen ({got['h']} px)"
    )
    for img in got["imgs"]:
        assert img["w"] >= min(img["nw"], 0.9 * (WIDTH - 166)) - 1, f"figure {img['alt']!r} shrunk: {img}"


def test_committed_demo_report_reads_at_a_laptops_width():
    page = ROOT / "results" / "cpu-demo" / "report" / "report.html"
    got = layout(page)
    check_layout(got, "about")
    assert len(got["imgs"]) >= 2 and len(got["tables"]) >= 10


def test_rehearsal_report_reads_at_a_laptops_width(tmp_path):
    """A small rehearsal result (the rehearsal server, a scripted FAKE: synthetic rows), reported and laid out."""
    from harness.cli import main
    from harness.data.dataset import load_dataset
    from tests.fixtures_rehearsal import rehearsal_run_args, running_rehearsal_server

    root = tmp_path / "rehearsal"
    with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
        arms = ["open-book", "program-solve", "gold-lib"]
        r = CliRunner().invoke(main, rehearsal_run_args(server, root, arms, extra=["--executor-backend", "process"]))
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main, ["report", "--results", str(root), "--out", str(tmp_path / "report"), "--draws", "200"]
    )
    assert r.exit_code == 0, r.output
    got = layout(tmp_path / "report" / "report.html")
    check_layout(got, "synthetic")
