"""The reply solver (Note only, Page without formula, Open-book arithmetic): one call; the reply text is scored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.arms.solvers.base import Context, Scoring, Solution, Solver
from harness.data.dataset import Case

if TYPE_CHECKING:
    from harness.arms.spec import Arm


class ReplySolver(Solver):
    """One call at the arm's temperature; the runner scores the reply (answered / unreadable_value)."""

    name = "reply"
    scoring = Scoring.REPLY
    completion_assumption = 350  # a chain of thought and the answer line

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        r = await ctx.chat(ctx.prompt(), temperature=arm.temperature, max_tokens=arm.max_tokens)
        return Solution(text=r.text)

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return (1, 1) if arm.needs_model else (0, 0)
