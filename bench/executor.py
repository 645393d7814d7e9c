"""Executor benchmark (``make bench-executor``): writes runs/bench/executor.json.

Everything is measured in one run, on the same calculator-like program mix, with every layer on
and the shipped policy limits, so that ratios compare figures taken under the same load. The
machine may be shared: the load average is recorded before and after every figure.

Baselines: ``in_process`` (exec() here, no isolation), ``bare_python`` (one ``python3 -I -S -c``
per program), ``docker_run`` (one ``docker run --runtime=runsc --rm`` with the pool's flags per
program) and ``fork_floor`` (a bare interpreter's fork + exit + wait, on the host and inside a
runsc container: what one fresh process costs before any Python runs).

For each backend (``process``: layers 1-4; ``container``: layers 1-6), through
``executor.api.Executor`` with one worker per core:

* ``back_to_back``: one client; the next request leaves as soon as the last answer arrives;
* ``spaced``: one client, requests 50 ms apart (each finds the sandbox idle: no fork on the path);
* ``bursty``: bursts of 32 concurrent requests (as behind a model server), a gap between bursts;
* ``mixed``: back to back, 1 in 20 programs hits a limit (CPU, memory, line cap, sandbox
  violation), so recycling and replacement costs show;
* ``throughput``: 1,100 programs through ``run_many`` (as many in flight as the pool takes).

``harness_end_to_end``: ``harness run --arm program-solve --dataset dev --concurrency 32``
against ``ScriptedServer`` (harness.model.rehearsal.server: the fake server with a script standing in for a
model server; here every reply is a fixed program, ``fake_reply``, and nothing it produces is a model result)
with the container and with the process backend.

``phases``: where one program's time goes (bench/phase_probe.py: the executor's own
``child.run_child`` with clock marks, on the host and inside runsc with the pool's flags, plus
system calls per phase from ``strace -f -ff`` of the host probe); ``holding_phase`` names the
largest phase and the work per program ahead of demand and on the request path.

``ab`` (issue 33, what determinism costs): this checkout's executor against a baseline
(``--baseline-ref``, e.g. cc9e450, the last commit before issue 33, with ``--baseline-image`` built from it), each
side in its own subprocess
(``bench/ab_driver.py``, run with ``python -P`` so that
the side's own ``executor`` package is the one imported), rounds interleaved, one worker per side: supervisor start-up
(the zygote is now executed, not only forked) and back-to-back latency on the benchmark's mix
and on programs that take the new paths (the frozen clock, ``hash()``, reprs whose addresses are
masked; issue 40's ``issue40_paths``), with the ratio this/baseline of the medians over rounds,
for the latency and for the child's own CPU time per program (``median_cpu_ms``, from the
results: much less moved by other jobs on a shared machine than the latency).

The verdict against issue 25's targets (relative to the fork floor of the same run) and issue
14's remaining ratios, and the size of every miss, is written under ``targets``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.honest_programs import CORPUS as HONEST_CORPUS
from bench.machine import Machine, loadavg
from bench.phase_probe import PROGRAMS  # the calculator-like mix, one list for the benchmark and its probe
from bench.targets import Target
from executor import pool as pool_mod
from executor.api import Executor
from executor.result import ExecResult
from harness.core.paths import REPO_ROOT
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import chat_completion

ROOT = REPO_ROOT
# one of each limit, in turn, for the mixed pattern (expected outcomes in brackets)
LIMIT_PROGRAMS = [
    ("answer = sum(range(10 ** 11))\n", {"CPU_LIMIT", "TIMEOUT_WALL"}),
    ("x = bytearray(8 * 1024 ** 3)\nanswer = 1\n", {"MEMORY_LIMIT", "CRASH"}),
    ("n = 0\nwhile True:\n    n += 1\n", {"LINE_CAP", "CPU_LIMIT", "TIMEOUT_WALL"}),
    ("import os\nanswer = os.getuid()\n", {"REJECTED_STATIC"}),
]
TARGETS = {
    t.name: t
    for t in (  # issue 25 (relative to the fork floor of the same run) and issue 14
        Target("container_back_to_back_median_over_fork_floor", "<=", 1.5),
        Target("container_back_to_back_p95_over_fork_floor", "<=", 2.5),
        Target("pool_seconds_for_1100", "<=", 8.0),
        Target("container_spaced_median_over_bare_python", "<=", 1.0),
        Target("speedup_vs_docker_run", ">=", 25.0),
        Target("harness_container_over_process", "<=", 1.5),
    )
}
FAKE_SERVER_MODEL = "fake-scripted-bench-server"
# issue 33: programs through the new paths (frozen clock, hash(), masked reprs) that also run OK
# on an executor without them, for the A/B
DETERMINISM_PATH_PROGRAMS = [
    "import datetime, time\nd = datetime.datetime.now()\nt = time.time()\nanswer = d.year - 2000 + t * 0\n",
    "import datetime\nanswer = (datetime.date.today() - datetime.date(2000, 1, 1)).days\n",
    "f = lambda x: x * 2\nprint(f, [].append, iter([1]))\nanswer = f(hash('creatinine') % 97)\n",
    "import time\nanswer = time.localtime().tm_year + time.monotonic() * 0 + time.strftime('%Y').count('2')\n",
]

# Issue 40's paths: hash() of a tuple (its walk now counts under the line cap), output written in
# pieces (masked over the whole stream), the closed datetime class, and longer programs (the
# static check's allow-list walk).
ISSUE40_PATH_PROGRAMS = [
    "t = tuple(range(200))\nanswer = hash(t) % 97\n",
    "for i in range(40):\n    print('row', i, end=': ')\n    print(i * 2, [].append)\nanswer = 1\n",
    "import datetime\nd = datetime.datetime.max - datetime.timedelta(days=400)\n"
    "answer = datetime.datetime.combine(d.date(), datetime.time()).date()\n",
    *(
        h.source
        for h in HONEST_CORPUS
        if h.name in ("glasgow_blatchford", "child_pugh_helpers", "wells_dvt_dict_lambda")
    ),
]


def programs(n: int) -> list[str]:
    return [PROGRAMS[i % len(PROGRAMS)] for i in range(n)]


def load() -> float:
    return loadavg()[0]


def summary(latencies_s: list[float], wall_s: float) -> dict:
    ms = sorted(x * 1000 for x in latencies_s)
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))]
    return {
        "n": len(ms),
        "median_ms": round(statistics.median(ms), 3),
        "p95_ms": round(p95, 3),
        "mean_ms": round(statistics.fmean(ms), 3),
        "programs_per_s": round(len(ms) / wall_s, 2),
        "wall_s": round(wall_s, 3),
    }


def measured(fn: Callable[[], dict]) -> dict:
    """Run fn() and attach the load average before and after."""
    before = load()
    out = fn()
    out["loadavg_1m"] = [before, load()]
    return out


def sequential(fn: Callable[[str], object], sources: list[str]) -> dict:
    lat = []
    start = time.perf_counter()
    for src in sources:
        t = time.perf_counter()
        fn(src)
        lat.append(time.perf_counter() - t)
    return summary(lat, time.perf_counter() - start)


def bench_in_process(sources: list[str]) -> dict:
    def run(src: str) -> None:
        g = {"__builtins__": __builtins__}
        exec(compile(src, "<program>", "exec"), g)
        if "answer" not in g:
            raise RuntimeError("no answer")

    return sequential(run, sources)


def bench_bare(sources: list[str], python: str) -> dict:
    def run(src: str) -> None:
        r = subprocess.run([python, "-I", "-S", "-c", src + "print(answer)\n"], capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"bare python failed: {r.stderr[-300:]!r}")

    return sequential(run, sources)


def _ok(ex: Executor) -> Callable[[str], ExecResult]:
    def run(src: str) -> ExecResult:
        r = ex.run(src)
        if r.outcome != "OK":
            raise RuntimeError(f"{ex.backend} backend: {r.outcome}: {r.error}")
        return r

    return run


def bench_back_to_back(ex: Executor, n: int) -> dict:
    return sequential(_ok(ex), programs(n))


def bench_spaced(ex: Executor, n: int, gap_s: float) -> dict:
    """One request at a time, ``gap_s`` apart: the latency of a request that finds the sandbox
    idle (its spare children forked and warmed), i.e. with process creation off the path."""
    run = _ok(ex)
    lat = []
    start = time.perf_counter()
    for src in programs(n):
        time.sleep(gap_s)
        t = time.perf_counter()
        run(src)
        lat.append(time.perf_counter() - t)
    out = summary(lat, time.perf_counter() - start - gap_s * n)
    out["gap_s"] = gap_s
    return out


def bench_bursty(ex: Executor, bursts: int, size: int, gap_s: float) -> dict:
    """``bursts`` bursts of ``size`` concurrent requests, ``gap_s`` apart: per-program latency
    (submission to answer) and the time for a whole burst."""
    run = _ok(ex)
    lat, burst_s = [], []
    start = time.perf_counter()

    def one(src: str) -> float:
        t = time.perf_counter()
        run(src)
        return time.perf_counter() - t

    with ThreadPoolExecutor(max_workers=size) as tp:
        for b in range(bursts):
            if b:
                time.sleep(gap_s)
            t = time.perf_counter()
            lat += list(tp.map(one, programs(size)))
            burst_s.append(time.perf_counter() - t)
    wall = time.perf_counter() - start - gap_s * (bursts - 1)
    out = summary(lat, wall)
    out.update(
        burst_size=size,
        bursts=bursts,
        gap_s=gap_s,
        burst_wall_ms_median=round(statistics.median(burst_s) * 1000, 1),
        # what one program costs a worker inside a burst (the latency above includes the wait
        # for a free worker: with 32 requests on `workers` supervisors, most of it is queueing)
        service_ms_per_program=round(statistics.median(burst_s) * 1000 * ex.workers / size, 3),
    )
    return out


def bench_mixed(ex: Executor, n: int, every: int = 20) -> dict:
    """Back to back; every ``every``-th program hits a limit (cycling through LIMIT_PROGRAMS)."""
    lat_ok, lat_all, outcomes = [], [], {}
    start = time.perf_counter()
    limit_i = 0
    for i, src in enumerate(programs(n)):
        expect = {"OK"}
        if i % every == every - 1:
            src, expect = LIMIT_PROGRAMS[limit_i % len(LIMIT_PROGRAMS)]
            limit_i += 1
        t = time.perf_counter()
        r = ex.run(src)
        dt = time.perf_counter() - t
        if r.outcome not in expect:
            raise RuntimeError(f"{ex.backend} mixed #{i}: {r.outcome} not in {sorted(expect)}: {r.error}")
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        lat_all.append(dt)
        if expect == {"OK"}:
            lat_ok.append(dt)
    wall = time.perf_counter() - start
    out = summary(lat_all, wall)
    ok = summary(lat_ok, wall)
    out.update(
        limit_every=every, outcomes=outcomes, ok_programs_median_ms=ok["median_ms"], ok_programs_p95_ms=ok["p95_ms"]
    )
    return out


def bench_throughput(ex: Executor, n: int) -> dict:
    start = time.perf_counter()
    results = ex.run_many(programs(n))
    wall = time.perf_counter() - start
    bad = [r for r in results if r.outcome != "OK"]
    if bad:
        raise RuntimeError(f"{ex.backend}: {len(bad)} of {n} not OK, first: {bad[0].outcome}: {bad[0].error}")
    return {
        "n": n,
        "wall_s": round(wall, 3),
        "programs_per_s": round(n / wall, 2),
        "seconds_for_1100": round(wall * 1100 / n, 3),
        "child_wall_ms_median": round(statistics.median(r.wall_ms for r in results), 3),
    }


def bench_backend(backend: str, args: Options, image: str | None) -> dict:
    print(f"bench: {backend} backend", file=sys.stderr)
    t = time.perf_counter()
    opts = {"image": image, "runtime": args.runtime} if backend == "container" else {}
    if args.spares is not None:
        opts["spares"] = args.spares
    with Executor(backend=backend, workers=args.workers, **opts) as ex:
        out = {"startup_s": round(time.perf_counter() - t, 3)}
        out["back_to_back"] = measured(lambda: bench_back_to_back(ex, args.n_seq))
        out["spaced"] = measured(lambda: bench_spaced(ex, args.n_spaced, 0.05))
        out["bursty"] = measured(lambda: bench_bursty(ex, args.bursts, 32, args.burst_gap))
        out["mixed"] = measured(lambda: bench_mixed(ex, args.n_mixed))
        out["throughput"] = measured(lambda: bench_throughput(ex, args.n_pool))
        out["executor"] = ex.describe()
    return out


def bench_docker_run(n: int, image: str, runtime: str | None = None) -> dict:
    docker = shutil.which("docker")
    flags = pool_mod.default_run_flags(runtime)

    def run(src: str) -> None:
        r = subprocess.run(
            [docker, "run", "--rm", *flags, image, "python3", "-I", "-S", "-c", src + "print(answer)\n"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        if r.returncode != 0:
            raise RuntimeError(f"docker run failed: {r.stderr[-300:]!r}")

    return sequential(run, programs(n))


FORK_FLOOR_SOURCE = (
    "import os, time\n"
    "n = {n}\nt = time.perf_counter()\n"
    "for _ in range(n):\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "print((time.perf_counter() - t) * 1000 / n)\n"
)


def bench_fork_floor(n: int, image: str, python: str, runtime: str | None = None) -> dict:
    """Wall ms of fork + _exit + waitpid of a bare ``python3 -I -S``: host and inside runsc."""
    src = FORK_FLOOR_SOURCE.format(n=n)
    host = subprocess.run([python, "-I", "-S", "-c", src], capture_output=True, text=True, check=True)
    docker = shutil.which("docker")
    inside = subprocess.run(
        [docker, "run", "--rm", *pool_mod.default_run_flags(runtime), image, "python3", "-I", "-S", "-c", src],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    return {"n": n, "host_ms": round(float(host.stdout), 3), "runsc_ms": round(float(inside.stdout), 3)}


# --- where one program's time goes (bench/phase_probe.py) -------------------------------------------

PROBE = ROOT / "bench" / "phase_probe.py"
# on the host the probe runs as a module from the repository root (as a script, bench/ would come first on sys.path
# and bench/executor.py would stand in for the executor package); in runsc its file is fed to python3 -I -S -
PROBE_MODULE = ["-m", "bench.phase_probe"]


def _phase_summary(report: dict) -> dict:
    """Medians (and p95) per phase, the request path and the work ahead of demand, from one probe run."""

    def stats(values: Iterable[float | None]) -> dict[str, float] | None:
        xs = sorted(x for x in values if x is not None)
        if not xs:
            return None
        return {
            "median_ms": round(statistics.median(xs), 3),
            "p95_ms": round(xs[min(len(xs) - 1, round(0.95 * len(xs)) - 1)], 3),
        }

    out = {
        "n": report["n"],
        "outcomes": report["outcomes"],
        "phases_ms": {name: stats(report["samples"][name]) for name in report["phases"]},
        "request_path_ms": stats(report["totals"]["request_path"]),
        "ahead_of_demand_ms": stats(report["totals"]["ahead_of_demand"]),
        "fork_floor_ms": stats(report["fork_floor_ms"]),
        "zygote_fork_exit_wait_ms": stats(report["zygote_fork_exit_wait_ms"]),
        "request_path_phases": report["request_path"],
        "ahead_of_demand_phases": report["ahead_of_demand"],
    }
    faults = [f for f in report.get("child_minor_faults", []) if f]
    if faults:
        out["child_minor_faults_median"] = statistics.median(faults)
    return out


STRACE_PHASES = ("descriptors", "rlimits", "warm", "request", "check_compile", "seccomp", "program", "result")


def count_syscalls_by_phase(traces: dict[int, str]) -> dict:
    """Median system calls per phase of each probe child, from ``strace -f -ff`` output (one trace
    per pid) where the child marks the end of every phase with an empty ``write(3, "", 0)``. A
    pid with exactly one marker per phase boundary is a probe child; the others (the zygote, the
    fork-floor children, the kill-action probe) are left out."""
    marker = 'write(3, "", 0)'
    per_phase: dict[str, list[int]] = {p: [] for p in STRACE_PHASES}
    names: dict[str, dict[str, int]] = {p: {} for p in STRACE_PHASES}
    children = 0
    for _pid, text in sorted(traces.items()):
        lines = [ln for ln in text.splitlines() if ln and not ln.startswith(("+++", "---"))]
        if sum(1 for ln in lines if ln.startswith(marker)) != len(STRACE_PHASES) - 1:
            continue
        children += 1
        phase, count = 0, 0
        for ln in lines:
            if ln.startswith(marker):
                per_phase[STRACE_PHASES[phase]].append(count)
                phase, count = phase + 1, 0
                continue
            count += 1
            key = ln.split("(", 1)[0]
            names[STRACE_PHASES[phase]][key] = names[STRACE_PHASES[phase]].get(key, 0) + 1
        per_phase[STRACE_PHASES[phase]].append(count)
    return {
        "children": children,
        "median_calls": {p: (statistics.median(v) if v else None) for p, v in per_phase.items()},
        "calls_by_name_per_child": {
            p: {k: round(v / max(children, 1), 2) for k, v in sorted(d.items())} for p, d in names.items()
        },
    }


def strace_probe(n: int, directory: Path) -> dict[int, str]:
    """Run the probe with markers under ``strace -f -ff``: {pid: its trace}."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    prefix = directory / "trace"
    subprocess.run(
        [
            shutil.which("strace"),
            "-f",
            "-ff",
            "-qq",
            "-o",
            str(prefix),
            sys.executable,
            *PROBE_MODULE,
            str(n),
            "--markers",
        ],
        capture_output=True,
        env=env,
        check=True,
    )
    return {int(p.name.rsplit(".", 1)[1]): p.read_text(errors="replace") for p in directory.glob("trace.*")}


