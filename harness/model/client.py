"""OpenAI-compatible chat-completions client: bounded async concurrency, retries, on-disk response cache.

Job: send one chat request per model turn and return what came back with everything a results
record needs (text, finish reason, truncation flag, tokens, latency, the server's model id, retries).

Request body. Only `temperature` and `max_tokens` are set by the arm (as the paper's requests: "one chat
request per turn with only temperature and the output-token limit set"), plus the fields of a *server
profile* (for llama.cpp `repeat_penalty: 1.0`, so temperature 0 is plain greedy decoding); the profile is
recorded in the manifest and every request dict is stored with the record. Only under a profile that says
`send_seed` (`llama.cpp`, `vllm-seeded`: the explicit reproducible-sampling option) do sampled calls
(temperature > 0) carry a per-request `seed` derived from (run seed, case id, arm, sample index); the `vllm`
profile sends none, as the paper ("the seed never reaches the request"); greedy calls never carry one.

Retries. 5xx answers, timeouts and connection errors are retried with exponential backoff (at most
`max_retries` times); a 4xx answer is never retried and raises `ModelRejectedRequest` (a `ModelRequestError`)
naming status and body: the server refused this one request (e.g. prompt + max_tokens over the context), which
the runner records as that case's failure outcome instead of ending the run. A 200 whose body is not a chat
completion also raises.

API key. Sent as ``Authorization: Bearer <key>`` when there is one: the `api_key` argument, else the
environment variable `api_key_env` names (default OPENAI_API_KEY, as OpenAI's own clients read it). The key
is never recorded: not in the manifest (`describe`), the request dicts or the cache key. A 401 or 403 answer
raises `ModelAuthError` saying whether a key was sent and from which variable.

Cache. Each completed response is stored as one JSON file under `cache_dir`, keyed on the sha256 of
the complete request identity: base URL, model id and revision, the full request body (messages and
every sampling field), the sample index and the run seed. The run seed is part of the key so the five
seeds of a greedy arm remain five real repeated runs (the paper measures their agreement) instead of
copies; within one seed, a resumed run sends nothing twice.

HTTP. One ``aiohttp.ClientSession`` per event loop (created on first use, so a client built outside a loop
works), keep-alive connections up to the concurrency. Against the rehearsal server it costs about a tenth of
the client CPU per request that httpx did (``make bench-client``, issue 25); the synchronous probes in
``serving.py`` and ``preflight.py`` still use httpx. Timeouts: connecting 10 s, then ``timeout`` for each read
(a reply slower than that is a timeout and retried).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from harness.core.canonical_json import canonical_json
from harness.core.registry import Registry

CACHE_FORMAT = 1


@dataclass(frozen=True)
class ServerProfile:
    """Server-specific request fields, added to every request and recorded."""

    name: str
    extra: dict = field(default_factory=dict)
    send_seed: bool = True

    def describe(self) -> dict:
        return {"name": self.name, "extra": dict(self.extra), "send_seed": self.send_seed}


SERVER_PROFILES: Registry[ServerProfile] = Registry("server profile", ServerProfile)
for _profile in (
    # llama-cpp-python's server applied repeat_penalty 1.1 by default, even at temperature 0; llama.cpp's own server
    # defaults to 1.0 (sent anyway: the request says what it asks for).
    ServerProfile("llama.cpp", {"repeat_penalty": 1.0}),
    # vLLM: sampling defaults come from the server's --generation-config (harness.model.vllm); nothing extra,
    # and no seed: the paper's request. `vllm-seeded` is the explicit reproducible-sampling option
    # (SAMPLING_SEEDS=1): sampled requests carry a derived seed.
    ServerProfile("vllm", {}, send_seed=False),
    ServerProfile("vllm-seeded", {}, send_seed=True),
    # Any other OpenAI-compatible server, with nothing added at all.
    ServerProfile("plain", {}, send_seed=False),
):
    SERVER_PROFILES.register(_profile)
SERVER_PROFILES.freeze()


def get_profile(name: str) -> ServerProfile:
    return SERVER_PROFILES.lookup(name)


# The request's prompt family and the reply form it asks for (harness.arms.spec.PromptFamily), sent as headers
# with every chat request: the rehearsal server answers by the form; real servers ignore them.
PROMPT_FAMILY_HEADER = "X-Harness-Prompt-Family"
REPLY_FORM_HEADER = "X-Harness-Reply-Form"


def prompt_headers(family: str, reply_form: str) -> dict[str, str]:
    return {PROMPT_FAMILY_HEADER: family, REPLY_FORM_HEADER: reply_form}


def derive_seed(run_seed: int, case_id: str, arm: str, sample_index: int) -> int:
    """Per-request seed for sampled calls: a 31-bit integer from (run seed, case, arm, sample index)."""
    text = json.dumps([int(run_seed), str(case_id), str(arm), int(sample_index)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


class ModelRequestError(RuntimeError):
    """A request that failed for good: a 4xx answer, a malformed body, or retries exhausted."""


DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class ModelAuthError(ModelRequestError):
    """The server refused the request as unauthenticated (401) or forbidden (403): every request would fail."""


def api_key_from_env(api_key_env: str | None = None) -> str | None:
    """The API key in the environment variable `api_key_env` (default OPENAI_API_KEY), None when unset or empty."""
    return os.environ.get(api_key_env or DEFAULT_API_KEY_ENV) or None


def auth_problem(status: int, what: str, key_sent: bool, api_key_env: str | None) -> str:
    """The message for a 401/403 answer to `what` (e.g. "POST <url>"): what the status means and the fix."""
    var = api_key_env or DEFAULT_API_KEY_ENV
    meaning = "401 Unauthorized" if status == 401 else "403 Forbidden"
    if key_sent:
        fix = (
            f"the server did not accept the API key from ${var}"
            if status == 401
            else f"the API key from ${var} is not allowed to use this server or model"
        )
        return f"{what} answered {meaning}: {fix}; check the key (or name another variable with --api-key-env)"
    return (
        f"{what} answered {meaning}: the server wants an API key and none was sent (${var} is not set); "
        f"export {var}=<key>, or name another variable with --api-key-env"
    )


class ModelRejectedRequest(ModelRequestError):
    """The server answered 4xx: it refused this request (not a fault of the server or the network)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass
class ChatResult:
    text: str
    finish_reason: str | None
    truncated: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    server_model: str | None
    retries: int
    cached: bool
    request: dict
    seed: int | None

    def to_dict(self) -> dict:
        return asdict(self)


CACHED_FIELDS = set(ChatResult.__dataclass_fields__) - {"request", "seed", "cached"}


_canonical = canonical_json


class CacheEntryError(ValueError):
    """A response-cache file that is not a cache entry; the message names the file and the fix."""


class ResponseCache:
    """One JSON file per completed response, sharded by the first two hex digits of its key."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The entry for `key`, None when absent or of an older format. Entries are written whole
        (temporary file + rename), so an unreadable one was damaged afterwards: CacheEntryError."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CacheEntryError(self._damaged(path, f"not JSON: {exc}")) from None
        if not isinstance(data, dict):
            raise CacheEntryError(self._damaged(path, "not a JSON object"))
        if data.get("format") != CACHE_FORMAT:
            return None
        if not isinstance(data.get("result"), dict) or set(data["result"]) != CACHED_FIELDS:
            raise CacheEntryError(self._damaged(path, "its result fields are not a cached chat completion"))
        return data

    @staticmethod
    def _damaged(path: Path, why: str) -> str:
        return (
            f"corrupt response-cache entry {path} ({why}); delete that file (or rerun with --no-cache) "
            "and rerun: finished rows are kept"
        )

    def put(self, key: str, value: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(_canonical({**value, "format": CACHE_FORMAT}))
        os.replace(tmp, path)


class ModelClient:
    """Async client for one served model.

    >>> async with ModelClient("http://127.0.0.1:8088/v1", "qwen", profile="llama.cpp") as c:
    ...     r = await c.chat([{"role": "user", "content": "2+2?"}], temperature=0, max_tokens=16)
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        profile: str | ServerProfile = "llama.cpp",
        model_revision: str | None = None,
        concurrency: int = 4,
        timeout: float = 900.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        backoff_cap: float = 30.0,
        cache_dir: str | os.PathLike | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
    ):
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ValueError("a model id is required")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model = model
        self.model_revision = model_revision
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.cache = ResponseCache(cache_dir) if cache_dir else None
        api_key = api_key or api_key_from_env(api_key_env)  # module docstring; never stored or recorded
        self._api_key_env, self._key_sent = api_key_env, bool(api_key)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self._sem = asyncio.Semaphore(concurrency)
        self.sent = 0  # requests that reached the network (attempts)
        self.cache_hits = 0
        self.replies = 0  # completions received from the server (not from the cache)
        self.completion_tokens = 0  # their usage.completion_tokens, summed
        self._in_flight: dict[int, float] = {}  # attempt number -> perf_counter() when it was posted

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None and self._session_loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = self._session_loop = None

    def _http(self) -> aiohttp.ClientSession:
        """This event loop's session (a client used under a second ``asyncio.run`` gets a new one)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._session_loop is not loop or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                raise_for_status=False,
                timeout=aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=self.timeout),
                connector=aiohttp.TCPConnector(limit=self.concurrency, ttl_dns_cache=300),
            )
            self._session_loop = loop
        return self._session

    def activity(self) -> dict:
        """What the client is doing now, for progress lines (harness.run.progress): requests in flight and how long
        the oldest has waited, replies received and the completion tokens they carried, cache hits."""
        started = list(self._in_flight.values())
        return {
            "in_flight": len(started),
            "oldest_in_flight_s": (time.perf_counter() - min(started)) if started else None,
            "replies": self.replies,
            "completion_tokens": self.completion_tokens,
            "cache_hits": self.cache_hits,
        }

    def describe(self) -> dict:
        """Client settings for the run manifest."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "model_revision": self.model_revision,
            "profile": self.profile.describe(),
            "concurrency": self.concurrency,
            "timeout_s": self.timeout,
            "max_retries": self.max_retries,
            "cache_dir": str(self.cache.root) if self.cache else None,
        }

    def build_request(
        self, messages: list[dict], *, temperature: float, max_tokens: int, seed: int | None = None
    ) -> dict:
        """The exact JSON body sent: model, messages, temperature, max_tokens, profile extras, and the
        derived seed for sampled calls."""
        _check_messages(messages)
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if int(max_tokens) < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": int(max_tokens),
        }
        body.update(self.profile.extra)
        if temperature > 0 and seed is not None and self.profile.send_seed:
            body["seed"] = int(seed)
        return body

    def cache_key(self, body: dict, *, sample_index: int, run_seed: int | None) -> str:
        ident = {
            "base_url": self.base_url,
            "model": self.model,
            "revision": self.model_revision,
            "body": body,
            "sample_index": int(sample_index),
            "run_seed": run_seed,
        }
        return hashlib.sha256(_canonical(ident).encode()).hexdigest()

    async def chat(
        self,
        messages: list[dict],
        *,
        temperature: float,
        max_tokens: int,
        sample_index: int = 0,
        seed: int | None = None,
        run_seed: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> ChatResult:
        """One chat turn. `seed` (derived per request) is sent only for sampled calls; `run_seed` only
        enters the cache key; `headers` (prompt_headers) go with the request and enter neither the body nor
        the cache key."""
        body = self.build_request(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)
        sent_seed = body.get("seed")
        key = self.cache_key(body, sample_index=sample_index, run_seed=run_seed)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache_hits += 1
                return ChatResult(**{**hit["result"], "cached": True, "request": body, "seed": sent_seed})
        async with self._sem:
            result = await self._post_with_retries(body, headers)
        result.request = body
        result.seed = sent_seed
        if self.cache is not None:
            stored = result.to_dict()
            stored.pop("request"), stored.pop("seed"), stored.pop("cached")
            self.cache.put(key, {"key": key, "result": stored})
        return result

    async def _post_with_retries(self, body: dict, headers: dict[str, str] | None = None) -> ChatResult:
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            started = time.perf_counter()
            self.sent += 1
            ticket = self.sent
            self._in_flight[ticket] = started
            try:
                async with self._http().post(url, json=body, headers=headers) as resp:
                    status, raw = resp.status, await resp.read()
            except (TimeoutError, aiohttp.ClientError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if status < 400:
                    latency = (time.perf_counter() - started) * 1000.0
                    result = _parse_completion(status, raw, latency, attempt)
                    self.replies += 1
                    self.completion_tokens += result.completion_tokens or 0
                    return result
                text = raw.decode("utf-8", "replace")
                if status in (401, 403):
                    raise ModelAuthError(auth_problem(status, f"POST {url}", self._key_sent, self._api_key_env))
                if status < 500:
                    raise ModelRejectedRequest(
                        f"POST {url} answered {status} (client error, not retried): {text[:500]}", status
                    )
                failure = f"HTTP {status}: {text[:200]}"
            finally:  # answered, refused, failed or cancelled: no longer in flight
                self._in_flight.pop(ticket, None)
            if attempt >= self.max_retries:
                raise ModelRequestError(f"POST {url} failed after {attempt + 1} attempts; last: {failure}")
            delay = min(self.backoff_cap, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)
            attempt += 1
            await asyncio.sleep(delay)


def _check_messages(messages: list[dict]) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {role, content} dicts")
    for i, m in enumerate(messages):
        if (
            not isinstance(m, dict)
            or m.get("role") not in {"system", "user", "assistant"}
            or not isinstance(m.get("content"), str)
        ):
            raise ValueError(f"message {i} is not a {{role: system|user|assistant, content: str}} dict: {m!r}")


def _parse_completion(status: int, raw: bytes, latency_ms: float, retries: int) -> ChatResult:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModelRequestError(
            f"server answered {status} with a body that is not a chat completion "
            f"({type(exc).__name__}: {exc}): {raw[:300].decode('utf-8', 'replace')}"
        ) from None
    finish = choice.get("finish_reason")
    usage = data.get("usage") or {}
    return ChatResult(
        text=text,
        finish_reason=finish,
        truncated=(finish == "length"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_ms=round(latency_ms, 1),
        server_model=data.get("model"),
        retries=retries,
        cached=False,
        request={},
        seed=None,
    )
