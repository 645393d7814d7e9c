"""What the kit's install scripts recorded about this host: the runsc runtime they installed (release, platform
chosen by a measured self-test), which the executor's preflight and the reproduce manifest copy."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.typed_json import TypedJsonError, from_json

RUNSC_RECORD = Path("/etc/docker/mathsolver-runsc.json")  # written by scripts/install-host.sh

__all__ = ["RUNSC_RECORD", "RunscRecord", "runsc_host_record", "runsc_record"]


@dataclass(frozen=True)
class RunscRecord:
    """The runsc runtime scripts/install-host.sh installed (its printf at step 3): the binary, its release, the
    gVisor platform chosen and how (a measured self-test, seconds per platform), the host's OS."""

    runsc: str
    release: str
    platform: str
    chosen_by: str
    self_test_s: dict[str, float | None]  # None: the platform failed its self-test
    os: str


def runsc_record() -> dict[str, Any]:
    """The record scripts/install-host.sh wrote ({} when it did not run on this host)."""
    try:
        record: dict[str, Any] = json.loads(RUNSC_RECORD.read_text())
        return record
    except (OSError, ValueError):
        return {}


def runsc_host_record() -> RunscRecord | None:
    """The record, typed; None when the script did not run on this host or wrote another shape (an older kit's)."""
    try:
        return from_json(RunscRecord, runsc_record()) if runsc_record() else None
    except TypedJsonError:
        return None
