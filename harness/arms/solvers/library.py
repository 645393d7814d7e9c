"""The library solvers: Extract-Solve library (`extract_library`), Gold-Solve library (`gold_library`) and
Extract-Solve library, recalled (`recalled`). They call the hand-written functions (harness.calculators), so a
formula version applies to them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.arms import prompts
from harness.arms.detail import Detail
from harness.arms.families import EXTRACT_T, extract_prompt
from harness.arms.library_inputs import calculator_for, library_variables
from harness.arms.solvers.base import (
    ABSTAINED,
    ANSWERED,
    UNREADABLE_VALUE,
    Context,
    Solution,
    Solver,
    jsonable,
    majority,
    samples_of,
    to_json_value,
    value_solution,
)
from harness.calculators import LIBRARY, Calculator, LibraryAbstain, solve_gold, solve_gold_versioned
from harness.data.dataset import Case
from harness.scoring.scorers import score_reply

if TYPE_CHECKING:
    from harness.arms.spec import Arm, Prompt

EXTRACT_MAX_TOKENS = 512  # the library extraction call's output-token cap (the paper is silent)


async def extract_and_compute(
    ctx: Context, calc: Calculator, *, max_tokens: int, prompt: Prompt | None = None
) -> Solution:
    """One greedy extraction call (`prompt`, else the extraction prompt for `calc`), then the hand-written
    function; an invalid extraction or a raise abstains."""
    if prompt is None:
        prompt = extract_prompt(ctx.case, library_variables(calc), note_words=ctx.arm.note_words)
    r = await ctx.chat(prompt, temperature=0.0, max_tokens=max_tokens)
    obj = prompts.extract_json_object(r.text)
    if obj is None:
        return Solution(outcome=ABSTAINED, reason="the extraction reply holds no JSON object")
    try:
        values = calc.parse_extraction(obj, convention=ctx.convention)
        value = calc.compute(**values)
        answer, kind = to_json_value(value)
    except Exception as exc:  # noqa: BLE001 - any invalid extraction or raising function abstains (paper)
        return Solution(outcome=ABSTAINED, reason=f"{type(exc).__name__}: {exc}", detail={"extraction": obj})
    return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind, detail={"extraction": obj})


class ExtractLibrarySolver(Solver):
    """Extract-Solve library: outside the 22 calculators abstain without a call; else one greedy extraction
    call, then the hand-written function (at the arm's formula version); invalid extraction or a raise
    abstains."""

    name = "extract_library"
    uses_library = True
    uses_convention = True
    completion_assumption = 120  # a JSON object of a few variables

    def __init__(self, *, max_tokens: int = EXTRACT_MAX_TOKENS):
        self.max_tokens = int(max_tokens)

    def config(self) -> dict:
        return {"extract_max_tokens": self.max_tokens}

    async def solve(self, ctx: Context) -> Solution:
        calc = calculator_for(ctx.arm, ctx.case.calculator_id)
        if calc is None:
            return Solution(outcome=ABSTAINED, reason="calculator not in the library")
        return await extract_and_compute(ctx, calc, max_tokens=self.max_tokens, prompt=ctx.prompt())

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return (1, 1) if arm.needs_model and case.calculator_id in LIBRARY else (0, 0)

    def completion_tokens(self, arm: Arm) -> int:
        return min(super().completion_tokens(arm), self.max_tokens)


class GoldLibrarySolver(Solver):
    """Gold-Solve library: the hand-written function (at the arm's formula version) on the gold variables;
    no model."""

    name = "gold_library"
    uses_library = True
    uses_convention = True

    async def solve(self, ctx: Context) -> Solution:
        convention = ctx.convention
        detail = Detail()
        try:
            if ctx.arm.formula_versions:
                value, detail["library"] = solve_gold_versioned(
                    ctx.case, dict(ctx.arm.formula_versions), convention=convention
                )
            else:
                value = solve_gold(ctx.case, convention=convention)
        except LibraryAbstain as exc:
            return Solution(outcome=ABSTAINED, reason=str(exc) or "calculator not in the library")
        answer, kind = to_json_value(value)
        return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind, detail=detail)

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return 0, 0

    def reads_gold_variables(self, arm: Arm) -> bool:
        return True


class RecalledSolver(Solver):
    """Extract-Solve library, recalled: `samples` chain-of-thought samples at the arm's temperature from the
    Note-only prompt with one fixed example; if at least two agree and none is empty (every sample has a
    parseable answer), that answer. Otherwise: calculator in the library -> one greedy extraction over the
    whole note and the function (abstain if invalid or it raises); else the majority answer, or the first
    sample's when there is no majority."""

    name = "recalled"
    uses_library = False  # it calls the unversioned library: no formula version applies
    uses_convention = True  # its library route converts a model's extraction
    completion_assumption = 350

    def __init__(self, *, extract_max_tokens: int = EXTRACT_MAX_TOKENS):
        self.extract_max_tokens = int(extract_max_tokens)

    def config(self) -> dict:
        return {"extract_max_tokens": self.extract_max_tokens}

    def templates(self, arm: Arm) -> tuple[str, ...]:
        return EXTRACT_T

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        prompt = ctx.prompt()
        parsed = []
        for i in range(arm.samples):
            r = await ctx.chat(prompt, temperature=arm.temperature, max_tokens=arm.max_tokens, sample_index=i)
            parsed.append(score_reply(r.text, ctx.case, "paper").parsed)
        present = [p for p in parsed if p is not None]
        top = majority(present)
        detail = Detail(sample_answers=[jsonable(p) for p in parsed])
        if top and top[1] >= 2 and len(present) == len(parsed):
            return value_solution(top[0], {**detail, "route": "agreement"})
        calc = LIBRARY.get(ctx.case.calculator_id)
        if calc is not None:
            sol = await extract_and_compute(ctx, calc, max_tokens=self.extract_max_tokens)
            sol.detail.update({**detail, "route": "library"})
            return sol
        if top and top[1] >= 2:
            return value_solution(top[0], {**detail, "route": "majority"})
        first = parsed[0]
        if first is None:
            return Solution(
                outcome=UNREADABLE_VALUE,
                reason="the first sample has no parseable answer",
                detail={**detail, "route": "first"},
            )
        return value_solution(first, {**detail, "route": "first"})

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        """`samples`, plus one extraction when the samples disagree on a library calculator."""
        if not arm.needs_model:
            return 0, 0
        n = samples_of(arm)
        return n, n + (1 if case.calculator_id in LIBRARY else 0)
