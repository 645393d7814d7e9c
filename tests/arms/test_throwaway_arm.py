"""Adding an arm with a new prompt family is one spec entry, one solver and one prompt family (with its template):
all defined in this file alone, registered with `harness.arms.registry.registered` and
`harness.arms.families.register_family`, and the arm then runs end to end against the rehearsal server (a
scripted FAKE OpenAI-compatible server, harness.model.rehearsal.server, which serves the new family from the
reply form the client sends, without a change), rescores under `harness verify`'s rescoring, is counted by the
reproduce plan from its solver's request bounds, and shows in the statistics arrays and tables built from its
records under its own label."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from harness.analysis.stats.arrays import load_arrays
from harness.analysis.stats.labels import arm_label
from harness.analysis.tables import build_all
from harness.arms import prompts
from harness.arms.families import PROMPT_FAMILIES, register_family
from harness.arms.registry import ARMS, arm_order, ladder, registered
from harness.arms.solvers import SOLVERS, Context, Solution, Solver
from harness.arms.solvers.base import ABSTAINED, value_solution
from harness.arms.spec import Arm, Decoding, Display, PromptFamily
from harness.cli.run import run as run_cmd
from harness.cli.run import score as score_cmd
from harness.data.dataset import Case, load_dataset
from harness.model import rehearsal as rehearsal_package
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.plan import build_plan
from harness.scoring.scorers import score_reply
from harness.verify.verification import verify

NAME = "throwaway-agree-twice"
N_CASES = 12


class AgreeTwiceSolver(Solver):
    """Two sampled Note-only replies; the value when both parse to the same number or date, else abstain.
    Value-scored (the runner and the rescoring score the returned value, not a reply)."""

    name = "throwaway-agree-twice"
    completion_assumption = 77

    async def solve(self, ctx: Context) -> Solution:
        messages = ctx.prompt()
        parsed = []
        for i in range(2):
            r = await ctx.chat(messages, temperature=ctx.arm.temperature, max_tokens=ctx.arm.max_tokens, sample_index=i)
            parsed.append(score_reply(r.text, ctx.case, "paper").parsed)
        if parsed[0] is None or parsed[0] != parsed[1]:
            return Solution(outcome=ABSTAINED, reason="the two replies disagree", detail={"parsed": repr(parsed)})
        return value_solution(parsed[0], {"agreed": True})

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return 2, 2


# A new prompt family: a terse zero-shot request for a final-answer line (no example, no variables).
TEMPLATE_NAME = "throwaway_terse"
TEMPLATE = """\
Answer the question about this patient without explanation.
{answer_format}

Patient note: {note}

