"""`make rehearse`: the paper's workload shape through the whole kit against the rehearsal server.

    python -m harness.reproduce.rehearsal [--size full|small] [--out runs/rehearsal] [--bench bench/pipeline.json]

Steps (every step's wall time, and the run's counters, go into the JSON report):
1. the rehearsal case set (rehearsal_set.py): 55 calculators x 20 dev rows (full) or x 2 (small);
2. the rehearsal server (harness.model.rehearsal.server, a scripted fake) with fault injection on;
3. the reference run: `harness run --arm all` for each of two rehearsal models, 5 seeds (full) or 2 (small),
   the container executor, the concurrency `make reproduce` uses (the vLLM profile's max_num_seqs);
   harness CPU and peak RSS are sampled from /proc while it runs;
4. stats, tables, figures, report, checksums, verify on the reference results, each timed;
5. the kill-and-resume check: the first model's run into a second directory (the other model's files copied
   from the reference; --resume-scope all-models reruns it too), the harness SIGKILLed at a
   seeded random point and the rehearsal server SIGKILLed once (and restarted) during the resumed run;
   its tables are built and its content checksums (compare.py) compared with the reference's;
6. lost and duplicated records (expected keys against stored keys) in both directories, fault counts.

Everything written is synthetic: model ids `rehearsal-alpha`/`rehearsal-beta`, records and manifests
say `synthetic: true`; `harness verify` refuses a set that mixes them with real records.
"""
from __future__ import annotations

import argparse
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.arms.registry import ARMS, paper_arms
from harness.core.ports import free_port
from harness.core.seeds import parse_seeds
from harness.core.canonical_json import json_file_text
from harness.data.dataset import load_dataset
from harness.model.rehearsal.server import Faults
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.serving import LaunchError
from harness.model.vllm import serving_config
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.plan import build_plan
from harness.reproduce.rehearsal.compare import compare, content_checksums
from harness.reproduce.rehearsal.rehearsal_set import build_rehearsal_set, dev_rows_csv
from harness.run.manifest import git_state
from harness.run.store import iter_result_files, read_result_file
from harness.run.request import RunRequest, planned_keys

