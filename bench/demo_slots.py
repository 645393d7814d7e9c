"""How many llama.cpp server slots the CPU demo uses, by measurement (``make bench-demo-slots``): writes
runs/bench/demo-slots.json.

For each slot count (default 1, 2 and 4) the demo's model (role demo) is served by the kit's launcher with that many
slots, each keeping the committed demo's 8192-token context (the server's context is the slots' sum), and the demo's
own run is made against it: `harness run` of Open-book arithmetic, Program-Solve and Blind Program-Solve on the
demo's cases (`--spread --limit N`, seed 42, the concurrency the slots allow), exactly as scripts/demo.sh runs it, with
the response cache off (every reply is generated). Per slot count: wall seconds, the server's CPU seconds, prompt and
completion tokens, completion tokens per second of wall, wall seconds per case, the load before and after; and the
per-case comparison with the committed demo (results/cpu-demo): every (arm, case) the run shares with it, whether its
outcome, correctness and answer, and its replies, are the same.

Decoding a 1.1 GB model on 2 cores is memory-bound, so slots decoded together may raise throughput; llama.cpp batches
the slots' tokens, which may also change the arithmetic of a batch and so a greedy reply; and the server reuses a
cached prompt prefix, after which a greedy reply depends on the requests before it (ggml-org/llama.cpp#7594), so each
run is also compared with this measurement's own one-slot run (`same_as_one_slot`). RULE (`choose`) picks the count.
The figures mean something only when the machine is otherwise idle (`alone`: the 1-minute load at the start at most
ALONE_LOAD), so `--write-lock` (WRITE=1) refuses otherwise; with it the chosen count and its wall seconds per case go
into harness/model/cpu_models.json (`demo_timing.slots`, `wall_s_per_case`), which the demo's default slot count and
its estimate read.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.demo_models import HARNESS, cpu_seconds, load
from harness.core.paths import REPO_ROOT as ROOT
from harness.core.ports import free_port
from harness.model.cpu_models import CATALOGUE, get_model, role_model
from harness.model.llama_cpp import LlamaCppLauncher
from harness.run.record import Record
from harness.run.store import iter_located_records

ARMS = ("open-book", "program-solve", "blind")  # scripts/demo.sh's model arms
SLOT_CTX = 8192  # the committed demo's one slot
MIN_GAIN = 0.05
ALONE_LOAD = 0.5
REFERENCE = ROOT / "results" / "cpu-demo"
RULE = (
    f"among the slot counts whose every compared (arm, case) outcome, correctness and answer equal the committed "
    f"demo's, the smallest whose wall is within {MIN_GAIN:.0%} of the fastest of them (fewer slots: less memory, "
    f"the same work); 1 when none qualifies"
)


def compared(rec: Record) -> tuple[object, ...]:
    """What the comparison holds equal: the record's outcome, correctness and answer."""
    return rec.outcome, rec.correct, rec.answer


def records(root: Path, model: str) -> dict[tuple[str, str], Record]:
    """{(arm, case_id): record} of the demo's model arms in a result set."""
    return {(r.arm, r.case_id): r for _, _, r in iter_located_records(root, list(ARMS)) if r.model == model}


def compare(run: dict[tuple[str, str], Record], reference: dict[tuple[str, str], Record]) -> dict:
    """The run's (arm, case) records against the committed demo's: how many are shared, how many have the same
    outcome, correctness and answer, how many the same replies, and which differ."""
    shared = sorted(set(run) & set(reference))
    differ = [f"{arm} {case}" for arm, case in shared if compared(run[(arm, case)]) != compared(reference[(arm, case)])]
    same_replies = sum(run[k].replies == reference[k].replies for k in shared)
    return {
        "cases_compared": len(shared),
        "outcomes_identical": len(shared) - len(differ),
        "replies_identical": same_replies,
        "differing": differ,
        "identical": bool(shared) and not differ,
    }