def bench_phases(n: int, image: str, runtime: str | None = None) -> dict:
    """The per-phase breakdown: the probe on the host (the process backend's conditions), the probe
    inside runsc with the pool's flags (the container backend's), and system calls per phase
    counted by strace on the host."""
    print(f"bench: per-phase breakdown ({n} children, host and runsc)", file=sys.stderr)
    out = {"probe": "bench/phase_probe.py"}
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    host = subprocess.run(
        [sys.executable, *PROBE_MODULE, str(n)], capture_output=True, text=True, env=env, check=True, cwd=ROOT
    )
    out["host"] = _phase_summary(json.loads(host.stdout))
    docker = shutil.which("docker")
    with open(PROBE, "rb") as src:
        inside = subprocess.run(
            [
                docker,
                "run",
                "-i",
                "--rm",
                *pool_mod.default_run_flags(runtime),
                image,
                "python3",
                "-I",
                "-S",
                "-",
                str(n),
            ],
            stdin=src,
            capture_output=True,
            check=True,
        )
    out["runsc"] = _phase_summary(json.loads(inside.stdout))
    if shutil.which("strace"):
        with tempfile.TemporaryDirectory(prefix="bench-strace-") as tmp:
            out["host_syscalls"] = count_syscalls_by_phase(strace_probe(min(n, 30), Path(tmp)))
    else:
        out["host_syscalls"] = None
    return out


