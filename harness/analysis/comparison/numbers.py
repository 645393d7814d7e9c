"""Each of the paper's numbers beside the user's, with one verdict.

The numbers are Table 1's and Table 2's cells and the numbers the text states with a computation
(`text_numbers[].compare`). For each, the user's statistic (harness.analysis.comparison.ours) on the number's own
cases and seeds, its 95% cluster interval, the rerun tolerance (harness.analysis.comparison.tolerance) and:

* **reproduced**: ours (rounded as the paper prints it) lies within the rerun tolerance of the paper's value;
* **consistent**: beyond rerun noise (so something in the setting differs), but within the sampling uncertainty:
  the paper's printed 95% interval, or where it prints none the user's own interval holds the paper's value;
  a gap keeps its sign and the paper's claims about it hold;
* **discrepancy**: beyond rerun noise and beyond the sampling uncertainty, a gap whose sign reversed, or a number
  whose claim did not hold (a 32B gap whose interval now crosses zero): the reason is named;
* **not comparable: reasons**: the setting differs (harness.analysis.comparison.context names each reason); the
  arithmetic is shown, no verdict drawn;
* **no result**: the results have nothing for it (listed in the CSV only).

One quantity gets one verdict wherever the paper prints it: a gap printed without an interval (the conclusion's
rounded +7.1) is judged against the interval the paper prints for the same comparison elsewhere (Table 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from harness.analysis.comparison import ours as stats
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.context import MODEL_FREE_ARMS, Context
from harness.analysis.comparison.values import paper_values
from harness.analysis.stats.labels import arm_label
from harness.arms.registry import ARMS, declared_gaps, paper_rows, shown_gaps
from harness.model.rehearsal.labels import MODEL_FREE

REPRODUCED, CONSISTENT, DISCREPANCY, NOT_COMPARABLE, NO_RESULT = (
    "reproduced",
    "consistent",
    "discrepancy",
    "not comparable",
    "no result",
)
VERDICTS = (REPRODUCED, CONSISTENT, DISCREPANCY, NOT_COMPARABLE, NO_RESULT)

# Table 1 and 2 rows (paper wording) -> the kit's arms, from the registry: Table 1's rows are the ladder's arms by
# the row label the paper prints (harness.arms.registry.paper_rows), Table 2's the declared comparisons by their
# arms' labels ("<solver label> - <reference label>"); a gap row of Table 1's lower block (a checkpoint's name) is
# the comparison declared for it (Gap.tables "table1-other").


def gap_rows() -> dict[str, tuple[str, str]]:
    """{Table 2 row: (solver, reference)} of every declared comparison."""
    return {
        f"{arm_label(solver)} \u2212 {arm_label(g.reference)}": (solver, g.reference) for solver, g in declared_gaps()
    }


def lower_block_gap() -> tuple[str, str]:
    """(solver, reference) of a Table 1 lower-block gap row: the comparison declared for table1-other."""
    comps = shown_gaps("table1-other")
    if not comps:
        raise ValueError("no declared comparison is shown in table1-other (harness.arms.spec.Gap.tables)")
    solver, g = comps[0]
    return solver, g.reference


def _subset(s: str) -> str:
    return "all" if s in ("full", "all") else s


def printed_interval(paper_model: str | None, solver: str, reference: str, subset: str) -> tuple | None:
    """(lo, hi, line) of the 95% interval the paper prints for this comparison anywhere, or None."""
    rows = gap_rows()
    for c in paper_values()["cells"]:
        if (
            c["kind"] == "gap"
            and "lo" in c
            and c["model"] == paper_model
            and rows.get(c["row"]) == (solver, reference)
            and _subset(subset) == "all"
        ):
            return c["lo"], c["hi"], c["line"]
    for t in paper_values()["text_numbers"]:
        names = {n["name"]: n for n in t["numbers"]}
        for spec in t["compare"] or []:
            if (
                spec["kind"] != "gap"
                or (spec["model"], spec["solver"], spec["reference"]) != (paper_model, solver, reference)
                or _subset(spec["subset"]) != _subset(subset)
            ):
                continue
            suffix = {"Qwen2.5-7B-Instruct": "_7b", "Qwen2.5-32B-Instruct-AWQ": "_32b"}.get(paper_model or "", "")
            for lo, hi in ((f"lo{suffix}", f"hi{suffix}"), ("lo", "hi")):
                if lo in names and hi in names:
                    return names[lo]["value"], names[hi]["value"], names[lo]["line"]
    return None


# A percentile cluster bootstrap needs enough clusters for its 2.5% and 97.5% ends to be between clusters, not at one:
# with G calculators a resample is G draws of G values, so with 4 the upper end is the best calculator's own accuracy
# whenever a fifth of the draws repeat it. Below this many calculators the user's interval judges nothing.
MIN_CLUSTERS = 10


# Claims about how the cases cluster, how often seeds agree or how often calls were cut: no accuracy, share or gap
# rests on them (they are judged as claims only).
NOT_ON_NUMBERS = ("icc", "effective_n", "seed_agreement", "agreement", "truncated_calls", "truncated_correct")


def claim_inputs(check: dict) -> set[tuple[str, str | None]]:
    """(arm, subset or None) pairs a claim's check rests on: its arms, solvers and references, each with the subset
    the check states for it ('all' read as 'full'); none for the claims in NOT_ON_NUMBERS."""
    out: set[tuple[str, str | None]] = set()
    if check.get("kind") in NOT_ON_NUMBERS:
        return out

    def walk(x: object, subset: str | None) -> None:
        if isinstance(x, dict):
            if x.get("quantity") in NOT_ON_NUMBERS:
                return
            subset = x.get("subset", subset)
            for k, v in x.items():
                if k in ("arm", "solver", "reference", "left", "right", "member", "quantity", "comparisons"):
                    if isinstance(v, str) and k in ("arm", "solver", "reference"):
                        out.add((v, None if subset is None else _subset(subset)))
                    else:
                        walk(v, subset)
        elif isinstance(x, list):
            for v in x:
                if isinstance(v, str):
                    out.add((v, None if subset is None else _subset(subset)))
                else:
                    walk(v, subset)

    walk(check, None)
    return out


def judge(
    paper: float,
    digits: int,
    value: float | None,
    tolerance: tol.Tolerance,
    reasons: list[str],
    paper_ci: tuple | None = None,
    our_ci: tuple | None = None,
    signed: bool = False,
    failed_claims: Sequence[str] = (),
    clusters: int | None = None,
) -> tuple[str, str]:
    """(verdict, why) of one number; module docstring. The difference and the tolerance are compared as the
    decimals they are shown with (one rounding: tolerance.Tolerance), and a seed spread far above the paper's
    rerun evidence keeps a number from *reproduced* whatever its mean."""
    if value is None:
        return NO_RESULT, "nothing in these results"
    if reasons:
        return NOT_COMPARABLE, "; ".join(reasons)
    shown = round(value, digits)
    diff = round(shown - paper, digits) + 0.0
    within = abs(tolerance.units(diff)) <= tolerance.units(tolerance.half_width)
    spread = tolerance.spread
    noisy = spread is not None and spread.excess
    beside = f"; {spread.text()}" if spread is not None else ""
    if within and not noisy:
        return REPRODUCED, f"{diff:+.{digits}f}, within rerun noise {tolerance.text()}{beside}"
    beyond = (
        f"{diff:+.{digits}f} is within rerun noise {tolerance.text()} on the mean, but {spread.text()}: a "
        "noisier run than the paper's, not a reproduction"
        if within and spread is not None  # within: noisy, so a spread was measured
        else f"{diff:+.{digits}f} is beyond rerun noise {tolerance.text()}{beside}"
    )
    if signed and paper != 0 and shown * paper < 0 and abs(paper) > tolerance.rounding:
        return DISCREPANCY, f"sign reversed (the paper's {paper:+.{digits}f}, yours {shown:+.{digits}f}); {beyond}"
    if failed_claims:
        return DISCREPANCY, f"the paper's claim did not hold ({'; '.join(failed_claims)}); {beyond}"
    if paper_ci is not None:
        inside = paper_ci[0] - 1e-9 <= shown <= paper_ci[1] + 1e-9
        where = f"the paper's 95% interval [{paper_ci[0]:.{digits}f}, {paper_ci[1]:.{digits}f}]"
    elif our_ci is not None and our_ci[0] is not None and clusters is not None and clusters < MIN_CLUSTERS:
        return DISCREPANCY, (
            f"{beyond}; your 95% cluster interval rests on {clusters} calculator(s), fewer than the "
            f"{MIN_CLUSTERS} a cluster bootstrap needs (its ends sit at single calculators): no "
            "sampling interval to judge it by"
        )
    elif our_ci is not None and our_ci[0] is not None:
        lo, hi = round(our_ci[0], digits), round(our_ci[1], digits)  # as shown
        inside = lo - 1e-9 <= paper <= hi + 1e-9
        where = (
            f"your 95% cluster interval [{lo:.{digits}f}, {hi:.{digits}f}] "
            f"{'holds' if inside else 'excludes'} the paper's value (the paper prints no interval for it)"
        )
    else:
        return DISCREPANCY, f"{beyond}; no sampling interval to judge it by"
    if inside:
        return (
            CONSISTENT,
            f"{beyond}: something in the setting differs; within {where}"
            if paper_ci is not None
            else f"{beyond}: something in the setting differs; {where}",
        )
    return DISCREPANCY, f"{beyond} and beyond {where}" if paper_ci is not None else f"{beyond}; {where}"


def reruns(arms: Iterable[str]) -> bool:
    """Whether the seeds of these arms are repeated runs of one setting: greedy, single-sample, the worked example
    fixed (the seed never reaches the request, .tex lines 341-343); a hybrid by its stored parts."""
    from harness.analysis.comparison.settings import components

    for arm in arms:
        for part in components(arm):
            a = ARMS.get(part)
            if a is None or (a.needs_model and (a.temperature != 0 or a.samples != 1 or a.example == "seeded")):
                return False
    return True


class NumberRows:
    """Builds the number rows of one comparison; `claims` are the claim rows (for a gap's attached claims)."""

    def __init__(self, ctx: Context, claims: list[dict]):
        self.ctx, self.claims = ctx, claims
        self.rows: list[dict] = []

    # ---- one row ------------------------------------------------------------------------------------------
    def add(
        self,
        *,
        source: str,
        where: str,
        line: int,
        what: str,
        paper_model: str | None,
        model: str | None,
        unit: str,
        paper: float,
        digits: int,
        stat: stats.Stat | None,
        tolerance: tol.Tolerance,
        reasons: list[str],
        key: tuple[str, str, tuple[str, ...]],
        paper_ci: tuple[float, float] | None = None,
        signed: bool = False,
        failed: Iterable[str] = (),
        scale: float = 1.0,
        sign: int = 1,
    ) -> None:
        value = None if stat is None else sign * stat.value * scale
        ci = (
            None
            if stat is None or stat.lo is None or stat.hi is None
            else tuple(sorted((sign * stat.lo * scale, sign * stat.hi * scale)))
        )
        verdict, why = judge(
            paper,
            digits,
            value,
            tolerance,
            reasons,
            paper_ci,
            ci,
            signed,
            list(failed),
            None if stat is None else stat.extra.get("clusters"),
        )
        if value is None:
            tolerance = tol.no_result()  # no result: no tolerance is claimed for it
        model_free = model is not None and all(a in MODEL_FREE_ARMS for a in key[2])
        self.rows.append(
            {
                "source": source,
                "where": where,
                "line": line,
                "what": what,
                "model": (MODEL_FREE + " (no model)") if model_free else (model or ""),
                "paper_model": paper_model or "",
                "unit": unit,
                "paper": paper,
                "paper_lo": paper_ci[0] if paper_ci else None,
                "paper_hi": paper_ci[1] if paper_ci else None,
                "digits": digits,
                "ours": value,
                "ours_lo": ci[0] if ci else None,
                "ours_hi": ci[1] if ci else None,
                "n": "" if stat is None else stat.n_text,
                "difference": None if value is None else round(round(value, digits) - paper, digits) + 0.0,
                "tolerance": None if value is None else tolerance.half_width,
                "tolerance_shown": tolerance.shown,
                "tolerance_source": tolerance.source,
                "spread": "" if tolerance.spread is None else tolerance.spread.text(),
                "verdict": verdict,
                "why": why,
                "key": "|".join([model or "", key[0], key[1], ", ".join(key[2])]),
            }
        )  # arms by ", ": a hybrid has a +

    # ---- kinds ---------------------------------------------------------------------------------------------
    def accuracy(
        self,
        source: str,
        where: str,
        line: int,
        what: str,
        arm: str,
        paper_model: str | None,
        subset: str,
        paper: float,
        digits: int,
        construction: bool = False,
    ) -> None:
        an = self.ctx.an
        for m in self.ctx.models_for(paper_model, (arm,)) or (None,):
            st = stats.accuracy(an, m, arm, subset) if m else None
            reasons = self.ctx.reasons(m, paper_model, (arm,), st, subset, construction) if m and st else []
            if construction or arm in MODEL_FREE_ARMS:
                t = tol.construction(digits)
            else:
                t = self._rerun(paper_model, st, digits, 1, (arm,))
            self.add(
                source=source,
                where=where,
                line=line,
                what=what,
                paper_model=paper_model,
                model=m,
                unit="%",
                paper=paper,
                digits=digits,
                stat=st,
                tolerance=t,
                reasons=reasons,
                key=("accuracy", subset, (arm,)),
                failed=self.failed_on(m, arm, subset),
            )

    def gap(
        self,
        source: str,
        where: str,
        line: int,
        what: str,
        solver: str,
        reference: str,
        paper_model: str | None,
        subset: str,
        paper: float,
        digits: int,
        sign: int = 1,
    ) -> None:
        an = self.ctx.an
        ci = printed_interval(paper_model, solver, reference, subset)
        paper_ci = None if ci is None else (ci[0], ci[1])
        if paper_ci is not None and sign < 0:
            paper_ci = (-paper_ci[1], -paper_ci[0])
        for m in self.ctx.models_for(paper_model, (solver, reference)) or (None,):
            st = stats.gap(an, m, solver, reference, subset) if m else None
            reasons = self.ctx.reasons(m, paper_model, (solver, reference), st, subset) if m and st else []
            t = (
                tol.construction(digits)
                if {solver, reference} <= set(MODEL_FREE_ARMS)
                else self._rerun(paper_model, st, digits, 2, (solver, reference))
            )
            failed = [
                c["says"] + f": {c['why']}"
                for c in self.claims
                if c["model"] == m
                and c["verdict"] == "did not hold"
                and c.get("gap") == (paper_model, solver, reference, _subset(subset))
            ]
            self.add(
                source=source,
                where=where,
                line=line,
                what=what,
                paper_model=paper_model,
                model=m,
                unit="pp",
                paper=paper,
                digits=digits,
                stat=st,
                tolerance=t,
                reasons=reasons,
                paper_ci=paper_ci,
                signed=True,
                failed=failed,
                sign=sign,
                key=("gap", _subset(subset), (solver, reference)),
            )

    def share(
        self,
        source: str,
        where: str,
        line: int,
        what: str,
        arm: str,
        paper_model: str | None,
        kind: str,
        paper: float,
        digits: int,
        count: bool = False,
    ) -> None:
        an = self.ctx.an
        for m in self.ctx.models_for(paper_model, (arm,)) or (None,):
            st = stats.share(an, m, arm, kind) if m else None
            reasons = self.ctx.reasons(m, paper_model, (arm,), st, "full") if m and st else []
            t = self._rerun(paper_model, st, digits if not count else 2, 1, (arm,))
            scale = 1.0
            if count and st is not None:
                scale = st.rows / 100.0  # the share as a count of rows, its tolerance likewise
                raw = (tol.Z95 * t.sd_paper if t.sd_paper is not None else 0.0) * scale
                t = tol.tolerance(
                    raw + 0.5,
                    t.sd_paper,
                    0.5,
                    t.source.split(", + ")[0] + f", as rows: \u00d7 {st.rows:,} rows / 100, + 0.5 rounding",
                    digits,
                    None,
                )
            self.add(
                source=source,
                where=where,
                line=line,
                what=what,
                paper_model=paper_model,
                model=m,
                unit="rows" if count else "%",
                paper=paper,
                digits=digits,
                stat=st,
                tolerance=t,
                reasons=reasons,
                scale=scale,
                key=("count" if count else "share", kind, (arm,)),
                failed=self.failed_on(m, arm, "full"),
            )

    def route(
        self,
        source: str,
        where: str,
        line: int,
        what: str,
        arm: str,
        paper_model: str | None,
        route: str,
        paper: float,
        digits: int,
    ) -> None:
        an = self.ctx.an
        for m in self.ctx.models_for(paper_model, (arm,)) or (None,):
            st = stats.route_share(an, m, arm, route) if m else None
            reasons = self.ctx.reasons(m, paper_model, (arm,), st, "full") if m and st else []
            self.add(
                source=source,
                where=where,
                line=line,
                what=what,
                paper_model=paper_model,
                model=m,
                unit="%",
                paper=paper,
                digits=digits,
                stat=st,
                tolerance=self._rerun(paper_model, st, digits, 1, (arm,)),
                reasons=reasons,
                key=("route", route, (arm,)),
            )

    def covered(self, source: str, where: str, line: int, arm: str, paper: float, digits: int) -> None:
        """The library's covered cases (a count: exact), on the results' cases; `arm` the library arm the paper's
        number names (paper_values.json: Gold-Solve)."""
        an, ctx = self.ctx.an, self.ctx
        ms = ctx.models_for(None, (arm,))
        m = ms[0] if ms else None
        if m:  # on the library's own cases: a case only another arm's records name is none of its
            have = ~np.isnan(an.data.block(m, arm)).all(axis=0)
            st = stats.Stat(
                float((an.impl_mask() & have).sum()),
                n_cases=int(have.sum()),
                extra={"calcs": stats.calculator_counts(an, have)},
            )
        else:
            st = None
        reasons = ctx.reasons(m, None, (arm,), st, "full") if m else []
        self.add(
            source=source,
            where=where,
            line=line,
            what="cases the library covers",
            paper_model=None,
            model=m,
            unit="cases",
            paper=paper,
            digits=digits,
            stat=st,
            tolerance=tol.exact(),
            reasons=reasons,
            key=("covered", "full", (arm,)),
        )

    def failed_on(self, model: str | None, arm: str, subset: str) -> list[str]:
        """The claims about `model` that did not hold and rest on `arm` (on `subset`, where the claim states one): a
        number they rest on is never 'consistent with the paper's claims intact'."""
        checks = {c["id"]: c["check"] for c in paper_values()["claims"]}
        out = []
        for c in self.claims:
            if c["model"] != model or c["verdict"] != "did not hold" or c["id"] not in checks:
                continue
            inputs = claim_inputs(checks[c["id"]])
            if (arm, _subset(subset)) in inputs or (arm, None) in inputs:
                out.append(c["says"] + f": {c['why']}")
        return out

    def _rerun(
        self, paper_model: str | None, st: stats.Stat | None, digits: int, n_arms: int, arms: Iterable[str]
    ) -> tol.Tolerance:
        return tol.no_result() if st is None else tol.for_stat(paper_model, st, digits, n_arms, reruns(arms))


def number_rows(ctx: Context, claims: list[dict]) -> list[dict]:
    """Every paper number with a computation, beside the user's (module docstring)."""
    b = NumberRows(ctx, claims)
    rows, gaps = paper_rows(), gap_rows()
    for c in paper_values()["cells"]:
        source = "Table 1" if c["table"] == "tab:ladder" else "Table 2"
        where = f"{c['row']} | {c['column']}"
        if c["kind"] == "accuracy":
            arm = rows.get(c["row"]) or c.get("arm")
            what = c["row"] if c["block"] == "upper" else f"{c['row']} {c['column']}"
            b.accuracy(
                source,
                where,
                c["line"],
                what,
                arm,
                c["model"],
                c["subset"],
                c["value"],
                c["digits"],
                construction=arm in MODEL_FREE_ARMS,
            )
        else:
            solver, reference = gaps.get(c["row"]) or lower_block_gap()
            b.gap(
                source, where, c["line"], c["row"], solver, reference, c["model"], c["subset"], c["value"], c["digits"]
            )
    for t in paper_values()["text_numbers"]:
        source = f"text ({t['id'].removeprefix('text:')})"
        nums = [n for n in t["numbers"] if not n["name"].startswith(("lo", "hi"))]
        for spec, n in zip(t["compare"] or [], nums):
            where = f"{t['what']} [{n['name']}]"
            k = spec["kind"]
            if k == "gap":
                label = f"{spec['solver']} \u2212 {spec['reference']}" + (
                    "" if _subset(spec["subset"]) == "all" else f" ({spec['subset']})"
                )
                b.gap(
                    source,
                    where,
                    n["line"],
                    label,
                    spec["solver"],
                    spec["reference"],
                    spec["model"],
                    spec["subset"],
                    n["value"],
                    n["digits"],
                    sign=spec.get("sign", 1),
                )
            elif k == "accuracy":
                b.accuracy(
                    source,
                    where,
                    n["line"],
                    f"{spec['arm']} ({spec['subset']})",
                    spec["arm"],
                    spec["model"],
                    spec["subset"],
                    n["value"],
                    n["digits"],
                )
            elif k == "outcome_share":
                b.share(
                    source,
                    where,
                    n["line"],
                    f"{spec['arm']} {spec['share']} share of case-seed rows",
                    spec["arm"],
                    spec["model"],
                    spec["share"],
                    n["value"],
                    n["digits"],
                )
            elif k == "outcome_count":
                b.share(
                    source,
                    where,
                    n["line"],
                    f"{spec['arm']} rows with no valid answer",
                    spec["arm"],
                    spec["model"],
                    spec["share"],
                    n["value"],
                    n["digits"],
                    count=True,
                )
            elif k == "route_share":
                b.route(
                    source,
                    where,
                    n["line"],
                    f"{spec['arm']} rows routed to the {spec['route']}",
                    spec["arm"],
                    spec["model"],
                    spec["route"],
                    n["value"],
                    n["digits"],
                )
            elif k == "covered_cases":
                b.covered(source, where, n["line"], spec["arm"], n["value"], n["digits"])
    return b.rows


def unmapped_numbers() -> list[dict]:
    """The text's numbers with no computation of their own (each read by a claim, the ledger or nothing)."""
    return [
        {"id": t["id"], "line": t["line"], "what": t["what"], "values": ", ".join(n["raw"] for n in t["numbers"])}
        for t in paper_values()["text_numbers"]
        if not t["compare"]
    ]
