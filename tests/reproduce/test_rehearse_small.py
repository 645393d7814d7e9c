"""`make rehearse SIZE=small` end to end, at one case per calculator and one seed (what CI runs: 55 cases, every
calculator, x 2 rehearsal models x 19 arms x seed 42, a quarter of the small size's records and the same paths;
`--per-calculator 1 --seeds 42`: 194 s instead of 252 s for two seeds, at load 8)
through `harness reproduce` (the pipeline `make reproduce` runs) and the container executor,
stats/tables/figures/report/checksums/verify, the kill-and-resume rerun and fault injection; the report's fields and
keys (those of the committed small report), and that a real result set refuses the synthetic records."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.manifest import read_manifests

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def small_rehearsal(tmp_path_factory, container_backend, shared_data_dir):
    out = tmp_path_factory.mktemp("rehearsal")
    bench = out / "pipeline.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "rehearse",
            "--size",
            "small",
            "--per-calculator",
            "1",
            "--seeds",
            "42",
            "--out",
            str(out / "run"),
            "--bench",
            str(bench),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / "run", json.loads(bench.read_text())


def test_report_fields(small_rehearsal):
    _, r = small_rehearsal
    assert r["synthetic"] is True and r["size"] == "custom (1 per calculator, seeds 42)"
    run = r["run"]
    for f in (
        "requests",
        "programs",
        "program_requests_per_s",
        "other_requests_per_s",
        "harness_cpu_s_per_request",
        "harness_peak_rss_bytes",
        "result_bytes",
        "executor_programs_per_s",
    ):
        assert isinstance(run[f], (int, float)) and run[f] > 0, f
    # the run's own rate beside the arms' rates; the arms' busy seconds share the run's wall, never exceed it
    assert run["requests_per_s"] == pytest.approx(run["requests"] / run["wall_s"], rel=0.01)
    assert run["program_arms_busy_s"] + run["other_arms_busy_s"] <= run["wall_s"] * 1.01
    assert run["program_requests_per_s"] == pytest.approx(
        run["program_requests"] / run["program_arms_busy_s"], rel=0.01
    )
    for s in ("run", "stats", "tables", "figures", "report", "verify"):
        assert r["stages"][s]["wall_s"] > 0
        assert r["stages"][s].get("returncode", 0) == 0, s
    assert r["config"]["cases"] == 55 and r["config"]["expected_records"] == run["records"]
    assert r["h100"]["plan_estimate_s"]["min_s"] > 0 and 0 < r["h100"]["pipeline_share_of_h100_time"]["of_max"]
    assert len(r["machine"]["loadavg_start"]) == 3 and len(r["kit"]["commit"]) == 40
    # the set is v1.0 dev rows under a new sha256: the run is told their convention instead of guessing by content
    assert r["config"]["convention"] == "medcalc-v1.0" == r["config"]["rehearsal_set"]["convention"]
    manifests = [f.manifest for f in read_manifests(small_rehearsal[0] / "results")]
    assert {m.convention.name for m in manifests} == {"medcalc-v1.0"}


def test_report_keys_are_the_committed_reports(small_rehearsal):
    """`make rehearse` writes the keys it always wrote (docs/bench-rehearse-small-aiohttp.json, written before the
    rehearsal moved into bench/ and onto the reproduce pipeline), and the ones issue 43 added: the request order
    that ran, the run's own request rate, the busy seconds the per-arm rates divide by."""
    from tests.bench.test_report_keys import key_paths

    _, r = small_rehearsal
    old = json.loads((ROOT / "docs" / "bench-rehearse-small-aiohttp.json").read_text())
    skip = ("run.per_arm", "faults.by_kind", "resume.comparison", "resume.attempts", "config.rehearsal_set")
    added = {
        "config.order",
        "run.order",
        "run.requests_per_s",
        "run.program_arms_busy_s",
        "run.other_arms_busy_s",
        "run.rates_note",
    }
    assert key_paths(r, 3, skip) == key_paths(old, 3, skip) | added
    assert r["run"]["order"] == r["config"]["order"] == "case-major"
    assert all({"busy_s", "requests_per_busy_s"} <= set(v) for v in r["run"]["per_arm"].values())
    assert set(r["run"]["per_arm"]) == set(old["run"]["per_arm"])
    assert set(r["resume"]["comparison"]) == set(old["resume"]["comparison"])


def test_nothing_lost_or_duplicated_and_faults_retried(small_rehearsal):
    _, r = small_rehearsal
    f = r["faults"]
    assert f["lost"] == 0 and f["duplicated"] == 0 and f["unexpected"] == 0
    assert f["injected"] > 0 and f["retried"] == f["injected"]


def test_kill_and_resume_is_identical(small_rehearsal):
    out, r = small_rehearsal
    res = r["resume"]
    assert res["harness_killed"] is True and res["server_kills"] == 1
    # the second model's result files came from the reference; every result file of the reference was compared
    seed_files = sorted((out / "results").glob("*/*/seed*.jsonl"))
    second = [p for p in seed_files if p.parts[-3] == res["copied_from_reference"]["models"][0]]
    assert res["scope"] == "first-model" and res["copied_from_reference"]["results_files"] == len(second) > 15
    assert res["identical"] is True, res["comparison"]
    assert res["lost"] == 0 and res["duplicated"] == 0
    assert (out / "content-checksums.txt").read_bytes() == (out / "resume-check" / "content-checksums.txt").read_bytes()
    assert res["comparison"]["table_files"] > 10 and res["comparison"]["results_files"] == len(seed_files) > 35


def test_rehearsal_output_is_labelled_and_never_mixes_with_real_results(small_rehearsal, tmp_path):
    out, _ = small_rehearsal
    manifests = [f.manifest for f in read_manifests(out / "results")]
    model_free = [m for m in manifests if m.kind == "run" and not m.uses_model]
    # the reproduce manifest and each model's run manifest say synthetic; the model-free block's (Gold-Solve, no
    # model) belongs to neither kind (harness.model.rehearsal.labels)
    assert len(model_free) == 1 and len(manifests) == 4 and [m.kind for m in manifests].count("reproduce") == 1
    assert all(m.synthetic is True for m in manifests if m not in model_free)
    first = json.loads((out / "results" / "rehearsal-alpha" / "blind" / "seed42.jsonl").read_text().splitlines()[0])
    assert first["synthetic"] is True and first["server_model"] == "rehearsal-alpha"
    mixed = tmp_path / "mixed"
    shutil.copytree(out / "results", mixed, ignore=shutil.ignore_patterns("tables", "figures", "report", "stats"))
    real = sorted((ROOT / "results").glob("*/*/*/seed*.jsonl"))
    real = [p for p in real if p.parts[-3] != "library"]
    assert real, "no committed real result file to mix in"
    target = mixed / real[0].parts[-3] / real[0].parts[-2] / real[0].name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(real[0], target)
    proc = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "harness"),
            "verify",
            "--results",
            str(mixed),
            "--sums",
            str(out.parent / "none.txt"),
            "--skip-tables",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1 and "SYNTHETIC" in proc.stderr and "real and synthetic" in proc.stderr
