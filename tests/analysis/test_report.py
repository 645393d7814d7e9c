"""HTML report from a SYNTHETIC record set: self-contained, shows tables, figures and manifests, and
renders in headless Chromium."""

from __future__ import annotations

import base64
import re
import shutil
import struct
import subprocess
import tempfile

import pytest

from harness.analysis.stats import catalog
from harness.run.manifest import write_manifest
from tests.manifests import run_manifest


@pytest.fixture
def synthetic_report(tmp_path, monkeypatch):
    from harness.analysis.report import build_report
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records

    monkeypatch.setattr(catalog, "library_calculators", lambda: {1})
    monkeypatch.setattr(catalog, "audit_groups", lambda: {1: "no_issue", 2: "replaced", 3: "other_concern"})
    recs = synthetic_records(
        models=("synthetic/model",),
        arms=("open-book", "program-solve", "gold-lib", "blind"),
        seeds=(42, 43),
        sizes=(4, 3, 5),
        library={1},
        seed=3,
    )
    root = write_records(tmp_path / "synthetic-results", recs)
    write_manifest(root, run_manifest("synthetic-run", scorer="<b>&"))
    return build_report(root, tmp_path / "out", draws=300), tmp_path


def test_report_is_self_contained(synthetic_report):
    page, tmp = synthetic_report
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", text)  # nothing fetched
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    # figures 1b and 2, and the comparison with the paper (harness.analysis.comparison)
    assert len(imgs) == 3 and all(base64.b64decode(i)[:4] == b"\x89PNG" for i in imgs)
    for name in ("table1", "table2", "s5", "s6", "s12"):
        assert f'id="{name}"' in text
    assert "manifest-synthetic-run.json" in text and "&lt;b&gt;&amp;" in text  # manifest shown, escaped
    assert (tmp / "out" / "tables" / "table1.tex").exists() and (tmp / "out" / "figures" / "fig2-coverage.pdf").exists()


def test_report_renders_in_headless_chromium(synthetic_report, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed (Debian package 'chromium')")
    page, _ = synthetic_report
    shot = tmp_path / "shot.png"
    with tempfile.TemporaryDirectory() as profile:
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
                f"--user-data-dir={profile}",
                f"--screenshot={shot}",
                "--window-size=1280,1600",
                f"file://{page}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert shot.exists(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1600)
    assert len(data) > 50_000  # a blank page compresses to a few kB; text and figures do not
