"""The one target type (bench/targets.py) and the one machine snapshot (bench/machine.py): the verdicts the
committed reports hold are what `Target` gives for their measured values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.machine import Machine
from bench.targets import Target

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("report", ["bench-executor-issue25.json", "bench-executor-fullsize-day.json"])
def test_the_executor_targets_give_the_committed_verdicts(report):
    from bench.executor import TARGETS

    committed = json.loads((DOCS / report).read_text())["targets"]
    assert set(committed) == set(TARGETS)
    for name, verdict in committed.items():
        assert TARGETS[name].verdict(verdict["measured"]) == verdict, name


@pytest.mark.parametrize("report", ["bench-rehearse-small-aiohttp.json", "bench-rehearse-fullsize.json"])
def test_the_rehearsal_targets_give_the_committed_verdicts(report):
    from bench.rehearsal import TARGETS

    doc = json.loads((DOCS / report).read_text())
    measured = {
        "program_requests_per_s": doc["run"]["program_requests_per_s"],
        "other_requests_per_s": doc["run"]["other_requests_per_s"],
        "harness_peak_rss_bytes": doc["run"]["harness_peak_rss_bytes"],
        "post_run_wall_s": doc["post_run_wall_s"],
    }
    assert {t.key: t.met(measured[t.name]) for t in TARGETS} == doc["targets"]


def test_a_missed_target_says_by_how_much_and_a_missing_figure_is_no_verdict():
    upper, lower = Target("seconds", "<=", 8.0), Target("speedup", ">=", 25.0)
    assert upper.verdict(53.6) == {"target": "\u2264 8.0", "measured": 53.6, "met": False, "off_by": 6.7}
    assert lower.verdict(5.0) == {"target": "\u2265 25.0", "measured": 5.0, "met": False, "off_by": 5.0}
    assert upper.verdict(8.0)["met"] is True and upper.verdict(8.0)["off_by"] is None
    assert Target("s", "<", 1.0).met(1.0) is False and upper.met(None) is None
    assert Target("rss", "<=", 2**30, label="rss<=1GiB").key == "rss<=1GiB"
    with pytest.raises(ValueError, match="operator '=<'"):
        Target("x", "=<", 1)


def test_the_machine_snapshot_takes_the_load_before_and_after():
    m = Machine()
    assert m.cores >= 1 and len(m.loadavg_start) == 3 and m.loadavg_end is None and m.python.count(".") == 2
    assert len(m.finish().loadavg_end) == 3
