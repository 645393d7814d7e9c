"""The seeds of one arm share the case slots (`run_arms`): the next seed's cases fill the slots a seed's slow
last case leaves idle, the cases in flight never exceed the concurrency, each seed still gets its own complete
results file, and a unit's own error surfaces as itself. The model here is an in-process scripted fake client
(ScriptedSlowClient) that answers every prompt with a fixed final answer."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json

import pytest

from harness.arms.registry import ARMS
from harness.arms.spec import Decoding
from harness.data.dataset import load_dataset
from harness.model.client import ChatResult
from harness.run.runner import ConfigMismatchError, RunSpec, case_order, run_arms

SLOW_CASE_S = 1.5
ONE_SHOT = load_dataset("one-shot").cases


class ScriptedSlowClient:
    """A fake ChatClient: replies "Final answer: 1" at once, except to the first case of seed 42's order, which
    takes SLOW_CASE_S (a straggler at the head of the queue); counts the requests in flight."""

    def __init__(self):
        self.in_flight = 0
        self.peak = 0
        self.slow_note: str | None = None

    async def chat(self, messages, *, temperature, max_tokens, sample_index=0, seed=None, run_seed=None, headers=None):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            text = messages[-1]["content"]
            slow = run_seed == 42 and self.slow_note is not None and self.slow_note in text
            await asyncio.sleep(SLOW_CASE_S if slow else 0.01)
            return ChatResult(
                text="Final answer: 1",
                finish_reason="stop",
                truncated=False,
                prompt_tokens=10,
                completion_tokens=3,
                latency_ms=1.0,
                server_model="scripted-slow",
                retries=0,
                cached=False,
                request={"messages": messages},
                seed=seed,
            )
        finally:
            self.in_flight -= 1


def _ts(text):
    return dt.datetime.fromisoformat(text).timestamp()


def test_seeds_of_an_arm_overlap_within_the_concurrency(tmp_path):
    ds = load_dataset("bundled-test")
    cases = ds.cases[:20]
    client = ScriptedSlowClient()
    client.slow_note = case_order(cases, 42)[-1].note[:200]  # seed 42's last case is the straggler
    spec = RunSpec(model="scripted-slow", server_profile="plain", out_dir=tmp_path, concurrency=4, progress=False)
    summaries = asyncio.run(
        run_arms([ARMS["note-only"]], ds, [42, 43, 44], spec, client=client, cases=cases, one_shot=ONE_SHOT)
    )
    assert [s.seed for s in summaries] == [42, 43, 44]
    for s in summaries:
        recs = [json.loads(line) for line in open(s.path)]
        assert s.written == len(recs) == 20 and len({r["key"] for r in recs}) == 20 and s.infra_failed == 0
    assert client.peak <= 4  # one concurrency for the arm's seeds together
    first, last = summaries[0], summaries[-1]
    # the later seeds ran while seed 42 waited for its straggler: they finished before it did
    assert _ts(last.finished_at) < _ts(first.finished_at)
    assert first.wall_s >= SLOW_CASE_S
    total = _ts(max(s.finished_at for s in summaries)) - _ts(min(s.started_at for s in summaries))
    assert total < SLOW_CASE_S + 1.0  # one straggler's wait, not one per seed


def test_a_units_own_error_is_raised_as_itself(tmp_path):
    ds = load_dataset("bundled-test")
    cases = ds.cases[:4]
    spec = RunSpec(model="scripted-slow", server_profile="plain", out_dir=tmp_path, concurrency=2, progress=False)
    asyncio.run(
        run_arms([ARMS["note-only"]], ds, [42, 43], spec, client=ScriptedSlowClient(), cases=cases, one_shot=ONE_SHOT)
    )
    changed = dataclasses.replace(
        ARMS["note-only"], decoding=Decoding(max_tokens=7)
    )  # another configuration, same file
    with pytest.raises(ConfigMismatchError, match="another configuration"):
        asyncio.run(
            run_arms([changed], ds, [42, 43], spec, client=ScriptedSlowClient(), cases=cases, one_shot=ONE_SHOT)
        )