def holding_phase(phases: dict, cores: int) -> dict:
    """Which phase holds the back-to-back latency: a program's work ahead of demand (fork, set-up,
    warm-up) and on its request path, both inside runsc; with one client, latency is at least the
    request path and, once the spares run out, the whole work divided over the cores."""
    r = phases["runsc"]
    per_phase = {k: v["median_ms"] for k, v in r["phases_ms"].items() if v}
    ahead = r["ahead_of_demand_ms"]["median_ms"]
    path = r["request_path_ms"]["median_ms"]
    work = ahead + path
    biggest = max(per_phase, key=per_phase.get)
    return {
        "request_path_ms": path,
        "ahead_of_demand_ms": ahead,
        "work_per_program_ms": round(work, 3),
        "work_over_cores_ms": round(work / cores, 3),
        "largest_phase": biggest,
        "largest_phase_ms": per_phase[biggest],
        "fork_floor_ms": r["fork_floor_ms"]["median_ms"],
        "phases_ms": per_phase,
    }


# --- the harness end to end against a scripted stand-in for a model server ------------------------

# NOT a model: every chat completion is answered at once with the same kind of fenced program (its answer
# depends on the request size only), so that `harness run` can be timed with the executor as the only slow part.
FAKE_REPLY = "```python\nimport math\nx = {n}\nanswer = round(math.sqrt(x) * 1.5 + x / 7, 2)\n```\n"


