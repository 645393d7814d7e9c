"""The program solvers: Program-Solve (+ syntax) and Blind Program-Solve (`program`), Blind + repair (`repair`),
Blind + vote and + repair + vote (`vote`). Programs run in the hardened executor."""
from __future__ import annotations

from executor.result import ExecResult
from harness.arms import prompts
from harness.arms.solvers.base import (ABSTAINED, ANSWERED, NO_PROGRAM, ArmSettings, Context, Solution, Solver,
                                       answer_of, error_of, exec_outcome, majority, samples_of, vote_key)
from harness.data.dataset import Case


async def program_attempt(ctx: Context, messages: list[dict], *, temperature: float, sample_index: int
                          ) -> tuple[str, str | None, ExecResult | None, str]:
    """One program call: (reply, program or None, executor result or None, row outcome)."""
    r = await ctx.chat(messages, temperature=temperature, max_tokens=ctx.arm.max_tokens, sample_index=sample_index)
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
        _reply, program, result, outcome = await program_attempt(ctx, arm.build(ctx), temperature=arm.temperature,
                                                                 sample_index=0)
        answer, kind = answer_of(result) if outcome == ANSWERED else (None, None)
        return Solution(outcome=outcome, answer=answer, answer_kind=kind, program=program, executor=result,
                        reason=error_of(result) if outcome != ANSWERED else None)

    def request_bounds(self, arm: ArmSettings, case: Case) -> tuple[int, int]:
        return (1, 1) if arm.needs_model else (0, 0)


class RepairSolver(Solver):
    """Blind + repair: one greedy program; if it returns no value, one corrective turn showing the original
    prompt, the previous reply and the executor's own error string (for a reply without a program, the fixed
    line prompts.NO_PROGRAM_ERROR). The second attempt's outcome is the row's."""

    name = "repair"

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        original = arm.build(ctx)
        reply, program, result, outcome = await program_attempt(ctx, original, temperature=arm.temperature,
                                                                sample_index=0)
        programs, results = [program], [result]
        if outcome != ANSWERED:
            error = error_of(result) or prompts.NO_PROGRAM_ERROR
            reply, program, result, outcome = await program_attempt(
                ctx, prompts.build_repair(original, reply, error), temperature=arm.repair_temperature, sample_index=1)
            programs.append(program)
            results.append(result)
        answer, kind = answer_of(result) if outcome == ANSWERED else (None, None)
        return Solution(outcome=outcome, answer=answer, answer_kind=kind, program=programs, executor=results,
                        detail={"repaired": len(programs) > 1})

    def request_bounds(self, arm: ArmSettings, case: Case) -> tuple[int, int]:
        return (1, 2) if arm.needs_model else (0, 0)


class VoteSolver(Solver):
    """Blind + vote (and + repair + vote): `arm.samples` programs at the arm's temperature, each run; the value
    occurring at least twice (most frequent, ties to the value sampled first), else the first computed answer;
    abstain if none runs. With `arm.repair`, a sample that returns no value gets one greedy corrective turn, for
    at most `arm.repair_cap` samples in sample order (5 to 8 calls)."""

    name = "vote"

    async def solve(self, ctx: Context) -> Solution:
        arm = ctx.arm
        original = arm.build(ctx)
        programs, results, answers = [], [], []
        repairs = 0
        for i in range(arm.samples):
            reply, program, result, outcome = await program_attempt(ctx, original, temperature=arm.temperature,
                                                                    sample_index=i)
            programs.append(program)
            results.append(result)
            if outcome != ANSWERED and arm.repair and repairs < arm.repair_cap:
                repairs += 1
                error = error_of(result) or prompts.NO_PROGRAM_ERROR
                _reply, program, result, outcome = await program_attempt(
                    ctx, prompts.build_repair(original, reply, error), temperature=arm.repair_temperature,
                    sample_index=100 + i)
                programs.append(program)
                results.append(result)
            if outcome == ANSWERED:
                answers.append(answer_of(result))
        if not answers:
            return Solution(outcome=ABSTAINED, program=programs, executor=results, reason="no sampled program ran",
                            detail={"repairs": repairs})
        best, count = majority([a for a, _ in answers])
        if count >= 2:
            chosen = next(a for a in answers if vote_key(a[0]) == vote_key(best))
        else:
            chosen = answers[0]
        return Solution(outcome=ANSWERED, answer=chosen[0], answer_kind=chosen[1], program=programs,
                        executor=results, detail={"votes": count, "computed": len(answers), "repairs": repairs})

    def request_bounds(self, arm: ArmSettings, case: Case) -> tuple[int, int]:
        """`samples` programs plus at most `repair_cap` repair turns (one per sample at most)."""
        if not arm.needs_model:
            return 0, 0
        n = samples_of(arm)
        return n, n + (min(arm.repair_cap, n) if arm.repair else 0)