ROOT = Path(__file__).resolve().parents[3]
MODELS = ("rehearsal-alpha", "rehearsal-beta")
SIZES = {"full": {"per_calculator": 20, "seeds": "42-46"}, "small": {"per_calculator": 2, "seeds": "42-43"}}
DEFAULT_FAULTS = {"fault_5xx": 0.002, "fault_slow": 0.0003, "fault_drop": 0.001}
CLIENT_TIMEOUT_S = 10.0
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def _echo(msg: str) -> None:
    print(f"[rehearse {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def reproduce_concurrency() -> int:
    """The concurrency `make reproduce` uses: the vLLM serving defaults' max_num_seqs (64)."""
    return int(serving_config()["defaults"]["max_num_seqs"])


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


# --- the rehearsal server as a subprocess: harness.model.rehearsal.launcher.RehearsalLauncher ----------------------------

def rehearsal_server(out: Path, port: int, seed: int, answer_key: Path, faults: dict) -> RehearsalLauncher:
    """The launcher `make rehearse` uses: both rehearsal models in one server process, faults on, every injected
    fault logged (out/server/faults.jsonl), slow replies held past the client's timeout."""
    return RehearsalLauncher(model_id=MODELS[0], extra_model_ids=MODELS[1:], port=port, seed=seed,
                             answer_key=answer_key, log_path=out / "server" / "server.log",
                             faults=Faults(rate_5xx=faults["fault_5xx"], rate_slow=faults["fault_slow"],
                                           rate_drop=faults["fault_drop"], slow_s=CLIENT_TIMEOUT_S + 5),
                             fault_log=out / "server" / "faults.jsonl")


def start_server(server: RehearsalLauncher) -> dict:
    """Start it and wait until it lists both models; its own ready line (what `--server-info` records)."""
    server.start()
    try:
        server.wait_ready(60)
    except LaunchError as exc:
        raise RuntimeError(f"the rehearsal server did not start: {exc}") from None
    return server.served() or server.describe()


# --- one harness process, measured ---------------------------------------------------------------------------

@dataclass
class HarnessRun:
    argv: list[str]
    returncode: int | None = None
    killed: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0              # the harness process itself (sampled from /proc, last sample before exit)
    cpu_s_with_children: float = 0.0  # from wait4: includes the docker CLI processes of the container pool
    peak_rss_bytes: int = 0
    log: str = ""
    manifest: dict = field(default_factory=dict)


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


def run_harness(argv: list[str], log_path: Path, *, kill_after_s: float | None = None,
                during: tuple[float, callable] | None = None) -> HarnessRun:
    """Run `harness run ...`, sampling its CPU and peak RSS; SIGKILL it after `kill_after_s` if given;
    call during[1]() once after during[0] seconds if it is still running."""
    res = HarnessRun(argv)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    before = set(Path(argv[argv.index("--out") + 1]).glob("manifest-*.json"))
    started = time.perf_counter()
    with open(log_path, "a") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        stop = threading.Event()
        peak = [0, 0.0]

        def sample():
            while not stop.is_set():
                s = _proc_sample(proc.pid)
                if s is not None:
                    peak[1] = max(peak[1], s[0])
                    peak[0] = max(peak[0], s[1])
                stop.wait(0.25)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timers = []
        if kill_after_s is not None:
            def kill():
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
    res.cpu_s = round(peak[1], 2)
    res.cpu_s_with_children = round(ru.ru_utime + ru.ru_stime, 2)
    res.peak_rss_bytes = max(peak[0], 0)
    new = sorted(p for p in Path(argv[argv.index("--out") + 1]).glob("manifest-*.json") if p not in before)
    if new:
        try:
            res.manifest = json.loads(new[-1].read_text())
        except ValueError:
            res.manifest = {}
    return res


def harness_argv(model: str, dataset: Path, seeds: str, base_url: str, results: Path, cache: Path,
                 concurrency: int, backend: str, server_info: Path, convention: str) -> list[str]:
    return [str(ROOT / ".venv" / "bin" / "harness") if (ROOT / ".venv/bin/harness").exists() else "harness",
            "run", "--arm", "all", "--dataset", str(dataset), "--seeds", seeds, "--base-url", base_url,
            "--model", model, "--server-profile", "vllm-seeded", "--out", str(results), "--cache-dir", str(cache),
            "--executor-backend", backend, "--concurrency", str(concurrency), "--timeout", str(CLIENT_TIMEOUT_S),
            "--no-progress", "--server-info", str(server_info), "--convention", convention]


# --- counting ------------------------------------------------------------------------------------------------

def expected_keys(dataset_path: Path, seeds: list[int], convention: str) -> set[str]:
    """Every record key a complete rehearsal must hold (both models, every arm and seed), with the arms
    configured for `convention` as `harness run --convention` configures them."""
    ds = load_dataset(dataset_path)
    # what `harness run --arm all --convention ...` runs (its out_dir does not enter the keys), under the rehearsal
    # launcher's client profile (per-request seeds on sampled calls)
    request = RunRequest.build([ARMS[n] for n in paper_arms()], ds, ds.cases, seeds, out_dir=".", convention=convention)
    return set().union(*(planned_keys(request, model=model, server_profile="vllm-seeded") for model in MODELS))


def count_records(results: Path, expected: set[str] | None = None) -> dict:
    """Records, unique keys, lost (expected but absent), duplicated, unexpected (None without `expected`);
    requests and programs, by kind and by arm; retries; bytes. Read through the store's reader."""
    seen: dict[str, int] = {}
    requests = {"program": 0, "other": 0}
    programs = records = retries = result_bytes = 0
    by_arm: dict[str, dict] = {}
    for path in iter_result_files(results):
        result_bytes += path.stat().st_size
        for rec in read_result_file(path):
            records += 1
            seen[rec["key"]] = seen.get(rec["key"], 0) + 1
            kind = "program" if ARMS[rec["arm"]].needs_executor else "other"
            n_req = len(rec.get("request") or [])
            requests[kind] += n_req
            ex = rec.get("executor")
            n_prog = len([e for e in ex if e]) if isinstance(ex, list) else (1 if ex else 0)
            programs += n_prog
            retries += int(rec.get("retries") or 0)
            a = by_arm.setdefault(rec["arm"], {"records": 0, "requests": 0, "programs": 0, "correct": 0})
            a["records"] += 1
            a["requests"] += n_req
            a["programs"] += n_prog
            a["correct"] += bool(rec.get("correct"))
    return {"records": records, "unique_keys": len(seen),
            "lost": None if expected is None else len(expected - seen.keys()),
            "duplicated": sum(n - 1 for n in seen.values() if n > 1),
            "unexpected": None if expected is None else len(seen.keys() - expected),
            "requests": requests, "programs": programs, "retries": retries, "result_bytes": result_bytes,
            "by_arm": by_arm}


def arm_walls(manifests: Iterable[dict]) -> dict[str, float]:
    """Wall seconds per arm, summed over the run manifests: in each, from the arm's first unit taking a case
    slot to its last unit's last record (the seeds of an arm overlap, so their unit walls are not added up).
    A unit summary without times (a kit before unit times, whose units ran one after another) adds its wall_s."""
    walls: dict[str, float] = {}
    for manifest in manifests:
        spans: dict[str, list[float]] = {}
        for s in manifest.get("summaries") or []:
            if not s.get("started_at") or not s.get("finished_at"):
                walls[s["arm"]] = walls.get(s["arm"], 0.0) + float(s.get("wall_s") or 0.0)
                continue
            start = _dt.datetime.fromisoformat(s["started_at"]).timestamp()
            end = _dt.datetime.fromisoformat(s["finished_at"]).timestamp()
            lo, hi = spans.get(s["arm"], [start, end])
            spans[s["arm"]] = [min(lo, start), max(hi, end)]
        for arm, (lo, hi) in spans.items():
            walls[arm] = walls.get(arm, 0.0) + (hi - lo)
    return walls


def request_rates(counts: dict, walls: dict[str, float]) -> dict:
    """Requests per second of the program-executing arms and of the other model arms (each over its arms'
    walls), executor programs per second, and those walls."""
    prog_wall = sum(w for a, w in walls.items() if ARMS[a].needs_executor)
    other_wall = sum(w for a, w in walls.items() if ARMS[a].needs_model and not ARMS[a].needs_executor)
    return {"program_requests_per_s": round(counts["requests"]["program"] / prog_wall, 1) if prog_wall else None,
            "other_requests_per_s": round(counts["requests"]["other"] / other_wall, 1) if other_wall else None,
            "executor_programs_per_s": round(counts["programs"] / prog_wall, 1) if prog_wall else None,
            "program_arms_wall_s": round(prog_wall, 1), "other_arms_wall_s": round(other_wall, 1)}


# --- the stages after the run ---------------------------------------------------------------------------------

def timed(argv: list[str], log: Path) -> dict:
    started = time.perf_counter()
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(argv)}\n")
        fh.flush()
        rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    return {"wall_s": round(time.perf_counter() - started, 3), "returncode": rc}