def run_slots(model_id: str, slots: int, cases: int, threads: int, work: Path, reference: dict) -> dict:
    """The demo's model arms against a server with `slots` slots; the figures of the module docstring."""
    model = get_model(model_id)
    out, log = work / f"slots-{slots}", work / f"slots-{slots}.server.log"
    launcher = LlamaCppLauncher(
        model_path=model.path,
        model_id=model.id,
        port=free_port(),
        n_threads=threads,
        n_parallel=slots,
        n_ctx=SLOT_CTX * slots,
        log_path=log,
    )
    entry: dict = {"slots": slots, "ctx": SLOT_CTX * slots, "threads": threads, "cases": cases}
    t0 = time.perf_counter()
    launcher.start()
    try:
        launcher.wait_ready(timeout=600)
        entry["startup_s"] = round(time.perf_counter() - t0, 1)
        cpu0, entry["load_before"], w0 = cpu_seconds(launcher.pid), load(), time.perf_counter()
        proc = subprocess.run(
            [
                str(HARNESS),
                "run",
                *[a for arm in ARMS for a in ("--arm", arm)],
                "--dataset",
                "bundled-test",
                "--spread",
                "--limit",
                str(cases),
                "--seeds",
                "42",
                "--base-url",
                launcher.base_url,
                "--model",
                model.id,
                "--server-profile",
                launcher.server_profile,
                "--executor-backend",
                "auto",
                "--concurrency",
                str(slots),
                "--no-cache",
                "--no-progress",
                "--out",
                str(out),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wall = time.perf_counter() - w0
        entry.update(wall_s=round(wall, 1), server_cpu_s=round(cpu_seconds(launcher.pid) - cpu0, 1), load_after=load())
        if proc.returncode != 0:
            print(proc.stdout[-3000:], file=sys.stderr)
            raise RuntimeError(f"{slots} slot(s): harness run exited {proc.returncode} (log {log})")
    finally:
        launcher.stop()
    got = records(out, model.id)
    tokens = [r.tokens for r in got.values() if r.tokens is not None]
    completion = sum(t.completion or 0 for t in tokens)
    entry.update(
        prompt_tokens=sum(t.prompt or 0 for t in tokens),
        completion_tokens=completion,
        completion_tokens_per_s=round(completion / entry["wall_s"], 2) if entry["wall_s"] else None,
        wall_s_per_case=round(entry["wall_s"] / cases, 1),
        correct={arm: sum(r.correct for (a, _), r in got.items() if a == arm) for arm in ARMS},
        same_as_committed_demo=compare(got, reference),
    )
    entry["records"] = got
    return entry


def choose(runs: list[dict]) -> dict:
    """RULE over the measured slot counts."""
    eligible = sorted((r for r in runs if r["same_as_committed_demo"]["identical"]), key=lambda r: r["slots"])
    if not eligible:
        one = next((r for r in runs if r["slots"] == 1), None)
        why = "no slot count gave the committed demo's outcomes on every compared case"
        if one is not None and not one["same_as_committed_demo"]["identical"]:
            why += (
                "; not even one slot, the committed demo's own setting: llama.cpp's server reuses a cached prompt "
                "prefix, and a reply then depends on the requests before it (ggml-org/llama.cpp#7594), so the "
                "committed replies hold only for their own request history"
            )
        return {"slots": 1, "reason": why}
    fastest = min(r["wall_s"] for r in eligible)
    best = next(r for r in eligible if r["wall_s"] <= fastest * (1 + MIN_GAIN))
    return {"slots": best["slots"], "wall_s_per_case": best["wall_s_per_case"], "reason": RULE}


def write_lock(model_id: str, chosen: dict, doc: dict) -> None:
    """The chosen slot count and its measured rate into the lock's demo_timing (kept: the CPU-seconds figures)."""
    lock = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    timing = dict(lock["models"][model_id].get("demo_timing") or {})
    timing.update(
        slots=chosen["slots"],
        wall_s_per_case=chosen["wall_s_per_case"],
        threads=doc["threads"],
        measured=f"{doc['date'][:10]}: make bench-demo-slots, {doc['cases']} cases x 3 arms alone "
        f"(load {doc['machine']['loadavg_start']}), slots {', '.join(str(r['slots']) for r in doc['runs'])}",
    )
    lock["models"][model_id]["demo_timing"] = timing
    CATALOGUE.write_text(json.dumps(lock, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def table(doc: dict) -> str:
    rows = [
        "| slots | wall s | s per case | completion tokens/s | server CPU s | outcomes as committed | replies as "
        "committed | outcomes as at 1 slot | load before |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        c, o = r["same_as_committed_demo"], r.get("same_as_one_slot")
        as_one = f"{o['outcomes_identical']}/{o['cases_compared']}" if o else "-"
        rows.append(
            f"| {r['slots']} | {r['wall_s']} | {r['wall_s_per_case']} | {r['completion_tokens_per_s']} | "
            f"{r['server_cpu_s']} | {c['outcomes_identical']}/{c['cases_compared']} | "
            f"{c['replies_identical']}/{c['cases_compared']} | {as_one} | {r['load_before']} |"
        )
    return "\n".join(rows)


def main(
    out: Path,
    slots: list[int],
    cases: int = 8,
    model: str | None = None,
    threads: int | None = None,
    write: bool = False,
    work: Path | None = None,
) -> int:
    model_id = model or role_model("demo")
    threads = threads or os.cpu_count() or 1
    if not get_model(model_id).path.is_file():
        print(f"bench demo-slots: {get_model(model_id).path} missing: make model", file=sys.stderr)
        return 2
    work = work or Path(tempfile.mkdtemp(prefix="bench-demo-slots-"))
    load_start = load()
    reference = records(REFERENCE, model_id)
    runs = []
    for n in slots:
        print(
            f"bench demo-slots: {model_id}, {n} slot(s), {cases} case(s) x 3 arms (load {load()})",
            file=sys.stderr,
            flush=True,
        )
        runs.append(run_slots(model_id, n, cases, threads, work, reference))
    one = next((r["records"] for r in runs if r["slots"] == 1), None)
    for r in runs:  # beside the committed demo: this measurement's own one-slot run, the same request history
        got = r.pop("records")
        r["same_as_one_slot"] = compare(got, one) if one is not None else None
    doc = {
        "what": "make bench-demo-slots: the CPU demo's model arms at each llama.cpp slot count, against the "
        "committed demo's per-case outcomes",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "model": model_id,
        "cases": cases,
        "threads": threads,
        "machine": {"cpus": os.cpu_count(), "loadavg_start": load_start, "loadavg_end": load()},
        "alone": float(load_start.split()[0]) <= ALONE_LOAD,
        "reference": str(REFERENCE),
        "results_dir": str(work),
        "runs": runs,
        "rule": RULE,
    }
    doc["chosen"] = choose(runs)
    doc["table"] = table(doc)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(doc["table"])
    print(
        f"chosen: {doc['chosen']['slots']} slot(s) ({doc['chosen']['reason']}); measured alone: {doc['alone']} "
        f"(load at the start {load_start}); {out}"
    )
    if write:
        if not doc["alone"]:
            print(
                f"bench demo-slots: not written to {CATALOGUE.name}: the load at the start ({load_start}) says the "
                f"machine was shared; measure alone",
                file=sys.stderr,
            )
            return 1
        if "wall_s_per_case" not in doc["chosen"]:
            print(f"bench demo-slots: not written: {doc['chosen']['reason']}", file=sys.stderr)
            return 1
        write_lock(model_id, doc["chosen"], doc)
        print(f"wrote demo_timing.slots = {doc['chosen']['slots']} for {model_id} into {CATALOGUE}")
    return 0
