"""Reading a result set through the store's reader, timed, before against after: wall, user + system CPU and peak
RSS of one process that reads every record of RESULTS (harness.run.store.read_result_file over iter_result_files,
one process, no workers: the reader's own cost) and reads each record's `correct`, outcome and gold answer, as verify
and compare read them. The two checkouts run alternately (A B A B ..., `--repeat` pairs) on the same set, so a
load change on a shared machine falls on both; read each figure beside its load.

    .venv/bin/python -m bench read-timing RESULTS --before DIR [--repeat 3] [--out runs/bench/read-timing.json]

DIR: another checkout's tree (e.g. `git archive <commit> | tar -x -C DIR`); its harness package reads the set as
its store returns it (a dict or a Record: the reading code below takes either, so the same work is timed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.compare_timing import time_v
from bench.machine import uptime
from harness.core.paths import REPO_ROOT
from harness.run.store import iter_result_files

# What the timed child runs: every record read by the store's reader; `correct`, outcome and gold answer read from
# each (a dict before issue 49's typed record, a Record after).
READ = """
import sys
from harness.run.store import iter_result_files, read_result_file
n = right = answered = golds = 0
for path in iter_result_files(sys.argv[1]):
    for r in read_result_file(path):
        n += 1
        if isinstance(r, dict):
            right += r["correct"]; answered += r["outcome"] == "answered"
            golds += (r["gold"] or {}).get("answer") is not None
        else:
            right += r.correct; answered += r.outcome == "answered"
            golds += r.gold is not None and r.gold.answer is not None
print(n, right, answered, golds)
"""


def timed_read(results: Path, code: Path) -> dict:
    """One read of `results` by the harness package under `code`, under `/usr/bin/time -v` (`time_v`)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    proc, figures = time_v([sys.executable, "-c", READ, str(results)], env, code, capture_output=True, text=True)
    return {**figures, "counts": proc.stdout.split(), "stderr_tail": proc.stderr[-500:]}


def _commit(tree: Path) -> str | None:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True).stdout.strip()
    return out or None


def main(results: Path, before: Path, out: Path, repeat: int) -> int:
    results, before = results.resolve(), before.resolve()
    files = list(iter_result_files(results))
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    entry: dict = {
        "results": str(results),
        "result_files": len(files),
        "records": sum(sum(1 for _ in open(f, "rb")) for f in files),
        "result_bytes": sum(f.stat().st_size for f in files),
        "before": {"code": str(before), "commit": _commit(before)},
        "after": {"code": str(REPO_ROOT), "commit": _commit(REPO_ROOT)},
        "cpus": os.cpu_count(),
        "uptime_before": uptime(),
    }
    for _ in range(repeat):  # alternately, so a change of load falls on both
        runs["before"].append(timed_read(results, before))
        runs["after"].append(timed_read(results, REPO_ROOT))
    entry["uptime_after"] = uptime()
    for side in ("before", "after"):
        entry[side]["runs"] = runs[side]
        for name in ("wall_s", "cpu_s", "peak_rss_mib"):
            entry[side][f"min_{name}"] = min(r[name] for r in runs[side])
    entry["ratio_after_over_before"] = {
        name: round(entry["after"][f"min_{name}"] / entry["before"][f"min_{name}"], 3)
        for name in ("wall_s", "cpu_s", "peak_rss_mib")
        if entry["before"][f"min_{name}"]
    }
    same = {tuple(r["counts"]) for side in runs.values() for r in side}
    entry["same_counts"] = len(same) == 1
    doc = {
        "what": "every record of a result set read by the store's reader, before against after (python -m bench "
        "read-timing): wall, CPU, peak RSS, alternating runs; min over runs; read each beside its load",
        **entry,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(json.dumps({k: doc[k] for k in ("records", "ratio_after_over_before", "same_counts")}, sort_keys=True))
    failed = any(r["returncode"] for side in runs.values() for r in side)
    return 1 if failed or not entry["same_counts"] else 0