def post_run_stages(results: Path, out: Path, log: Path) -> dict:
    h = str(ROOT / ".venv" / "bin" / "harness")
    stages = {}
    stages["stats"] = timed([h, "stats", "--results", str(results), "--out", str(results / "stats")], log)
    stages["tables"] = timed([h, "tables", "--results", str(results), "--out", str(results / "tables")], log)
    stages["figures"] = timed([h, "figures", "--results", str(results), "--out", str(results / "figures")], log)
    stages["report"] = timed([h, "report", "--results", str(results), "--out", str(results / "report")], log)
    manifest = out / "checksums.txt"
    stages["checksums"] = timed([h, "checksums", "update", "--results", str(results), "--manifest", str(manifest)], log)
    stages["verify"] = timed([h, "verify", "--results", str(results), "--manifest", str(manifest)], log)
    return stages


def h100_estimate() -> dict:
    """The plan's estimated model time on one H100 for the paper's run (two Qwen models, all arms, 5 seeds)."""
    plan = build_plan(ReproduceConfig(launcher="vllm", models=[], arms=["all"], seeds=[42, 43, 44, 45, 46],
                                      dataset="verified", out=Path("/nonexistent")))
    return {"min_s": round(plan["estimate_s"]["min"], 1), "max_s": round(plan["estimate_s"]["max"], 1)}


