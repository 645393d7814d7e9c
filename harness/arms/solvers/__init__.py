"""Solvers: what an arm does with a case — call the model, run programs, vote, repair, extract into the
library, evaluate a Formulate-Solve tree — and the outcome each row gets in the paper's taxonomy.

A solver is `async def solve(ctx) -> Solution`. It never scores; the runner scores `Solution.text`
(reply-scored arms) or `Solution.answer`/`answer_kind` (value arms) with every scorer. Outcomes:
answered | abstained | no_program | sandbox_rejection | raised_error | wrong_return_kind | unreadable_value.
Reply arms leave `outcome` None: the runner sets answered / unreadable_value from the paper parser.
An executor INFRA_ERROR (after the executor's own retries) raises InfraError: the case is not
recorded, so a resumed run retries it.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from harness.core.outcomes import ROW_OUTCOMES, RowOutcome
from harness.core.units import EXACT, Convention
from harness.arms import prompts
from harness.model.client import ChatResult, derive_seed
from harness.arms.solvers.tree import TreeAbstain, solve_reply as solve_tree_reply

ANSWERED, ABSTAINED, NO_PROGRAM = RowOutcome.ANSWERED.value, RowOutcome.ABSTAINED.value, RowOutcome.NO_PROGRAM.value
TAXONOMY = ROW_OUTCOMES


class InfraError(RuntimeError):
    """The executor failed as infrastructure (not the program): retry the case later, never score it."""


@dataclass
class Solution:
    outcome: str | None = None              # None: decided by the scorer (reply-scored arms)
    text: str | None = None                 # the reply to score with score_reply, for reply-scored arms
    answer: Any = None                      # JSON value: number, "YYYY-MM-DD", [weeks, days]
    answer_kind: str | None = None          # "number" | "date" | "weeks_days"
    program: Any = None                     # str, or a list for multi-program arms
    executor: Any = None                    # ExecResult dict, or a list
    reason: str | None = None               # why it abstained / failed, for reading
    detail: dict = field(default_factory=dict)


@dataclass
class Context:
    """Everything a solver may use for one (arm, seed, case)."""

    case: Any
    arm: Any
    seed: int
    client: Any = None
    executor: Any = None
    one_shot: list = field(default_factory=list)
    dataset: Any = None
    chats: list[ChatResult] = field(default_factory=list)
    convention: Convention = EXACT   # the unit convention in force (harness.data.conventions.resolve_convention)

    async def chat(self, messages: list[dict], *, temperature: float, max_tokens: int,
                   sample_index: int = 0) -> ChatResult:
        if self.client is None:
            raise RuntimeError(f"arm {self.arm.name} needs a model: give --base-url/--model")
        seed = derive_seed(self.seed, self.case.case_id, self.arm.name, sample_index) if temperature > 0 else None
        result = await self.client.chat(messages, temperature=temperature, max_tokens=max_tokens,
                                        sample_index=sample_index, seed=seed, run_seed=self.seed)
        self.chats.append(result)
        return result

    async def execute(self, program: str) -> dict:
        if self.executor is None:
            raise RuntimeError(f"arm {self.arm.name} needs the executor")
        res = await asyncio.to_thread(self.executor.run, program)
        d = res.to_dict() if hasattr(res, "to_dict") else dict(res)
        if str(d.get("outcome")) == "INFRA_ERROR":
            raise InfraError(f"executor infrastructure failure on case {self.case.case_id}: {d.get('error')}")
        return d


# --- values ------------------------------------------------------------------------------------------

def to_json_value(value: Any) -> tuple[Any, str]:
    """A Python answer (number, date, (weeks, days)) as (JSON value, kind); ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not an answer")
    if isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            raise ValueError(f"non-finite number {value!r}")
        return value, "number"
    if isinstance(value, _dt.datetime):
        return value.date().isoformat(), "date"
    if isinstance(value, _dt.date):
        return value.isoformat(), "date"
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                     for v in value):
        return [value[0], value[1]], "weeks_days"
    raise ValueError(f"not an answer value: {value!r}")


