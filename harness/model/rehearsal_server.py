"""The rehearsal server: a scripted FAKE OpenAI-compatible model server, for pipeline rehearsals only.

It is never a model. It answers `/v1/models` and `/v1/chat/completions` instantly and deterministically
from sha256(rehearsal seed, model id, canonical request body) with the reply shapes real models produce,
so the whole pipeline (harness, executor, scorers, store, statistics, tables, report, verify) can be run
at the paper's full size on one box without a GPU. Everything it emits is labelled synthetic: the model
ids it lists start with `rehearsal-` (harness.model.synthetic.SYNTHETIC_PREFIX), every completion carries
`system_fingerprint: "rehearsal-fake"`, and it refuses (404) any model id that is not its own.

Reply shapes, by the reply form the request asks for, which the kit's client sends with every request (header
X-Harness-Reply-Form, harness.model.client.family_headers; the arms' prompt families say their form,
harness.arms.families). The server never reads the prompt's text to guess it; a request without the header is
refused (400). A new prompt family asking for one of these forms is served without changes here:
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

    python -m harness.model.rehearsal_server --port 18461 --seed 7 --answer-key cases.csv \\
        --model rehearsal-alpha --model rehearsal-beta --fault-5xx 0.002 --fault-slow 0.0005 --fault-drop 0.001
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import hashlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.canonical_json import canonical_json
from harness.data.dataset import load_dataset
from harness.model.client import REPLY_FORM_HEADER
from harness.model.synthetic import SYNTHETIC_FINGERPRINT, SYNTHETIC_PREFIX, is_synthetic_model

DEFAULT_MODELS = ("rehearsal-alpha", "rehearsal-beta")
NOTE_KEY_WORDS = 20
MAX_BODY = 8 * 1024 * 1024


# --- deterministic choice ------------------------------------------------------------------------------

class Draw:
    """A stream of uniform numbers in [0, 1) from sha256(seed, label, request identity, index)."""

    def __init__(self, *parts: Any):
        self._base = hashlib.sha256(canonical_json(list(parts)).encode()).digest()
        self._i = 0

    def u(self) -> float:
        h = hashlib.sha256(self._base + self._i.to_bytes(4, "big")).digest()
        self._i += 1
        return int.from_bytes(h[:8], "big") / 2.0 ** 64

    def pick(self, table: list[tuple[str, float]]) -> str:
        """A label from [(label, weight), ...] (weights need not sum to 1)."""
        total = sum(w for _, w in table)
        x = self.u() * total
        for label, w in table:
            x -= w
            if x < 0:
                return label
        return table[-1][0]


# --- the answer key: find the case a prompt is about ------------------------------------------------------

def _note_key(note: str) -> str:
    return " ".join(note.split()[:NOTE_KEY_WORDS])


_NOTE = re.compile(r"^Patient note: (.*)", re.M | re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_EXTRACT_NAME = re.compile(r"^Extract from the patient note the values needed to compute the (.*)\.$", re.M)


@dataclass
class CaseInfo:
    calculator_id: int
    calculator_name: str
    output_type: str
    gold_value: Any
    entities: dict


class AnswerKey:
    """Cases of a dataset file indexed by (first note words, question) and (first note words, calculator)."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = str(path) if path else None
        self.by_question: dict[tuple[str, str], CaseInfo] = {}
        self.by_calculator: dict[tuple[str, str], CaseInfo] = {}
        if path:
            for c in load_dataset(path).cases:
                info = CaseInfo(c.calculator_id, c.calculator_name, c.output_type, c.gold_value, dict(c.entities))
                nk = _note_key(c.note)
                self.by_question.setdefault((nk, c.question.strip().splitlines()[0].strip()), info)
                self.by_calculator.setdefault((nk, c.calculator_name.strip()), info)

    def __len__(self) -> int:
        return len(self.by_question)

    def find(self, prompt: str) -> CaseInfo | None:
        m = _NOTE.search(prompt)
        if not m:
            return None
        words = m.group(1).split()[:NOTE_KEY_WORDS]
        name = _EXTRACT_NAME.search(prompt)
        q = None if name else _QUESTION.search(prompt, m.start())
        if name is None and q is None:
            return None
        index, second = (self.by_calculator, name.group(1).strip()) if name else (self.by_question, q.group(1).strip())
        # a note shorter than NOTE_KEY_WORDS is followed by the rest of the prompt: try shorter prefixes
        for k in range(len(words), 0, -1):
            hit = index.get((" ".join(words[:k]), second))
            if hit is not None:
                return hit
        return None


# --- reply shapes ------------------------------------------------------------------------------------------

PROGRAM_SHAPES = [("correct", 0.58), ("wrong", 0.12), ("raises", 0.07), ("static_policy", 0.05),
                  ("sandbox_memory", 0.03), ("wrong_kind", 0.04), ("no_code", 0.07), ("truncated", 0.03),
                  ("no_answer_var", 0.008), ("cpu_loop", 0.001)]
