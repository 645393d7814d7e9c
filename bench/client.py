"""Model-client A/B (``make bench-client``): writes runs/bench/client.json.

The same workload, interleaved round by round in one run, against the rehearsal server (a scripted
FAKE model server, ``harness serve rehearsal`` started by the kit's RehearsalLauncher, no faults) in its own
process: N chat
requests (reply form ``reply``, distinct bodies, so nothing is cached) at a fixed concurrency.

Clients:

* ``kit``: ``harness.model.client.ModelClient`` as the runner builds it (aiohttp since issue 25);
* ``httpx_bare``: one ``httpx.AsyncClient`` (the kit's HTTP library before issue 25, with its default
  connection limits) posting the same bodies and parsing the JSON, with none of the kit's code around it;
* ``aiohttp_bare``: the same with one ``aiohttp.ClientSession``: what the HTTP library itself costs under
  the kit's client.

The issue-25 measurement that decided the switch (the kit's client on httpx against ``httpx_bare`` and
``aiohttp_bare``, and the whole small rehearsal before and after) is in SECURITY.md's cost section and
docs/bench-rehearse-small-*.json.

For each: requests per second (wall) and the client process's CPU milliseconds per request
(``time.process_time``: the figure the load of other jobs disturbs least). The machine's load
average is recorded before and after.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypedDict

import httpx

from bench.machine import Machine, loadavg
from harness.core.ports import free_port
from harness.model.client import ModelClient, prompt_headers
from harness.model.rehearsal.launcher import RehearsalLauncher

MODEL = "rehearsal-alpha"
HEADERS = prompt_headers("bench", "reply")


class ClientSummary(TypedDict, total=False):
    """One client's medians over the rounds (`cpu_ratio_to_kit` added once the kit's is known)."""

    requests_per_s_median: float
    client_cpu_ms_per_request_median: float
    rounds: list[dict[str, float]]
    cpu_ratio_to_kit: float


def _messages(i: int, tag: str) -> list[dict]:
    return [
        {"role": "system", "content": "You are a careful clinical calculator."},
        {
            "role": "user",
            "content": f"Case {tag}-{i}: a 63-year-old with creatinine 1.1 mg/dL. "
            "What is the eGFR? Give the final answer.",
        },
    ]


async def _run_kit(base_url: str, n: int, concurrency: int, tag: str) -> int:
    async with ModelClient(base_url, MODEL, profile="plain", concurrency=concurrency, max_retries=0) as client:

        async def one(i: int) -> int:
            r = await client.chat(_messages(i, tag), temperature=0.0, max_tokens=256, headers=HEADERS)
            return len(r.text or "")

        return sum(await asyncio.gather(*(one(i) for i in range(n))))


async def _run_httpx(base_url: str, n: int, concurrency: int, tag: str) -> int:
    sem = asyncio.Semaphore(concurrency)
    url = base_url.rstrip("/") + "/chat/completions"
    async with httpx.AsyncClient(timeout=60.0) as session:

        async def one(i: int) -> int:
            body = {"model": MODEL, "messages": _messages(i, tag), "temperature": 0.0, "max_tokens": 256}
            async with sem:
                resp = await session.post(url, json=body, headers=HEADERS)
                resp.raise_for_status()
                data = resp.json()
            return len(data["choices"][0]["message"]["content"] or "")

        return sum(await asyncio.gather(*(one(i) for i in range(n))))


async def _run_aiohttp(base_url: str, n: int, concurrency: int, tag: str) -> int:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    url = base_url.rstrip("/") + "/chat/completions"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one(i: int) -> int:
            body = {"model": MODEL, "messages": _messages(i, tag), "temperature": 0.0, "max_tokens": 256}
            async with sem:
                async with session.post(url, json=body, headers=HEADERS) as resp:
                    resp.raise_for_status()
                    data = await resp.json()
            return len(data["choices"][0]["message"]["content"] or "")

        return sum(await asyncio.gather(*(one(i) for i in range(n))))


def _connections(base_url: str) -> int:
    return httpx.get(base_url.rsplit("/v1", 1)[0] + "/rehearsal/stats", timeout=10).json()["connections"]


def _measure(fn: Callable[[], Coroutine[Any, Any, int]], base_url: str) -> dict[str, float]:
    before = _connections(base_url)
    cpu0, t0 = time.process_time(), time.perf_counter()
    chars = asyncio.run(fn())
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"wall_s": wall, "cpu_s": cpu, "chars": chars, "connections_opened": _connections(base_url) - before - 1}


def main(out: Path, n: int = 2200, rounds: int = 3, concurrency: int = 32) -> int:
    if n < 1 or rounds < 1 or concurrency < 1:
        raise ValueError("--n, --rounds and --concurrency must be >= 1")
    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        server = RehearsalLauncher(model_id=MODEL, port=free_port(), seed=0, log_path=Path(tmp) / "server.log")
        server.start()
        try:
            server.wait_ready(60)
            base_url = server.base_url
            clients = {
                "kit": lambda tag: _run_kit(base_url, n, concurrency, tag),
                "httpx_bare": lambda tag: _run_httpx(base_url, n, concurrency, tag),
                "aiohttp_bare": lambda tag: _run_aiohttp(base_url, n, concurrency, tag),
            }
            machine = Machine()
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in clients}
            for r in range(rounds):
                for name, fn in clients.items():  # interleaved: every round runs every client once
                    m = _measure(functools.partial(fn, f"{name}-{r}"), base_url)
                    m["loadavg_1m"] = loadavg()[0]
                    runs[name].append(m)
                    print(
                        f"bench-client: round {r + 1} {name}: {n / m['wall_s']:.0f} req/s, "
                        f"{m['cpu_s'] * 1000 / n:.3f} ms CPU/request, {m['connections_opened']} connections",
                        file=sys.stderr,
                    )
            machine.finish()
        finally:
            server.stop()
    summary: dict[str, ClientSummary] = {
        name: {
            "requests_per_s_median": round(statistics.median(n / m["wall_s"] for m in ms), 1),
            "client_cpu_ms_per_request_median": round(statistics.median(m["cpu_s"] * 1000 / n for m in ms), 4),
            "rounds": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()} for m in ms],
        }
        for name, ms in runs.items()
    }
    base = summary["kit"]["client_cpu_ms_per_request_median"]
    for s in summary.values():
        s["cpu_ratio_to_kit"] = round(s["client_cpu_ms_per_request_median"] / base, 3)
    report = {
        "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cores": machine.cores,
            "platform": machine.platform,
            "python": machine.python,
            "httpx": httpx.__version__,
            "loadavg_start": machine.loadavg_start,
            "loadavg_end": machine.loadavg_end,
        },
        "workload": {
            "n": n,
            "rounds": rounds,
            "concurrency": concurrency,
            "server": "harness serve rehearsal (the fake server, a scripted fake), no faults",
        },
        "clients": summary,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"bench-client: wrote {out}", file=sys.stderr)
    return 0
