"""The rehearsal server: a scripted FAKE OpenAI-compatible model server, for pipeline rehearsals only.

It is never a model. It answers `/v1/models` and `/v1/chat/completions` instantly and deterministically
from sha256(rehearsal seed, model id, canonical request body) with the reply shapes real models produce,
so the whole pipeline (harness, executor, scorers, store, statistics, tables, report, verify) can be run
at the paper's full size on one box without a GPU. Everything it emits is labelled synthetic: the model
ids it lists start with `rehearsal-` (harness.model.rehearsal.labels.SYNTHETIC_PREFIX), every completion carries
`system_fingerprint: "rehearsal-fake"`, and it refuses (404) any model id that is not its own.

The reply is the reply script's (harness.model.rehearsal.replies), in the reply form the request asks for, which
the kit's client sends with every request (header X-Harness-Reply-Form, harness.model.client.family_headers; the
arms' prompt families say their form, harness.arms.families). The server never reads the prompt's text to guess
it; a request without the header is refused (400). A new prompt family asking for one of these forms is served
without changes here:
- program prompts (Program-Solve, Blind, sampled votes) and repair turns: a program computing the
  answer ("correct"), a wrong program, one that raises, one the static policy rejects, one that hits
  the sandbox's memory rlimit, one that burns CPU until the executor's clock stops it (rare: each costs
  ~4-5 s of executor time), one returning the wrong kind, a reply without code, a reply cut at the
  token limit inside its code block (finish_reason "length");
- reply prompts (Note only, Page, Open-book, recalled samples): `Final answer:` with the gold or a wrong
  value, `Final answer:` without a readable value, a JSON reply, a `\\boxed{}` reply, a reply cut at the
  token limit, a reply with no final-answer line;
- extraction prompts: a JSON object of the case's variables (its gold entities), a JSON object with a
  variable missing, prose without JSON, a truncated object;
- tree prompts (Formulate-Solve): a valid tree evaluating to the gold or a wrong value, a tree using a variable
  listed as missing, an unknown operator, prose without JSON.
"Correct" needs the gold value: with an answer key (`--answer-key`, a dataset CSV in the benchmark
schema) the server finds the case by the note's first words and the question (or, for extraction, the
calculator name) in the prompt; without one, or when the case is not found, it invents a number.

Fault injection, decided per attempt (a retried request is a new attempt, so retries succeed): HTTP 503,
a reply delayed past the client timeout (`--slow-s`), a connection dropped after the request is read.
Every injected fault is appended as one JSON line to `--fault-log` (survives a SIGKILL of the server) and
counted at `GET /rehearsal/stats`.

The HTTP layer is a small asyncio HTTP/1.1 keep-alive handler (no framework), one process, so it
sustains thousands of requests per second on one core.

    python -m harness.model.rehearsal.server --port 18461 --seed 7 --answer-key cases.csv \\
        --model rehearsal-alpha --model rehearsal-beta --fault-5xx 0.002 --fault-slow 0.0005 --fault-drop 0.001
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.canonical_json import canonical_json
from harness.model.client import REPLY_FORM_HEADER
from harness.model.rehearsal.labels import SYNTHETIC_FINGERPRINT, SYNTHETIC_PREFIX, is_synthetic_model
from harness.model.rehearsal.replies import SHAPES_BY_FORM, AnswerKey, Draw, make_reply

DEFAULT_MODELS = ("rehearsal-alpha", "rehearsal-beta")
MAX_BODY = 8 * 1024 * 1024


# --- the HTTP server -----------------------------------------------------------------------------------------

@dataclass
class Faults:
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


@dataclass
class Stats:
    connections: int = 0    # TCP connections accepted (a client that reuses its connections opens few)
    requests: int = 0
    completions: int = 0
    faults: dict = field(default_factory=lambda: {"http_5xx": 0, "slow": 0, "drop": 0})
    families: dict = field(default_factory=dict)
    shapes: dict = field(default_factory=dict)
    case_found: int = 0
    started_at: float = field(default_factory=time.time)


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
           503: "Service Unavailable"}


class RehearsalServer:
    """The fake server. `await start()` then `await serve_forever()`, or use `run()`."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, seed: int = 0,
                 models: tuple[str, ...] = DEFAULT_MODELS, answer_key: str | os.PathLike | None = None,
                 faults: Faults | None = None, fault_log: str | os.PathLike | None = None):
        bad = [m for m in models if not is_synthetic_model(m)]
        if bad or not models:
            raise ValueError(f"rehearsal model ids must start with {SYNTHETIC_PREFIX!r}: {bad or 'none given'}")
        self.host, self.port, self.seed = host, port, int(seed)
        self.models = tuple(dict.fromkeys(models))
        self.answer_key = AnswerKey(answer_key)
        self.faults = faults or Faults()
        self.faults.validate()
        self.fault_log = Path(fault_log) if fault_log else None
        self._fault_fh = None
        self.stats = Stats()
        self._attempts: dict[str, int] = {}
        self._handlers: set[asyncio.Task] = set()
        self._server: asyncio.base_events.Server | None = None
        self._created = 1700000000  # fixed: completions are a pure function of the request

    def describe(self) -> dict:
        return {"kind": "rehearsal", "synthetic": True, "system_fingerprint": SYNTHETIC_FINGERPRINT,
                "models": list(self.models), "seed": self.seed, "answer_key": self.answer_key.path,
                "faults": {"http_5xx": self.faults.rate_5xx, "slow": self.faults.rate_slow,
                           "drop": self.faults.rate_drop, "slow_s": self.faults.slow_s}}

    async def start(self) -> None:
        if self.fault_log is not None:
            self.fault_log.parent.mkdir(parents=True, exist_ok=True)
            self._fault_fh = open(self.fault_log, "a", buffering=1, encoding="utf-8")
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024,
                                                  limit=MAX_BODY)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):      # open keep-alive connections and slow replies
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            await self._server.wait_closed()
        if self._fault_fh is not None:
            self._fault_fh.close()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- protocol --

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        self.stats.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    await self._send(writer, 413, {"error": {"message": "request head too large"}}, close=True)
                    return
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, version = lines[0].split(" ", 2)
                except ValueError:
                    await self._send(writer, 400, {"error": {"message": "bad request line"}}, close=True)
                    return
                headers = {}
                for ln in lines[1:]:
                    if ":" in ln:
                        k, v = ln.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length") or 0)
                if length > MAX_BODY:
                    await self._send(writer, 413, {"error": {"message": "body too large"}}, close=True)
                    return
                body = await reader.readexactly(length) if length else b""
                keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
                if not await self._dispatch(method, target.split("?", 1)[0], body, writer, keep, headers):
                    return
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:   # close(): open keep-alive connections and slow replies end here
            return
        finally:
            self._handlers.discard(task)
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the socket is already gone
                pass

    async def _send(self, writer, status: int, payload: dict, *, close: bool = False) -> None:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\nConnection: {'close' if close else 'keep-alive'}\r\n\r\n")
        writer.write(head.encode("latin-1") + data)
        await writer.drain()

    async def _dispatch(self, method: str, path: str, body: bytes, writer, keep: bool,
                        headers: dict[str, str]) -> bool:
        """Answer one request; False when the connection must be dropped."""
        self.stats.requests += 1
        path = path.rstrip("/")
        if path in ("/v1/models", "/models") and method == "GET":
            await self._send(writer, 200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": self._created, "owned_by": "rehearsal-fake"}
                for m in self.models]}, close=not keep)
            return True
        if path in ("/health", "/rehearsal/stats") and method == "GET":
            await self._send(writer, 200, self.stats_dict(), close=not keep)
            return True
        if path in ("/v1/chat/completions", "/chat/completions"):
            if method != "POST":
                await self._send(writer, 405, {"error": {"message": "use POST"}}, close=not keep)
                return True
            return await self._completion(body, writer, keep, headers.get(REPLY_FORM_HEADER.lower()))
        await self._send(writer, 404, {"error": {"message": f"no route {method} {path}"}}, close=not keep)
        return True

    def stats_dict(self) -> dict:
        s = self.stats
        return {"synthetic": True, "connections": s.connections, "requests": s.requests, "completions": s.completions, "faults": dict(s.faults),
                "families": dict(s.families), "shapes": dict(s.shapes), "case_found": s.case_found,
                "uptime_s": round(time.time() - s.started_at, 3), **self.describe()}

    def _fault_for(self, ident: str) -> str | None:
        f = self.faults
        if not (f.rate_5xx or f.rate_slow or f.rate_drop):
            return None
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

    def _log_fault(self, kind: str, ident: str, model: str) -> None:
        self.stats.faults[kind] += 1
        if self._fault_fh is not None:
            self._fault_fh.write(canonical_json({"fault": kind, "request": ident, "model": model,
                                             "at": round(time.time(), 3)}) + "\n")

    async def _completion(self, raw: bytes, writer, keep: bool, reply_form: str | None) -> bool:
        if reply_form not in SHAPES_BY_FORM:
            await self._send(writer, 400, {"error": {"message": f"header {REPLY_FORM_HEADER} must name a reply form "
                                                     f"({', '.join(SHAPES_BY_FORM)}), got {reply_form!r}"}},
                             close=not keep)
            return True
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
            max_tokens = int(body.get("max_tokens") or 1024)
        except (ValueError, KeyError, TypeError) as exc:
            await self._send(writer, 400, {"error": {"message": f"bad chat-completion body: {exc}"}}, close=not keep)
            return True
        model = body.get("model")
        if model not in self.models:
            await self._send(writer, 404, {"error": {"message": f"model {model!r} is not served here; this "
                                                     f"rehearsal server serves {list(self.models)}"}},
                             close=not keep)
            return True
        ident = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        fault = self._fault_for(ident)
        if fault is not None:
            self._log_fault(fault, ident, model)
            if fault == "http_5xx":
                await self._send(writer, 503, {"error": {"message": "rehearsal: injected server error"}},
                                 close=not keep)
                return True
            if fault == "drop":
                writer.transport.abort()
                return False
            await asyncio.sleep(self.faults.slow_s)   # the client gives up first; then answer normally
        reply = make_reply(self.seed, body, self.answer_key, reply_form)
        text, finish = reply.text, reply.finish_reason
        prompt_chars = sum(len(m.get("content") or "") for m in messages if isinstance(m, dict))
        completion_tokens = max(1, len(text) // 4)
        if finish == "length":
            completion_tokens = max_tokens
        elif completion_tokens >= max_tokens:
            text, finish, completion_tokens = text[: 4 * max_tokens], "length", max_tokens
        s = self.stats
        s.completions += 1
        s.families[reply.family] = s.families.get(reply.family, 0) + 1
        key = f"{reply.family}:{reply.shape}"
        s.shapes[key] = s.shapes.get(key, 0) + 1
        s.case_found += reply.case_found
        payload = {
            "id": "rehearsal-" + ident[:24], "object": "chat.completion", "created": self._created, "model": model,
            "system_fingerprint": SYNTHETIC_FINGERPRINT,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish,
                         "logprobs": None}],
            "usage": {"prompt_tokens": max(1, prompt_chars // 4), "completion_tokens": completion_tokens,
                      "total_tokens": max(1, prompt_chars // 4) + completion_tokens},
            "rehearsal": {"synthetic": True, "family": reply.family, "shape": reply.shape},
        }
        await self._send(writer, 200, payload, close=not keep)
        return True


async def _serve(server: RehearsalServer, ready_file: Path | None) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rehearsal-server", description="The rehearsal server: a scripted fake "
                                "OpenAI-compatible model server (synthetic output, never a model).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=18461)
    p.add_argument("--seed", type=int, default=0, help="rehearsal seed: with the request, decides every reply")
    p.add_argument("--model", action="append", default=None,
                   help=f"model id to serve (repeatable; must start with {SYNTHETIC_PREFIX!r}) "
                        f"[default: {', '.join(DEFAULT_MODELS)}]")
    p.add_argument("--answer-key", default=None, help="dataset CSV whose gold values the 'correct' shapes use")
    p.add_argument("--fault-5xx", type=float, default=0.0, help="share of attempts answered HTTP 503")
    p.add_argument("--fault-slow", type=float, default=0.0, help="share of attempts delayed by --slow-s")
    p.add_argument("--fault-drop", type=float, default=0.0, help="share of attempts whose connection is dropped")
    p.add_argument("--slow-s", type=float, default=30.0, help="delay of a slow reply (above the client timeout)")
    p.add_argument("--fault-log", default=None, help="append one JSON line per injected fault here")
    p.add_argument("--ready-file", default=None, help="write the ready line (JSON) here once listening")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        server = RehearsalServer(host=args.host, port=args.port, seed=args.seed,
                                 models=tuple(args.model or DEFAULT_MODELS), answer_key=args.answer_key,
                                 faults=Faults(args.fault_5xx, args.fault_slow, args.fault_drop, args.slow_s),
                                 fault_log=args.fault_log)
    except Exception as exc:  # noqa: BLE001 - bad rates, model ids or answer-key file: one line, exit 2
        print(f"rehearsal-server: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(server, Path(args.ready_file) if args.ready_file else None))
    except OSError as exc:
        print(f"rehearsal-server: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
