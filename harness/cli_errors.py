"""User-facing failures of the `harness` CLI as one or two lines: the problem and the fix.

`FriendlyGroup` is the Click group class of `harness`: an exception that `explain` recognises (model
server unreachable or not answering JSON, the container backend missing, an unwritable results
directory, foreign or corrupt result records, a corrupt response-cache entry) becomes a
`click.ClickException` (exit 1, `Error: ...`, no traceback); anything else propagates unchanged, so
a bug still shows its traceback. `check_out_dir` and `check_model_server` are the preflights
`harness run` makes before it writes anything.
"""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import click


class ModelServerError(RuntimeError):
    """The model server cannot be used: the message names the URL, the problem and the fix."""


def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """Create the results root if needed and prove it writable (a probe file, removed again)."""
    out = Path(out_dir)
    probe = out / f".write-probe-{os.getpid()}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise click.ClickException(f"cannot write results to {out} ({reason}: {exc.filename or out}); "
                                   "choose a writable directory with --out") from None
    return out


def check_model_server(base_url: str, timeout: float = 30.0) -> list[str]:
    """GET <base_url>/models and return the model ids, or raise ModelServerError saying what is wrong."""
    import httpx

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


def explain(exc: BaseException) -> str | None:
    """One or two lines for a known user-facing failure, else None."""
    from harness.client import CacheEntryError, ModelRequestError
    from harness.rescore import RescoreError
    from harness.stats.arrays import ResultsError
    from harness.store import StoreError

    if isinstance(exc, (ModelServerError, CacheEntryError)):
        return str(exc)
    if isinstance(exc, ModelRequestError):
        return (f"model request failed, run stopped (finished rows are kept; rerun to resume): {exc}")
    if type(exc).__name__ in ("ExecutorUnavailable", "ContainerBackendUnavailable"):
        return (f"the container executor backend is unavailable: {exc}\n"
                "Install docker and gVisor (make host executor-image) or pass --executor-backend process.")
    if isinstance(exc, (StoreError, ResultsError, RescoreError)):
        return (f"{exc}\nThe results root holds records that the kit did not write or that do not belong together: "
                "move the named file out (or fix it) and rerun; other result files are untouched.")
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EROFS, errno.ENOTDIR, errno.ENOSPC,
                                                  errno.EPERM):
        return (f"cannot write {exc.filename or 'a results file'} ({exc.strerror}); choose a writable --out or "
                "free space; finished rows are kept.")
    return None


class FriendlyGroup(click.Group):
    """A Click group that turns the failures `explain` knows into `Error: ...` lines and exit 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised unless explain() knows it
            message = explain(exc)
            if message is None:
                raise
            raise click.ClickException(message) from None
