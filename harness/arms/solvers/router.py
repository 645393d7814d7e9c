"""The router solver (arms `routed-gold`, `routed-blind`) and its decision rules.

The paper's recommended configuration, made an arm: "a verified library where one exists, program
generation where it does not, and explicit abstention where neither can be trusted". Per case:

1. library: the verified library answers when it implements the calculator (Gold-Solve for
   `routed-gold`, Extract-Solve for `routed-blind`); an abstaining library (a variable missing or an
   invalid extraction) falls through;
2. programs: k programs sampled at the arm's temperature are run by the hardened executor; their
   values are grouped into agreement clusters, and the largest cluster answers when at least m of
   the k programs are in it;
3. abstain, with the reason.

Agreement: two values agree when they are of the same kind and, for a decimal-output case, the
value lies within the benchmark's own decimal tolerance (+-5%) of the cluster's first value; for
integer outputs, dates and (weeks, days) exact equality (numbers at 10 significant digits, as the
vote arms compare). Clusters are formed in sample order (a value joins the first cluster it agrees
with), sorted by size, ties to the cluster seen first. Nothing here reads gold.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.arms.detail import JSONValue
from harness.arms.families import EXTRACT_T
from harness.arms.solvers.base import (
    ABSTAINED,
    ANSWERED,
    Context,
    Solution,
    Solver,
    answer_of,
    samples_of,
    to_json_value,
)
from harness.arms.solvers.library import EXTRACT_MAX_TOKENS, extract_and_compute
from harness.arms.solvers.program import program_attempt
from harness.calculators import LIBRARY, LibraryAbstain, versioned_calculator
from harness.data.dataset import Case

if TYPE_CHECKING:
    from harness.arms.spec import Arm

DECIMAL_TOLERANCE = 0.05  # the benchmark's own interval for decimal outputs: gold +-5%
DEFAULT_K = 5
DEFAULT_M = 3
DEFAULT_TEMPERATURE = 0.7

ROUTE_LIBRARY, ROUTE_PROGRAMS, ROUTE_ABSTAIN = "library", "programs", "abstain"


def _number_key(x: float) -> str:
    return f"{float(x):.10g}"


def agrees(value: Any, kind: str, representative: Any, rep_kind: str, output_type: str) -> bool:
    """Whether `value` agrees with a cluster's first value `representative` (module docstring)."""
    if kind != rep_kind:
        return False
    if kind == "number":
        a, r = float(value), float(representative)
        if output_type == "decimal":
            return abs(a - r) <= DECIMAL_TOLERANCE * abs(r) or _number_key(a) == _number_key(r)
        return _number_key(a) == _number_key(r)
    return value == representative


@dataclass
class Cluster:
    answer: Any  # the first value of the cluster (JSON form)
    kind: str
    first: int  # sample index of that value
    members: list[int]  # sample indices

    @property
    def count(self) -> int:
        return len(self.members)

    def to_dict(self) -> dict:
        return {
            "answer": self.answer,
            "kind": self.kind,
            "count": self.count,
            "first": self.first,
            "members": list(self.members),
        }


def agreement_clusters(values: list[tuple[int, Any, str]], output_type: str) -> list[Cluster]:
    """Group (sample index, JSON value, kind) triples into clusters, largest first (ties: first seen)."""
    clusters: list[Cluster] = []
    for index, value, kind in values:
        for c in clusters:
            if agrees(value, kind, c.answer, c.kind, output_type):
                c.members.append(index)
                break
        else:
            clusters.append(Cluster(value, kind, index, [index]))
    return sorted(clusters, key=lambda c: (-c.count, c.first))


@dataclass(frozen=True)
class Decision:
    route: str  # library | programs | abstain
    answer: Any = None
    kind: str | None = None
    agreeing: int = 0  # size of the largest cluster (0: no program returned a value)
    chosen: int | None = None  # sample index of the chosen program
    reason: str | None = None  # why it abstained


def decide_programs(clusters: list[Cluster], k: int, m: int) -> Decision:
    """Answer with the largest cluster when at least m of the k programs agree, else abstain."""
    if not clusters:
        return Decision(ROUTE_ABSTAIN, reason=f"none of the {k} sampled programs returned a value")
    top = clusters[0]
    if top.count >= m:
        return Decision(ROUTE_PROGRAMS, top.answer, top.kind, top.count, top.first)
    return Decision(
        ROUTE_ABSTAIN,
        agreeing=top.count,
        reason=f"no value agreed by at least {m} of {k} programs (largest agreement {top.count}, "
        f"{len(clusters)} distinct values)",
    )


def check_k_m(k: int, m: int) -> None:
    if k < 1:
        raise ValueError(f"router k (programs per case) must be at least 1, got {k}")
    if not 1 <= m <= k:
        raise ValueError(f"router m (agreement needed) must be between 1 and k={k}, got {m}")


# --- the solver -------------------------------------------------------------------------------------------


async def _router_library(ctx: Context, solver: RouterSolver) -> tuple[Solution | None, dict]:
    """The library step: (an answering Solution or None to fall through, its provenance)."""
    cid = ctx.case.calculator_id
    try:
        calc, prov = versioned_calculator(cid, ctx.arm.version_for(cid))
    except LibraryAbstain as exc:
        return None, {"used": False, "reason": str(exc)}
    info = {"used": True, **prov, "mode": solver.library}
    if solver.library == "gold":
        try:
            answer, kind = to_json_value(
                calc.compute(**calc.from_entities(ctx.case.entities, convention=ctx.convention))
            )
        except (LibraryAbstain, ValueError) as exc:
            return None, {**info, "answered": False, "reason": str(exc)}
        return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind), {**info, "answered": True}
    sol = await extract_and_compute(ctx, calc, max_tokens=solver.extract_max_tokens)
    info["extraction"] = sol.detail.get("extraction")
    if sol.outcome != ANSWERED:
        return None, {**info, "answered": False, "reason": sol.reason}
    return sol, {**info, "answered": True}


