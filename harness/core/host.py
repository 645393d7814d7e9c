"""What the kit's install scripts recorded about this host: the runsc runtime they installed (release, platform
chosen by a measured self-test), which the executor's preflight and the reproduce manifest copy."""
from __future__ import annotations

import json
from pathlib import Path

RUNSC_RECORD = Path("/etc/docker/mathsolver-runsc.json")   # written by scripts/install-host.sh


def runsc_record() -> dict:
    """The record scripts/install-host.sh wrote ({} when it did not run on this host)."""
    try:
        return json.loads(RUNSC_RECORD.read_text())
    except (OSError, ValueError):
        return {}
