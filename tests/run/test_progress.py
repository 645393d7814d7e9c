"""Progress of a long run whose output goes to a file or a pipe: timed lines with records done, rate, ETA and the
model client's activity (requests in flight, tokens received), arm start/end lines; and `harness run` piped
against a slow scripted FAKE model server (harness.model.rehearsal.server.ScriptedServer) keeps talking while a reply
is awaited."""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness.model.client import ModelClient
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import SCRIPTED_MODEL
from harness.model.rehearsal.sources import chat_completion as completion
from harness.run.progress import LineProgress, activity_text, duration
from harness.run.runner import make_progress
from tests.conftest import ROOT


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_lines_come_every_interval_with_done_rate_and_eta():
    clock, out = Clock(), io.StringIO()
    p = LineProgress(interval_s=60, stream=out, clock=clock)
    p.start(timer=False)
    p.add_task("program-solve seed 42", total=1100, completed=100)
    p.add_task("program-solve seed 43", total=1100)
    for _ in range(30):  # 30 records in 30 s: no line before the interval
        clock.t += 1
        p.advance(0)
    assert out.getvalue() == ""
    for _ in range(30):
        clock.t += 1
        p.advance(0)
    lines = out.getvalue().splitlines()
    assert lines == ["progress: 160/2,200 records (7.3%; 100 resumed), 1.00 records/s, ETA 34m 00s, elapsed 1m 00s"]
    clock.t += 5
    p.stop()  # a closing line when the run ends
    assert out.getvalue().splitlines()[-1].startswith("progress: 160/2,200 records")


def test_durations_read_at_a_glance():
    assert [duration(s) for s in (5, 75, 3 * 3600 + 65, 2 * 86400 + 7200)] == ["5s", "1m 15s", "3h 01m", "2d 2h"]


def test_not_on_a_terminal_the_runner_writes_lines_not_a_bar():
    assert isinstance(make_progress(True), LineProgress)  # pytest captures stdout: not a terminal
    assert make_progress(False) is None


def test_the_timer_writes_lines_while_nothing_completes():
    """No record finishes, no advance() is called: the timer thread alone keeps writing, and each line carries
    the model client's counters."""
    out = io.StringIO()
    p = LineProgress(
        interval_s=0.1,
        stream=out,
        activity=lambda: {"in_flight": 1, "oldest_in_flight_s": 75.0, "replies": 3, "completion_tokens": 1234},
    )
    p.add_task("program-solve seed 42", total=8)
    p.start()
    time.sleep(0.55)
    p.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 4, lines
    assert all(line.startswith("progress: 0/8 records") for line in lines)
    assert lines[0].endswith(
        "; model: 1 request in flight (oldest 1m 15s), 3 replies, 1,234 completion tokens received"
    )


def test_activity_text_says_idle_and_cache_hits_plainly():
    assert activity_text(None) == ""
    assert (
        activity_text(
            {"in_flight": 0, "oldest_in_flight_s": None, "replies": 1, "completion_tokens": 7, "cache_hits": 2}
        )
        == "; model: 0 requests in flight, 1 reply, 2 from the cache, 7 completion tokens received"
    )


def test_interval_must_be_positive():
    import pytest

    with pytest.raises(ValueError, match="progress interval must be > 0"):
        LineProgress(interval_s=0)


def test_client_counts_requests_in_flight_and_tokens_received_slow_fake_server():
    """ModelClient.activity against the scripted FAKE server delaying its reply: one request in flight while it
    waits, then none, one reply and the reply's completion tokens."""
    seen = []

    async def scenario(url):
        async with ModelClient(url, "scripted-model", profile="plain") as client:
            task = asyncio.ensure_future(
                client.chat([{"role": "user", "content": "2+2?"}], temperature=0, max_tokens=8)
            )
            await asyncio.sleep(0.4)
            seen.append(client.activity())
            await task
            seen.append(client.activity())

    with ScriptedServer([(200, completion("Final answer: 4", completion_tokens=37), 1.0)]) as srv:
        asyncio.run(scenario(srv.url))
    waiting, done = seen
    assert waiting["in_flight"] == 1 and waiting["oldest_in_flight_s"] >= 0.3 and waiting["replies"] == 0
    assert done == {"in_flight": 0, "oldest_in_flight_s": None, "replies": 1, "completion_tokens": 37, "cache_hits": 0}


def test_piped_run_keeps_talking_while_a_slow_reply_is_awaited_slow_fake_server(tmp_path):
    """`harness run` with stderr to a pipe, against the scripted FAKE server taking 2.5 s per reply, with a
    0.5 s progress interval: an arm start line, timed lines while the first reply is awaited (no record has
    finished yet) naming the request in flight, and an arm end line with the arm's count; no gap between lines
    much longer than the interval."""
    replies = [(200, completion("Final answer: 4", completion_tokens=11), 2.5) for _ in range(2)]
    with ScriptedServer(replies) as srv:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "harness"),
                "run",
                "--arm",
                "open-book",
                "--dataset",
                "bundled-test",
                "--limit",
                "2",
                "--seeds",
                "42",
                "--base-url",
                srv.url,
                "--model",
                SCRIPTED_MODEL,
                "--server-profile",
                "plain",
                "--executor-backend",
                "process",
                "--out",
                str(tmp_path / "res"),
                "--progress-interval",
                "0.5",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        stamped: list[tuple[float, str]] = []
        reader = threading.Thread(
            target=lambda: stamped.extend((time.monotonic(), line.rstrip("\n")) for line in proc.stderr)
        )
        reader.start()
        stdout = proc.stdout.read()
        proc.wait(timeout=120)
        reader.join(timeout=10)
    assert proc.returncode == 0, stdout + "\n".join(t for _, t in stamped)
    text = [t for _, t in stamped]
    start = next(i for i, t in enumerate(text) if t.startswith("arm open-book: starting, 2 case run(s)"))
    end = next(i for i, t in enumerate(text) if t.startswith("arm open-book: done in"))
    timed = [t for t in text[start:end] if t.startswith("progress: ")]
    assert any(t.startswith("progress: 0/2 records") and "1 request in flight" in t for t in timed), text
    assert any(
        t.startswith("progress: 1/2 records") and "1 reply, 11 completion tokens received" in t for t in timed
    ), text
    assert len(timed) >= 6, text  # about 5 s of waiting at one line per 0.5 s
    assert text[end].endswith("(answered 2)") or "answered 2" in text[end]
    times = [s for s, t in stamped[start : end + 1]]
    assert max(b - a for a, b in itertools.pairwise(times)) < 2.0, stamped


def test_the_whole_runs_total_is_known_from_the_first_line():
    """Arms add their tasks as they start; the runner's plan() makes the first line say the whole run's total."""
    clock, out = Clock(), io.StringIO()
    p = LineProgress(interval_s=60, stream=out, clock=clock)
    p.plan(24)
    p.start(timer=False)
    p.add_task("open-book seed 42", total=8)
    clock.t += 60
    p.tick()
    assert out.getvalue().startswith("progress: 0/24 records (0.0%)")
