"""The fake server: THE one scripted FAKE OpenAI-compatible model server of the kit, never a model.

It answers `GET /v1/models` and `POST /v1/chat/completions` (also without the `/v1` prefix) from the reply source
plugged into it (harness.model.rehearsal.sources): the rehearsal's reply script for `make rehearse`, the rehearsal
launcher and the arm tests (`RehearsalServer`), or a test's script (`ScriptedReplies`) for the client, CLI and arm
tests and `make bench-executor`. `GET /health` and `GET /rehearsal/stats` report its counters; given a
`server_version`, `GET /version` answers
`{"version": ...}` as vLLM's server does (the vLLM launcher's tests behind a fake docker). The HTTP is
aiohttp.web's (a malformed request line, header or Content-Length is answered 400, a body over MAX_BODY 413); the
routes, the counters and the fault injection are this module's.

Middleware, in order: count the request; check the API key when one is demanded (401 without `Authorization:
Bearer <key>`, 403 for a forbidden key, as an OpenAI server answers; every request's Authorization header is kept
in `auth`); read the chat request and let the source accept or refuse it (`accept`: 400/404 with an OpenAI error
body); inject a fault (`Faults`, decided per attempt from sha256(seed, "fault", request identity, attempt), so a
retried request is a new attempt: HTTP 503, a reply delayed past the client's timeout, or the connection dropped
after the request is read; each one counted and appended as one JSON line to `fault_log`, which survives a SIGKILL
of the server). Connections accepted are counted at the socket (`stats.connections`: a client that keeps its
connections alive opens few).

Run it in a background thread (`with server:`, for tests and benchmarks) or as its own process (`harness serve
rehearsal`, `serve_until_stopped`), which prints and writes its ready line.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from aiohttp import web
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler

from harness.core.canonical_json import canonical_json
from harness.model.rehearsal.replies import AnswerKey, Draw
from harness.model.rehearsal.sources import (
    DEFAULT_MODELS,
    SCRIPTED_MODEL,
    Answer,
    Chat,
    RehearsalReplies,
    Reply,
    ReplySource,
    ScriptedReplies,
    error,
)

MAX_BODY = 8 * 1024 * 1024
MODEL_PATHS = ("/v1/models", "/models")
STATS_PATHS = ("/health", "/rehearsal/stats")
VERSION_PATH = "/version"
COMPLETION_PATHS = ("/v1/chat/completions", "/chat/completions")
SHUTDOWN_S = 0.5  # open keep-alive connections and slow replies are cut this long after close()
CHAT = web.RequestKey("chat", Chat)  # the accepted chat request, set by the _read_chat middleware


@dataclass
class Faults:
    """Shares of chat-completion attempts answered 503, delayed by `slow_s`, or dropped."""

    rate_5xx: float = 0.0
    rate_slow: float = 0.0
    rate_drop: float = 0.0
    slow_s: float = 30.0

    def validate(self) -> None:
        for name in ("rate_5xx", "rate_slow", "rate_drop"):
            v = getattr(self, name)
            if not 0.0 <= v < 1.0:
                raise ValueError(f"fault rate {name} must be in [0, 1), got {v}")
        if self.rate_5xx + self.rate_slow + self.rate_drop >= 1.0:
            raise ValueError("the fault rates together must stay below 1")

    @property
    def on(self) -> bool:
        return bool(self.rate_5xx or self.rate_slow or self.rate_drop)

    def describe(self) -> dict:
        return {"http_5xx": self.rate_5xx, "slow": self.rate_slow, "drop": self.rate_drop, "slow_s": self.slow_s}


@dataclass
class Stats:
    connections: int = 0  # TCP connections accepted (a client that reuses its connections opens few)
    requests: int = 0
    completions: int = 0
    faults: dict[str, int] = field(default_factory=lambda: {"http_5xx": 0, "slow": 0, "drop": 0})
    reply_forms: dict[str, int] = field(default_factory=dict)  # completions per reply form
    shapes: dict[str, int] = field(default_factory=dict)
    case_found: int = 0
    started_at: float = field(default_factory=time.time)


def _json(status: int, payload: dict | bytes) -> web.Response:
    """A JSON response (bytes are sent as they are: a script may send a body that is not JSON)."""
    body = (
        payload
        if isinstance(payload, bytes)
        else json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    )
    return web.Response(status=status, body=body, content_type="application/json")


class FakeServer:
    """The fake server (module docstring) around one reply source. `await start()` / `await close()` in a running
    loop, or `with server:` in a background thread; `base_url` ends in /v1."""

    def __init__(
        self,
        source: ReplySource,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        seed: int = 0,
        faults: Faults | None = None,
        fault_log: str | os.PathLike | None = None,
        api_key: str | None = None,
        forbidden_keys: Iterable[str] = (),
        server_version: str | None = None,
    ):
        self.source = source
        self.server_version = server_version
        self.host, self.port, self.seed = host, port, int(seed)
        self.faults = faults or Faults()
        self.faults.validate()
        self.fault_log = Path(fault_log) if fault_log else None
        self.api_key = api_key
        self._forbidden = {f"Bearer {k}" for k in forbidden_keys}
        self.auth: list[str | None] = []  # every request's Authorization header (None when absent)
        self.stats = Stats()
        self._attempts: dict[str, int] = {}
        self._fault_fh: TextIO | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what it serves --

    def describe(self) -> dict:
        return {**self.source.describe(), "faults": self.faults.describe()}

    def stats_dict(self) -> dict:
        s = self.stats
        return {
            "synthetic": True,
            "connections": s.connections,
            "requests": s.requests,
            "completions": s.completions,
            "faults": dict(s.faults),
            "reply_forms": dict(s.reply_forms),
            "shapes": dict(s.shapes),
            "case_found": s.case_found,
            "uptime_s": round(time.time() - s.started_at, 3),
            **self.describe(),
        }

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    url = base_url  # the scripted tests' name for it

    # -- life cycle --

    async def start(self) -> None:
        if self.fault_log is not None:
            self.fault_log.parent.mkdir(parents=True, exist_ok=True)
            self._fault_fh = open(self.fault_log, "a", buffering=1, encoding="utf-8")
        app = web.Application(
            client_max_size=MAX_BODY, middlewares=[self._count, self._authorize, self._read_chat, self._inject_fault]
        )
        app.router.add_route("*", "/{path:.*}", self._route)
        # handler_cancellation: a reply whose client went away (a slow one past its timeout) is cancelled
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_S, handler_cancellation=True)
        await self._runner.setup()
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(self._accept, self.host, self.port, backlog=1024)
        self.port = self._listener.sockets[0].getsockname()[1]

    def _accept(self) -> RequestHandler:
        """The protocol for one accepted connection (aiohttp's request handler), counted."""
        self.stats.connections += 1
        server = self._runner.server if self._runner is not None else None
        if server is None:
            raise RuntimeError("the fake server's runner is not set up")
        return server()

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            await self._listener.wait_closed()
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()  # open keep-alive connections and slow replies end here
            self._runner = None
        if self._fault_fh is not None:
            self._fault_fh.close()
            self._fault_fh = None

    def __enter__(self) -> FakeServer:
        """Serve from a background thread with its own event loop (tests, benchmarks)."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # noqa: BLE001 - reported to the caller below
                failed.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, daemon=True, name="fake-server")
        self._thread.start()
        if not started.wait(30) or failed:
            if failed:
                self._thread.join(5)
                loop.close()
            raise RuntimeError(f"the fake server did not start: {failed[0] if failed else 'timeout'}")
        return self

    def __exit__(self, *exc: object) -> None:
        loop, self._loop = self._loop, None
        if loop is None or self._thread is None:
            raise RuntimeError("the fake server was not entered")
        asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(15)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(15)
        loop.close()

    async def _close_all(self) -> None:
        await self.close()
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    # -- middleware --

    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.stats.requests += 1
        return await handler(request)

    @web.middleware
    async def _authorize(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        got = request.headers.get("Authorization")
        self.auth.append(got)
        if self.api_key is not None:
            if got in self._forbidden:
                return _json(403, error("forbidden", type="permission_error"))
            if got != f"Bearer {self.api_key}":
                return _json(
                    401, error("Incorrect API key provided", type="invalid_request_error", code="invalid_api_key")
                )
        return await handler(request)

    @web.middleware
    async def _read_chat(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A POST to a completion route: the body read and accepted (request[CHAT]) or refused by the source."""
        if request.method != "POST" or request.path.rstrip("/") not in COMPLETION_PATHS:
            return await handler(request)
        if (request.content_length or 0) > MAX_BODY:
            return _json(413, error("body too large"))
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _json(413, error("body too large"))
        got = self.source.accept(raw, {k.lower(): v for k, v in request.headers.items()})
        if isinstance(got, Answer):
            return _json(got.status, got.payload)
        request[CHAT] = got
        return await handler(request)

    @web.middleware
    async def _inject_fault(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        chat: Chat | None = request.get(CHAT)
        if chat is None or not self.faults.on:
            return await handler(request)
        fault = self._fault_for(chat.ident)
        if fault is None:
            return await handler(request)
        self._log_fault(fault, chat.ident, chat.model)
        if fault == "http_5xx":
            return _json(503, error("rehearsal: injected server error"))
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()  # the request was read; the client sees the connection reset
            return web.Response(status=500)  # never sent: the transport is gone
        await asyncio.sleep(self.faults.slow_s)  # "slow": the client gives up first; then answer normally
        return await handler(request)

    def _fault_for(self, ident: str) -> str | None:
        f = self.faults
        attempt = self._attempts.get(ident, 0)
        self._attempts[ident] = attempt + 1
        u = Draw(self.seed, "fault", ident, attempt).u()
        if u < f.rate_5xx:
            return "http_5xx"
        if u < f.rate_5xx + f.rate_slow:
            return "slow"
        if u < f.rate_5xx + f.rate_slow + f.rate_drop:
            return "drop"
        return None

    def _log_fault(self, kind: str, ident: str, model: str | None) -> None:
        self.stats.faults[kind] += 1
        if self._fault_fh is not None:
            self._fault_fh.write(
                canonical_json({"fault": kind, "request": ident, "model": model, "at": round(time.time(), 3)}) + "\n"
            )

    # -- routes --

    async def _route(self, request: web.Request) -> web.Response:
        path, method = request.path.rstrip("/"), request.method
        if path in MODEL_PATHS and method == "GET":
            return _json(200, self.source.model_list())
        if path in STATS_PATHS and method == "GET":
            return _json(200, self.stats_dict())
        if path == VERSION_PATH and method == "GET" and self.server_version is not None:
            return _json(200, {"version": self.server_version})
        if path in COMPLETION_PATHS:
            if method != "POST":
                return _json(405, error("use POST"))
            return await self._completion(request[CHAT])
        return _json(404, error(f"no route {method} {path}"))

    async def _completion(self, chat: Chat) -> web.Response:
        answer = self.source.answer(chat)
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if answer.status == 200:
            s = self.stats
            s.completions += 1
            if answer.reply_form is not None:
                s.reply_forms[answer.reply_form] = s.reply_forms.get(answer.reply_form, 0) + 1
                key = f"{answer.reply_form}:{answer.shape}"
                s.shapes[key] = s.shapes.get(key, 0) + 1
            s.case_found += answer.case_found
        return _json(answer.status, answer.payload)


class RehearsalServer(FakeServer):
    """The fake server with the rehearsal's reply script (sources.RehearsalReplies): `make rehearse`, the rehearsal
    launcher, the arm and client tests. Model ids must start with `rehearsal-`."""

    source: RehearsalReplies

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        seed: int = 0,
        models: tuple[str, ...] = DEFAULT_MODELS,
        answer_key: str | os.PathLike | None = None,
        faults: Faults | None = None,
        fault_log: str | os.PathLike | None = None,
    ):
        super().__init__(
            RehearsalReplies(seed=seed, models=models, answer_key=answer_key),
            host=host,
            port=port,
            seed=seed,
            faults=faults,
            fault_log=fault_log,
        )

    @property
    def answer_key(self) -> AnswerKey:
        return self.source.answer_key

    @property
    def models(self) -> tuple[str, ...]:
        return self.source.models


class ScriptedServer(FakeServer):
    """The fake server with a test's script (sources.ScriptedReplies), optionally demanding an API key (401 without
    it, 403 for one of `forbidden_keys`): the client, CLI and arm tests, `make bench-executor`. `requests` lists the
    JSON bodies received, `auth` every request's Authorization header.

        with ScriptedServer([(503, {"error": "busy"}, 0), (200, chat_completion("Final answer: 4"), 0)]) as srv:
            ...   # srv.url is "http://127.0.0.1:<port>/v1"
    """

    source: ScriptedReplies

    def __init__(
        self,
        script: Iterable[tuple] = (),
        *,
        reply: Callable[[bytes], Reply] | None = None,
        model: str = SCRIPTED_MODEL,
        port: int = 0,
        api_key: str | None = None,
        forbidden_keys: Iterable[str] = (),
        server_version: str | None = None,
    ):
        super().__init__(
            ScriptedReplies(list(script), reply, model),
            port=port,
            api_key=api_key,
            forbidden_keys=forbidden_keys,
            server_version=server_version,
        )

    @property
    def requests(self) -> list:
        return self.source.requests


async def serve_until_stopped(server: FakeServer, ready_file: Path | None = None) -> None:
    """Serve until SIGTERM or SIGINT: print the ready line (JSON: ready, base_url, pid and what it serves) and
    write it to `ready_file` (atomically) once listening."""
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    line = canonical_json({"ready": True, "base_url": server.base_url, "pid": os.getpid(), **server.describe()})
    print(line, flush=True)
    if ready_file is not None:
        tmp = ready_file.with_suffix(".tmp")
        tmp.write_text(line + "\n")
        os.replace(tmp, ready_file)
    await stop.wait()
    await server.close()
