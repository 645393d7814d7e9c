"""ARMS=all gives each model the arms the paper reports for it: every paper arm for the Qwen models, only
Program-Solve, Open-book arithmetic and the Extract-Solve library for Mistral-7B and Phi-3.5-mini (the paper's
"Other checkpoints" rows); ARMS=every gives every model every paper arm; named arms apply to every model. The
plan's counts and time, and the shard plan's units, follow the same per-model sets."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.arms.registry import ARMS, other_checkpoint_arms, paper_arms
from harness.reproduce.config import (
    ReproduceConfig,
    ReproduceError,
    model_arm_names,
    resolve_arms,
)
from harness.reproduce.plan import build_plan, format_plan
from harness.reproduce.shard import build_shard_plan

PAPER_MODEL_ARMS = {n for n in paper_arms() if ARMS[n].needs_model}
OTHER_CHECKPOINT_ARMS = other_checkpoint_arms()


def test_all_means_the_paper_arms_of_each_model():
    assert model_arm_names(["all"], "qwen2.5-7b") == PAPER_MODEL_ARMS
    assert (
        model_arm_names(["all"], "mistral-7b")
        == set(OTHER_CHECKPOINT_ARMS)
        == {"program-solve", "open-book", "extract-lib"}
    )
    assert model_arm_names(["all"], "phi-3.5-mini") == set(OTHER_CHECKPOINT_ARMS)
    assert model_arm_names(["all"], "rehearsal-alpha") == PAPER_MODEL_ARMS  # unlisted models: every arm
    assert model_arm_names(["every"], "mistral-7b") == PAPER_MODEL_ARMS
    assert model_arm_names(["blind"], "mistral-7b") == {"blind"}  # named arms: for every model
    assert {a.name for a in resolve_arms(["all"], "mistral-7b")} >= {"gold-lib"}  # model-free arms stay
    with pytest.raises(ReproduceError, match="unknown arm.*'every'"):
        resolve_arms(["no-such-arm"])


def _plan(**kw):
    cfg = ReproduceConfig(
        **{
            "launcher": "vllm",
            "models": ["all"],
            "seeds": [42, 43, 44, 45, 46],
            "dataset": "verified",
            "out": Path("/nonexistent"),
            **kw,
        }
    )
    return build_plan(cfg)


def test_plan_counts_each_model_over_its_own_arms():
    plan = _plan()
    by_key = {m.key: m for m in plan.models}
    rows = {a.arm: a for a in plan.arms}
    for key in ("mistral-7b", "phi-3.5-mini"):
        assert set(by_key[key].arms) == set(OTHER_CHECKPOINT_ARMS)
        assert by_key[key].requests.max == sum(rows[a].requests.max for a in OTHER_CHECKPOINT_ARMS)
    for key in ("qwen2.5-7b", "qwen2.5-32b-awq"):
        assert by_key[key].requests == plan.requests_per_model
    assert plan.requests_all_models.max == sum(m.requests.max for m in plan.models)
    assert plan.requests_all_models.max < 4 * plan.requests_per_model.max
    # the time of a three-arm model is well below a every-arm model's on the same throughput assumption
    every = {m.key: m for m in _plan(arms=["every"]).models}
    assert by_key["phi-3.5-mini"].estimate_s.max < every["phi-3.5-mini"].estimate_s.max
    assert by_key["qwen2.5-7b"].estimate_s == every["qwen2.5-7b"].estimate_s
    text = format_plan(plan)
    assert "mistral-7b" in text and "ARMS=every" in text
    assert "all 4 model(s)" in text and f"{plan.requests_all_models.max:,}" in text


def test_shard_plan_gives_each_model_its_own_arms():
    cfg = ReproduceConfig(
        launcher="vllm", models=["qwen2.5-7b", "mistral-7b"], seeds=[42], dataset="verified", out=Path("/nonexistent")
    )
    plan = build_shard_plan(cfg, 4, stand_in=True)
    arms = Counter()
    for sh in plan.shards:
        for sl in sh.slices:
            arms.update((sl.model_key, a) for a in sl.arms)
    assert {a for k, a in arms if k == "mistral-7b"} == set(OTHER_CHECKPOINT_ARMS)
    assert {a for k, a in arms if k == "qwen2.5-7b"} == PAPER_MODEL_ARMS
