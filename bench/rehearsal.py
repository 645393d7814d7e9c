"""`make rehearse`: the paper's workload shape through the whole kit against the rehearsal server, a scripted FAKE.

    python -m bench rehearse [--size full|small] [--out runs/rehearsal] [--bench runs/bench/pipeline.json]

Steps (every step's wall time, and the run's counters, go into the JSON report):
1. the rehearsal case set (harness.data.rehearsal_set): 55 calculators x 20 dev rows (full) or x 2 (small);
2. the rehearsal server (`harness serve rehearsal` through the kit's RehearsalLauncher) serving both rehearsal models
   in one process, fault injection on, every injected fault logged;
3. the reference run: `harness reproduce --launcher external` against that server, i.e. the same
   reproduction.run_pipeline a user's `make reproduce` runs (preflight, the model-free arms, then every paper arm x
   5 seeds (full) or 2 (small) for each model, the container executor, the concurrency `make reproduce` uses (the
   vLLM profile's max_num_seqs), then its statistics, tables, figures, report, checksums and verify); the pipeline
   process's CPU and peak RSS are sampled from /proc while it runs and read at the end of its last run block (the
   figures of the run itself, without the outputs after it);
4. the post-run stages on the reference results, the commands a user runs (bench.stages), each timed;
5. the kill-and-resume check: the first model's pipeline into a second directory (the other model's files copied from
   the reference; --resume-scope all-models reruns it too), SIGKILLed at a seeded random point, resumed, the
   rehearsal server SIGKILLed once (and restarted) during the resumed run; its tables are built and its content
   checksums (bench.compare) compared with the reference's;
6. lost and duplicated records (expected keys against stored keys) in both directories, fault counts.

Rates (`run`): `requests_per_s` is the run's own, all requests over its wall; `program_requests_per_s` and
`other_requests_per_s` (the targets) are those arms' requests over their busy seconds (arm_busy_s: each moment of
the run shared among the arms in flight by their share of the cases in flight), the same quantity under either
request order: run one after another (arm-major), an arm's busy time is its wall; run together (case-major, the
default), every arm's wall spans the whole run and the walls overlap, so they are kept beside, never divided by.
`run.order` (and `config.order`) says which order ran (`--order` picks one).

Everything written is synthetic: model ids `rehearsal-alpha`/`rehearsal-beta`, records and manifests say
`synthetic: true`; `harness verify` refuses a set that mixes them with real records. The rehearsal owns its server
(so that it can crash it) and the pipeline adopts it as an external server; `make reproduce LAUNCHER=rehearsal`
starts one itself.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import stages as post_run
from bench.compare import compare, content_checksums
from bench.machine import Machine, loadavg
from bench.targets import Target
from harness.arms.registry import ARMS, paper_arms
from harness.core.canonical_json import json_file_text
from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.core.seeds import parse_seeds
from harness.core.typed_json import to_json
from harness.data.dataset import load_dataset
from harness.data.rehearsal_set import build_rehearsal_set, dev_rows_csv
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.rehearsal.server import Faults
from harness.model.rehearsal.sources import DEFAULT_MODELS
from harness.model.serving import LaunchError
from harness.model.vllm.locks import serving_config
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.plan import build_plan
from harness.run.manifest import ReproduceManifest, RunManifest, git_state, read_manifests
from harness.run.request import RunRequest, planned_keys
from harness.run.schedule import DEFAULT_ORDER
from harness.run.store import iter_result_files, model_slug, read_result_file, results_location

ROOT = REPO_ROOT
MODELS = DEFAULT_MODELS
SIZES = {"full": {"per_calculator": 20, "seeds": "42-46"}, "small": {"per_calculator": 2, "seeds": "42-43"}}
DEFAULT_FAULTS = {"fault_5xx": 0.002, "fault_slow": 0.0003, "fault_drop": 0.001}
CLIENT_TIMEOUT_S = 10.0
# the H100 path's client profile with the reproducible-sampling option on (per-request seeds sent): the rehearsal
# server answers by the request body, so without a seed a case's sampled votes would be copies
SERVER_PROFILE = "vllm-seeded"
RESUME_SCOPES = ("first-model", "all-models")
TARGETS = (
    Target("program_requests_per_s", ">=", 100, label="program_requests_per_s>=100"),
    Target("other_requests_per_s", ">=", 500, label="other_requests_per_s>=500"),
    Target("harness_peak_rss_bytes", "<=", 2**30, label="harness_peak_rss<=1GiB"),
    post_run.POST_RUN_TARGET,
)
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class RehearsalSettings:
    """Everything a rehearsal is run with."""

    size: str = "full"
    out: Path = ROOT / "runs" / "rehearsal"
    bench: Path = ROOT / "runs" / "bench" / "pipeline.json"  # the JSON report (also written to out/pipeline.json)
    seed: int = 20261123  # the rehearsal seed: server replies, fault draws, kill points
    concurrency: int | None = None  # None: the concurrency `make reproduce` uses
    executor_backend: str = "container"
    faults: dict = field(default_factory=lambda: dict(DEFAULT_FAULTS))  # shares of attempts
    resume_check: bool = True
    resume_scope: str = "first-model"  # first-model: rerun the model the kills land in; all-models: both
    source: Path | None = None  # the dev rows the set is built from [the pinned name `dev`]
    port: int | None = None  # the rehearsal server's [a free one]
    per_calculator: int | None = None  # override the size's cases per calculator
    seeds: str | None = None  # override the size's seeds, e.g. 42-43
    order: str | None = None  # the runs' request order [the one `make reproduce` uses]

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ValueError(f"size {self.size!r}: expected one of {', '.join(SIZES)}")
        if self.resume_scope not in RESUME_SCOPES:
            raise ValueError(f"resume scope {self.resume_scope!r}: expected one of {', '.join(RESUME_SCOPES)}")

    def workload(self) -> tuple[str, int, str]:
        """(size label, cases per calculator, seeds); a partial size says so in its label."""
        cfg = dict(SIZES[self.size])
        if not (self.per_calculator or self.seeds):
            return self.size, cfg["per_calculator"], cfg["seeds"]
        per_calculator, seeds = self.per_calculator or cfg["per_calculator"], self.seeds or cfg["seeds"]
        return f"custom ({per_calculator} per calculator, seeds {seeds})", per_calculator, seeds


def _echo(msg: str) -> None:
    print(f"[rehearse {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def reproduce_concurrency() -> int:
    """The concurrency `make reproduce` uses: the vLLM serving defaults' max_num_seqs (64)."""
    return int(serving_config()["defaults"]["max_num_seqs"])