def vote_key(answer: Any) -> str:
    """Equality used by votes: numbers compared at 10 significant digits; other values exactly."""
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return f"n:{float(answer):.10g}"
    return f"v:{answer!r}"


def majority(values: list[Any]) -> tuple[Any, int] | None:
    """The most frequent value (by vote_key), ties to the one seen first; None for an empty list."""
    if not values:
        return None
    counts: dict[str, int] = {}
    first: dict[str, Any] = {}
    for v in values:
        k = vote_key(v)
        counts[k] = counts.get(k, 0) + 1
        first.setdefault(k, v)
    best = max(counts, key=lambda k: (counts[k], -list(first).index(k)))
    return first[best], counts[best]


def exec_outcome(result: dict) -> str:
    from executor.outcomes import taxonomy
    return taxonomy(result["outcome"])


# --- the solvers -----------------------------------------------------------------------------------

async def solve_reply(ctx: Context) -> Solution:
    """One call; the reply is scored (Note only, Page without formula, Open-book arithmetic)."""
    arm = ctx.arm
    r = await ctx.chat(arm.build(ctx), temperature=arm.temperature, max_tokens=arm.max_tokens)
    return Solution(text=r.text)


async def _program_attempt(ctx: Context, messages: list[dict], *, temperature: float, sample_index: int
                           ) -> tuple[str, str | None, dict | None, str]:
    """One program call: (reply, program or None, executor result or None, taxonomy outcome)."""
    r = await ctx.chat(messages, temperature=temperature, max_tokens=ctx.arm.max_tokens, sample_index=sample_index)
    program = prompts.extract_program(r.text)
    if program is None:
        return r.text, None, None, NO_PROGRAM
    result = await ctx.execute(program)
    return r.text, program, result, exec_outcome(result)


def _answer_of(result: dict | None) -> tuple[Any, str | None]:
    return (result.get("answer"), result.get("kind")) if result else (None, None)


async def solve_program(ctx: Context) -> Solution:
    """Program-Solve (+ syntax) and Blind Program-Solve: one greedy program, run by the executor."""
    arm = ctx.arm
    _reply, program, result, outcome = await _program_attempt(ctx, arm.build(ctx), temperature=arm.temperature,
                                                              sample_index=0)
    answer, kind = _answer_of(result) if outcome == ANSWERED else (None, None)
    return Solution(outcome=outcome, answer=answer, answer_kind=kind, program=program, executor=result,
                    reason=(result or {}).get("error") if outcome != ANSWERED else None)


async def solve_repair(ctx: Context) -> Solution:
    """Blind + repair: one greedy program; if it returns no value, one corrective turn showing the
    original prompt, the previous reply and the executor's own error string (for a reply without a
    program, the fixed line prompts.NO_PROGRAM_ERROR). The second attempt's outcome is the row's."""
    arm = ctx.arm
    original = arm.build(ctx)
    reply, program, result, outcome = await _program_attempt(ctx, original, temperature=arm.temperature,
                                                             sample_index=0)
    programs, results = [program], [result]
    if outcome != ANSWERED:
        error = (result or {}).get("error") or prompts.NO_PROGRAM_ERROR
        reply, program, result, outcome = await _program_attempt(
            ctx, prompts.build_repair(original, reply, error), temperature=arm.repair_temperature, sample_index=1)
        programs.append(program)
        results.append(result)
    answer, kind = _answer_of(result) if outcome == ANSWERED else (None, None)
    return Solution(outcome=outcome, answer=answer, answer_kind=kind, program=programs, executor=results,
                    detail={"repaired": len(programs) > 1})


