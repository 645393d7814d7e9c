"""Progress of a run when its output goes to a file or a pipe: a line on a timer, every `interval_s` seconds
whatever happens (a record finishing or not), one when an arm starts and one when it ends, and one at the end.
Each timed line has records done of the total, the rate of this session's new records, the time left at that
rate, and, when the run talks to a model, what the model client is doing: requests in flight (and how long the
oldest has waited), replies received and the completion tokens they carried.

    progress: 5/24 records (20.8%), 0.01 records/s, ETA 31m 40s, elapsed 8m 00s; model: 1 request in flight \
(oldest 2m 10s), 6 replies, 1,873 completion tokens received

The timer is a daemon thread, so a line comes even while the event loop waits on one long request. On a terminal
the runner shows a rich progress bar instead (harness.run.runner.make_progress).

It has the three calls the runner makes on rich's Progress (add_task, advance, start/stop) and `note` for the
arm lines.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

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


def activity_text(activity: dict[str, Any] | None) -> str:
    """The model client's part of a progress line (harness.model.client.ModelClient.activity)."""
    if not activity:
        return ""
    n = activity.get("in_flight", 0)
    oldest = activity.get("oldest_in_flight_s")
    waiting = f" (oldest {duration(oldest)})" if n and oldest is not None else ""
    replies = activity.get("replies", 0)
    cached = f", {activity['cache_hits']:,} from the cache" if activity.get("cache_hits") else ""
    return (
        f"; model: {n} request{'s' if n != 1 else ''} in flight{waiting}, {replies:,} repl"
        f"{'ies' if replies != 1 else 'y'}{cached}, {activity.get('completion_tokens', 0):,} completion "
        f"tokens received"
    )


class LineProgress:
    """Progress lines over every (arm, seed) task of a run, written to `stream` (default stderr): on a timer every
    `interval_s` seconds while started, plus `note` lines. `activity` (optional) returns the model client's
    counters for the timed lines."""

    def __init__(
        self,
        interval_s: float = DEFAULT_INTERVAL_S,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        activity: Callable[[], dict[str, Any] | None] | None = None,
    ):
        if interval_s <= 0:
            raise ValueError(f"progress interval must be > 0 seconds, got {interval_s}")
        self.interval_s = interval_s
        self.stream = stream
        self.clock = clock
        self.activity = activity
        self.total = 0
        self.planned = 0  # the whole run's records, when the runner says so up front (plan())
        self.resumed = 0
        self.new = 0
        self.started: float | None = None
        self.last_line: float | None = None
        self._lock = threading.RLock()
        self._stopped = threading.Event()
        self._timer: threading.Thread | None = None

    def plan(self, records: int) -> None:
        """The run's total records over every arm, known before the first arm starts (arms add their tasks as
        they start), so `done/total` and the ETA cover the whole run from the first line."""
        self.planned = records

    def add_task(self, description: str, total: int, completed: int = 0) -> int:
        self.total += total
        self.resumed += completed
        return 0

    def advance(self, task_id: int, amount: int = 1) -> None:
        self.new += amount
        self.tick()

    def tick(self) -> None:
        """A line if `interval_s` has passed since the last one (the timer thread calls this)."""
        with self._lock:  # the timer thread and the runner both tick: one line per interval
            now = self.clock()
            if self.last_line is None or now - self.last_line >= self.interval_s:
                self.emit(now)

    def start(self, timer: bool = True) -> None:
        """Start counting; with `timer`, a daemon thread ticks until stop()."""
        self.started = self.last_line = self.clock()
        if timer and self._timer is None:
            self._stopped.clear()
            self._timer = threading.Thread(target=self._run_timer, name="progress-timer", daemon=True)
            self._timer.start()

    def _run_timer(self) -> None:
        step = min(self.interval_s, 1.0)
        while not self._stopped.wait(step):
            self.tick()

    def stop(self) -> None:
        self._stopped.set()
        if self._timer is not None:
            self._timer.join(timeout=5)
            self._timer = None
        if self.started is not None and (self.new or self.total):
            self.emit(self.clock())

    def note(self, text: str) -> None:
        """A line of its own (an arm starting or ending), written now."""
        self._write(text)

    def line(self, now: float) -> str:
        done = self.resumed + self.new
        total = max(self.total, self.planned)
        elapsed = now - (self.started if self.started is not None else now)
        pct = f"{100.0 * done / total:.1f}%" if total else "-"
        resumed = f"; {self.resumed:,} resumed" if self.resumed else ""
        if self.new and elapsed > 0:
            rate = self.new / elapsed
            left = max(0, total - done)
            pace = f"{rate:.2f} records/s, ETA {duration(left / rate) if left else 'done'}"
        else:
            pace = "rate unknown yet, ETA unknown"
        model = activity_text(self.activity() if self.activity is not None else None)
        return f"progress: {done:,}/{total:,} records ({pct}{resumed}), {pace}, elapsed {duration(elapsed)}{model}"

    def emit(self, now: float) -> None:
        with self._lock:
            self.last_line = now
            self._write(self.line(now))

    def _write(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream or sys.stderr, flush=True)
