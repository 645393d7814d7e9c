"""Both router arms end to end against the real CPU model server (marker `model`), then their risk-coverage
curve and tables from the stored records.

Real bundled rows, the real executor (process backend), library and scorers. To bound CPU time the arms
run with k = 2 programs, m = 2 and a 256-token cap (set through `with_options` and the registry's own
fields); the routing, provenance and record layout are the registry's. Cases: 13-929 (Estimated Due
Date, a library calculator: Gold-Solve answers without a call; Extract-Solve extracts first) and
24-951 (Steroid Conversion, outside the library: programs or abstention)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from harness.arms.options import with_options
from harness.arms.registry import ARMS
from harness.arms.solvers import TAXONOMY
from harness.data.conventions import resolve_convention
from harness.data.dataset import load_dataset
from harness.run.runner import RunSpec, run_arms

pytestmark = pytest.mark.model

CASES = ["13-929", "24-951"]
LIBRARY_CASE = "13-929"


@pytest.fixture(scope="module")
def env(model_server):
    from executor.api import Executor

    ds = load_dataset("bundled-test")
    with Executor(backend="process", workers=1) as ex:
        yield ds, ex


def run(arm, env, model_server, out):
    from harness.model.client import ModelClient

    ds, ex = env
    by = ds.by_case_id()

    async def go():
        async with ModelClient(
            model_server.base_url, model_server.model_id, profile="llama.cpp", cache_dir=out / "cache"
        ) as client:
            # the convention `harness run` resolves for this file by content (v1.0 rows: medcalc-v1.0)
            spec = RunSpec(
                model=model_server.model_id,
                server_profile="llama.cpp",
                out_dir=out,
                progress=False,
                convention=resolve_convention(ds).convention,
            )
            (summary,) = await run_arms(
                [arm], ds, [42], spec, client=client, executor=ex, cases=[by[c] for c in CASES], all_cases=True
            )
            return summary

    summary = asyncio.run(go())
    return [json.loads(line) for line in open(summary.path)]


@pytest.mark.parametrize("name", ["routed-gold", "routed-blind"])
def test_router_arm_end_to_end(name, env, model_server, tmp_path):
    arm = with_options(ARMS[name], k=2, m=2)
    arm = dataclasses.replace(arm, decoding=dataclasses.replace(arm.decoding, max_tokens=256))
    recs = {r["case_id"]: r for r in run(arm, env, model_server, tmp_path)}
    assert set(recs) == set(CASES)
    for r in recs.values():
        router = r["detail"]["router"]
        assert r["outcome"] in TAXONOMY and (router["k"], router["m"], router["temperature"]) == (2, 2, 0.7)
        assert router["route"] in {"library", "programs", "abstain"}
        if router["route"] == "library":
            assert r["outcome"] == "answered" and router["library"]["formula_id"] == 13
            assert router["library"]["function"].startswith("harness.calculators.")
        else:
            assert len(router["samples"]) == 2 and len(r["program"]) == 2
            assert sum(c["count"] for c in router["clusters"]) == sum(
                1 for s in router["samples"] if s["outcome"] == "answered"
            )
            programs = [q for q in r["request"] if q["temperature"] == 0.7]
            assert len(programs) == 2 and len({q["seed"] for q in programs}) == 2  # per-request seeds
            if router["route"] == "abstain":
                assert r["outcome"] == "abstained" and r["reason"] == router["abstain_reason"]
            else:
                assert router["agreeing"] >= 2 and r["answer"] == router["clusters"][0]["answer"]
                assert router["chosen_program"] == router["clusters"][0]["first"]
    lib = recs[LIBRARY_CASE]["detail"]["router"]
    if name == "routed-gold":
        assert lib["route"] == "library" and recs[LIBRARY_CASE]["request"] == []  # Gold-Solve: no call
        assert recs[LIBRARY_CASE]["correct"] is True
    else:
        assert lib["library"]["mode"] == "extract" and recs[LIBRARY_CASE]["request"][0]["temperature"] == 0
    outside = recs["24-951"]["detail"]["router"]
    assert outside["library"]["used"] is False and "not in the library" in outside["library"]["reason"]

    # the curve and the tables come from these stored records, no new calls
    from harness.analysis.stats.risk_coverage import curve, level_rows
    from harness.run.record import Record

    rows = level_rows(Record.from_dict(r) for r in recs.values())[(model_server.model_id, name)]
    c = curve(rows, draws=200, seed=1)
    assert [p.label for p in c.points] == ["library only", "m=2", "m=1"]
    default = next(p for p in c.points if p.label == "m=2")
    assert default.coverage == sum(r["outcome"] == "answered" for r in recs.values()) / 2
