"""Is the model server usable? One GET of <base_url>/models before a run writes anything.

`check_model_server` returns the listed model ids or raises `ModelServerError` whose message names the
URL, what is wrong (unreachable, timeout, HTTP error, non-JSON or not a model list) and the fix.
"""

from __future__ import annotations

import json

import httpx

from harness.model.client import api_key_from_env, auth_problem


class ModelServerError(RuntimeError):
    """The model server cannot be used: the message names the URL, the problem and the fix."""


def check_model_server(base_url: str, timeout: float = 30.0, *, api_key_env: str | None = None) -> list[str]:
    """GET <base_url>/models and return the model ids, or raise ModelServerError saying what is wrong. The API
    key in $`api_key_env` (default OPENAI_API_KEY) is sent when set, as the client sends it."""
    return [m["id"] for m in listed_models(base_url, timeout, api_key_env=api_key_env)]


def listed_models(base_url: str, timeout: float = 30.0, *, api_key_env: str | None = None) -> list[dict]:
    """The entries of GET <base_url>/models as the server lists them (each with its `id`; vLLM adds `root`,
    `max_model_len`, `owned_by`), or ModelServerError (check_model_server)."""
    url = f"{base_url.rstrip('/')}/models"
    start_hint = (
        "start it (scripts/model-server.sh start, or harness serve ...) or pass the right --base-url, "
        "e.g. http://127.0.0.1:8088/v1"
    )
    try:
        key = api_key_from_env(api_key_env)
        resp = httpx.get(url, timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else None)
    except httpx.TimeoutException:
        raise ModelServerError(
            f"the model server at {base_url} did not answer GET /models within {timeout:.0f} s; "
            f"check it is up and not overloaded, or {start_hint}"
        ) from None
    except httpx.TransportError as exc:
        raise ModelServerError(
            f"cannot reach a model server at {base_url} ({type(exc).__name__}: {exc}); {start_hint}"
        ) from None
    if resp.status_code in (401, 403):
        raise ModelServerError(
            auth_problem(resp.status_code, f"the model server at {base_url}: GET /models", key is not None, api_key_env)
        )
    if resp.status_code >= 400:
        raise ModelServerError(
            f"the model server at {base_url} answered GET /models with HTTP {resp.status_code}; "
            "--base-url must be an OpenAI-compatible API root ending in /v1"
        ) from None
    try:
        entries = [m for m in resp.json()["data"] if isinstance(m["id"], str)]
    except (ValueError, KeyError, TypeError) as exc:
        body = " ".join(resp.text.split())[:80]
        kind = "non-JSON" if isinstance(exc, json.JSONDecodeError) else "JSON that is not a model list"
        raise ModelServerError(
            f"the server at {base_url} answered GET /models with {kind} ({body!r}); "
            "--base-url must be an OpenAI-compatible API root ending in /v1"
        ) from None
    return entries
