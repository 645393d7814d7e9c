"""The machine a benchmark ran on and its load: the one snapshot every report's machine block is built from.

The machine may be shared: a figure is only read beside the load average taken before and after it. Each report
keeps the key names it has always written (`cores` or `cpus`, `loadavg_start`/`loadavg_end`, `uptime_before`/
`uptime_after`), so older reports and newer ones compare key for key; the values come from here.
"""

from __future__ import annotations

import os
import platform as _platform
import subprocess
from dataclasses import dataclass, field


def loadavg() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def uptime() -> str:
    """`uptime`'s line (time, up time, users, load)."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


@dataclass
class Machine:
    """Cores, platform, Python and architecture, and the load average when the measurement started
    (`finish()` takes it again at the end)."""

    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    platform: str = field(default_factory=_platform.platform)
    python: str = field(default_factory=_platform.python_version)
    arch: str = field(default_factory=_platform.machine)
    loadavg_start: list[float] = field(default_factory=loadavg)
    loadavg_end: list[float] | None = None

    def finish(self) -> Machine:
        self.loadavg_end = loadavg()
        return self