Question: {question}"""


def build_terse(arm: Arm, ctx: Context) -> list[dict]:
    return prompts.messages(
        TEMPLATE.format(
            answer_format=prompts.ANSWER_FORMAT,
            question=ctx.case.question,
            note=prompts.first_words(ctx.case.note, arm.note_words),
        )
    )


FAMILY = PromptFamily("throwaway-terse", "reply", (TEMPLATE_NAME, "answer_format"), build_terse)
SOLVER = AgreeTwiceSolver()
THROWAWAY = Arm(
    NAME,
    "Throwaway agree-twice",
    SOLVER,
    FAMILY,
    Decoding(temperature=0.7, max_tokens=256, samples=2),
    note_words=120,
    notes="defined in this test only",
    display=Display("Throwaway agree-twice", "Throwaway", 99, ("recalled", "extracted", "model")),
)


@pytest.fixture
def throwaway(monkeypatch):
    monkeypatch.setitem(prompts.TEMPLATES, TEMPLATE_NAME, TEMPLATE)
    register_family(FAMILY)
    try:
        with registered(THROWAWAY, solvers=[AgreeTwiceSolver]):
            yield THROWAWAY
    finally:
        PROMPT_FAMILIES.unregister(FAMILY.name)


def test_throwaway_arm_runs_rescores_plans_and_tabulates(throwaway, rehearsal_server, tmp_path):
    assert arm_order()[-1] == NAME and NAME in ladder() and arm_label(NAME) == "Throwaway agree-twice"
    assert ARMS[NAME].solver is SOLVER and ARMS[NAME].prompt is PROMPT_FAMILIES[FAMILY.name]
    out = tmp_path / "results"
    served_before = rehearsal_server.stats.reply_forms.get("reply", 0)
    r = CliRunner().invoke(
        run_cmd,
        [
            "--arm",
            NAME,
            "--dataset",
            "bundled-test",
            "--seeds",
            "42,43",
            "--out",
            str(out),
            "--base-url",
            rehearsal_server.base_url,
            "--model",
            "rehearsal-alpha",
            "--server-profile",
            "vllm",
            "--limit",
            str(N_CASES),
            "--no-progress",
            "--no-cache",
        ],
    )
    assert r.exit_code == 0, r.output
    files = sorted(out.glob(f"rehearsal-alpha/{NAME}/seed*.jsonl"))
    assert [f.name for f in files] == ["seed42.jsonl", "seed43.jsonl"]
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert len(rows) == 2 * N_CASES and {row["arm"] for row in rows} == {NAME}
    assert {row["arm_config_hash"] for row in rows} == {throwaway.config_hash()}
    assert all(row["synthetic"] is True for row in rows)  # the fake server's output is labelled as such
    assert all(len(row["request"]) == 2 for row in rows)  # what request_bounds promises the plan
    assert all(row["request"][0]["messages"][1]["content"].startswith("Answer the question about") for row in rows)
    # served by the reply form the client sent with each request (the server has no code for this family)
    assert rehearsal_server.stats.reply_forms.get("reply", 0) - served_before == 2 * 2 * N_CASES
    rehearsal_sources = Path(rehearsal_package.__file__).parent.glob("*.py")
    assert not [p.name for p in rehearsal_sources if FAMILY.name in p.read_text() or TEMPLATE_NAME in p.read_text()]
    assert {row["outcome"] for row in rows} <= {"answered", "abstained", "unreadable_value"}
    assert any(row["outcome"] == "answered" for row in rows) and any(row["outcome"] == "abstained" for row in rows)

    # rescoring: `harness verify`'s and `harness score`'s, which ask the arm's solver how to rescore a row
    assert verify(out, tables=False).problems == []  # no mixing, no convention problem, no rescoring mismatch
    scored = CliRunner().invoke(score_cmd, ["--results", str(out), "--arm", NAME])
    assert scored.exit_code == 0, scored.output
    assert NAME in scored.output
    tampered = tmp_path / "tampered"
    (tampered / "rehearsal-alpha" / NAME).mkdir(parents=True)
    bad = [dict(row) for row in rows if row["seed"] == 42]
    flip = next(i for i, row in enumerate(bad) if row["outcome"] == "answered")
    bad[flip]["correct"] = not bad[flip]["correct"]
    (tampered / "rehearsal-alpha" / NAME / "seed42.jsonl").write_text("".join(json.dumps(b) + "\n" for b in bad))
    problems = verify(tampered, tables=False).problems
    assert len(problems) == 1 and bad[flip]["case_id"] in problems[0]

    # the reproduce plan: request counts from the solver's bounds, tokens measured from the stored rows
    plan = build_plan(
        ReproduceConfig(arms=[NAME], dataset="bundled-test", seeds=[42, 43], models=["qwen2.5-7b"]), results_root=out
    )
    (planned,) = [a for a in plan.arms if a.arm == NAME]
    n = len(load_dataset("bundled-test").cases)
    assert (planned.requests_per_case.min, planned.requests_per_case.max) == (2, 2)
    assert (planned.requests.min, planned.requests.max) == (2 * n * 2, 2 * n * 2)
    assert plan.requests_per_model.max == 4 * n and planned.tokens_per_request.source == "measured"
    unmeasured = build_plan(
        ReproduceConfig(arms=[NAME], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"]),
        results_root=tmp_path / "no-results",
    )
    assert unmeasured.arms[0].tokens_per_request.completion == 77  # the solver's stated assumption

    # the statistics arrays and the tables built from the records
    arrays = load_arrays(out)
    assert arrays.arms == [NAME] and arrays.seeds == [42, 43] and arrays.n_cases == N_CASES
    ok = np.nansum(arrays.correct[0, 0])
    assert ok == sum(row["correct"] for row in rows)
    tables = tmp_path / "tables"
    build_all(out, tables, draws=200)
    table1 = (tables / "table1.md").read_text()
    assert "Throwaway agree-twice" in table1 and "recalled" in table1


def test_the_registry_is_unchanged_without_the_fixture():
    assert NAME not in ARMS and NAME not in arm_order() and SOLVER.name not in SOLVERS
    assert FAMILY.name not in PROMPT_FAMILIES and TEMPLATE_NAME not in prompts.TEMPLATES


def test_registration_is_undone_when_the_block_fails():
    with pytest.raises(RuntimeError, match="boom"):
        with registered(THROWAWAY, solvers=[AgreeTwiceSolver]):
            assert ARMS[NAME] is THROWAWAY
            raise RuntimeError("boom")
    assert NAME not in ARMS and SOLVER.name not in SOLVERS