def fake_reply(raw: bytes) -> dict:
    return chat_completion(
        FAKE_REPLY.format(n=len(raw) % 997 + 1),
        model=FAKE_SERVER_MODEL,
        prompt_tokens=len(raw) // 4,
        completion_tokens=30,
    )


def bench_harness(backend: str, port: int, dataset: str, concurrency: int) -> dict:
    harness = Path(sys.executable).parent / "harness"
    with (
        tempfile.TemporaryDirectory(prefix="bench-harness-") as out,
        ScriptedServer(reply=fake_reply, model=FAKE_SERVER_MODEL, port=port) as server,
    ):
        cmd = [
            str(harness),
            "run",
            "--arm",
            "program-solve",
            "--dataset",
            dataset,
            "--seeds",
            "42",
            "--base-url",
            f"http://127.0.0.1:{server.port}/v1",
            "--model",
            FAKE_SERVER_MODEL,
            "--executor-backend",
            backend,
            "--concurrency",
            str(concurrency),
            "--no-cache",
            "--no-progress",
            "--out",
            out,
        ]
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"harness run ({backend}) failed: {r.stderr[-800:]}")
        rows = sum(1 for p in Path(out).rglob("*.jsonl") for line in p.open() if line.strip())
    return {
        "wall_s": round(wall, 3),
        "rows": rows,
        "model_requests": len(server.requests),
        "command": " ".join(cmd[1:]).replace(out, "<tmp>"),
    }


