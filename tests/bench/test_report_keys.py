"""`make bench-*` and `make rehearse` write the JSON keys they always wrote: each benchmark, run for real at a tiny
size, against the key set of its committed report (docs/bench-*.json) or, for the two without one (stats,
scoring), the keys the scripts wrote before they moved into bench/. A renamed or dropped key fails here, not in
a reader of an old report. (The rehearsal's keys are checked in tests/reproduce/test_rehearse_small.py, on its
small run.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def key_paths(doc: dict, depth: int, skip: tuple[str, ...] = ()) -> set[str]:
    """Dotted key paths of `doc` down to `depth` levels; below a path in `skip` (a dict keyed by data: arm names,
    outcomes) nothing is listed."""
    out: set[str] = set()

    def walk(x, prefix: str, level: int) -> None:
        if not isinstance(x, dict) or level == depth:
            return
        for k, v in x.items():
            path = f"{prefix}{k}"
            out.add(path)
            if path not in skip:
                walk(v, path + ".", level + 1)

    walk(doc, "", 0)
    return out


def bench(*args: str, cwd: Path = ROOT) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", *args], cwd=cwd, capture_output=True, text=True, timeout=1800)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-3000:]  # 1: a target missed


def test_key_paths_sees_nested_keys_and_stops_at_skips():
    doc = {"a": {"b": {"c": 1}}, "per_arm": {"x": {"y": 1}}}
    assert key_paths(doc, 3, skip=("per_arm",)) == {"a", "a.b", "a.b.c", "per_arm"}
    assert key_paths(doc, 1) == {"a", "per_arm"}


def test_bench_client_writes_the_committed_keys(tmp_path):
    bench("client", "--n", "12", "--rounds", "1", "--concurrency", "4", "--out", str(tmp_path / "client.json"))
    new = json.loads((tmp_path / "client.json").read_text())
    old = json.loads((DOCS / "bench-client-ab.json").read_text())
    assert key_paths(new, 4) == key_paths(old, 4)


SCORING_KEYS = {
    "benchmark",
    "reply_chars",
    "calls",
    "target_seconds_per_call",
    "max_seconds_per_scorer",
    "slowest",
    "meets_target",
    "total_seconds",
    "load_average",
    "python",
    "machine",
    "rows",
}
ROW_KEYS = {"reply", "chars", "case", "scorer", "seconds", "correct", "code"}


def test_bench_scoring_writes_the_keys_it_always_wrote(tmp_path):
    bench("scoring", "--size", "500", "--out", str(tmp_path / "scoring.json"))
    new = json.loads((tmp_path / "scoring.json").read_text())
    assert set(new) == SCORING_KEYS and set(new["slowest"]) == ROW_KEYS and set(new["rows"][0]) == ROW_KEYS
    assert new["meets_target"] is True and new["target_seconds_per_call"] == 1.0


STATS_KEYS = {
    "benchmark",
    "data",
    "draws",
    "array_version_seconds",
    "array_version_repeats",
    "loop_draws_measured",
    "loop_seconds_measured",
    "loop_seconds_extrapolated",
    "loop_seconds_at",
    "loop_note",
    "loop_vs_array_max_point_gap_difference_pp",
    "speedup",
    "targets",
    "meets_targets",
    "machine",
}


@pytest.mark.slow
def test_bench_stats_writes_the_keys_it_always_wrote(tmp_path):
    bench("stats", "--draws", "100", "--loop-draws", "4", "--repeats", "1", "--out", str(tmp_path / "stats.json"))
    new = json.loads((tmp_path / "stats.json").read_text())
    assert set(new) == STATS_KEYS
    assert set(new["data"]) == {
        "models",
        "arms",
        "seeds",
        "cases",
        "calculators",
        "synthetic",
        "derived_hybrid_arms",
        "paired_gaps",
    }
    assert new["targets"] == {"array_seconds_max": 10, "speedup_min": 50}
    assert set(new["machine"]) == {"cpus", "python", "numpy", "platform"}


@pytest.mark.slow
def test_bench_stages_writes_the_committed_keys(tmp_path):
    """The stages over a copy of the committed CPU-demo result set, against the committed full-size report's
    `main-quiet` run (the last one bench_stages.py wrote without hand-added notes)."""
    shutil.copytree(ROOT / "results" / "cpu-demo", tmp_path / "set" / "results")
    bench("stages", str(tmp_path / "set" / "results"), "--label", "t", "--out", str(tmp_path / "stages.json"))
    new = json.loads((tmp_path / "stages.json").read_text())
    old = json.loads((DOCS / "bench-stages-fullsize.json").read_text())
    assert set(new) >= {"runs", "what"} and set(new["runs"]) == {"t"}
    assert key_paths(new["runs"]["t"], 3) == key_paths(old["runs"]["main-quiet"], 3) - {
        "synthetic_set.what",
        "synthetic_set.records",
        "synthetic_set.cases",
        "synthetic_set.seeds",
    }
    assert new["runs"]["t"]["synthetic_set"] is None  # the demo set is no synthetic full-size set
    assert all(s["returncode"] == 0 for s in new["runs"]["t"]["stages"].values())


# results.*.mixed.outcomes are keyed by the outcomes seen; results.*.executor is the executor's own describe()
EXECUTOR_SKIP = (
    "results.process.mixed.outcomes",
    "results.container.mixed.outcomes",
    "results.process.executor",
    "results.container.executor",
)


@pytest.mark.docker
@pytest.mark.slow
def test_bench_executor_writes_the_committed_keys(tmp_path, container_backend):
    bench(
        "executor",
        "--n-seq",
        "4",
        "--n-spaced",
        "2",
        "--bursts",
        "1",
        "--burst-gap",
        "0",
        "--n-mixed",
        "20",
        "--n-pool",
        "8",
        "--n-docker",
        "1",
        "--n-phases",
        "4",
        "--harness-dataset",
        "bundled-test",
        "--fake-server-port",
        "0",
        "--out",
        str(tmp_path / "executor.json"),
    )
    new = json.loads((tmp_path / "executor.json").read_text())
    old = json.loads((DOCS / "bench-executor-fullsize-day.json").read_text())
    assert key_paths(new, 4, EXECUTOR_SKIP) == key_paths(old, 4, EXECUTOR_SKIP)


def test_bench_compare_timing_writes_the_committed_keys(tmp_path):
    """`bench compare-timing` over a copy of the committed Gold-Solve set (it writes the root's own SHA256SUMS)."""
    root = tmp_path / "gold-solve"
    shutil.copytree(ROOT / "results" / "gold-solve", root, ignore=shutil.ignore_patterns("tables", ".*"))
    bench("compare-timing", str(root), "--label", "after", "--draws", "200", "--out", str(tmp_path / "ct.json"))
    new = json.loads((tmp_path / "ct.json").read_text())
    old = json.loads((DOCS / "bench-compare-fullsize.json").read_text())
    assert key_paths(new, 4, skip=("runs",)) == key_paths(old, 4, skip=("runs",))
    assert key_paths(new["runs"]["after"], 2, skip=("synthetic_set",)) == key_paths(
        old["runs"]["after"], 2, skip=("synthetic_set",)
    ) - {"synthetic_set"}
    assert new["runs"]["after"]["cold"]["returncode"] == 0 and new["runs"]["after"]["cold"]["peak_rss_mib"] > 0


def test_bench_read_timing_times_both_checkouts_over_the_same_records(tmp_path):
    """`bench read-timing` with this checkout on both sides over a copy of the committed Gold-Solve set: both sides
    read every record (the counts the child prints are the set's lines) and agree."""
    root = tmp_path / "gold-solve"
    shutil.copytree(ROOT / "results" / "gold-solve", root, ignore=shutil.ignore_patterns("tables", ".*"))
    bench("read-timing", str(root), "--before", str(ROOT), "--repeat", "1", "--out", str(tmp_path / "rt.json"))
    doc = json.loads((tmp_path / "rt.json").read_text())
    n = sum(len(p.read_text().splitlines()) for p in root.glob("*/*/seed*.jsonl"))
    assert doc["records"] == n and doc["same_counts"] is True
    for side in ("before", "after"):
        (run,) = doc[side]["runs"]
        assert run["returncode"] == 0 and int(run["counts"][0]) == n and run["peak_rss_mib"] > 0
    assert set(doc["ratio_after_over_before"]) == {"wall_s", "cpu_s", "peak_rss_mib"}