# --- the whole rehearsal --------------------------------------------------------------------------------------

def rehearse(size: str, out: Path, bench: Path, *, seed: int = 20261123, concurrency: int | None = None,
             backend: str = "container", faults: dict | None = None, resume_check: bool = True,
             source: Path | None = None, port: int | None = None, per_calculator: int | None = None,
             seeds: str | None = None, resume_scope: str = "first-model") -> dict:
    cfg = dict(SIZES[size])
    if per_calculator or seeds:      # a partial size: the report says so
        cfg.update({k: v for k, v in (("per_calculator", per_calculator), ("seeds", seeds)) if v})
        size = f"custom ({cfg['per_calculator']} per calculator, seeds {cfg['seeds']})"
    faults = dict(DEFAULT_FAULTS if faults is None else faults)
    concurrency = concurrency or reproduce_concurrency()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    report: dict = {"synthetic": True, "what": "make rehearse: the kit end to end against the rehearsal server "
                    "(a scripted fake; nothing here is a model result)", "size": size,
                    "started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "machine": {"cpus": os.cpu_count(), "loadavg_start": loadavg()}, "kit": git_state(),
                    "config": {"models": list(MODELS), "seeds": cfg["seeds"], "per_calculator": cfg["per_calculator"],
                               "concurrency": concurrency, "executor_backend": backend, "rehearsal_seed": seed,
                               "faults": faults, "client_timeout_s": CLIENT_TIMEOUT_S}}
    source = source or dev_rows_csv()
    dataset = out / "rehearsal-cases.csv"
    set_manifest = build_rehearsal_set(source, dataset, cfg["per_calculator"])
    n_cases = len(load_dataset(dataset).cases)
    report["config"]["cases"] = n_cases
    report["config"]["rehearsal_set"] = {k: set_manifest[k] for k in ("n_cases", "calculators", "reused_rows",
                                                                       "source_sha256", "csv_sha256", "convention")}
    report["size"] = size
    _echo(f"{size}: {n_cases} cases x {len(MODELS)} models x all arms x seeds {cfg['seeds']}, "
          f"concurrency {concurrency}, executor {backend}, out {out}")
    seeds = parse_seeds(cfg["seeds"])
    convention = set_manifest["convention"]
    report["config"]["convention"] = convention
    expected = expected_keys(dataset, seeds, convention)
    report["config"]["expected_records"] = len(expected)

    server = rehearsal_server(out, port or free_port(), seed, dataset, faults)
    info = start_server(server)
    server_info = out / "server" / "server-info.json"
    server_info.write_text(json.dumps(info, indent=1) + "\n")
    try:
        # 3. the reference run, uninterrupted, faults on
        ref = out / "results"
        runs = []
        faults_before = len(server.faults_logged())
        for model in MODELS:
            argv = harness_argv(model, dataset, cfg["seeds"], server.base_url, ref, out / ".cache" / "reference",
                                concurrency, backend, server_info, convention)
            _echo(f"reference run, {model}")
            r = run_harness(argv, out / "logs" / f"reference-{model}.log")
            runs.append(r)
            if r.returncode != 0:
                raise RuntimeError(f"reference run of {model} failed ({r.returncode}); see {out / 'logs'}")
            _echo(f"  {r.wall_s:.0f} s, harness CPU {r.cpu_s:.0f} s, peak RSS {r.peak_rss_bytes / 2**20:.0f} MiB")
        ref_faults = server.faults_logged()[faults_before:]
        counts = count_records(ref, expected)
        walls = arm_walls(r.manifest for r in runs)
        total_requests = counts["requests"]["program"] + counts["requests"]["other"]
        run_wall = sum(r.wall_s for r in runs)
        # attempts that were retries: network attempts minus the requests they completed (records' requests
        # less the cache hits: identical prompts across arms are answered from the response cache)
        attempts = sum(int(r.manifest.get("requests_sent") or 0) for r in runs)
        cache_hits = sum(int(r.manifest.get("cache_hits") or 0) for r in runs)
        retried = attempts - (total_requests - cache_hits)
        report["run"] = {
            "requests": total_requests, "programs": counts["programs"], "records": counts["records"],
            "program_requests": counts["requests"]["program"], "other_requests": counts["requests"]["other"],
            **request_rates(counts, walls),
            "network_attempts": attempts, "cache_hits": cache_hits,
            "harness_cpu_s": round(sum(r.cpu_s for r in runs), 1),
            "harness_cpu_s_with_children": round(sum(r.cpu_s_with_children for r in runs), 1),
            "harness_cpu_s_per_request": round(sum(r.cpu_s for r in runs) / total_requests, 5) if total_requests else None,
            "harness_peak_rss_bytes": max(r.peak_rss_bytes for r in runs),
            "result_bytes": counts["result_bytes"], "wall_s": round(run_wall, 1),
            "loadavg_end": loadavg(), "per_arm": {a: {**v, "wall_s": round(walls.get(a, 0.0), 2)}
                                                  for a, v in sorted(counts["by_arm"].items())},
        }
        report["faults"] = {"injected": len(ref_faults), "retried": retried,
                            "by_kind": _by_kind(ref_faults), "lost": counts["lost"],
                            "duplicated": counts["duplicated"], "unexpected": counts["unexpected"],
                            "note": "reference run: every injected fault (5xx, slow past the client timeout, "
                                    "dropped connection) costs one retried attempt; lost/duplicated compare the "
                                    "expected record keys with the stored ones"}
        _echo(f"reference: {counts['records']} records, {total_requests} requests, {counts['programs']} programs, "
              f"faults injected {len(ref_faults)}, retried {retried}, lost {counts['lost']}, "
              f"duplicated {counts['duplicated']}")
        # 4. the stages after the run
        stages = {"run": {"wall_s": round(run_wall, 3)}}
        stages.update(post_run_stages(ref, out, out / "logs" / "stages.log"))
        report["stages"] = stages
        post = ("stats", "tables", "figures", "report", "verify")
        report["post_run_wall_s"] = round(sum(stages[s]["wall_s"] for s in post), 2)
        failed = [s for s, v in stages.items() if v.get("returncode") not in (None, 0)]
        report["stages_failed"] = failed
        _echo("stages: " + ", ".join(f"{s} {v['wall_s']:.1f} s" for s, v in stages.items()) +
              (f"; FAILED: {failed}" if failed else ""))
        ref_sums = content_checksums(ref, ref / "tables")
        (out / "content-checksums.txt").write_text(ref_sums)
        # 5. kill and resume
        if resume_check:
            report["resume"] = kill_and_resume(out, dataset, cfg["seeds"], server, concurrency, backend, server_info,
                                               runs, seed, expected, ref_sums, convention, resume_scope)
        else:
            report["resume"] = {"identical": None, "note": "skipped (--no-resume-check)"}
    finally:
        server.stop()
    est = h100_estimate()
    total = report["run"]["wall_s"] + report["post_run_wall_s"]
    report["h100"] = {"plan_estimate_s": est, "pipeline_wall_s": round(total, 1),
                      "pipeline_share_of_h100_time": {"of_min": round(total / est["min_s"], 4),
                                                      "of_max": round(total / est["max_s"], 4)},
                      "note": "the plan's estimate is for the paper's run (two Qwen models, all arms, 5 seeds, "
                              "1,100 cases); below SIZE=full the pipeline does a fraction of that work"}
    report["machine"]["loadavg_end"] = loadavg()
    report["targets"] = {
        "program_requests_per_s>=100": _ge(report["run"]["program_requests_per_s"], 100),
        "other_requests_per_s>=500": _ge(report["run"]["other_requests_per_s"], 500),
        "harness_peak_rss<=1GiB": report["run"]["harness_peak_rss_bytes"] <= 2 ** 30,
        "post_run_stages<=60s": report["post_run_wall_s"] <= 60,
    }
    report["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    bench.parent.mkdir(parents=True, exist_ok=True)
    bench.write_text(json_file_text(report, indent=1))
    (out / "pipeline.json").write_text(json_file_text(report, indent=1))
    _echo(f"wrote {bench}")
    return report


def _ge(value, target) -> bool | None:
    return None if value is None else value >= target


def _by_kind(faults: list[dict]) -> dict:
    out: dict[str, int] = {}
    for f in faults:
        out[f["fault"]] = out.get(f["fault"], 0) + 1
    return out


def copy_model_results(src: Path, dst: Path, models) -> dict:
    """Copy `models`' per-case subtrees and run manifests from the reference `src` into `dst` (copies, not
    links: nothing done in `dst` can touch the reference): the resume check's directory then holds the same set
    as the reference, so its tables and checksums compare over the whole run."""
    dst.mkdir(parents=True, exist_ok=True)
    copied = {"results_files": 0, "manifests": 0}
    for model in models:
        for path in sorted((src / model).glob("*/seed*.jsonl")):
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied["results_files"] += 1
    for path in sorted(src.glob("manifest-*.json")):
        if (json.loads(path.read_text()).get("model") or {}).get("id") in models:
            shutil.copy2(path, dst / path.name)
            copied["manifests"] += 1
    return copied


RESUME_SCOPES = ("first-model", "all-models")


def kill_and_resume(out: Path, dataset: Path, seeds: str, server: RehearsalLauncher, concurrency: int, backend: str,
                    server_info: Path, ref_runs: list[HarnessRun], seed: int, expected: set[str],
                    ref_sums: str, convention: str, scope: str = "first-model") -> dict:
    """Rerun into out/resume-check: SIGKILL the harness at a seeded random point of the first model's run,
    resume it, SIGKILL (and restart) the rehearsal server once during the resumed run, finish; compare.
    `scope` "all-models" reruns the other model too (uninterrupted); "first-model" (the default: the kills
    land in the first model's run) copies the other model's files from the reference instead, which halves
    the check's cost at full size. Either way the whole directory's files and tables are compared."""
    if scope not in RESUME_SCOPES:
        raise ValueError(f"resume scope {scope!r}: expected one of {', '.join(RESUME_SCOPES)}")
    rng = random.Random(seed)
    res_dir = out / "resume-check" / "results"
    cache = out / ".cache" / "resume-check"
    first_wall = ref_runs[0].wall_s
    kill_at = round(rng.uniform(0.2, 0.6) * first_wall, 2)
    server_kill_at = round(rng.uniform(0.1, 0.4) * (first_wall - kill_at), 2)
    info: dict = {"scope": scope, "harness_killed_at_s": kill_at,
                  "server_killed_at_s_into_resumed_run": server_kill_at, "attempts": []}
    if scope == "first-model":
        info["copied_from_reference"] = {"models": list(MODELS[1:]),
                                         **copy_model_results(out / "results", res_dir, MODELS[1:])}
    _echo(f"kill-and-resume ({scope}): harness SIGKILL at {kill_at:.1f} s, server SIGKILL {server_kill_at:.1f} s "
          "into the resume")
    log = out / "logs" / "resume-check.log"
    argv = harness_argv(MODELS[0], dataset, seeds, server.base_url, res_dir, cache, concurrency, backend, server_info,
                        convention)
    r = run_harness(argv, log, kill_after_s=kill_at)
    info["attempts"].append({"returncode": r.returncode, "killed": r.killed, "wall_s": r.wall_s})
    before_server_kill = len(server.faults_logged())
    server_kills = []

    def crash_server():                     # SIGKILL, then start again on the same port
        server.kill()
        server_kills.append(time.time())
        start_server(server)

    r = run_harness(argv, log, during=(server_kill_at, crash_server))
    info["attempts"].append({"returncode": r.returncode, "killed": False, "wall_s": r.wall_s,
                             "server_killed": bool(server_kills)})
    tries = 0
    while r.returncode != 0 and tries < 3:       # e.g. retries exhausted while the server was down
        tries += 1
        r = run_harness(argv, log)
        info["attempts"].append({"returncode": r.returncode, "wall_s": r.wall_s, "extra_resume": True})
    if scope == "all-models":
        for model in MODELS[1:]:
            r = run_harness(harness_argv(model, dataset, seeds, server.base_url, res_dir, cache, concurrency, backend,
                                         server_info, convention), log)
            info["attempts"].append({"model": model, "returncode": r.returncode, "wall_s": r.wall_s})
    h = str(ROOT / ".venv" / "bin" / "harness")
    info["tables"] = timed([h, "tables", "--results", str(res_dir), "--out", str(res_dir / "tables")], log)
    counts = count_records(res_dir, expected)
    res_sums = content_checksums(res_dir, res_dir / "tables")
    (out / "resume-check" / "content-checksums.txt").write_text(res_sums)
    cmp = compare(ref_sums, res_sums)
    info.update({"identical": cmp["identical"], "comparison": cmp, "lost": counts["lost"],
                 "duplicated": counts["duplicated"], "records": counts["records"],
                 "server_kills": len(server_kills), "harness_killed": info["attempts"][0]["killed"],
                 "faults_injected_during_resume": len(server.faults_logged()) - before_server_kill,
                 "retries_in_resumed_records": counts["retries"],
                 "what_is_compared": "per-case files as canonical records (sorted by key, without latency_ms, "
                                     "started_at, finished_at, cached, retries and the executor's wall_ms/cpu_ms) "
                                     "and the tables byte for byte; see harness/reproduce/rehearsal/compare.py"})
    _echo(f"kill-and-resume: identical={cmp['identical']} lost={counts['lost']} duplicated={counts['duplicated']} "
          f"differing={cmp['differing'][:5]}")
    return info


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rehearse", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--out", type=Path, default=ROOT / "runs" / "rehearsal")
    p.add_argument("--bench", type=Path, default=ROOT / "bench" / "pipeline.json")
    p.add_argument("--seed", type=int, default=20261123, help="rehearsal seed (server replies, kill points)")
    p.add_argument("--concurrency", type=int, default=None, help="default: the vLLM profile's max_num_seqs")
    p.add_argument("--executor-backend", default="container", choices=["container", "process", "auto"])
    p.add_argument("--no-resume-check", action="store_true")
    p.add_argument("--resume-scope", choices=RESUME_SCOPES, default="first-model",
                   help="first-model: rerun only the model the kills land in, the other's files copied from the "
                        "reference (default); all-models: rerun both")
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--per-calculator", type=int, default=None, help="override the size's cases per calculator")
    p.add_argument("--seeds", default=None, help="override the size's seeds, e.g. 42-43")
    a = p.parse_args(argv)
    try:
        report = rehearse(a.size, a.out, a.bench, seed=a.seed, concurrency=a.concurrency, backend=a.executor_backend,
                          resume_check=not a.no_resume_check, port=a.port, per_calculator=a.per_calculator,
                          seeds=a.seeds, resume_scope=a.resume_scope)
    except (RuntimeError, FileNotFoundError) as exc:
        print(f"rehearse: {exc}", file=sys.stderr)
        return 1
    bad = report["stages_failed"] or report["faults"]["lost"] or report["faults"]["duplicated"] \
        or (a.no_resume_check is False and not report["resume"]["identical"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
