"""Every model arm end to end against the real CPU model server (marker `model`).

Real bundled rows with the shortest notes (the server does ~50 prompt tokens/s on 2 cores), the real
executor (process backend), the real library and scorers. Open-book arithmetic and Program-Solve send
5 cases each with the paper's settings; every other arm sends 1 case. The sampled arms (vote,
recalled) run here with their output cap lowered to 256 tokens to bound CPU time; everything else
about them is the registry's definition."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from harness.arms.registry import ARMS
from harness.arms.solvers import TAXONOMY
from harness.data.dataset import load_dataset
from harness.run.runner import RunSpec, run_arms
from harness.scoring.scorers import SCORERS

pytestmark = pytest.mark.model

SHORT = ["24-951", "69-1028", "13-929", "61-968", "11-184"]  # shortest notes, mixed output kinds
COVERED = ["11-184"]  # QTc Bazett, a library calculator
SAMPLED_TEST_CAP = 256


@pytest.fixture(scope="module")
def env(model_server):
    from executor.api import Executor

    ds = load_dataset("bundled-test")
    with Executor(backend="process", workers=1) as ex:
        yield ds, ex


def run_arm(arm, case_ids, env, model_server, tmp_path):
    from harness.model.client import ModelClient

    ds, ex = env
    by = ds.by_case_id()

    async def go():
        async with ModelClient(
            model_server.base_url, model_server.model_id, profile="llama.cpp", cache_dir=tmp_path / "cache"
        ) as client:
            spec = RunSpec(model=model_server.model_id, server_profile="llama.cpp", out_dir=tmp_path, progress=False)
            (summary,) = await run_arms(
                [arm],
                ds,
                [42],
                spec,
                client=client,
                executor=ex,
                one_shot=load_dataset("one-shot").cases,
                cases=[by[c] for c in case_ids],
                all_cases=True,
            )
            return summary

    summary = asyncio.run(go())
    recs = [json.loads(line) for line in open(summary.path)]
    assert summary.written == len(case_ids) and len(recs) == len(case_ids)
    for r in recs:
        assert r["outcome"] in TAXONOMY
        assert r["scores"].keys() == set(SCORERS) and r["correct"] == r["scores"]["paper"]
        for req in r["request"]:
            assert req["model"] == model_server.model_id and req["repeat_penalty"] == 1.0
            assert set(req) <= {"model", "messages", "temperature", "max_tokens", "repeat_penalty", "seed"}
        if r["request"]:
            assert r["server_model"] == model_server.model_id and r["tokens"]["completion"] > 0
            assert len(r["replies"]) == len(r["request"]) == len(r["finish_reasons"])
            assert all(t == (f == "length") for t, f in zip(r["truncated"], r["finish_reasons"]))
    return recs


def test_open_book_five_real_cases(env, model_server, tmp_path):
    recs = run_arm(ARMS["open-book"], SHORT, env, model_server, tmp_path)
    assert all(len(r["request"]) == 1 and r["request"][0]["temperature"] == 0 for r in recs)
    assert all(r["outcome"] in {"answered", "unreadable_value"} for r in recs)


def test_program_solve_five_real_cases(env, model_server, tmp_path):
    recs = run_arm(ARMS["program-solve"], SHORT, env, model_server, tmp_path)
    for r in recs:
        assert r["request"][0]["max_tokens"] == 2048 and r["request"][0]["temperature"] == 0
        assert (r["program"] is None) == (r["outcome"] == "no_program")
        if r["executor"]:
            assert r["executor"]["backend"] == "process" and r["executor"]["outcome"]


@pytest.mark.parametrize(
    "name",
    [
        "note-only",
        "note-only-gold",
        "page-no-formula",
        "program-solve-syntax",
        "blind",
        "blind-repair",
        "formulate-tree",
        "blind-250",
        "formulate-tree-250",
        "note-only-250-nogold",
        "note-only-gold-250",
    ],
)
def test_greedy_arm_one_real_case(name, env, model_server, tmp_path):
    (rec,) = run_arm(ARMS[name], ["61-968"], env, model_server, tmp_path)
    assert all(q["temperature"] == 0 and "seed" not in q for q in rec["request"])
    expected_calls = {"blind-repair": (1, 2)}.get(name, (1, 1))
    assert expected_calls[0] <= len(rec["request"]) <= expected_calls[1]


@pytest.mark.parametrize("name", ["extract-lib", "extract-lib-250"])
def test_extract_lib_real_case(name, env, model_server, tmp_path):
    (rec,) = run_arm(ARMS[name], COVERED, env, model_server, tmp_path)
    assert len(rec["request"]) == 1 and rec["outcome"] in {"answered", "abstained"}
    assert '"qt' in rec["request"][0]["messages"][-1]["content"].lower()  # names the function's variables


def test_extract_lib_abstains_outside_library_without_call(env, model_server, tmp_path):
    (rec,) = run_arm(ARMS["extract-lib"], ["61-968"], env, model_server, tmp_path)
    assert rec["request"] == [] and rec["outcome"] == "abstained"


def test_extract_lib_recalled_real_case(env, model_server, tmp_path):
    arm = ARMS["extract-lib-recalled"].replace(
        decoding=dataclasses.replace(ARMS["extract-lib-recalled"].decoding, max_tokens=SAMPLED_TEST_CAP)
    )
    (rec,) = run_arm(arm, COVERED, env, model_server, tmp_path)
    sampled = [q for q in rec["request"] if q["temperature"] == 0.7]
    assert len(sampled) == 3 and len({q["seed"] for q in sampled}) == 3
    route = rec["detail"]["route"]
    assert len(rec["request"]) == (4 if route == "library" else 3)


@pytest.mark.parametrize("name, calls", [("blind-vote", (5, 5)), ("blind-repair-vote", (5, 8))])
def test_vote_arms_real_case(name, calls, env, model_server, tmp_path):
    arm = ARMS[name].replace(decoding=dataclasses.replace(ARMS[name].decoding, max_tokens=SAMPLED_TEST_CAP))
    (rec,) = run_arm(arm, COVERED, env, model_server, tmp_path)
    assert calls[0] <= len(rec["request"]) <= calls[1]
    assert rec["outcome"] in {"answered", "abstained", "unreadable_value"}