# --- the rehearsal server ----------------------------------------------------------------------------------


def rehearsal_server(out: Path, port: int, seed: int, answer_key: Path, faults: dict) -> RehearsalLauncher:
    """Both rehearsal models in one server process, faults on, every injected fault logged
    (out/server/faults.jsonl), slow replies held past the client's timeout."""
    return RehearsalLauncher(
        model_id=MODELS[0],
        extra_model_ids=MODELS[1:],
        port=port,
        seed=seed,
        answer_key=answer_key,
        log_path=out / "server" / "server.log",
        faults=Faults(
            rate_5xx=faults["fault_5xx"],
            rate_slow=faults["fault_slow"],
            rate_drop=faults["fault_drop"],
            slow_s=CLIENT_TIMEOUT_S + 5,
        ),
        fault_log=out / "server" / "faults.jsonl",
    )


def start_server(server: RehearsalLauncher) -> dict:
    """Start it and wait until it lists both models; its own ready line."""
    server.start()
    try:
        server.wait_ready(60)
    except LaunchError as exc:
        raise RuntimeError(f"the rehearsal server did not start: {exc}") from None
    return server.served() or server.describe().to_json()


# --- one pipeline process, measured -------------------------------------------------------------------------


def pipeline_argv(
    models: Iterable[str],
    dataset: Path,
    seeds: str,
    base_url: str,
    results: Path,
    concurrency: int,
    backend: str,
    convention: str,
    order: str | None = None,
) -> list[str]:
    """`harness reproduce` against the running rehearsal server (the external launcher adopts it)."""
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "reproduce",
        "--launcher",
        "external",
        "--base-url",
        base_url,
        "--server-profile",
        SERVER_PROFILE,
        "--models",
        ",".join(models),
        "--arms",
        "all",
        "--seeds",
        seeds,
        "--dataset",
        str(dataset),
        "--out",
        str(results),
        "--executor-backend",
        backend,
        "--concurrency",
        str(concurrency),
        "--timeout",
        str(CLIENT_TIMEOUT_S),
        "--no-progress",
        "--convention",
        convention,
        *(["--order", order] if order else []),
    ]


