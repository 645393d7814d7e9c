"""bench/rehearse_router.sh at one case per calculator: the kit's rehearsal launcher (not a server of the
script's own) serves the set as its answer key, `harness reproduce` runs the router arms and their
comparators under the set's unit convention, and the router tables and figure are written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.calculators import LIBRARY
from harness.run.manifest import read_manifests
from harness.run.store import read_result_file

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow]


def test_router_rehearsal_script(tmp_path, shared_data_dir):
    out = tmp_path / "router"
    env = {
        **os.environ,
        "PER_CALCULATOR": "1",
        "SEEDS": "42",
        "DRAWS": "200",
        "EXECUTOR_BACKEND": "process",
        "MEDCALC_SHARED_DIR": str(shared_data_dir),
    }
    proc = subprocess.run(
        ["bash", "bench/rehearse_router.sh", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = out / "results"
    timing = json.loads((out / "timings.json").read_text())
    assert timing["records"] == 55 * 5 and timing["reproduce_s"] > 0
    for table in ("s20", "s21"):
        assert (results / "tables" / f"{table}.md").stat().st_size > 0
    assert list((results / "figures").glob("fig-risk-coverage.*"))
    (found,) = read_manifests(results, kind="reproduce")
    manifest = found.manifest
    assert manifest.settings.launcher == "rehearsal" and manifest.status == "complete"
    assert manifest.convention.name == "medcalc-v1.0"  # the v1.0 rows' convention, told explicitly
    server = manifest.servers[0].info
    assert server.synthetic is True and server.facts["served"]["answer_key"] == str(out / "rehearsal-cases.csv")
    gold = read_result_file(results / "library" / "gold-lib" / "seed42.jsonl")
    covered = [r for r in gold if r.calculator_id in LIBRARY]
    assert len(covered) == 22 and all(r.correct for r in covered)  # Gold-Solve right on every library row
