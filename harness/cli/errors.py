"""User-facing failures of the `harness` CLI as one or two lines: the problem and the fix.

`FriendlyGroup` is the Click group class of `harness`: an exception that `explain` recognises (model
server unreachable or not answering JSON, the container backend missing, an unwritable results
directory, foreign or corrupt result records, a corrupt response-cache entry) becomes a
`click.ClickException` (exit 1, `Error: ...`, no traceback); anything else propagates unchanged, so
a bug still shows its traceback. `check_out_dir` is the preflight `harness run` makes before it writes
anything (the model server's is harness.model.preflight, called by the run session).
"""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path
from typing import Any, TextIO

import click


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
        raise click.ClickException(
            f"cannot write results to {out} ({reason}: {exc.filename or out}); choose a writable directory with --out"
        ) from None
    return out


# Commands that write result records: after a failed write, the rows they finished are still there.
WRITES_RESULTS = frozenset({"run", "serve", "shard", "merge"})


def explain(exc: BaseException, command: str | None = None) -> str | None:
    """One or two lines for a known user-facing failure of `harness <command>`, else None."""
    # imported here, when something failed: importing them up front would load the statistics (scipy) into every
    # `harness` invocation (harness/cli/__init__.py loads a command's own module only)
    from harness.analysis.stats.arrays import NoRecordsError, ResultsError
    from harness.model.client import CacheEntryError, ModelRequestError
    from harness.model.preflight import ModelServerError
    from harness.run.store import StoreError
    from harness.verify.rescore import RescoreError

    if isinstance(exc, NoRecordsError):
        return str(exc)
    if isinstance(exc, (ModelServerError, CacheEntryError)):
        return str(exc)
    if isinstance(exc, ModelRequestError):
        return f"model request failed, run stopped (finished rows are kept; rerun to resume): {exc}"
    if type(exc).__name__ in ("ExecutorUnavailable", "ContainerBackendUnavailable"):
        return (
            f"the container executor backend is unavailable: {exc}\n"
            "Install docker and gVisor (make host executor-image) or pass --executor-backend process."
        )
    if isinstance(exc, (StoreError, ResultsError, RescoreError)):
        return (
            f"{exc}\nThe results root holds records that the kit did not write or that do not belong together: "
            "move the named file out (or fix it) and rerun; other result files are untouched."
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EROFS, errno.ENOTDIR, errno.ENOSPC, errno.EPERM):
        kept = (
            "finished rows are kept"
            if command is None or command in WRITES_RESULTS
            else "nothing under --results was changed"
        )
        return (
            f"cannot write {exc.filename or 'a results file'} ({exc.strerror}); choose a writable --out or "
            f"free space; {kept}."
        )
    return None


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """The kit's own data warnings as one line, `warning: <message>` (the message names the file); Python's
    default display would add the warning's source file and echo a line of the kit's code."""
    from harness.run.store import TornLineWarning

    if issubclass(category, TornLineWarning):
        click.echo(f"warning: {message}", err=True)
        return
    _DEFAULT_SHOWWARNING(message, category, filename, lineno, file, line)


_DEFAULT_SHOWWARNING = warnings.showwarning


class FriendlyGroup(click.Group):
    """A Click group that turns the failures `explain` knows into `Error: ...` lines and exit 1, and shows the
    kit's data warnings as one line each."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised unless explain() knows it
            message = explain(exc, ctx.invoked_subcommand)
            if message is None:
                raise
            raise click.ClickException(message) from None
