"""Progress of a run when its output goes to a file or a pipe: one line every `interval_s` seconds (and one
at the end) with records done of the total, the rate of this session's new records and the time left at that
rate. On a terminal the runner shows a rich progress bar instead (harness.run.runner.make_progress).

    progress: 1,234/110,500 records (1.1%; 1,000 resumed), 3.2 records/s, ETA 9h 29m, elapsed 1m 13s

It has the three calls the runner makes on rich's Progress: add_task, advance, start/stop.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

DEFAULT_INTERVAL_S = 60.0


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    d, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    if d:
        return f"{d}d {h}h"
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"


class LineProgress:
    """Periodic progress lines over every (arm, seed) task of a run, written to `stream` (default stderr)."""

    def __init__(self, interval_s: float = DEFAULT_INTERVAL_S, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.interval_s = interval_s
        self.stream = stream
        self.clock = clock
        self.total = 0
        self.resumed = 0
        self.new = 0
        self.started: float | None = None
        self.last_line: float | None = None

    def add_task(self, description: str, total: int, completed: int = 0) -> int:
        self.total += total
        self.resumed += completed
        return 0

    def advance(self, task_id: int, amount: int = 1) -> None:
        self.new += amount
        now = self.clock()
        if self.last_line is None or now - self.last_line >= self.interval_s:
            self.emit(now)

    def start(self) -> None:
        self.started = self.last_line = self.clock()

    def stop(self) -> None:
        if self.started is not None and (self.new or self.total):
            self.emit(self.clock())

    def line(self, now: float) -> str:
        done = self.resumed + self.new
        elapsed = now - (self.started if self.started is not None else now)
        pct = f"{100.0 * done / self.total:.1f}%" if self.total else "-"
        resumed = f"; {self.resumed:,} resumed" if self.resumed else ""
        if self.new and elapsed > 0:
            rate = self.new / elapsed
            left = max(0, self.total - done)
            pace = f"{rate:.2f} records/s, ETA {duration(left / rate) if left else 'done'}"
        else:
            pace = "rate unknown yet, ETA unknown"
        return f"progress: {done:,}/{self.total:,} records ({pct}{resumed}), {pace}, elapsed {duration(elapsed)}"

    def emit(self, now: float) -> None:
        self.last_line = now
        print(self.line(now), file=self.stream or sys.stderr, flush=True)
