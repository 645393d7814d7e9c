"""The program solvers: Program-Solve (+ syntax) and Blind Program-Solve (`program`), Blind + repair (`repair`),
Blind + vote and + repair + vote (`vote`). Programs run in the hardened executor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from executor.result import ExecResult
from harness.arms import prompts
from harness.arms.families import REPAIR_T, repair_prompt
from harness.arms.solvers.base import (
    ABSTAINED,
    ANSWERED,
    NO_PROGRAM,
    Context,
    Solution,
    Solver,
    answer_of,
    error_of,
    exec_outcome,
    majority,
    samples_of,
    vote_key,
)
from harness.data.dataset import Case

if TYPE_CHECKING:
    from harness.arms.spec import Arm, Prompt


async def program_attempt(
    ctx: Context, prompt: Prompt, *, temperature: float, sample_index: int
) -> tuple[str, str | None, ExecResult | None, str]:
    """One program call: (reply, program or None, executor result or None, row outcome)."""
    r = await ctx.chat(prompt, temperature=temperature, max_tokens=ctx.arm.max_tokens, sample_index=sample_index)
    program = prompts.extract_program(r.text)
    if program is None:
        return r.text, None, None, NO_PROGRAM
    result = await ctx.execute(program)
    return r.text, program, result, exec_outcome(result)


class ProgramSolver(Solver):
    """Program-Solve (+ syntax) and Blind Program-Solve: one greedy program, run by the executor."""

    name = "program"

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        _reply, program, result, outcome = await program_attempt(
            ctx, ctx.prompt(), temperature=arm.temperature, sample_index=0
        )
        answer, kind = answer_of(result) if outcome == ANSWERED else (None, None)
        return Solution(
            outcome=outcome,
            answer=answer,
            answer_kind=kind,
            program=program,
            executor=result,
            reason=error_of(result) if outcome != ANSWERED else None,
        )

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return (1, 1) if arm.needs_model else (0, 0)


class RepairSolver(Solver):
    """Blind + repair: one greedy program; if it returns no value, one corrective turn showing the original
    prompt, the previous reply and the executor's own error string (for a reply without a program, the fixed
    line prompts.NO_PROGRAM_ERROR) at `temperature`. The second attempt's outcome is the row's."""

    name = "repair"

    def __init__(self, *, temperature: float = 0.0):
        self.temperature = float(temperature)

    def config(self) -> dict:
        return {"repair": True, "repair_cap": 1, "repair_temperature": self.temperature}

    def templates(self, arm: Arm) -> tuple[str, ...]:
        return REPAIR_T

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        original = ctx.prompt()
        reply, program, result, outcome = await program_attempt(
            ctx, original, temperature=arm.temperature, sample_index=0
        )
        programs, results = [program], [result]
        if outcome != ANSWERED:
            error = error_of(result) or prompts.NO_PROGRAM_ERROR
            reply, program, result, outcome = await program_attempt(
                ctx, repair_prompt(original, reply, error), temperature=self.temperature, sample_index=1
            )
            programs.append(program)
            results.append(result)
        answer, kind = answer_of(result) if outcome == ANSWERED else (None, None)
        return Solution(
            outcome=outcome,
            answer=answer,
            answer_kind=kind,
            program=programs,
            executor=results,
            detail={"repaired": len(programs) > 1},
        )

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        return (1, 2) if arm.needs_model else (0, 0)


class VoteSolver(Solver):
    """Blind + vote (and + repair + vote): `arm.samples` programs at the arm's temperature, each run; the value
    occurring at least twice (most frequent, ties to the value sampled first), else the first computed answer;
    abstain if none runs. With `repair_cap` > 0, a sample that returns no value gets one corrective turn at
    `repair_temperature`, for at most `repair_cap` samples in sample order (5 to 8 calls)."""

    name = "vote"

    def __init__(self, *, repair_cap: int = 0, repair_temperature: float = 0.0):
        if repair_cap < 0:
            raise ValueError(f"vote: repair_cap must be >= 0, got {repair_cap}")
        self.repair_cap = int(repair_cap)
        self.repair_temperature = float(repair_temperature)

    def config(self) -> dict:
        return {
            "repair": self.repair_cap > 0,
            "repair_cap": self.repair_cap,
            "repair_temperature": self.repair_temperature,
        }

    def templates(self, arm: Arm) -> tuple[str, ...]:
        return REPAIR_T if self.repair_cap else ()

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        original = ctx.prompt()
        programs, results, answers = [], [], []
        repairs = 0
        for i in range(arm.samples):
            reply, program, result, outcome = await program_attempt(
                ctx, original, temperature=arm.temperature, sample_index=i
            )
            programs.append(program)
            results.append(result)
            if outcome != ANSWERED and repairs < self.repair_cap:
                repairs += 1
                error = error_of(result) or prompts.NO_PROGRAM_ERROR
                _reply, program, result, outcome = await program_attempt(
                    ctx,
                    repair_prompt(original, reply, error),
                    temperature=self.repair_temperature,
                    sample_index=100 + i,
                )
                programs.append(program)
                results.append(result)
            if outcome == ANSWERED:
                answers.append(answer_of(result))
        if not answers:
            return Solution(
                outcome=ABSTAINED,
                program=programs,
                executor=results,
                reason="no sampled program ran",
                detail={"repairs": repairs},
            )
        top = majority([a for a, _ in answers])
        assert top is not None  # answers is not empty
        best, count = top
        if count >= 2:
            chosen = next(a for a in answers if vote_key(a[0]) == vote_key(best))
        else:
            chosen = answers[0]
        return Solution(
            outcome=ANSWERED,
            answer=chosen[0],
            answer_kind=chosen[1],
            program=programs,
            executor=results,
            detail={"votes": count, "computed": len(answers), "repairs": repairs},
        )

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        """`samples` programs plus at most `repair_cap` repair turns (one per sample at most)."""
        if not arm.needs_model:
            return 0, 0
        n = samples_of(arm)
        return n, n + min(self.repair_cap, n)
