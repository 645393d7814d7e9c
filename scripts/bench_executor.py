#!/usr/bin/env python3
"""Executor benchmark (``make bench-executor``): writes bench/executor.json.

Measured in one run, on the same program mix (calculator-like: arithmetic, math, dates, a
gestational-age tuple):

* ``in_process``    exec() of the compiled program in this interpreter (no isolation; baseline)
* ``bare_python``   one ``python3 -I -S -c PROGRAM`` per program (no policy, no sandbox)
* ``process``       the process backend (layers 1-4), executor.api.Executor(backend="process")
* ``container``     the container backend (layers 1-6) with a warm pool
* ``docker_run``    one ``docker run --runtime=runsc --rm`` (same flags as the pool) per program

For each: per-program latency median and p95 of sequential calls (one program at a time) and
programs/s. Both backends are also timed on ``--n-pool`` programs through ``run_many`` (all
workers busy): wall seconds and programs/s. Ratios are compared with the targets of issue 3:
container median <= 12 ms, p95 <= 30 ms, >= 25x faster than docker run per program, <= 1.6x the
bare subprocess, 1,100 programs <= 10 s through the pool. The report states every miss and by
how much; the load average at start and end is recorded because the machine may be shared.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from executor import pool as pool_mod  # noqa: E402
from executor.api import Executor  # noqa: E402

PROGRAMS = [
    "weight_kg = 72.5\nheight_m = 1.78\nanswer = round(weight_kg / height_m ** 2, 2)\n",
    "import math\nscr, age = 1.1, 63\nk, a = 0.9, -0.302\n"
    "answer = round(142 * min(scr / k, 1) ** a * max(scr / k, 1) ** -1.2 * 0.9938 ** age, 1)\n",
    "import datetime\nlmp = datetime.date(2024, 3, 11)\nanswer = lmp + datetime.timedelta(days=280)\n",
    "import datetime\nlmp = datetime.date(2024, 1, 2)\ntoday = datetime.date(2024, 6, 20)\n"
    "days = (today - lmp).days\nanswer = (days // 7, days % 7)\n",
    "points = 0\nfor v, cut in ((38.5, 38), (112, 90), (24, 20)):\n    if v > cut:\n        points += 1\n"
    "answer = points\n",
    "na, glucose, bun = 138, 180, 20\nanswer = round(2 * na + glucose / 18 + bun / 2.8, 1)\n",
]
TARGETS = {"container_median_ms": 12.0, "container_p95_ms": 30.0, "speedup_vs_docker_run": 25.0,
           "ratio_to_bare_python": 1.6, "pool_seconds_for_1100": 10.0}


def programs(n: int) -> list[str]:
    return [PROGRAMS[i % len(PROGRAMS)] for i in range(n)]


def summary(latencies_s: list[float], wall_s: float) -> dict:
    ms = sorted(x * 1000 for x in latencies_s)
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))]
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 3), "p95_ms": round(p95, 3),
            "mean_ms": round(statistics.fmean(ms), 3), "programs_per_s": round(len(ms) / wall_s, 2),
            "wall_s": round(wall_s, 3)}


def sequential(fn, sources: list[str]) -> dict:
    lat = []
    start = time.perf_counter()
    for src in sources:
        t = time.perf_counter()
        fn(src)
        lat.append(time.perf_counter() - t)
    return summary(lat, time.perf_counter() - start)


def bench_in_process(sources):
    def run(src):
        g = {"__builtins__": __builtins__}
        exec(compile(src, "<program>", "exec"), g)
        if "answer" not in g:
            raise RuntimeError("no answer")
    return sequential(run, sources)


def bench_bare(sources, python):
    def run(src):
        r = subprocess.run([python, "-I", "-S", "-c", src + "print(answer)\n"], capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"bare python failed: {r.stderr[-300:]!r}")
    return sequential(run, sources)


def bench_executor(ex: Executor, seq_sources, pool_sources) -> dict:
    def run(src):
        r = ex.run(src)
        if r.outcome != "OK":
            raise RuntimeError(f"{ex.backend} backend: {r.outcome}: {r.error}")
    out = {"sequential": sequential(run, seq_sources)}
    start = time.perf_counter()
    results = ex.run_many(pool_sources)
    wall = time.perf_counter() - start
    bad = [r for r in results if r.outcome != "OK"]
    if bad:
        raise RuntimeError(f"{ex.backend} backend: {len(bad)} of {len(results)} not OK, first: {bad[0].outcome}: {bad[0].error}")
    out["run_many"] = {"n": len(results), "wall_s": round(wall, 3),
                       "programs_per_s": round(len(results) / wall, 2),
                       "child_wall_ms_median": round(statistics.median(r.wall_ms for r in results if r.wall_ms is not None), 3)}
    return out


def bench_docker_run(sources, image):
    docker = shutil.which("docker")
    flags = pool_mod.default_run_flags()

    def run(src):
        r = subprocess.run([docker, "run", "--rm", *flags, image, "python3", "-I", "-S", "-c",
                            src + "print(answer)\n"], capture_output=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError(f"docker run failed: {r.stderr[-300:]!r}")
    return sequential(run, sources)


def compare(res: dict) -> dict:
    c = res["container"]
    seq = c["sequential"]
    measured = {
        "container_median_ms": seq["median_ms"],
        "container_p95_ms": seq["p95_ms"],
        "speedup_vs_docker_run": round(res["docker_run"]["median_ms"] / seq["median_ms"], 2),
        "ratio_to_bare_python": round(seq["median_ms"] / res["bare_python"]["median_ms"], 3),
        "pool_seconds_for_1100": round(c["run_many"]["wall_s"] * 1100 / c["run_many"]["n"], 3),
    }
    verdict = {}
    for key, target in TARGETS.items():
        value = measured[key]
        higher_is_better = key == "speedup_vs_docker_run"
        met = value >= target if higher_is_better else value <= target
        verdict[key] = {"target": ("\u2265 " if higher_is_better else "\u2264 ") + str(target), "measured": value,
                        "met": met, "off_by": None if met else round(value / target, 2)}
    return verdict


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "executor.json"))
    ap.add_argument("--n-seq", type=int, default=200, help="sequential programs per mode")
    ap.add_argument("--n-pool", type=int, default=1100, help="programs through run_many")
    ap.add_argument("--n-docker", type=int, default=20, help="programs for docker run per program")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--python", default="/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable,
                    help="interpreter for the bare-subprocess baseline")
    ap.add_argument("--image", default=None)
    args = ap.parse_args(argv)
    for name in ("n_seq", "n_pool", "n_docker", "workers"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    image = args.image or pool_mod.default_image()
    load_start = os.getloadavg()
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    res: dict = {}
    seq = programs(args.n_seq)
    print(f"bench: in-process, bare python ({args.n_seq} each)", file=sys.stderr)
    res["in_process"] = bench_in_process(seq)
    res["bare_python"] = bench_bare(seq, args.python)
    res["bare_python"]["python"] = args.python
    print(f"bench: process backend ({args.n_seq} sequential, {args.n_pool} run_many, {args.workers} workers)", file=sys.stderr)
    with Executor(backend="process", workers=args.workers) as ex:
        res["process"] = bench_executor(ex, seq, programs(args.n_pool))
    print(f"bench: container backend ({args.n_seq} sequential, {args.n_pool} run_many, {args.workers} workers)", file=sys.stderr)
    t = time.perf_counter()
    with Executor(backend="container", workers=args.workers, image=image) as ex:
        startup = time.perf_counter() - t
        res["container"] = bench_executor(ex, seq, programs(args.n_pool))
        res["container"]["pool_startup_s"] = round(startup, 3)
        describe = ex.describe()
    print(f"bench: docker run per program ({args.n_docker})", file=sys.stderr)
    res["docker_run"] = bench_docker_run(programs(args.n_docker), image)
    report = {
        "started_at": started,
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg_start": [round(x, 2) for x in load_start],
                    "loadavg_end": [round(x, 2) for x in os.getloadavg()]},
        "executor": describe,
        "results": res,
        "targets": compare(res),
    }
    missed = [f"{k}: {v['measured']} vs {v['target']} ({v['off_by']}x)" for k, v in report["targets"].items() if not v["met"]]
    report["note"] = ("all targets met" if not missed else "missed: " + "; ".join(missed)
                      + f". Load average during the run {report['machine']['loadavg_start'][0]}"
                      f"->{report['machine']['loadavg_end'][0]} on {os.cpu_count()} cores.")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    for k, v in report["targets"].items():
        print(f"  {k:26s} {v['measured']:>10} target {v['target']:>8}  {'ok' if v['met'] else 'MISSED'}", file=sys.stderr)
    print(f"bench: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