REPAIR_SHAPES = [("correct", 0.6), ("wrong", 0.12), ("raises", 0.1), ("no_code", 0.1), ("wrong_kind", 0.08)]
REPLY_SHAPES = [("final_correct", 0.46), ("final_wrong", 0.2), ("final_unreadable", 0.07), ("json", 0.08),
                ("boxed", 0.05), ("truncated", 0.06), ("no_final_line", 0.08)]
EXTRACT_SHAPES = [("extraction", 0.7), ("extraction_missing", 0.1), ("no_json", 0.1), ("truncated", 0.1)]
TREE_SHAPES = [("tree_correct", 0.55), ("tree_wrong", 0.15), ("tree_missing_var", 0.1), ("tree_bad_op", 0.07),
               ("no_json", 0.08), ("truncated", 0.05)]
# Per-model skill: the share moved from the first ("correct") shape to the second, so the two rehearsal
# models differ the way two real models do.
MODEL_SKILL_SHIFT = {"rehearsal-alpha": 0.0, "rehearsal-beta": 0.12}


# The reply forms served (harness.arms.spec.REPLY_FORMS) and their shape tables.
SHAPES_BY_FORM = {"program": PROGRAM_SHAPES, "repair": REPAIR_SHAPES, "extract": EXTRACT_SHAPES, "tree": TREE_SHAPES,
                  "reply": REPLY_SHAPES}


def _shifted(table: list[tuple[str, float]], shift: float) -> list[tuple[str, float]]:
    if not shift:
        return table
    (l0, w0), (l1, w1), *rest = table
    moved = min(w0, shift)
    return [(l0, w0 - moved), (l1, w1 + moved), *rest]


def _invented(draw: Draw) -> float:
    return round(1 + draw.u() * 150, 2)


def _wrong_number(gold: float, draw: Draw) -> float:
    factor = 1.25 + draw.u()
    return round(gold * factor + 1.0, 3)


def _value_text(value: Any) -> str:
    """A value as a model writes it on a final-answer line."""
    if isinstance(value, _dt.date):
        return value.strftime("%m/%d/%Y")
    if isinstance(value, tuple):
        return f"({value[0]} weeks, {value[1]} days)"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _wrong_value(value: Any, draw: Draw) -> Any:
    if isinstance(value, _dt.date):
        return value + _dt.timedelta(days=1 + int(draw.u() * 30))
    if isinstance(value, tuple):
        return (value[0] + 1 + int(draw.u() * 3), value[1])
    return _wrong_number(float(value), draw)


def _program_for(value: Any) -> str:
    if isinstance(value, _dt.date):
        return ("import datetime\n\n# dates built from their parts\n"
                f"answer = datetime.date({value.year}, {value.month}, {value.day})\n")
    if isinstance(value, tuple):
        return f"weeks = {value[0]}\ndays = {value[1]}\nanswer = (weeks, days)\n"
    v = float(value)
    return f"import math\n\nresult = {v!r}\nanswer = round(result, 4)\n"


def _fence(code: str) -> str:
    return f"Here is the program.\n\n```python\n{code}```\n"


def program_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    """(text, finish_reason) for a program-family shape."""
    if shape == "correct":
        return _fence(_program_for(gold)), "stop"
    if shape == "wrong":
        return _fence(_program_for(_wrong_value(gold, draw))), "stop"
    if shape == "raises":
        if draw.u() < 0.5:
            return _fence("total = 12\ncount = 0\nanswer = total / count\n"), "stop"
        return _fence("answer = weight_kg * 2\n"), "stop"
    if shape == "static_policy":
        return _fence("import os\n\nanswer = float(os.environ.get('VALUE', '1'))\n"), "stop"
    if shape == "sandbox_memory":
        return _fence("table = bytearray(1 << 32)\nanswer = len(table)\n"), "stop"
    if shape == "cpu_loop":
        return _fence("answer = sum(range(10 ** 12))\n"), "stop"
    if shape == "wrong_kind":
        return _fence(f"answer = 'about {_value_text(gold)}'\n"), "stop"
    if shape == "no_answer_var":
        return _fence(f"result = {_value_text(gold)!r}\nprint(result)\n"), "stop"
    if shape == "no_code":
        return ("I cannot compute this reliably without more information about the patient; "
                "please consult the relevant clinical guideline."), "stop"
    if shape == "truncated":
        return "Here is the program.\n\n```python\nimport math\n\nweight = 70\nheight = (", "length"
    raise ValueError(shape)


