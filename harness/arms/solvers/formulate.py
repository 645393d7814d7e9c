"""The Formulate-Solve tree solver (`tree`): one structured call whose expression tree our code evaluates
exactly (harness.arms.solvers.tree); date cases abstain before any call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.arms import prompts
from harness.arms.solvers.base import ABSTAINED, ANSWERED, Context, Solution, Solver
from harness.arms.solvers.tree import TreeAbstain
from harness.arms.solvers.tree import solve_reply as evaluate_tree_reply
from harness.data.dataset import Case

if TYPE_CHECKING:
    from harness.arms.spec import Arm

DATE_OUTPUT_TYPES = frozenset({"date", "weeks_days"})


class TreeSolver(Solver):
    """Formulate-Solve tree: date cases abstain before any call; else one greedy structured call whose
    expression tree our code evaluates exactly; abstain on any invalid reply."""

    name = "tree"
    completion_assumption = 250  # a short JSON tree

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        if ctx.case.output_type in DATE_OUTPUT_TYPES:
            return Solution(outcome=ABSTAINED, reason="date case: Formulate-Solve abstains before any call")
        r = await ctx.chat(ctx.prompt(), temperature=arm.temperature, max_tokens=arm.max_tokens)
        obj = prompts.extract_json_object(r.text)
        try:
            value, parsed = evaluate_tree_reply(obj)
        except TreeAbstain as exc:
            return Solution(outcome=ABSTAINED, reason=str(exc))
        return Solution(
            outcome=ANSWERED,
            answer=value,
            answer_kind="number",
            detail={"calculation": parsed["calculation"], "formula": parsed["formula"]},
        )

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return (0, 0) if not arm.needs_model or case.output_type in DATE_OUTPUT_TYPES else (1, 1)
