"""The post-run stages, one list: stats, tables, figures, report, checksums and verify over one result set, each the
`harness` command a user runs, one after the other, timed. `make rehearse` times them after its reference run;
`python -m bench stages` times them over any result set (e.g. the synthetic full-size set of bench/fullsize.py),
with `uptime` before and after. Issue 9's target is stats + tables + figures + report + verify <= 60 s at full size
(about 190k records) on a 2-core machine.

    .venv/bin/python -m bench stages RESULTS --label after --out runs/bench/stages.json [--code DIR]

--code runs the stages with the harness package of another checkout (PYTHONPATH=DIR), for before/after figures of
the same set on the same machine; --out merges this run's figures under `runs.<label>` of the JSON file (other
labels are kept).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bench.machine import Machine, uptime
from bench.targets import Target
from harness.core.paths import REPO_ROOT
from harness.run.store import iter_result_files

ROOT = REPO_ROOT
STAGES = ("stats", "tables", "figures", "report", "checksums", "verify")
POST_RUN = ("stats", "tables", "figures", "report", "verify")  # the stages issue 9's target sums
POST_RUN_TARGET = Target("post_run_wall_s", "<=", 60, label="post_run_stages<=60s")


def stage_args(results: Path, checksums: Path) -> dict[str, list[str]]:
    """Each stage's `harness` arguments: outputs under the result set, the sums file at `checksums`."""
    r = str(results)
    return {
        "stats": ["stats", "--results", r, "--out", str(results / "stats")],
        "tables": ["tables", "--results", r, "--out", str(results / "tables")],
        "figures": ["figures", "--results", r, "--out", str(results / "figures")],
        "report": ["report", "--results", r, "--out", str(results / "report")],
        "checksums": ["checksums", "update", "--results", r, "--sums", str(checksums)],
        "verify": ["verify", "--results", r, "--sums", str(checksums)],
    }


def harness_argv(*args: str) -> list[str]:
    """`harness ARGS` with this interpreter, taking the harness package from sys.path (PYTHONPATH selects another
    checkout's)."""
    return [sys.executable, "-c", "import sys; from harness.cli import main; sys.argv[0] = 'harness'; main()", *args]


@dataclass(frozen=True)
class StageTime:
    wall_s: float
    cpu_s: float  # user + system of the stage and its worker processes
    returncode: int


def run_stage(args: list[str], log: TextIO, *, code: Path | None = None) -> StageTime:
    """One `harness ARGS`, its output appended to the open `log`."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    log.write(f"$ harness {' '.join(args)}\n")
    log.flush()
    t0, c0 = time.perf_counter(), os.times()
    rc = subprocess.run(harness_argv(*args), stdout=log, stderr=subprocess.STDOUT, cwd=code or ROOT, env=env).returncode
    c1 = os.times()
    return StageTime(
        round(time.perf_counter() - t0, 3),
        round((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system), 2),
        rc,
    )


def run_stages(results: Path, checksums: Path, log_path: Path, *, code: Path | None = None) -> dict[str, StageTime]:
    """Every stage of STAGES over `results`, in order."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log:
        return {name: run_stage(args, log, code=code) for name, args in stage_args(results, checksums).items()}


def post_run_wall_s(stages: dict[str, StageTime]) -> float:
    return round(sum(stages[s].wall_s for s in POST_RUN), 2)


def main(results: Path, label: str, out: Path, code: Path | None) -> int:
    results = results.resolve()
    work = results.parent
    synthetic = results.parent / "SYNTHETIC-FULLSIZE.json"
    files = list(iter_result_files(results))
    records = sum(sum(1 for _ in open(f, "rb")) for f in files)
    machine = Machine()
    before = uptime()
    stages = run_stages(
        results, work / "checksums.txt", work / f"bench-stages-{label}.log", code=code.resolve() if code else None
    )
    synthetic_set = json.loads(synthetic.read_text()) if synthetic.exists() else None
    if synthetic_set:
        synthetic_set = {k: synthetic_set[k] for k in ("what", "records", "cases", "seeds")}
    entry = {
        "results": str(results),
        "records": records,
        "result_bytes": sum(f.stat().st_size for f in files),
        "synthetic_set": synthetic_set,
        "code": str(code or ROOT),
        "commit": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=code or ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "cpus": machine.cores,
        "uptime_before": before,
        "uptime_after": uptime(),
        "stages": {
            name: {"wall_s": round(s.wall_s, 2), "cpu_s": s.cpu_s, "returncode": s.returncode}
            for name, s in stages.items()
        },
        "post_run_wall_s": post_run_wall_s(stages),
        "target_s": POST_RUN_TARGET.bound,
    }
    doc = json.loads(out.read_text()) if out.exists() else {}
    doc.setdefault("what", "post-run stage wall times (python -m bench stages); see each run's uptime")
    doc.setdefault("runs", {})[label] = entry
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(json.dumps(entry, indent=1, sort_keys=True))
    return 0 if all(s.returncode == 0 for s in stages.values()) else 1