async def _solve_router(ctx: Context, solver: RouterSolver) -> Solution:
    """Routed arms: the library where it implements the calculator (Gold-Solve or Extract-Solve; an
    abstaining library falls through), else `arm.samples` programs at the arm's temperature run by the
    executor and the value at least `arm.agree_min` of them agree on, else abstain with the reason.
    `detail["router"]` holds the route and its provenance (docs: README)."""
    arm, k, m = ctx.arm, ctx.arm.samples, solver.m
    check_k_m(k, m)
    router: dict[str, JSONValue] = {
        "k": k,
        "m": m,
        "temperature": arm.temperature,
        "library_mode": solver.library,
        "formula_version": arm.version_for(ctx.case.calculator_id),
    }
    sol, router["library"] = await _router_library(ctx, solver)
    if sol is not None:
        router.update(
            route=ROUTE_LIBRARY, agreeing=None, chosen_program=None, abstain_reason=None, samples=[], clusters=[]
        )
        sol.detail = {**sol.detail, "router": router}
        return sol
    messages = ctx.prompt()
    programs, results = [], []
    samples: list[JSONValue] = []
    values: list[tuple[int, Any, str]] = []
    for i in range(k):
        _reply, program, result, outcome = await program_attempt(
            ctx, messages, temperature=arm.temperature, sample_index=i
        )
        programs.append(program)
        results.append(result)
        answer, kind = answer_of(result) if outcome == ANSWERED else (None, None)
        samples.append({"index": i, "outcome": outcome, "answer": answer, "kind": kind})
        if outcome == ANSWERED and answer is not None and kind is not None:  # an executor's answer has its kind
            values.append((i, answer, kind))
    clusters = agreement_clusters(values, ctx.case.output_type)
    decision = decide_programs(clusters, k, m)
    router.update(
        route=decision.route,
        agreeing=decision.agreeing,
        chosen_program=decision.chosen,
        abstain_reason=decision.reason,
        samples=samples,
        clusters=[c.to_dict() for c in clusters],
    )
    if decision.route == ROUTE_ABSTAIN:
        return Solution(
            outcome=ABSTAINED, program=programs, executor=results, reason=decision.reason, detail={"router": router}
        )
    return Solution(
        outcome=ANSWERED,
        answer=decision.answer,
        answer_kind=decision.kind,
        program=programs,
        executor=results,
        detail={"router": router},
    )


class RouterSolver(Solver):
    """Routed arms (module docstring): the library (`library`: "gold", Gold-Solve, or "extract", Extract-Solve),
    else `m` of the arm's k = samples programs, else abstain."""

    name = "router"
    uses_library = True
    uses_convention = True
    agreement_options = True
    LIBRARY_MODES = ("gold", "extract")

    def __init__(self, *, m: int = DEFAULT_M, library: str, extract_max_tokens: int = EXTRACT_MAX_TOKENS):
        if library not in self.LIBRARY_MODES:
            raise ValueError(f"router library must be one of {', '.join(self.LIBRARY_MODES)}, got {library!r}")
        self.m = int(m)
        self.library = library
        self.extract_max_tokens = int(extract_max_tokens)

    def config(self) -> dict:
        return {"agree_min": self.m, "router_library": self.library, "extract_max_tokens": self.extract_max_tokens}

    def templates(self, arm: Arm) -> tuple[str, ...]:
        return EXTRACT_T if self.library == "extract" else ()

    async def solve(self, ctx: Context) -> Solution:
        return await _solve_router(ctx, self)

    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        """Library calculators: Gold-Solve needs no call, Extract-Solve one; either may fall through to the
        k programs. Other calculators: k programs."""
        if not arm.needs_model:
            return 0, 0
        n = samples_of(arm)
        if case.calculator_id not in LIBRARY:
            return n, n
        return (0, n) if self.library == "gold" else (1, 1 + n)

    def reads_gold_variables(self, arm: Arm) -> bool:
        return self.library == "gold"

    def option_changes(
        self, arm: Arm, *, k: int | None = None, m: int | None = None, temperature: float | None = None
    ) -> dict:
        """The arm's decoding (k = samples, temperature) and solver (m) with k, m and the sampling temperature
        replaced (ValueError naming the problem)."""
        k2 = arm.samples if k is None else int(k)
        m2 = self.m if m is None else int(m)
        check_k_m(k2, m2)
        decoding = dataclasses.replace(arm.decoding, samples=k2)
        if temperature is not None:
            if not temperature > 0:
                raise ValueError(f"router temperature must be above 0 (sampled programs), got {temperature}")
            decoding = dataclasses.replace(decoding, temperature=float(temperature))
        return {
            "decoding": decoding,
            "solver": RouterSolver(m=m2, library=self.library, extract_max_tokens=self.extract_max_tokens),
        }


__all__ = [
    "DECIMAL_TOLERANCE",
    "DEFAULT_K",
    "DEFAULT_M",
    "DEFAULT_TEMPERATURE",
    "ROUTE_ABSTAIN",
    "ROUTE_LIBRARY",
    "ROUTE_PROGRAMS",
    "Cluster",
    "Decision",
    "RouterSolver",
    "agreement_clusters",
    "agrees",
    "check_k_m",
    "decide_programs",
]