@dataclass
class Measured:
    """One process run: exit status, wall time, and its CPU seconds and peak RSS sampled from /proc."""

    argv: list[str]
    started: float = 0.0  # epoch seconds
    returncode: int | None = None
    killed: bool = False
    wall_s: float = 0.0
    cpu_s_with_children: float = 0.0  # from wait4: includes the docker CLI processes of the container pool
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # (epoch, CPU s, VmHWM bytes)

    def at(self, when: float | None = None) -> tuple[float, int]:
        """(CPU seconds, peak RSS bytes) of the process itself at `when` (the last sample before it; None: the
        last sample of all)."""
        before = [s for s in self.samples if when is None or s[0] <= when] or self.samples[:1]
        return (before[-1][1], before[-1][2]) if before else (0.0, 0)


def _proc_sample(pid: int) -> tuple[float, int] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    hwm = next((int(ln.split()[1]) * 1024 for ln in status.splitlines() if ln.startswith("VmHWM:")), 0)
    return cpu, hwm


def run_measured(
    argv: list[str],
    log_path: Path,
    *,
    kill_after_s: float | None = None,
    during: tuple[float, Callable[[], None]] | None = None,
) -> Measured:
    """Run `argv`, sampling its CPU and peak RSS every 0.25 s; SIGKILL it after `kill_after_s` if given; call
    during[1]() once after during[0] seconds if it is still running."""
    res = Measured(argv)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    res.started = time.time()
    started = time.perf_counter()
    with open(log_path, "a") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                s = _proc_sample(proc.pid)
                if s is not None:
                    res.samples.append((time.time(), *s))
                stop.wait(0.25)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timers: list[threading.Timer] = []
        if kill_after_s is not None:

            def kill() -> None:
                if proc.poll() is None:
                    res.killed = True
                    os.kill(proc.pid, signal.SIGKILL)

            timers.append(threading.Timer(kill_after_s, kill))
        if during is not None:
            timers.append(threading.Timer(during[0], lambda: proc.poll() is None and during[1]()))
        for t in timers:
            t.start()
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        for t in timers:
            t.cancel()
        stop.set()
        sampler.join()
    res.returncode = proc.returncode
    res.wall_s = round(time.perf_counter() - started, 3)
    res.cpu_s_with_children = round(ru.ru_utime + ru.ru_stime, 2)
    return res


@dataclass
class PipelineRun:
    """What one pipeline process left in its results directory: its reproduce manifest and the run manifests of
    its blocks (model-free arms, then one per model), typed."""

    reproduce: ReproduceManifest
    blocks: list[RunManifest]  # the run manifests, in block order

    def block(self, model: str) -> RunManifest | None:
        return next((m for m in self.blocks if m.model.id == model), None)

    @property
    def run_end(self) -> float | None:
        """When the last unit of the last block finished (epoch seconds)."""
        ends = [_epoch(s.finished_at) for m in self.blocks for s in m.summaries or () if s.finished_at]
        return max(ends) if ends else None


def _epoch(iso: str) -> float:
    return _dt.datetime.fromisoformat(iso).timestamp()


def pipeline_run(results: Path, before: set[Path]) -> PipelineRun:
    """The reproduce manifest a pipeline run wrote into `results` (the one not in `before`) and the run manifests
    its blocks name."""
    found = read_manifests(results)
    by_name = {f.path.name: f.manifest for f in found}
    new = [f.manifest for f in found if f.path not in before and f.manifest.kind == "reproduce"]
    if len(new) != 1:
        raise RuntimeError(f"{results}: expected one new reproduce manifest, found {len(new)}")
    return PipelineRun(new[0], [by_name[b.run_manifest] for b in new[0].blocks if b.run_manifest in by_name])


def _manifest_paths(results: Path) -> set[Path]:
    return {m.path for m in read_manifests(results)} if results.is_dir() else set()


def block_span_s(manifest: RunManifest) -> float:
    """A run manifest's wall time: from its first unit taking a case slot to its last unit's last record."""
    spans = [
        (_epoch(s.started_at), _epoch(s.finished_at))
        for s in manifest.summaries or ()
        if s.started_at and s.finished_at
    ]
    return max(e for _, e in spans) - min(b for b, _ in spans) if spans else 0.0


# --- counting ------------------------------------------------------------------------------------------------