async def solve_vote(ctx: Context) -> Solution:
    """Blind + vote (and + repair + vote): `arm.samples` programs at the arm's temperature, each run;
    the value occurring at least twice (most frequent, ties to the value sampled first), else the first
    computed answer; abstain if none runs. With `arm.repair`, a sample that returns no value gets one
    greedy corrective turn, for at most `arm.repair_cap` samples in sample order (5 to 8 calls)."""
    arm = ctx.arm
    original = arm.build(ctx)
    programs, results, answers = [], [], []
    repairs = 0
    for i in range(arm.samples):
        reply, program, result, outcome = await _program_attempt(ctx, original, temperature=arm.temperature,
                                                                 sample_index=i)
        programs.append(program)
        results.append(result)
        if outcome != ANSWERED and arm.repair and repairs < arm.repair_cap:
            repairs += 1
            error = (result or {}).get("error") or prompts.NO_PROGRAM_ERROR
            _reply, program, result, outcome = await _program_attempt(
                ctx, prompts.build_repair(original, reply, error), temperature=arm.repair_temperature,
                sample_index=100 + i)
            programs.append(program)
            results.append(result)
        if outcome == ANSWERED:
            answers.append(_answer_of(result))
    if not answers:
        return Solution(outcome=ABSTAINED, program=programs, executor=results, reason="no sampled program ran",
                        detail={"repairs": repairs})
    best, count = majority([a for a, _ in answers])
    if count >= 2:
        chosen = next(a for a in answers if vote_key(a[0]) == vote_key(best))
    else:
        chosen = answers[0]
    return Solution(outcome=ANSWERED, answer=chosen[0], answer_kind=chosen[1], program=programs, executor=results,
                    detail={"votes": count, "computed": len(answers), "repairs": repairs})


# --- library arms ---------------------------------------------------------------------------------------

def _library():
    from harness.library import LIBRARY
    return LIBRARY


def library_variables(calc) -> list[tuple[str, str]]:
    """(key, description) pairs of a library calculator's inputs, whatever shape `calc.variables` has."""
    out = []
    for v in calc.variables:
        if isinstance(v, str):
            out.append((v, v.replace("_", " ")))
        elif isinstance(v, (tuple, list)):
            out.append((str(v[0]), str(v[1]) if len(v) > 1 else str(v[0])))
        else:
            name = getattr(v, "name", None) or getattr(v, "key")
            desc = getattr(v, "description", None) or getattr(v, "prompt", None) or name
            unit = getattr(v, "unit", None)
            out.append((name, f"{desc} ({unit})" if unit and unit not in str(desc) else str(desc)))
    return out


async def _extract_and_compute(ctx: Context, calc) -> Solution:
    arm = ctx.arm
    messages = prompts.build_extract(ctx.case, library_variables(calc), note_words=arm.note_words)
    r = await ctx.chat(messages, temperature=0.0, max_tokens=arm.extract_max_tokens)
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


async def solve_extract_library(ctx: Context) -> Solution:
    """Extract-Solve library: outside the 22 calculators abstain without a call; else one greedy
    extraction call, then the hand-written function (at the arm's formula version); invalid extraction
    or a raise abstains."""
    calc = _library().get(ctx.case.calculator_id)
    if calc is None:
        return Solution(outcome=ABSTAINED, reason="calculator not in the library")
    if ctx.arm.formula_versions:
        from harness.library.versions import versioned_calculator
        calc, _ = versioned_calculator(ctx.case.calculator_id, ctx.arm.version_for(ctx.case.calculator_id))
    return await _extract_and_compute(ctx, calc)


async def solve_gold_library(ctx: Context) -> Solution:
    """Gold-Solve library: the hand-written function (at the arm's formula version) on the gold
    variables; no model."""
    from harness.library import LibraryAbstain, solve_gold
    convention = ctx.convention
    detail = {}
    try:
        if ctx.arm.formula_versions:
            from harness.library.versions import solve_gold_versioned
            value, detail["library"] = solve_gold_versioned(ctx.case, dict(ctx.arm.formula_versions),
                                                            convention=convention)
        else:
            value = solve_gold(ctx.case, convention=convention)
    except LibraryAbstain as exc:
        return Solution(outcome=ABSTAINED, reason=str(exc) or "calculator not in the library")
    answer, kind = to_json_value(value)
    return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind, detail=detail)