def reply_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    steps = "Step 1: read the values from the note.\nStep 2: apply the formula.\n"
    if shape == "final_correct":
        return f"{steps}Final answer: {_value_text(gold)}", "stop"
    if shape == "final_wrong":
        return f"{steps}Final answer: {_value_text(_wrong_value(gold, draw))}", "stop"
    if shape == "final_unreadable":
        return f"{steps}Final answer: cannot be determined from the note", "stop"
    if shape == "json":
        return canonical_json({"step_by_step_thinking": "applied the formula", "answer": _value_text(gold)}), "stop"
    if shape == "boxed":
        return f"{steps}So the result is \\boxed{{{_value_text(gold)}}}.", "stop"
    if shape == "truncated":
        return "First, read the values from the note. Then apply the formula. The patient's weight is", "length"
    if shape == "no_final_line":
        return "The note does not give enough information to calculate this.", "stop"
    raise ValueError(shape)


def _json_entities(entities: dict) -> dict:
    return json.loads(json.dumps(entities, default=str))


def extract_reply(shape: str, case: CaseInfo | None, draw: Draw, prompt: str) -> tuple[str, str]:
    keys = re.findall(r'^"([^"]+)": ', prompt, re.M)
    if case is not None and case.entities:
        obj = _json_entities(case.entities)
    else:
        obj = {k: round(draw.u() * 100, 1) for k in keys}
    if shape == "extraction":
        return canonical_json(obj), "stop"
    if shape == "extraction_missing":
        return canonical_json({k: None for k in keys} or {"value": None}), "stop"
    if shape == "no_json":
        return "The note lists the patient's values in the history section.", "stop"
    if shape == "truncated":
        return canonical_json(obj)[:-1][: max(1, len(canonical_json(obj)) // 2)], "length"
    raise ValueError(shape)


def tree_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    value = float(gold) if isinstance(gold, (int, float)) else _invented(draw)
    base = {"calculation": "rehearsal calculation", "formula": "result = a * b", "missing": []}
    if shape == "tree_correct":
        obj = {**base, "variables": {"a": value, "b": 1}, "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_wrong":
        obj = {**base, "variables": {"a": value, "b": 1.5}, "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_missing_var":
        obj = {**base, "variables": {"a": value}, "missing": ["b"], "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_bad_op":
        obj = {**base, "variables": {"a": value, "b": 2}, "tree": {"op": "log", "args": ["a", "b"]}}
    elif shape == "no_json":
        return "The calculation multiplies the two values from the note.", "stop"
    elif shape == "truncated":
        text = canonical_json({**base, "variables": {"a": value, "b": 1}, "tree": {"op": "*", "args": ["a", "b"]}})
        return text[: len(text) // 2], "length"
    else:
        raise ValueError(shape)
    return "```json\n" + json.dumps(obj, indent=1) + "\n```", "stop"


@dataclass
class Reply:
    text: str
    finish_reason: str
    family: str
    shape: str
    case_found: bool


# Which of the executor's two clocks stops a CPU-bound program (CPU_LIMIT at 4 s of CPU, TIMEOUT_WALL at
# 5 s of wall time) depends on the machine's load, and a repair turn quotes that message. The reply is
# drawn from the body with either message replaced by one token, so a repair after a clock limit gets the
# same reply whichever clock fired (the kill-and-resume comparison, harness.reproduce.rehearsal.compare, does the same).
CLOCK_LIMIT_MESSAGE = re.compile(r"the program (?:ran longer than [\d.]+ s \(wall clock\)|used more than [\d.]+ s "
                                 r"of CPU time) and was stopped")


def clock_neutral(text: str) -> str:
    return CLOCK_LIMIT_MESSAGE.sub("<clock limit>", text)


def make_reply(seed: int, body: dict, answer_key: AnswerKey, reply_form: str) -> Reply:
    """The reply to a chat-completion body asking for `reply_form`: a pure function of (seed, body, answer key,
    form). ValueError for a form not served."""
    if reply_form not in SHAPES_BY_FORM:
        raise ValueError(f"reply form {reply_form!r} is not served; served forms: {', '.join(SHAPES_BY_FORM)}")
    messages = body.get("messages") or []
    model = str(body.get("model"))
    family = reply_form
    first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    case = answer_key.find(first_user) if len(answer_key) else None
    draw = Draw(seed, model, clock_neutral(canonical_json(body)) if family == "repair" else canonical_json(body))
    gold = case.gold_value if case is not None else _invented(draw)
    shift = MODEL_SKILL_SHIFT.get(model, 0.05)
    if family in ("program", "repair"):
        shape = draw.pick(_shifted(PROGRAM_SHAPES if family == "program" else REPAIR_SHAPES, shift))
        text, finish = program_reply(shape, gold, draw)
    elif family == "extract":
        shape = draw.pick(_shifted(EXTRACT_SHAPES, shift))
        text, finish = extract_reply(shape, case, draw, first_user)
    elif family == "tree":
        shape = draw.pick(_shifted(TREE_SHAPES, shift))
        text, finish = tree_reply(shape, gold, draw)
    else:
        shape = draw.pick(_shifted(REPLY_SHAPES, shift))
        text, finish = reply_reply(shape, gold, draw)
    return Reply(text, finish, family, shape, case is not None)


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
        return {"synthetic": True, "requests": s.requests, "completions": s.completions, "faults": dict(s.faults),
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