def expected_keys(dataset_path: Path, seeds: list[int], convention: str) -> set[str]:
    """Every record key a complete rehearsal must hold (both models, every paper arm and seed), with the arms
    configured for `convention`, under the rehearsal's client profile."""
    ds = load_dataset(dataset_path)
    request = RunRequest.build([ARMS[n] for n in paper_arms()], ds, ds.cases, seeds, out_dir=".", convention=convention)
    return set().union(*(planned_keys(request, model=model, server_profile=SERVER_PROFILE) for model in MODELS))


def count_records(results: Path, expected: set[str] | None = None) -> dict:
    """Records, unique keys, lost (expected but absent), duplicated, unexpected (None without `expected`);
    requests and programs, by kind and by arm; retries; bytes; each arm's busy seconds (arm_busy_s, from the records'
    own start and end). Read through the store's reader."""
    seen: dict[str, int] = {}
    requests = {"program": 0, "other": 0}
    programs = records = retries = result_bytes = 0
    by_arm: dict[str, dict] = {}
    intervals: dict[str, list[tuple[float, float]]] = {}
    for path in iter_result_files(results):
        result_bytes += path.stat().st_size
        for rec in read_result_file(path):
            records += 1
            if rec.started_at and rec.finished_at:
                intervals.setdefault(rec.arm, []).append((_epoch(rec.started_at), _epoch(rec.finished_at)))
            seen[rec.key] = seen.get(rec.key, 0) + 1
            kind = "program" if ARMS[rec.arm].needs_executor else "other"
            n_req = len(rec.request)
            requests[kind] += n_req
            n_prog = len(rec.executor_results)
            programs += n_prog
            retries += rec.retries
            a = by_arm.setdefault(rec.arm, {"records": 0, "requests": 0, "programs": 0, "correct": 0})
            a["records"] += 1
            a["requests"] += n_req
            a["programs"] += n_prog
            a["correct"] += rec.correct
    return {
        "records": records,
        "unique_keys": len(seen),
        "lost": None if expected is None else len(expected - seen.keys()),
        "duplicated": sum(n - 1 for n in seen.values() if n > 1),
        "unexpected": None if expected is None else len(seen.keys() - expected),
        "requests": requests,
        "programs": programs,
        "retries": retries,
        "result_bytes": result_bytes,
        "by_arm": by_arm,
        "busy_s": arm_busy_s(intervals),
    }


def arm_walls(manifests: Iterable[RunManifest]) -> dict[str, float]:
    """Wall seconds per arm, summed over the run manifests: in each, from the arm's first unit taking a case
    slot to its last unit's last record (the seeds of an arm overlap, so their unit walls are not added up).
    A unit summary without times (a kit before unit times, whose units ran one after another) adds its wall_s."""
    walls: dict[str, float] = {}
    for manifest in manifests:
        spans: dict[str, list[float]] = {}
        for s in manifest.summaries or ():
            if not s.started_at or not s.finished_at:
                walls[s.arm] = walls.get(s.arm, 0.0) + float(s.wall_s or 0.0)
                continue
            start, end = _epoch(s.started_at), _epoch(s.finished_at)
            lo, hi = spans.get(s.arm, [start, end])
            spans[s.arm] = [min(lo, start), max(hi, end)]
        for arm, (lo, hi) in spans.items():
            walls[arm] = walls.get(arm, 0.0) + (hi - lo)
    return walls


