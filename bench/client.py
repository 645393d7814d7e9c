#!/usr/bin/env python3
"""Model-client A/B (``make bench-client``): writes bench/client.json.

The same workload, interleaved round by round in one run, against the rehearsal server (a scripted
FAKE model server, ``harness.model.rehearsal.server``, no faults) in its own process: N chat
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

import argparse
import asyncio
import datetime as _dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from harness.model.client import ModelClient, family_headers  # noqa: E402

MODEL = "rehearsal-alpha"
HEADERS = family_headers("bench", "reply")


def _messages(i: int, tag: str) -> list[dict]:
    return [{"role": "system", "content": "You are a careful clinical calculator."},
            {"role": "user", "content": f"Case {tag}-{i}: a 63-year-old with creatinine 1.1 mg/dL. "
                                        "What is the eGFR? Give the final answer."}]


async def _run_kit(base_url: str, n: int, concurrency: int, tag: str) -> int:
    async with ModelClient(base_url, MODEL, profile="plain", concurrency=concurrency, max_retries=0) as client:
        async def one(i):
            r = await client.chat(_messages(i, tag), temperature=0.0, max_tokens=256, headers=HEADERS)
            return len(r.text or "")
        return sum(await asyncio.gather(*(one(i) for i in range(n))))


async def _run_httpx(base_url: str, n: int, concurrency: int, tag: str) -> int:
    sem = asyncio.Semaphore(concurrency)
    url = base_url.rstrip("/") + "/chat/completions"
    async with httpx.AsyncClient(timeout=60.0) as session:
        async def one(i):
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
        async def one(i):
            body = {"model": MODEL, "messages": _messages(i, tag), "temperature": 0.0, "max_tokens": 256}
            async with sem:
                async with session.post(url, json=body, headers=HEADERS) as resp:
                    resp.raise_for_status()
                    data = await resp.json()
            return len(data["choices"][0]["message"]["content"] or "")
        return sum(await asyncio.gather(*(one(i) for i in range(n))))


def _connections(base_url: str) -> int:
    return httpx.get(base_url.rsplit("/v1", 1)[0] + "/rehearsal/stats", timeout=10).json()["connections"]


def _measure(fn, base_url: str) -> dict:
    before = _connections(base_url)
    cpu0, t0 = time.process_time(), time.perf_counter()
    chars = asyncio.run(fn())
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"wall_s": wall, "cpu_s": cpu, "chars": chars, "connections_opened": _connections(base_url) - before - 1}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "client.json"))
    ap.add_argument("--n", type=int, default=2200, help="requests per client per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args(argv)
    if args.n < 1 or args.rounds < 1 or args.concurrency < 1:
        ap.error("--n, --rounds and --concurrency must be >= 1")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        ready = Path(tmp) / "ready"
        server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "rehearsal", "--port", str(port),
                                   "--model", MODEL, "--ready-file", str(ready)], cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while not ready.exists():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("bench-client: the rehearsal server did not start")
                time.sleep(0.05)
            base_url = f"http://127.0.0.1:{port}/v1"
            clients = {
                "kit": lambda tag: _run_kit(base_url, args.n, args.concurrency, tag),
            }
            clients["httpx_bare"] = lambda tag: _run_httpx(base_url, args.n, args.concurrency, tag)
            clients["aiohttp_bare"] = lambda tag: _run_aiohttp(base_url, args.n, args.concurrency, tag)
            load_start = os.getloadavg()
            rounds: dict[str, list[dict]] = {name: [] for name in clients}
            for r in range(args.rounds):
                for name, fn in clients.items():  # interleaved: every round runs every client once
                    m = _measure(lambda: fn(f"{name}-{r}"), base_url)
                    m["loadavg_1m"] = round(os.getloadavg()[0], 2)
                    rounds[name].append(m)
                    print(f"bench-client: round {r + 1} {name}: {args.n / m['wall_s']:.0f} req/s, "
                          f"{m['cpu_s'] * 1000 / args.n:.3f} ms CPU/request, {m['connections_opened']} connections",
                          file=sys.stderr)
            load_end = os.getloadavg()
        finally:
            server.terminate()
            server.wait(timeout=10)
    summary = {name: {"requests_per_s_median": round(statistics.median(args.n / m["wall_s"] for m in ms), 1),
                      "client_cpu_ms_per_request_median": round(statistics.median(m["cpu_s"] * 1000 / args.n
                                                                                  for m in ms), 4),
                      "rounds": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()} for m in ms]}
               for name, ms in rounds.items()}
    base = summary["kit"]["client_cpu_ms_per_request_median"]
    for name, s in summary.items():
        s["cpu_ratio_to_kit"] = round(s["client_cpu_ms_per_request_median"] / base, 3)
    report = {"started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "httpx": httpx.__version__,
                          "loadavg_start": [round(x, 2) for x in load_start],
                          "loadavg_end": [round(x, 2) for x in load_end]},
              "workload": {"n": args.n, "rounds": args.rounds, "concurrency": args.concurrency,
                           "server": "harness.model.rehearsal.server (a scripted fake), no faults"},
              "clients": summary}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"bench-client: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