# --- verdict -------------------------------------------------------------------------------------


def baseline_checkout(ref: str, directory: Path) -> Path:
    """The executor package (and its container files) of git ref ``ref``, extracted into ``directory``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "executor", "containers/executor"],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True, timeout=120)
    return directory


def bench_ab(args: Options, image: str) -> dict:
    """This checkout against ``--baseline-ref`` (see the module docstring, ``ab``)."""
    mixes = {
        "bench_mix": PROGRAMS,
        "determinism_paths": DETERMINISM_PATH_PROGRAMS,
        "issue40_paths": ISSUE40_PATH_PROGRAMS,
    }
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        sides = {
            "this_checkout": (str(ROOT), image),
            "baseline": (str(baseline_checkout(args.baseline_ref, Path(tmp))), args.baseline_image),
        }
        runs = {b: {side: [] for side in sides} for b in ("process", "container")}
        for rnd in range(args.ab_rounds):
            for backend in runs:
                for side in list(sides) if rnd % 2 == 0 else list(reversed(sides)):
                    src, img = sides[side]
                    cmd = [
                        sys.executable,
                        "-P",
                        str(ROOT / "bench" / "ab_driver.py"),
                        "--src",
                        src,
                        "--backend",
                        backend,
                        "--n",
                        str(args.ab_n),
                        "--programs",
                        json.dumps(mixes),
                    ]
                    if backend == "container":
                        cmd += ["--image", img, "--runtime", args.runtime]
                    before = load()
                    out = subprocess.run(
                        cmd, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": src}
                    )
                    run = json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-800:]}
                    run["loadavg_1m"] = [before, load()]
                    runs[backend][side].append(run)
    summary_ = {
        "baseline_ref": args.baseline_ref,
        "baseline_image": args.baseline_image,
        "this_image": image,
        "rounds": args.ab_rounds,
        "n_per_mix": args.ab_n,
        "runs": runs,
    }
    for backend, by_side in runs.items():
        medians: dict = {}
        for side, side_runs in by_side.items():
            good = [r for r in side_runs if "error" not in r]
            if not good:
                medians[side] = None
                continue
            medians[side] = {"startup_ms": statistics.median(r["startup_ms"] for r in good)}
            for mix in mixes:
                medians[side][f"{mix}_median_ms"] = statistics.median(r["mixes"][mix]["median_ms"] for r in good)
                cpu = [r["mixes"][mix].get("median_cpu_ms") for r in good]
                if None not in cpu:
                    medians[side][f"{mix}_median_cpu_ms"] = statistics.median(cpu)
        summary_[backend] = medians
        if all(medians.values()):
            summary_[backend]["this_over_baseline"] = {
                k: round(medians["this_checkout"][k] / medians["baseline"][k], 3) for k in medians["baseline"]
            }
    return summary_


def compare(res: dict) -> dict:
    c = res["container"]
    floor = res["fork_floor"]["runsc_ms"]
    measured_values = {
        "container_back_to_back_median_over_fork_floor": round(c["back_to_back"]["median_ms"] / floor, 3),
        "container_back_to_back_p95_over_fork_floor": round(c["back_to_back"]["p95_ms"] / floor, 3),
        "pool_seconds_for_1100": c["throughput"]["seconds_for_1100"],
        "container_spaced_median_over_bare_python": round(
            c["spaced"]["median_ms"] / res["bare_python"]["median_ms"], 3
        ),
        "speedup_vs_docker_run": round(res["docker_run"]["median_ms"] / c["back_to_back"]["median_ms"], 2),
    }
    if "harness_end_to_end" in res:
        h = res["harness_end_to_end"]
        measured_values["harness_container_over_process"] = round(h["container"]["wall_s"] / h["process"]["wall_s"], 3)
    return {key: TARGETS[key].verdict(value) for key, value in measured_values.items()}


@dataclass(frozen=True)
class Options:
    """`python -m bench executor`'s options (bench/cli.py lists their help)."""

    out: Path = ROOT / "runs" / "bench" / "executor.json"
    n_seq: int = 200  # back-to-back programs per mode
    n_spaced: int = 100  # programs sent one at a time, 50 ms apart
    bursts: int = 8  # bursts of 32 programs
    burst_gap: float = 0.5  # seconds between bursts
    n_mixed: int = 200  # programs of the mixed pattern (1 in 20 hits a limit)
    n_pool: int = 1100  # programs through run_many
    n_docker: int = 20  # programs for docker run per program
    workers: int = os.cpu_count() or 1
    spares: int | None = None  # spare children per supervisor (None: the executor's)
    python: str = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable  # bare baseline
    image: str | None = None
    runtime: str = pool_mod.DEFAULT_RUN_VALUES["runtime"]
    n_phases: int = 100  # children of the per-phase breakdown (0: skip)
    harness_dataset: str = "dev"  # dataset of the harness end-to-end run ("": skip)
    harness_concurrency: int = 32
    fake_server_port: int = 18431  # port of the scripted fake server (0: any)
    baseline_ref: str = ""  # git ref of an A/B baseline executor, e.g. cc9e450 (before issue 33); "": no A/B
    baseline_image: str = f"{pool_mod.IMAGE_NAME}:latest"  # executor image built from baseline_ref
    ab_rounds: int = 3  # interleaved rounds of the A/B
    ab_n: int = 100  # programs per mix and round in the A/B
    only_ab: bool = False  # measure the A/B section alone

    def __post_init__(self) -> None:
        for name in ("n_seq", "n_spaced", "bursts", "n_mixed", "n_pool", "n_docker", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1")


def main(args: Options) -> int:
    machine = Machine()
    image = args.image or pool_mod.default_image()
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    res: dict = {}
    if args.baseline_ref:
        print(f"bench: A/B against {args.baseline_ref} ({args.ab_rounds} rounds)", file=sys.stderr)
        res["ab"] = bench_ab(args, image)
    if args.only_ab:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(
                {
                    "started_at": started,
                    "machine": {
                        "cores": machine.cores,
                        "loadavg_start": machine.loadavg_start,
                        "loadavg_end": machine.finish().loadavg_end,
                    },
                    "results": res,
                },
                indent=2,
            )
            + "\n"
        )
        print(f"bench: wrote {out}", file=sys.stderr)
        return 0
    seq = programs(args.n_seq)
    print(f"bench: in-process, bare python ({args.n_seq} each)", file=sys.stderr)
    res["in_process"] = measured(lambda: bench_in_process(seq))
    res["bare_python"] = measured(lambda: bench_bare(seq, args.python))
    res["bare_python"]["python"] = args.python
    res["process"] = bench_backend("process", args, None)
    res["container"] = bench_backend("container", args, image)
    # the bare baseline again after the backends, so that a change of load shows in the ratio
    res["bare_python_after"] = measured(lambda: bench_bare(seq, args.python))
    print(f"bench: docker run per program ({args.n_docker}), fork floor", file=sys.stderr)
    res["docker_run"] = measured(lambda: bench_docker_run(args.n_docker, image, args.runtime))
    res["fork_floor"] = measured(lambda: bench_fork_floor(200, image, args.python, args.runtime))
    if args.n_phases:
        res["phases"] = measured(lambda: bench_phases(args.n_phases, image, args.runtime))
    if args.harness_dataset:
        print(
            f"bench: harness end to end ({args.harness_dataset}, concurrency {args.harness_concurrency})",
            file=sys.stderr,
        )
        try:
            res["harness_end_to_end"] = {
                b: measured(
                    functools.partial(
                        bench_harness, b, args.fake_server_port, args.harness_dataset, args.harness_concurrency
                    )
                )
                for b in ("container", "process")
            }
        except (RuntimeError, OSError) as exc:  # e.g. the dev rows are not in ../shared
            res["harness_end_to_end_error"] = str(exc)[-1000:]
            print(f"bench: harness end to end failed: {exc}", file=sys.stderr)
    report = {
        "started_at": started,
        "machine": {
            "cores": machine.cores,
            "platform": machine.platform,
            "python": machine.python,
            "loadavg_start": machine.loadavg_start,
            "loadavg_end": machine.finish().loadavg_end,
        },
        "results": res,
        "targets": compare(res),
    }
    floor = res["fork_floor"]["runsc_ms"]
    report["floor"] = {
        "fork_exit_wait_in_runsc_ms": floor,
        "seconds_for_1100_from_fork_alone": round(floor * 1100 / 1000 / machine.cores, 2),
        "note": "a fresh process per program costs at least one fork + exit + wait inside gVisor; "
        "divided over the cores, this bounds the 1,100-program time from below before any Python runs",
    }
    if "phases" in res:
        report["holding_phase"] = holding_phase(res["phases"], machine.cores)
    missed = [
        f"{k}: {v['measured']} vs {v['target']} ({v['off_by']}x)" for k, v in report["targets"].items() if not v["met"]
    ]
    report["note"] = ("all targets met" if not missed else "missed: " + "; ".join(missed)) + (
        f". Load average {report['machine']['loadavg_start'][0]}->{report['machine']['loadavg_end'][0]} "
        f"on {machine.cores} cores."
    )
    if "holding_phase" in report:
        h = report["holding_phase"]
        report["note"] += (
            f" Inside runsc a program is {h['ahead_of_demand_ms']} ms of work ahead of demand and "
            f"{h['request_path_ms']} ms on its request path ({h['work_over_cores_ms']} ms per core); the "
            f"largest phase is {h['largest_phase']} at {h['largest_phase_ms']} ms against a fork floor "
            f"of {h['fork_floor_ms']} ms."
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    for k, v in report["targets"].items():
        print(
            f"  {k:40s} {v['measured']:>10} target {v['target']:>8}  {'ok' if v['met'] else 'MISSED'}", file=sys.stderr
        )
    print(f"bench: wrote {out}", file=sys.stderr)
    return 0
