"""Reply sources of the fake server (harness.model.rehearsal.server): what the one FAKE OpenAI-compatible server
answers, never a model. A source reads a chat-completion request (or refuses it), answers it, lists its models
and describes itself; the server does the HTTP, the fault injection and the counting.

    RehearsalReplies  the rehearsal's reply script (harness.model.rehearsal.replies) by the reply form the request's
                      header names; models `rehearsal-*`, everything labelled synthetic (`make rehearse`, the
                      rehearsal launcher, the arm and client tests)
    ScriptedReplies   a list of (status, body, delay) answered in order, then a callable (or a fixed completion);
                      optionally demands an API key: the model-client, CLI and arm tests and `make bench-executor`

`chat_completion` is the one OpenAI chat.completion body both build.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.canonical_json import canonical_json
from harness.model.client import REPLY_FORM_HEADER
from harness.model.rehearsal.labels import SYNTHETIC_FINGERPRINT, SYNTHETIC_PREFIX, is_synthetic_model
from harness.model.rehearsal.replies import SHAPES_BY_FORM, AnswerKey, make_reply

DEFAULT_MODELS = ("rehearsal-alpha", "rehearsal-beta")
SCRIPTED_MODEL = "scripted-model"
CREATED = 1700000000  # fixed: completions are a pure function of the request


def chat_completion(
    text: str = "Final answer: 4",
    *,
    model: str = SCRIPTED_MODEL,
    finish: str = "stop",
    prompt_tokens: int = 12,
    completion_tokens: int = 5,
    id: str = "x",
    created: int | None = None,
    system_fingerprint: str | None = None,
    choice_fields: dict | None = None,
    extra: dict | None = None,
) -> dict:
    """An OpenAI chat.completion body with one choice (`choice_fields` added to it; `created`,
    `system_fingerprint` and `extra` added at the top level when given)."""
    body: dict = {"id": id, "object": "chat.completion"}
    if created is not None:
        body["created"] = created
    body["model"] = model
    if system_fingerprint is not None:
        body["system_fingerprint"] = system_fingerprint
    body["choices"] = [
        {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            **(choice_fields or {}),
        }
    ]
    body["usage"] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return {**body, **(extra or {})}


def error(message: str, **fields: Any) -> dict:
    """An OpenAI-style error body."""
    return {"error": {"message": message, **fields}}


@dataclass(frozen=True)
class Chat:
    """One chat-completion request a source accepted: its body, identity (sha256 of the canonical body: the
    fault draw's key), model and the reply form its header named."""

    raw: bytes
    body: Any
    ident: str
    model: str | None
    reply_form: str | None = None


@dataclass
class Answer:
    """What the server sends: a status and a JSON body (a dict) or raw bytes, after `delay_s`; `reply_form`,
    `shape` and `case_found` are the rehearsal's counters (None / False for other sources)."""

    status: int
    payload: dict | bytes
    delay_s: float = 0.0
    reply_form: str | None = None
    shape: str | None = None
    case_found: bool = False


class ReplySource(Protocol):
    """What the fake server asks of the source plugged into it."""

    def model_list(self) -> dict:
        """The body of GET /v1/models."""

    def accept(self, raw: bytes, headers: dict[str, str]) -> Chat | Answer:
        """The request as a Chat, or the refusal (an Answer with a 4xx status) of a request it cannot answer."""

    def answer(self, chat: Chat) -> Answer:
        """The reply to an accepted request."""

    def describe(self) -> dict:
        """What it serves, as the ready line and the stats route report it."""


def _ident(body: Any) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


class RehearsalReplies:
    """The rehearsal's reply script behind the fake server: deterministic from sha256(seed, model id, canonical
    request body), in the reply form the request's REPLY_FORM_HEADER names (a request without it is refused:
    the form is never guessed from the prompt), for model ids starting with `rehearsal-` only (another id: 404).
    Everything it emits is labelled synthetic (`system_fingerprint`, a `rehearsal` block)."""

    def __init__(
        self, *, seed: int = 0, models: tuple[str, ...] = DEFAULT_MODELS, answer_key: str | os.PathLike | None = None
    ):
        bad = [m for m in models if not is_synthetic_model(m)]
        if bad or not models:
            raise ValueError(f"rehearsal model ids must start with {SYNTHETIC_PREFIX!r}: {bad or 'none given'}")
        self.seed = int(seed)
        self.models = tuple(dict.fromkeys(models))
        self.answer_key = AnswerKey(answer_key)

    def describe(self) -> dict:
        return {
            "kind": "rehearsal",
            "synthetic": True,
            "system_fingerprint": SYNTHETIC_FINGERPRINT,
            "models": list(self.models),
            "seed": self.seed,
            "answer_key": self.answer_key.path,
        }

    def model_list(self) -> dict:
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": CREATED, "owned_by": "rehearsal-fake"} for m in self.models
            ],
        }

    def accept(self, raw: bytes, headers: dict[str, str]) -> Chat | Answer:
        reply_form = headers.get(REPLY_FORM_HEADER.lower())
        if reply_form not in SHAPES_BY_FORM:
            return Answer(
                400,
                error(
                    f"header {REPLY_FORM_HEADER} must name a reply form "
                    f"({', '.join(SHAPES_BY_FORM)}), got {reply_form!r}"
                ),
            )
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
            int(body.get("max_tokens") or 1024)
        except (ValueError, KeyError, TypeError) as exc:
            return Answer(400, error(f"bad chat-completion body: {exc}"))
        model = body.get("model")
        if model not in self.models:
            return Answer(
                404, error(f"model {model!r} is not served here; this rehearsal server serves {list(self.models)}")
            )
        return Chat(raw, body, _ident(body), model, reply_form)

    def answer(self, chat: Chat) -> Answer:
        if chat.model is None or chat.reply_form is None:  # accept() refuses a request without either
            raise ValueError(f"rehearsal: a chat without its model or reply form: {chat.model!r}, {chat.reply_form!r}")
        body = chat.body
        max_tokens = int(body.get("max_tokens") or 1024)
        reply = make_reply(self.seed, body, self.answer_key, chat.reply_form)
        text, finish = reply.text, reply.finish_reason
        prompt_chars = sum(len(m.get("content") or "") for m in body["messages"] if isinstance(m, dict))
        completion_tokens = max(1, len(text) // 4)
        if finish == "length":
            completion_tokens = max_tokens
        elif completion_tokens >= max_tokens:
            text, finish, completion_tokens = text[: 4 * max_tokens], "length", max_tokens
        payload = chat_completion(
            text,
            model=chat.model,
            finish=finish,
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=completion_tokens,
            id="rehearsal-" + chat.ident[:24],
            created=CREATED,
            system_fingerprint=SYNTHETIC_FINGERPRINT,
            choice_fields={"logprobs": None},
            extra={"rehearsal": {"synthetic": True, "reply_form": reply.reply_form, "shape": reply.shape}},
        )
        return Answer(200, payload, reply_form=reply.reply_form, shape=reply.shape, case_found=reply.case_found)


Reply = dict | tuple[int, Any]


@dataclass
class ScriptedReplies:
    """A scripted source: POST /v1/chat/completions pops the next (status, body, delay_s) of `script` (body: a
    dict sent as JSON, or bytes sent as they are); when the script is empty it answers 200 with
    `reply(raw_request_body)` (default: `chat_completion("Final answer: 4")`), or with the status of a
    `(status, body)` pair `reply` returns. `requests` lists the JSON bodies received, in order; GET /v1/models
    lists `model`. It accepts any body, so a test decides every status itself."""

    script: list = field(default_factory=list)
    reply: Callable[[bytes], Reply] | None = None
    model: str = SCRIPTED_MODEL
    requests: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.script = list(self.script)

    def describe(self) -> dict:
        return {"kind": "scripted", "models": [self.model]}

    def model_list(self) -> dict:
        return {"object": "list", "data": [{"id": self.model, "object": "model"}]}

    def accept(self, raw: bytes, headers: dict[str, str]) -> Chat | Answer:
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return Answer(400, error(f"body is not JSON: {exc}"))
        self.requests.append(body)
        return Chat(raw, body, _ident(body), body.get("model") if isinstance(body, dict) else None)

    def answer(self, chat: Chat) -> Answer:
        if self.script:
            status, payload, delay = self.script.pop(0)
            return Answer(status, payload, delay)
        got = self.reply(chat.raw) if self.reply else chat_completion("Final answer: 4", model=self.model)
        status, payload = got if isinstance(got, tuple) else (200, got)
        return Answer(status, payload)
