"""Is the model server usable? One GET of <base_url>/models before a run writes anything.

`check_model_server` returns the listed model ids or raises `ModelServerError` whose message names the
URL, what is wrong (unreachable, timeout, HTTP error, non-JSON or not a model list) and the fix.
"""
from __future__ import annotations

import json

import httpx


class ModelServerError(RuntimeError):
    """The model server cannot be used: the message names the URL, the problem and the fix."""


def check_model_server(base_url: str, timeout: float = 30.0) -> list[str]:
    """GET <base_url>/models and return the model ids, or raise ModelServerError saying what is wrong."""
    url = f"{base_url.rstrip('/')}/models"
    start_hint = ("start it (scripts/model-server.sh start, or harness serve ...) or pass the right --base-url, "
                  "e.g. http://127.0.0.1:8088/v1")
    try:
        resp = httpx.get(url, timeout=timeout)
    except httpx.TimeoutException:
        raise ModelServerError(f"the model server at {base_url} did not answer GET /models within {timeout:.0f} s; "
                               f"check it is up and not overloaded, or {start_hint}") from None
    except httpx.TransportError as exc:
        raise ModelServerError(f"cannot reach a model server at {base_url} ({type(exc).__name__}: {exc}); "
                               f"{start_hint}") from None
    if resp.status_code >= 400:
        raise ModelServerError(f"the model server at {base_url} answered GET /models with HTTP {resp.status_code}; "
                               "--base-url must be an OpenAI-compatible API root ending in /v1") from None
    try:
        data = resp.json()
        ids = [m["id"] for m in data["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        body = " ".join(resp.text.split())[:80]
        kind = "non-JSON" if isinstance(exc, json.JSONDecodeError) else "JSON that is not a model list"
        raise ModelServerError(f"the server at {base_url} answered GET /models with {kind} ({body!r}); "
                               "--base-url must be an OpenAI-compatible API root ending in /v1") from None
    return ids
