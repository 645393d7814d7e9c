"""Progress of a long run whose output goes to a file: periodic lines with records done, rate and ETA."""
from __future__ import annotations

import io

from harness.run.progress import LineProgress, duration
from harness.run.runner import make_progress


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_lines_come_every_interval_with_done_rate_and_eta():
    clock, out = Clock(), io.StringIO()
    p = LineProgress(interval_s=60, stream=out, clock=clock)
    p.start()
    p.add_task("program-solve seed 42", total=1100, completed=100)
    p.add_task("program-solve seed 43", total=1100)
    for _ in range(30):            # 30 records in 30 s: no line before the interval
        clock.t += 1
        p.advance(0)
    assert out.getvalue() == ""
    for _ in range(30):
        clock.t += 1
        p.advance(0)
    lines = out.getvalue().splitlines()
    assert lines == ["progress: 160/2,200 records (7.3%; 100 resumed), 1.00 records/s, ETA 34m 00s, elapsed 1m 00s"]
    clock.t += 5
    p.stop()                       # a closing line when the run ends
    assert out.getvalue().splitlines()[-1].startswith("progress: 160/2,200 records")


def test_durations_read_at_a_glance():
    assert [duration(s) for s in (5, 75, 3 * 3600 + 65, 2 * 86400 + 7200)] == ["5s", "1m 15s", "3h 01m", "2d 2h"]


def test_not_on_a_terminal_the_runner_writes_lines_not_a_bar():
    assert isinstance(make_progress(True), LineProgress)      # pytest captures stdout: not a terminal
    assert make_progress(False) is None