async def solve_recalled(ctx: Context) -> Solution:
    """Extract-Solve library, recalled: three chain-of-thought samples at the arm's temperature from the
    Note-only prompt with one fixed example; if at least two agree and none is empty (every sample has a
    parseable answer), that answer. Otherwise: calculator in the library -> one greedy extraction over
    the whole note and the function (abstain if invalid or it raises); else the majority answer, or the
    first sample's when there is no majority."""
    from harness.scoring.scorers import score_reply
    arm = ctx.arm
    messages = arm.build(ctx)
    parsed = []
    for i in range(arm.samples):
        r = await ctx.chat(messages, temperature=arm.temperature, max_tokens=arm.max_tokens, sample_index=i)
        parsed.append(score_reply(r.text, ctx.case, "paper").parsed)
    present = [p for p in parsed if p is not None]
    top = majority(present)
    detail = {"sample_answers": [_jsonable(p) for p in parsed]}
    if top and top[1] >= 2 and len(present) == len(parsed):
        return _value_solution(top[0], {**detail, "route": "agreement"})
    calc = _library().get(ctx.case.calculator_id)
    if calc is not None:
        sol = await _extract_and_compute(ctx, calc)
        sol.detail.update({**detail, "route": "library"})
        return sol
    if top and top[1] >= 2:
        return _value_solution(top[0], {**detail, "route": "majority"})
    first = parsed[0]
    if first is None:
        return Solution(outcome="unreadable_value", reason="the first sample has no parseable answer",
                        detail={**detail, "route": "first"})
    return _value_solution(first, {**detail, "route": "first"})


def _jsonable(v: Any) -> Any:
    if v is None:
        return None
    try:
        return to_json_value(v)[0]
    except ValueError:
        return repr(v)


def _value_solution(value: Any, detail: dict) -> Solution:
    try:
        answer, kind = to_json_value(value)
    except ValueError as exc:
        return Solution(outcome="unreadable_value", reason=str(exc), detail=detail)
    return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind, detail=detail)


# --- Formulate-Solve ------------------------------------------------------------------------------------

DATE_OUTPUT_TYPES = {"date", "weeks_days"}


async def solve_tree(ctx: Context) -> Solution:
    """Formulate-Solve tree: date cases abstain before any call; else one greedy structured call whose
    expression tree our code evaluates exactly; abstain on any invalid reply (harness.arms.solvers.tree)."""
    arm = ctx.arm
    if ctx.case.output_type in DATE_OUTPUT_TYPES:
        return Solution(outcome=ABSTAINED, reason="date case: Formulate-Solve abstains before any call")
    r = await ctx.chat(arm.build(ctx), temperature=arm.temperature, max_tokens=arm.max_tokens)
    obj = prompts.extract_json_object(r.text)
    try:
        value, parsed = solve_tree_reply(obj)
    except TreeAbstain as exc:
        return Solution(outcome=ABSTAINED, reason=str(exc))
    return Solution(outcome=ANSWERED, answer=value, answer_kind="number",
                    detail={"calculation": parsed["calculation"], "formula": parsed["formula"]})


from harness.arms.solvers.router import solve_router  # noqa: E402  (the router module uses the helpers above)

SOLVERS: dict[str, Callable[[Context], Awaitable[Solution]]] = {
    "reply": solve_reply,
    "program": solve_program,
    "repair": solve_repair,
    "vote": solve_vote,
    "extract_library": solve_extract_library,
    "gold_library": solve_gold_library,
    "recalled": solve_recalled,
    "tree": solve_tree,
    "router": solve_router,
}