def arm_busy_s(intervals: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
    """Each arm's busy seconds: every moment of the run, while any case is in flight, is shared among the arms in
    flight by their share of the cases in flight (records' started_at to finished_at). The busy seconds of all arms
    add up to the time anything ran, whatever the request order: run one after another (arm-major) an arm's busy
    time is its wall time; run together (case-major) each arm gets its share of the common wall, where the arms'
    own walls all span the whole run and overlap."""
    events = sorted(
        (t, +1 if start else -1, arm)
        for arm, spans in intervals.items()
        for b, e in spans
        for t, start in ((b, True), (max(b, e), False))
    )
    busy = dict.fromkeys(intervals, 0.0)
    in_flight: dict[str, int] = dict.fromkeys(intervals, 0)
    total, last = 0, None
    for t, step, arm in events:
        if total and last is not None and t > last:
            for a, n in in_flight.items():
                if n:
                    busy[a] += (t - last) * n / total
        in_flight[arm] += step
        total += step
        last = t
    return {a: round(s, 3) for a, s in busy.items()}


def request_rates(counts: dict, busy: dict[str, float], walls: dict[str, float]) -> dict:
    """Requests per second of the program-executing arms and of the other model arms, each over those arms' busy
    seconds (arm_busy_s: under arm-major order their walls, as these figures always were; under case-major their
    share of the common wall), executor programs per second over the program arms' busy seconds; beside them the
    busy seconds and the arms' walls (from first to last unit: under case-major they overlap, so they are no
    denominator)."""

    def total(figures: dict[str, float], program: bool) -> float:
        return sum(
            v
            for a, v in figures.items()
            if (ARMS[a].needs_executor if program else ARMS[a].needs_model and not ARMS[a].needs_executor)
        )

    prog_busy, other_busy = total(busy, True), total(busy, False)
    return {
        "program_requests_per_s": round(counts["requests"]["program"] / prog_busy, 1) if prog_busy else None,
        "other_requests_per_s": round(counts["requests"]["other"] / other_busy, 1) if other_busy else None,
        "executor_programs_per_s": round(counts["programs"] / prog_busy, 1) if prog_busy else None,
        "program_arms_busy_s": round(prog_busy, 1),
        "other_arms_busy_s": round(other_busy, 1),
        "program_arms_wall_s": round(total(walls, True), 1),
        "other_arms_wall_s": round(total(walls, False), 1),
    }


def _by_kind(faults: list[dict]) -> dict:
    out: dict[str, int] = {}
    for f in faults:
        out[f["fault"]] = out.get(f["fault"], 0) + 1
    return out


def h100_estimate() -> dict:
    """The plan's estimated model time on one H100 for the paper's run (two Qwen models, all arms, 5 seeds)."""
    plan = build_plan(
        ReproduceConfig(
            launcher="vllm",
            models=[],
            arms=["all"],
            seeds=[42, 43, 44, 45, 46],
            dataset="verified",
            out=Path("/nonexistent"),
        )
    )
    return {"min_s": round(plan.estimate_s.min, 1), "max_s": round(plan.estimate_s.max, 1)}


# --- the whole rehearsal --------------------------------------------------------------------------------------


@dataclass
class _Context:
    """What the steps share: the settings, the case set, the server and the pipeline's arguments."""

    settings: RehearsalSettings
    out: Path
    dataset: Path
    seeds: str
    convention: str
    concurrency: int
    expected: set[str]
    server: RehearsalLauncher

    def argv(self, models: Iterable[str], results: Path) -> list[str]:
        return pipeline_argv(
            models,
            self.dataset,
            self.seeds,
            self.server.base_url,
            results,
            self.concurrency,
            self.settings.executor_backend,
            self.convention,
            self.settings.order,
        )


def rehearse(settings: RehearsalSettings) -> dict:
    size, per_calculator, seeds = settings.workload()
    concurrency = settings.concurrency or reproduce_concurrency()
    out, backend = settings.out, settings.executor_backend
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    machine = Machine()
    report: dict = {
        "synthetic": True,
        "what": "make rehearse: the kit end to end against the rehearsal server "
        "(a scripted fake; nothing here is a model result)",
        "size": size,
        "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": machine.cores, "loadavg_start": machine.loadavg_start},
        "kit": to_json(git_state()),
        "config": {
            "models": list(MODELS),
            "seeds": seeds,
            "per_calculator": per_calculator,
            "concurrency": concurrency,
            "executor_backend": backend,
            "order": settings.order or DEFAULT_ORDER,
            "rehearsal_seed": settings.seed,
            "faults": dict(settings.faults),
            "client_timeout_s": CLIENT_TIMEOUT_S,
        },
    }
    # 1. the case set
    dataset = out / "rehearsal-cases.csv"
    set_manifest = build_rehearsal_set(settings.source or dev_rows_csv(), dataset, per_calculator)
    n_cases = len(load_dataset(dataset).cases)
    report["config"]["cases"] = n_cases
    report["config"]["rehearsal_set"] = {
        k: set_manifest[k]
        for k in ("n_cases", "calculators", "reused_rows", "source_sha256", "csv_sha256", "convention")
    }
    _echo(
        f"{size}: {n_cases} cases x {len(MODELS)} models x all arms x seeds {seeds}, "
        f"concurrency {concurrency}, executor {backend}, out {out}"
    )
    convention = set_manifest["convention"]
    report["config"]["convention"] = convention
    expected = expected_keys(dataset, parse_seeds(seeds), convention)
    report["config"]["expected_records"] = len(expected)
    # 2. the server
    server = rehearsal_server(out, settings.port or free_port(), settings.seed, dataset, settings.faults)
    info = start_server(server)
    (out / "server" / "server-info.json").write_text(json.dumps(info, indent=1) + "\n")
    ctx = _Context(settings, out, dataset, seeds, convention, concurrency, expected, server)
    try:
        ref, measured = reference_run(ctx, report)
        # 4. the stages after the run
        timed = post_run.run_stages(out / "results", out / "checksums.txt", out / "logs" / "stages.log")
        stages = {
            "run": {"wall_s": report["run"]["wall_s"]},
            **{name: {"wall_s": s.wall_s, "returncode": s.returncode} for name, s in timed.items()},
        }
        report["stages"] = stages
        report["post_run_wall_s"] = post_run.post_run_wall_s(timed)
        failed = [s for s, v in stages.items() if v.get("returncode") not in (None, 0)]
        report["stages_failed"] = failed
        _echo(
            "stages: "
            + ", ".join(f"{s} {v['wall_s']:.1f} s" for s, v in stages.items())
            + (f"; FAILED: {failed}" if failed else "")
        )
        ref_sums = content_checksums(out / "results", out / "results" / "tables")
        (out / "content-checksums.txt").write_text(ref_sums)
        # 5. kill and resume
        if settings.resume_check:
            report["resume"] = kill_and_resume(ctx, ref, measured, ref_sums)
        else:
            report["resume"] = {"identical": None, "note": "skipped (--no-resume-check)"}
    finally:
        server.stop()
    est = h100_estimate()
    total = measured.wall_s
    report["h100"] = {
        "plan_estimate_s": est,
        "pipeline_wall_s": round(total, 1),
        "pipeline_share_of_h100_time": {
            "of_min": round(total / est["min_s"], 4),
            "of_max": round(total / est["max_s"], 4),
        },
        "note": "the reference `harness reproduce` process from start to exit (its runs, then its "
        "statistics, tables, figures, report, checksums and verify) against the plan's estimate "
        "for the paper's run (two Qwen models, all arms, 5 seeds, 1,100 cases); below SIZE=full "
        "the pipeline does a fraction of that work",
    }
    report["machine"]["loadavg_end"] = machine.finish().loadavg_end
    measured_values = {
        "program_requests_per_s": report["run"]["program_requests_per_s"],
        "other_requests_per_s": report["run"]["other_requests_per_s"],
        "harness_peak_rss_bytes": report["run"]["harness_peak_rss_bytes"],
        "post_run_wall_s": report["post_run_wall_s"],
    }
    report["targets"] = {t.key: t.met(measured_values[t.name]) for t in TARGETS}
    report["finished_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    settings.bench.parent.mkdir(parents=True, exist_ok=True)
    settings.bench.write_text(json_file_text(report, indent=1))
    (out / "pipeline.json").write_text(json_file_text(report, indent=1))
    _echo(f"wrote {settings.bench}")
    return report


def reference_run(ctx: _Context, report: dict) -> tuple[PipelineRun, Measured]:
    """3. The reference pipeline, uninterrupted, faults on: report["run"] and report["faults"]."""
    results = ctx.out / "results"
    faults_before = len(ctx.server.faults_logged())
    _echo(f"reference run: harness reproduce, models {', '.join(MODELS)}")
    measured = run_measured(ctx.argv(MODELS, results), ctx.out / "logs" / "reference.log")
    if measured.returncode != 0:
        raise RuntimeError(f"the reference pipeline failed ({measured.returncode}); see {ctx.out / 'logs'}")
    ref = pipeline_run(results, set())
    cpu_s, peak_rss = measured.at(ref.run_end)
    _echo(f"  {measured.wall_s:.0f} s, harness CPU {cpu_s:.0f} s in the run, peak RSS {peak_rss / 2**20:.0f} MiB")
    ref_faults = ctx.server.faults_logged()[faults_before:]
    counts = count_records(results, ctx.expected)
    walls = arm_walls(ref.blocks)
    total_requests = counts["requests"]["program"] + counts["requests"]["other"]
    run_wall = sum(block_span_s(m) for m in ref.blocks)
    orders = sorted({m.order for m in ref.blocks})
    # attempts that were retries: network attempts minus the requests they completed (records' requests less the
    # cache hits: identical prompts across arms are answered from the response cache)
    attempts = sum(m.requests_sent or 0 for m in ref.blocks)
    cache_hits = sum(m.cache_hits or 0 for m in ref.blocks)
    retried = attempts - (total_requests - cache_hits)
    report["run"] = {
        "requests": total_requests,
        "programs": counts["programs"],
        "records": counts["records"],
        "program_requests": counts["requests"]["program"],
        "other_requests": counts["requests"]["other"],
        "order": orders[0] if len(orders) == 1 else orders,
        "requests_per_s": round(total_requests / run_wall, 1) if run_wall else None,
        **request_rates(counts, counts["busy_s"], walls),
        "network_attempts": attempts,
        "cache_hits": cache_hits,
        "harness_cpu_s": round(cpu_s, 1),
        "harness_cpu_s_with_children": round(measured.cpu_s_with_children, 1),
        "harness_cpu_s_per_request": round(cpu_s / total_requests, 5) if total_requests else None,
        "harness_peak_rss_bytes": peak_rss,
        "result_bytes": counts["result_bytes"],
        "wall_s": round(run_wall, 1),
        "loadavg_end": loadavg(),
        "per_arm": {
            a: {
                **v,
                "wall_s": round(walls.get(a, 0.0), 2),
                "busy_s": round(counts["busy_s"].get(a, 0.0), 2),
                "requests_per_busy_s": round(v["requests"] / counts["busy_s"][a], 1)
                if counts["busy_s"].get(a)
                else None,
            }
            for a, v in sorted(counts["by_arm"].items())
        },
        "rates_note": "requests_per_s: all requests over the run's wall (its blocks' spans); program_ and "
        "other_requests_per_s: those arms' requests over their busy seconds (each moment's wall shared "
        "among the arms in flight by their share of the cases in flight), which under arm-major order "
        "are the arms' walls, as before; per-arm wall_s spans an arm's first to last unit, and under "
        "case-major order every arm's span is about the whole run",
    }
    report["faults"] = {
        "injected": len(ref_faults),
        "retried": retried,
        "by_kind": _by_kind(ref_faults),
        "lost": counts["lost"],
        "duplicated": counts["duplicated"],
        "unexpected": counts["unexpected"],
        "note": "reference run: every injected fault (5xx, slow past the client timeout, "
        "dropped connection) costs one retried attempt; lost/duplicated compare the "
        "expected record keys with the stored ones",
    }
    _echo(
        f"reference ({report['run']['order']} order): {total_requests / run_wall if run_wall else 0:.1f} requests/s "
        f"over the run's {run_wall:.0f} s; program arms {report['run']['program_requests_per_s']} requests/s, other "
        f"arms {report['run']['other_requests_per_s']} requests/s, each over their busy seconds"
    )
    _echo(
        f"reference: {counts['records']} records, {total_requests} requests, {counts['programs']} programs, "
        f"faults injected {len(ref_faults)}, retried {retried}, lost {counts['lost']}, "
        f"duplicated {counts['duplicated']}"
    )
    return ref, measured


def copy_model_results(src: Path, dst: Path, models: Sequence[str]) -> dict[str, int]:
    """Copy `models`' per-case files and run manifests from the reference `src` into `dst` (copies, not links:
    nothing done in `dst` can touch the reference): the resume check's directory then holds the same set as the
    reference, so its tables and checksums compare over the whole run."""
    dst.mkdir(parents=True, exist_ok=True)
    copied = {"results_files": 0, "manifests": 0}
    dirs = {model_slug(m) for m in models}
    for path in iter_result_files(src):
        if results_location(path).model_dir in dirs:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied["results_files"] += 1
    for found in read_manifests(src, kind="run"):
        if found.manifest.model.id in models:
            shutil.copy2(found.path, dst / found.path.name)
            copied["manifests"] += 1
    return copied


def kill_and_resume(ctx: _Context, ref: PipelineRun, ref_measured: Measured, ref_sums: str) -> dict:
    """Rerun into out/resume-check: SIGKILL the pipeline at a seeded random point of the first model's run, resume
    it, SIGKILL (and restart) the rehearsal server once during the resumed run, finish; compare. Scope
    "all-models" reruns the other model too (uninterrupted); "first-model" (the default: the kills land in the first
    model's run) copies the other model's files from the reference instead, which halves the check's cost at full
    size. Either way the whole directory's files and tables are compared."""
    scope, out, server = ctx.settings.resume_scope, ctx.out, ctx.server
    rng = random.Random(ctx.settings.seed)
    res_dir = out / "resume-check" / "results"
    first = ref.block(MODELS[0])
    first_end = (
        max(_epoch(s.finished_at) for s in first.summaries)
        if first and first.summaries
        else ref_measured.started + ref_measured.wall_s
    )
    first_wall = first_end - ref_measured.started  # the reference pipeline up to its first model's end
    kill_at = round(rng.uniform(0.2, 0.6) * first_wall, 2)
    server_kill_at = round(rng.uniform(0.1, 0.4) * (first_wall - kill_at), 2)
    info: dict = {
        "scope": scope,
        "harness_killed_at_s": kill_at,
        "server_killed_at_s_into_resumed_run": server_kill_at,
        "attempts": [],
    }
    if scope == "first-model":
        info["copied_from_reference"] = {
            "models": list(MODELS[1:]),
            **copy_model_results(out / "results", res_dir, MODELS[1:]),
        }
    _echo(
        f"kill-and-resume ({scope}): pipeline SIGKILL at {kill_at:.1f} s, server SIGKILL {server_kill_at:.1f} s "
        "into the resume"
    )
    log = out / "logs" / "resume-check.log"
    argv = ctx.argv(MODELS[:1], res_dir)
    r = run_measured(argv, log, kill_after_s=kill_at)
    info["attempts"].append({"returncode": r.returncode, "killed": r.killed, "wall_s": r.wall_s})
    before_server_kill = len(server.faults_logged())
    server_kills: list[float] = []

    def crash_server() -> None:  # SIGKILL, then start again on the same port
        server.kill()
        server_kills.append(time.time())
        start_server(server)

    r = run_measured(argv, log, during=(server_kill_at, crash_server))
    info["attempts"].append(
        {"returncode": r.returncode, "killed": False, "wall_s": r.wall_s, "server_killed": bool(server_kills)}
    )
    tries = 0
    while r.returncode != 0 and tries < 3:  # e.g. retries exhausted while the server was down
        tries += 1
        r = run_measured(argv, log)
        info["attempts"].append({"returncode": r.returncode, "wall_s": r.wall_s, "extra_resume": True})
    if scope == "all-models":
        for model in MODELS[1:]:
            r = run_measured(ctx.argv([model], res_dir), log)
            info["attempts"].append({"model": model, "returncode": r.returncode, "wall_s": r.wall_s})
    with open(log, "a", encoding="utf-8") as fh:
        t = post_run.run_stage(post_run.stage_args(res_dir, out / "resume-check" / "checksums.txt")["tables"], fh)
    info["tables"] = {"wall_s": t.wall_s, "returncode": t.returncode}
    counts = count_records(res_dir, ctx.expected)
    res_sums = content_checksums(res_dir, res_dir / "tables")
    (out / "resume-check" / "content-checksums.txt").write_text(res_sums)
    cmp = compare(ref_sums, res_sums)
    info.update(
        {
            "identical": cmp["identical"],
            "comparison": cmp,
            "lost": counts["lost"],
            "duplicated": counts["duplicated"],
            "records": counts["records"],
            "server_kills": len(server_kills),
            "harness_killed": info["attempts"][0]["killed"],
            "faults_injected_during_resume": len(server.faults_logged()) - before_server_kill,
            "retries_in_resumed_records": counts["retries"],
            "what_is_compared": "per-case files as canonical records (sorted by key, without latency_ms, "
            "started_at, finished_at, cached, retries and the executor's wall_ms/cpu_ms) "
            "and the tables byte for byte; see bench/compare.py",
        }
    )
    _echo(
        f"kill-and-resume: identical={cmp['identical']} lost={counts['lost']} duplicated={counts['duplicated']} "
        f"differing={cmp['differing'][:5]}"
    )
    return info


def main(settings: RehearsalSettings) -> int:
    try:
        report = rehearse(settings)
    except (RuntimeError, FileNotFoundError) as exc:
        print(f"rehearse: {exc}", file=sys.stderr)
        return 1
    bad = (
        report["stages_failed"]
        or report["faults"]["lost"]
        or report["faults"]["duplicated"]
        or (settings.resume_check and not report["resume"]["identical"])
    )
    return 1 if bad else 0
