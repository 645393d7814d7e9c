"""Arm registry (the paper's settings), solver logic, runner resume, and the `harness run`/`score` CLI.

Real components throughout: real bundled rows, the real library, the real executor (process backend).
The model is replaced only in the *_scripted_fake_server tests, for fault paths a real model cannot be
made to take on demand (a failing first program for repair, 5xx answers, sample disagreement)."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from harness.arms.registry import ARMS, get_arm
from harness.arms.solvers import majority, to_json_value, vote_key
from harness.cli.run import run as run_cmd
from harness.cli.run import score as score_cmd
from harness.cli.vocabulary import SeedsParam
from harness.data.dataset import load_dataset
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import chat_completion as completion
from harness.run.manifest import run_manifests
from harness.run.runner import RunSpec, case_order, run_arms

PAPER_ARMS = {
    "note-only",
    "note-only-gold",
    "page-no-formula",
    "open-book",
    "extract-lib",
    "gold-lib",
    "extract-lib-recalled",
    "program-solve",
    "program-solve-syntax",
    "blind",
    "blind-vote",
    "blind-repair",
    "blind-repair-vote",
    "formulate-tree",
    "extract-lib-250",
    "blind-250",
    "formulate-tree-250",
    "note-only-250-nogold",
    "note-only-gold-250",
}


def test_registry_has_every_paper_arm():
    assert set(ARMS) == PAPER_ARMS | {"routed-gold", "routed-blind"}  # + the live router (issue 11)
    assert get_arm("gold-solve") is ARMS["gold-lib"] and get_arm("blind") is ARMS["blind"]
    with pytest.raises(ValueError, match="unknown arm 'nope'; known arms:"):
        get_arm("nope")


def test_paper_settings():
    a = ARMS
    greedy = [n for n, arm in a.items() if arm.samples == 1 and arm.needs_model]
    assert all(a[n].temperature == 0 for n in greedy)
    assert all(a[n].temperature == 0.7 for n in ("blind-vote", "blind-repair-vote", "extract-lib-recalled"))
    assert a["program-solve"].max_tokens == a["program-solve-syntax"].max_tokens == 2048
    assert all(a[n].max_tokens == 1024 for n in ("blind", "blind-vote", "blind-repair", "blind-repair-vote"))
    assert a["note-only"].note_words == 120 and a["page-no-formula"].note_words == 250
    for whole in ("open-book", "program-solve", "blind", "extract-lib", "formulate-tree"):
        assert a[whole].note_words is None, whole
    for capped in ("extract-lib-250", "blind-250", "formulate-tree-250", "note-only-250-nogold"):
        assert a[capped].note_words == 250
    assert a["note-only-250-nogold"].gold_variables is False and a["note-only-gold"].gold_variables is True
    assert a["blind-vote"].samples == 5 and a["extract-lib-recalled"].samples == 3
    assert a["blind-repair-vote"].solver.repair_cap == 3 and a["blind-repair"].solver.config()["repair_cap"] == 1
    assert not a["gold-lib"].needs_model
    assert a["note-only"].example == "seeded" and a["extract-lib-recalled"].example == "fixed"


def test_config_hash_stable_and_distinct():
    hashes = {n: arm.config_hash() for n, arm in ARMS.items()}
    assert len(set(hashes.values())) == len(hashes)
    assert ARMS["blind"].config_hash() == hashes["blind"]


def test_case_order_is_fixed_by_seed():
    cases = load_dataset("bundled-test").cases
    a, b = case_order(cases, 42), case_order(cases, 43)
    assert a == case_order(list(reversed(cases)), 42) and a != b and sorted(map(id, a)) == sorted(map(id, b))


def test_seeds_option():
    seeds = SeedsParam()
    assert seeds.convert("42-46", None, None) == (42, 43, 44, 45, 46) and seeds.convert("43,42,43", None, None) == (
        42,
        43,
    )
    import click

    with pytest.raises(click.BadParameter, match="not a seed"):
        seeds.convert("4x", None, None)


def test_vote_majority_ties_to_first_sampled():
    assert majority([1.0, 2.0, 2.0, 1.0, 3.0]) == (1.0, 2)  # tie 2-2: first sampled wins
    assert majority([5.0, 7.0, 7.0, 7.0, 5.0]) == (7.0, 3)
    assert majority([40.970000000001, 40.97]) == (40.970000000001, 2)  # equal at 10 significant digits
    assert majority([]) is None
    assert vote_key("2021-01-02") != vote_key("2021-01-03")


def test_to_json_value():
    import datetime as dt

    assert to_json_value(dt.date(2021, 3, 4)) == ("2021-03-04", "date")
    assert to_json_value((4, 2)) == ([4, 2], "weeks_days")
    assert to_json_value(3.5) == (3.5, "number")
    for bad in (True, float("nan"), "x", (1.5, 2)):
        with pytest.raises(ValueError):
            to_json_value(bad)


# --- end to end without a model -------------------------------------------------------------------


def test_gold_lib_end_to_end_cli_resume_and_score(tmp_path):
    runner = CliRunner()
    args = ["--arm", "gold-lib", "--dataset", "bundled-test", "--seeds", "42", "--out", str(tmp_path), "--no-progress"]
    first = runner.invoke(run_cmd, args)
    assert first.exit_code == 0, first.output
    path = tmp_path / "library" / "gold-lib" / "seed42.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    ds = load_dataset("bundled-test")
    from harness.calculators import LIBRARY

    covered = [c for c in ds.cases if c.calculator_id in LIBRARY]
    assert len(recs) == len(ds.cases)
    answered = [r for r in recs if r["outcome"] == "answered"]
    assert len(answered) == len(covered) and all(r["correct"] for r in answered)  # Gold-Solve: 100% covered
    assert all(r["outcome"] == "abstained" and not r["correct"] for r in recs if r not in answered)
    assert {r["case_id"] for r in recs} == {c.case_id for c in ds.cases}
    assert [r["case_id"] for r in recs] == [c.case_id for c in case_order(ds.cases, 42)]
    second = runner.invoke(run_cmd, args)
    assert second.exit_code == 0 and f"0 new, {len(ds.cases)} resumed" in second.output
    assert len(path.read_text().splitlines()) == len(ds.cases)
    manifests = run_manifests(tmp_path)
    assert len(manifests) == 2 and "gold-lib" in manifests[0].arms
    scored = runner.invoke(score_cmd, ["--results", str(tmp_path), "--markdown", str(tmp_path / "s.md")])
    assert scored.exit_code == 0, scored.output
    assert f"| library | gold-lib | {len(ds.cases)} | {len(covered)} |" in (tmp_path / "s.md").read_text()


def test_score_detects_tampered_record(tmp_path):
    runner = CliRunner()
    runner.invoke(run_cmd, ["--arm", "gold-lib", "--dataset", "bundled-test", "--out", str(tmp_path), "--no-progress"])
    path = tmp_path / "library" / "gold-lib" / "seed42.jsonl"
    lines = path.read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line)["outcome"] == "answered")
    rec = json.loads(lines[i])
    rec["answer"] = rec["answer"] * 3 + 1 if isinstance(rec["answer"], (int, float)) else rec["answer"]
    lines[i] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    res = runner.invoke(score_cmd, ["--results", str(tmp_path)])
    # the verify stage's rescoring (harness.verify.rescore), naming file and line
    assert res.exit_code == 1 and f"MISMATCH {path}:{i + 1}: gold-lib seed 42 case {rec['case_id']}: " in res.output


def test_cli_bad_input_named(tmp_path):
    runner = CliRunner()
    res = runner.invoke(run_cmd, ["--arm", "blind", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "need a model" in res.output
    res = runner.invoke(run_cmd, ["--arm", "nope", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "unknown arm 'nope'" in res.output
    res = runner.invoke(run_cmd, ["--arm", "gold-lib", "--case", "999-1", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "999-1" in res.output


# --- fault paths with a scripted fake server (real executor, real rows) ------------------------------


@pytest.fixture(scope="module")
def process_executor():
    from executor.api import Executor

    with Executor(backend="process", workers=1) as ex:
        yield ex


def _run(arm_name, replies, cases, tmp_path, executor, seed=42):
    from harness.model.client import ModelClient

    script = [(200, completion(r), 0) if isinstance(r, str) else r for r in replies]

    async def go(url):
        async with ModelClient(url, "scripted-model", backoff=0.01) as client:
            ds = load_dataset("bundled-test")
            spec = RunSpec(model="scripted-model", server_profile="llama.cpp", out_dir=tmp_path, progress=False)
            (summary,) = await run_arms(
                [ARMS[arm_name]],
                ds,
                [seed],
                spec,
                client=client,
                executor=executor,
                one_shot=load_dataset("one-shot").cases,
                cases=cases,
                all_cases=True,
            )
            return summary

    with ScriptedServer(script) as srv:
        summary = asyncio.run(go(srv.url))
        requests = srv.requests
    recs = [json.loads(line) for line in open(summary.path)]
    return recs, requests


def _case(case_id):
    return load_dataset("bundled-test").by_case_id()[case_id]


def test_blind_repair_sends_executor_error_back_scripted_fake_server(tmp_path, process_executor):
    case = _case("61-968")  # target weight = 19.2 * 1.96^2
    recs, reqs = _run(
        "blind-repair",
        ["```python\nw = 19.2 * 1.96 ** 2\nprint(w)\n```", "```python\nanswer = 19.2 * 1.96 ** 2\n```"],
        [case],
        tmp_path,
        process_executor,
    )
    (rec,) = recs
    assert len(reqs) == 2 and rec["outcome"] == "answered" and rec["correct"] and rec["detail"]["repaired"]
    turn = reqs[1]["messages"]
    assert turn[:2] == reqs[0]["messages"] and turn[2]["role"] == "assistant"
    assert "did not assign a value to `answer`" in turn[3]["content"]  # the executor's own error
    assert "Target weight" not in turn[3]["content"] and reqs[1]["temperature"] == 0


def test_blind_repair_second_failure_keeps_taxonomy_scripted_fake_server(tmp_path, process_executor):
    recs, reqs = _run(
        "blind-repair",
        ["no code here", "```python\nimport os\nanswer = 1\n```"],
        [_case("61-968")],
        tmp_path,
        process_executor,
    )
    assert len(reqs) == 2 and "no Python code block" in reqs[1]["messages"][-1]["content"]
    assert recs[0]["outcome"] == "sandbox_rejection"


def test_blind_vote_majority_and_seeds_scripted_fake_server(tmp_path, process_executor):
    progs = [
        "```python\nanswer = 70.0\n```",
        "```python\nanswer = 73.7568\n```",
        "```python\nanswer = 73.7568\n```",
        "```python\nanswer = 70.0\n```",
        "oops",
    ]
    recs, reqs = _run("blind-vote", progs, [_case("61-968")], tmp_path, process_executor)
    (rec,) = recs
    assert len(reqs) == 5 and all(r["temperature"] == 0.7 for r in reqs)
    assert len({r["seed"] for r in reqs}) == 5  # one derived seed per sample
    assert rec["answer"] == 70.0 and not rec["correct"] and rec["detail"]["votes"] == 2  # 2-2 tie: first sampled


def test_blind_vote_abstains_when_none_runs_scripted_fake_server(tmp_path, process_executor):
    recs, reqs = _run("blind-vote", ["```python\nanswer = 1/0\n```"] * 5, [_case("61-968")], tmp_path, process_executor)
    assert len(reqs) == 5 and recs[0]["outcome"] == "abstained"


def test_blind_repair_vote_caps_repairs_scripted_fake_server(tmp_path, process_executor):
    recs, reqs = _run("blind-repair-vote", ["nothing"] * 8, [_case("61-968")], tmp_path, process_executor)
    assert len(reqs) == 8 and recs[0]["detail"]["repairs"] == 3 and recs[0]["outcome"] == "abstained"


def test_program_solve_outcomes_scripted_fake_server(tmp_path, process_executor):
    cases = [_case("61-968"), _case("2-1"), _case("69-1028")]
    ordered = case_order(cases, 42)
    replies = {
        "61-968": "```python\nanswer = 'heavy'\n```",
        "2-1": "Sorry.",
        "69-1028": "```python\nanswer = (0, 6)\n```",
    }
    recs, _ = _run("program-solve", [replies[c.case_id] for c in ordered], cases, tmp_path, process_executor)
    by = {r["case_id"]: r for r in recs}
    assert by["61-968"]["outcome"] == "wrong_return_kind" and by["2-1"]["outcome"] == "no_program"
    assert by["69-1028"]["outcome"] == "answered" and by["69-1028"]["correct"]


def test_retry_on_503_recorded_in_row_scripted_fake_server(tmp_path, process_executor):
    recs, reqs = _run(
        "blind",
        [(503, {"error": "busy"}, 0), "```python\nanswer = 73.7568\n```"],
        [_case("61-968")],
        tmp_path,
        process_executor,
    )
    assert len(reqs) == 2 and recs[0]["retries"] == 1 and recs[0]["correct"]


def test_formulate_tree_scripted_fake_server(tmp_path, process_executor):
    tree = {
        "calculation": "target weight",
        "formula": "bmi*h^2",
        "variables": {"bmi": 19.2, "h": 1.96},
        "missing": [],
        "tree": {"op": "*", "args": ["bmi", {"op": "^", "args": ["h", 2]}]},
    }
    cases = [_case("61-968"), _case("69-1028")]
    recs, reqs = _run("formulate-tree", [json.dumps(tree)], cases, tmp_path, process_executor)
    by = {r["case_id"]: r for r in recs}
    assert len(reqs) == 1  # the date case makes no call
    assert by["69-1028"]["outcome"] == "abstained" and by["69-1028"]["request"] == []
    assert by["61-968"]["outcome"] == "answered" and by["61-968"]["correct"]


def test_cli_4xx_is_the_cases_request_rejected_outcome_scripted_fake_server(tmp_path):
    """A 4xx no longer ends the run: the case is recorded as request_rejected, named on stderr (issue 20)."""
    with ScriptedServer([(400, {"error": "prompt too long"}, 0)]) as srv:
        res = CliRunner().invoke(
            run_cmd,
            [
                "--arm",
                "gold-lib",
                "--arm",
                "blind",
                "--case",
                "61-968",
                "--base-url",
                srv.url,
                "--model",
                "scripted-model",
                "--out",
                str(tmp_path),
                "--executor-backend",
                "process",
                "--no-progress",
            ],
        )
    assert res.exit_code == 0, res.output
    # the model-free arm ran first and is stored under the `library` model, not the server's
    assert (tmp_path / "library" / "gold-lib" / "seed42.jsonl").exists()
    (rec,) = [json.loads(x) for x in (tmp_path / "scripted-model" / "blind" / "seed42.jsonl").read_text().splitlines()]
    assert rec["outcome"] == "request_rejected" and "prompt too long" in rec["reason"] and not rec["correct"]
    assert "case 61-968: request rejected by the model server (HTTP 400)" in res.stderr
