"""`harness compare` timed over one result set, e.g. the SYNTHETIC full-size set of bench/fullsize.py: wall and CPU
time and peak memory (`/usr/bin/time -v`, the process and its worker processes), cold (an empty analysis cache:
every results file hashed and parsed once) and warm (the cache the cold run filled: hashed, not parsed), with the
load average before and after each run. The machine may be shared: read a figure beside its load.

    .venv/bin/python -m bench compare-timing RESULTS --label after --out runs/bench/compare-fullsize.json \\
        [--code DIR] [--draws 10000]

RESULTS without a SHA256SUMS gets one first (the root's own sums, as `make reproduce` writes them), so the integrity
check reads what a user's root holds. --code runs the comparison with the harness package of another checkout
(PYTHONPATH=DIR; e.g. `git archive <commit> | tar -x -C DIR`), for before/after figures of the same set on the same
machine; --out merges this run's figures under `runs.<label>` (other labels are kept). A synthetic set is compared
nowhere (every number is not comparable): the timing is of the whole comparison all the same, every record read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from bench.machine import loadavg, uptime
from bench.stages import harness_argv
from harness.core.paths import REPO_ROOT
from harness.core.sums import SUMS_FILE, write_own_sums
from harness.run.store import iter_result_files

TIME = "/usr/bin/time"


def time_v(argv: list[str], env: dict, cwd: str | Path, **run: Any) -> tuple[subprocess.CompletedProcess, dict]:
    """One command under `/usr/bin/time -v` (`run`: subprocess.run's output options): the process, and its wall,
    user + system CPU, peak RSS, exit status and the loads before and after."""
    before = loadavg()
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        proc = subprocess.run([TIME, "-v", "-o", report.name, *argv], env=env, cwd=cwd, **run)
        text = report.read()

    def field(name: str) -> str:
        m = re.search(rf"^\s*{re.escape(name)}: (.+)$", text, re.M)
        return m.group(1).strip() if m else ""

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")] if wall else [0.0]
    seconds = sum(x * 60**i for i, x in enumerate(reversed(parts)))
    return proc, {
        "wall_s": round(seconds, 2),
        "cpu_s": round(float(field("User time (seconds)") or 0) + float(field("System time (seconds)") or 0), 2),
        "peak_rss_mib": round(int(field("Maximum resident set size (kbytes)") or 0) / 1024, 1),
        "returncode": proc.returncode,
        "loadavg_before": before,
        "loadavg_after": loadavg(),
    }


def timed(args: list[str], env: dict, log: IO[str]) -> dict:
    """One `harness ARGS` under `/usr/bin/time -v` (`time_v`), its output into `log`."""
    cwd = env.get("PYTHONPATH") or REPO_ROOT
    return time_v(harness_argv(*args), env, cwd, stdout=log, stderr=subprocess.STDOUT)[1]


def main(results: Path, label: str, out: Path, code: Path | None, draws: int) -> int:
    results = results.resolve()
    files = list(iter_result_files(results))
    if not (results / SUMS_FILE).is_file():
        write_own_sums(results)
    work = Path(tempfile.mkdtemp(prefix="compare-timing-", dir=results.parent))
    env = dict(os.environ, HARNESS_ANALYSIS_CACHE=str(work / "analysis-cache"))
    if code is not None:
        env["PYTHONPATH"] = str(code.resolve())
    args = ["compare", "--results", str(results), "--out", str(work / "comparison"), "--draws", str(draws)]
    entry = {
        "results": str(results),
        "result_files": len(files),
        "records": sum(sum(1 for _ in open(f, "rb")) for f in files),
        "result_bytes": sum(f.stat().st_size for f in files),
        "draws": draws,
        "code": str(code or REPO_ROOT),
        "commit": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=code or REPO_ROOT, capture_output=True, text=True
        ).stdout.strip()
        or None,
        "cpus": os.cpu_count(),
        "uptime_before": uptime(),
    }
    with open(work / "compare.log", "w", encoding="utf-8") as log:
        cold = timed(args, env, log)  # an empty analysis cache: every file parsed
        warm = timed(args, env, log)  # the cache the cold run filled
    entry["cold"], entry["warm"] = cold, warm
    entry["uptime_after"] = uptime()
    entry["log"] = str(work / "compare.log")
    synthetic = results.parent / "SYNTHETIC-FULLSIZE.json"
    if synthetic.exists():
        info = json.loads(synthetic.read_text())
        entry["synthetic_set"] = {k: info[k] for k in ("what", "records", "cases", "seeds") if k in info}
    doc = json.loads(out.read_text()) if out.exists() else {}
    doc.setdefault(
        "what",
        "harness compare over one result set (python -m bench compare-timing): wall, CPU, peak "
        "RSS, cold and warm analysis cache; read each figure beside its load average",
    )
    doc.setdefault("runs", {})[label] = entry
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(json.dumps(entry, indent=1, sort_keys=True))
    return 0 if cold["returncode"] == warm["returncode"] == 0 else 1
