"""The paper's claims, each checked with the user's own statistics.

A claim (paper_values.json `claims`, extracted with its .tex line) says something about the paper's numbers: an
interval clears or crosses zero, a point estimate's sign, an ordering, a range over arms or checkpoints, a bound,
a p-value, a rerun agreement. Each is checked on the user's run (their interval, their sign, their ordering) and
gets one verdict:

* **held**: the user's statistic says what the paper says;
* **did not hold**: it does not (the numbers are named);
* **undecided at this many draws (at least N needed)**: the user's margin lies within the Monte Carlo error of the
  bootstrap draws or sign flips that gave it (a p-value at its floor, an interval end a hair from zero): more
  draws decide it;
* **not comparable: reasons**: a statistic behind it is not the paper's setting (harness.analysis.comparison.context),
  or an input the claim rests on is not in the results;
* **no result**: the results have nothing for it.

Every claim states the inputs it lacked (`lacks`): the arms an ordering is over, the members of a range, the
comparisons of an interval check, the formula-reading arms of the truncation claims, the other members of a
p-value's Holm family. A claim lacking an input is never *held* (nor undecided): it is not comparable, the present
inputs' verdict said. It did not hold only where the missing inputs could not change that (an arm present already
above the hybrid; a member already outside the range); a pooled share (the truncation bound) is not comparable.

Monte Carlo. A p-value from B sign flips is at least 1/(B+1) before Holm's adjustment and m/(B+1) after it over m
comparisons: with 1,000 flips p < 0.001 cannot be reached. The claim is decided when the 95% Clopper-Pearson
interval of each family member's flip count, carried through Holm (missing members at 0 and at 1), lies on one
side of the bound; else it is undecided, with the number of flips that would decide it at the present estimate.
An interval claim is undecided when the user's interval end lies within 1.96 Monte Carlo SDs of zero (and the
paper's margin is not itself a hair). A p-value claim also needs the gap's direction the paper reports.

Margins and tolerances. A claim is decided by a margin: the distance of an interval end from zero, of a point
estimate from zero, of one accuracy above another, of a member from a range's end. The margin carries rerun
noise (harness.analysis.comparison.tolerance: the paper's rerun agreement, the user's seed spread) and, for an
interval end, the bootstrap's Monte Carlo error. The user's margin must be on the claimed side. A claim the paper
itself makes by a margin within that tolerance (the 32B + syntax interval's lower end, 1.00; the Gold-first
hybrid's 0.11 points over + syntax at 32B) is fragile: a faithful rerun may land on either side, so it also holds
when the user's margin is within the tolerance of the paper's, and the row says so.

Readings the kit makes (stated in each row): "p=0.010" is read as significant at the 5% level; "about 95%" as
95 +- 2.5 (the number is given to the nearest 5); which comparisons the ICC and effective-sample-size ranges and
which arms the seed-agreement ranges span (table s5's and s19's bodies are not in the source), so only that each
of the user's members lies in the range is checked, not where its ends fall.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Required, TypedDict

import numpy as np

from harness.analysis.comparison import ours as stats
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.context import MODEL_FREE_ARMS, Context, same_model
from harness.analysis.comparison.values import claims as paper_claims
from harness.analysis.comparison.values import number, paper_checkpoints
from harness.analysis.stats.families import declared_comparisons
from harness.analysis.stats.hypothesis_tests import EXACT_MAX_NONZERO, holm
from harness.model.rehearsal.labels import MODEL_FREE

if TYPE_CHECKING:
    from harness.analysis.results_analysis import Analysis

HELD, NOT_HELD, UNDECIDED, NOT_COMPARABLE, NO_RESULT = (
    "held",
    "did not hold",
    "undecided",
    "not comparable",
    "no result",
)
CLAIM_VERDICTS = (HELD, NOT_HELD, UNDECIDED, NOT_COMPARABLE, NO_RESULT)
DECIMALS = 2  # margins and tolerances are shown, and compared, to two decimals (one rounding)
P_DECIMALS = 4  # p-values to four
P_LEVEL = 0.05  # "p=0.010" read as significant at the conventional level
ABOUT = 2.5  # "about 95%": the nearest 5%
SHORT = {
    "Qwen2.5-7B-Instruct": "7B",
    "Qwen2.5-32B-Instruct-AWQ": "32B",
    "Mistral-7B-Instruct-v0.3": "Mistral-7B",
    "Phi-3.5-mini-instruct": "Phi-3.5-mini",
}


Gap = tuple[str, str, str, str]  # (paper checkpoint, solver, reference, subset): the gap a claim decides
Member = tuple[str, float, float]  # (label, value, tolerance) of one member of a range


class Decided(TypedDict, total=False):
    """A claim row's fields beyond its model, verdict and texts: ClaimRows.add's keywords, `lacks` always given."""

    paper_model: str | None
    gap: Gap | None
    lacks: Required[list[str]]
    margin: float | None
    paper_margin: float | None
    tolerance: float | None
    decimals: int


def _sd(paper_model: str | None, st: stats.Stat | None, arms: int) -> float:
    """The rerun SD (pp) of a statistic from the paper's rerun agreement (the user's seed spread never widens it:
    harness.analysis.comparison.tolerance)."""
    if st is None or not st.rows:
        return 0.0
    d, _ = tol.paper_disagreement(paper_model)
    return tol.flip_sd(d, st.rows, arms)


def _r(x: float | None, decimals: int = DECIMALS) -> float | None:
    return None if x is None else tol.round_half_up(x, decimals) + 0.0


def draws_needed(draws: int, sd: float, margin: float) -> int:
    """Bootstrap draws at which 1.96 Monte Carlo SDs (SD ~ 1/sqrt(draws)) fall inside |margin|, to the next 1,000
    (and more than `draws`, at which they did not)."""
    need = 10 * draws if margin == 0 else draws * (tol.Z95 * sd / abs(margin)) ** 2
    return int(math.ceil(max(need, draws + 1) / 1000.0) * 1000)


class ClaimRows:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.rows: list[dict] = []

    def add(
        self,
        claim: dict[str, Any],
        model: str | None,
        verdict: str,
        why: str,
        paper: str = "",
        ours: str = "",
        paper_model: str | None = None,
        gap: Gap | None = None,
        lacks: Iterable[str] = (),
        margin: float | None = None,
        paper_margin: float | None = None,
        tolerance: float | None = None,
        decimals: int = DECIMALS,
    ) -> None:
        chk = claim["check"]
        self.rows.append(
            {
                "id": claim["id"],
                "line": claim["line"],
                "says": claim["says"],
                "headline": bool(claim["headline"]),
                "kind": chk["kind"],
                "paper_model": paper_model if paper_model is not None else chk.get("model") or "",
                "model": model or "",
                "verdict": verdict,
                "why": why,
                "paper": paper,
                "ours": ours,
                "gap": gap,
                "lacks": "; ".join(lacks),
                "margin": margin,
                "paper_margin": paper_margin,
                "tolerance": tolerance,
                "decimals": decimals,
            }
        )

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _decide(
        self,
        claim: dict[str, Any],
        model: str,
        margin_user: float | None,
        margin_paper: float | None,
        tolerance: float,
        paper_text: str,
        ours_text: str,
        reasons: list[str],
        paper_model: str | None = None,
        gap: Gap | None = None,
        said: str = "",
        lacks: Iterable[str] = (),
        rescuable: bool = False,
        mc: float = 0.0,
        draws: int | None = None,
        mc_what: str = "",
        strict: bool = False,
    ) -> None:
        """One claim row from the user's margin (module docstring), every number rounded once to DECIMALS:
        held when the margin is on the claimed side (>= 0) beyond its Monte Carlo band `mc` (1.96 MC SDs); also
        when the paper makes the claim by a hair (its own margin within `tolerance` of zero) and the user's margin
        is at most `tolerance` below the paper's; undecided within the band; else did not hold (`strict`: a margin of
        exactly zero is not on the claimed side: an interval end at 0.00 does not clear zero). `lacks`: inputs the
        results do not have (never held; not comparable, or did not hold where they could not change that unless
        `rescuable`). `said` is what the user's statistic says, in words."""
        mu, mp, t, band = _r(margin_user), _r(margin_paper), _r(tolerance), _r(mc)
        row = Decided(paper_model=paper_model, gap=gap, lacks=list(lacks), margin=mu, paper_margin=mp, tolerance=t)
        if reasons:
            return self.add(claim, model, NOT_COMPARABLE, "; ".join(reasons), paper_text, ours_text, **row)
        hair = mp is not None and abs(mp) <= t
        on_side = mu > 0 if strict else mu >= 0
        if hair and mu >= mp - t:
            verdict = HELD
            why = (
                said
                if on_side
                else (
                    f"{said}, but the paper makes the claim by a hair: its own margin {mp:.2f} "
                    f"and yours {mu:.2f} are within rerun noise (\u00b1{t:.2f}) of each other"
                )
            )
        elif on_side and (not band or mu > band):
            verdict, why = HELD, said
        elif band and abs(mu) <= band:
            verdict = UNDECIDED
            why = (
                f"undecided at {draws:,} {mc_what} (at least {draws_needed(draws, mc / tol.Z95, mu):,} needed): "
                f"{said}; your margin {mu:.2f} is within Monte Carlo error (\u00b1{band:.2f}) of zero"
            )
        else:
            verdict = NOT_HELD
            why = said + (
                f" (margin {mu:.2f}; the paper's {mp:.2f}, rerun noise \u00b1{t:.2f})"
                if mp is not None
                else f" (margin {mu:.2f})"
            )
        return self._with_lacks(claim, model, verdict, why, paper_text, ours_text, row, rescuable)

    def _with_lacks(
        self,
        claim: dict[str, Any],
        model: str,
        verdict: str,
        why: str,
        paper_text: str,
        ours_text: str,
        row: Decided,
        rescuable: bool = False,
    ) -> None:
        lacks = row["lacks"]
        if lacks and (verdict in (HELD, UNDECIDED) or rescuable):
            verdict, why = NOT_COMPARABLE, f"these results lack {'; '.join(lacks)} (on what ran: {why})"
        elif lacks:
            why = f"{why}; these results also lack {'; '.join(lacks)}, which cannot change that"
        return self.add(claim, model, verdict, why, paper_text, ours_text, **row)

    def _models(self, paper_model: str | None, arms: Iterable[str]) -> list[str]:
        return self.ctx.models_for(paper_model, tuple(arms))

    def _pairs(self, paper_models: list[str], has: Callable[[str], bool]) -> list[tuple[str, str]]:
        """(paper checkpoint, user's model) for a claim over several checkpoints: each checkpoint's own model;
        when none is here, every model that has data (then not comparable: another model), once."""
        users = [m for m in self.ctx.an.data.models if m != MODEL_FREE and has(m)]
        pairs = [(pm, m) for pm in paper_models for m in users if same_model(m, pm)]
        if pairs:
            return pairs
        names = ", ".join(SHORT.get(pm, pm) for pm in paper_models)
        return [
            (paper_models[0] if len(paper_models) == 1 else f"one of {names}", m)
            for m in users
            if not any(same_model(m, p) for p in paper_checkpoints())
        ]

    def _truncations(
        self, paper_models: list[str]
    ) -> Iterator[tuple[str, str, dict, tuple[str, ...], list[str], list[str]]]:
        """(paper checkpoint, model, truncation counts, formula arms it ran, those it lacks, reasons) for the
        truncation claims: one row per checkpoint, over the paper's formula-reading arms."""
        an, arms = self.ctx.an, stats.formula_arms()
        for pm, m in self._pairs(paper_models, lambda x: any(an.data.has(x, a) for a in arms)):
            tr = stats.truncation(an, m, arms)
            if tr is not None:
                ran = tuple(a for a in arms if an.data.has(m, a))
                lacks = [a for a in arms if a not in ran]
                yield pm, m, tr, ran, lacks, self.ctx.reasons(m, pm, ran, _records_stat(an, tr), "full")

    # ---- kinds -----------------------------------------------------------------------------------------------
    def check_interval(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        ev = c.get("evidence") or {}
        plo = number(ev["lo"])["value"] if "lo" in ev else None
        phi = number(ev["hi"])["value"] if "hi" in ev else None
        pval = number(ev["value"])["value"] if "value" in ev else None
        key = (c["model"], c["solver"], c["reference"], "all" if c["subset"] in ("all", "full") else c["subset"])
        for m in self._models(c["model"], (c["solver"], c["reference"])):
            st = stats.gap(self.ctx.an, m, c["solver"], c["reference"], c["subset"])
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["solver"], c["reference"]), st, c["subset"])
            lo, hi = _r(st.lo), _r(st.hi)  # as shown: the numbers the claim is decided on
            margin_user, margin_paper = (
                _interval_margin(c["expect"], lo, hi),
                _interval_margin(c["expect"], plo, phi) if plo is not None else None,
            )
            mc = tol.interval_end_sd(st.lo, st.hi, self.ctx.draws) if st.lo is not None else 0.0
            mc_paper = tol.interval_end_sd(plo, phi, tol.paper_draws()) if plo is not None else 0.0
            t = tol.Z95 * math.sqrt(_sd(c["model"], st, 2) ** 2 + mc**2 + mc_paper**2)
            paper_text = (
                f"{pval:+.2f} [{plo:.2f}, {phi:.2f}]"
                if plo is not None
                else f"{pval:+.2f} (interval not printed)"
                if pval is not None
                else ""
            ) + f": {c['expect']}"
            self._decide(
                claim,
                m,
                margin_user,
                margin_paper,
                t,
                paper_text,
                f"{st.value:+.2f} [{lo:.2f}, {hi:.2f}], {st.n_text}",
                reasons,
                c["model"],
                key,
                f"your interval [{lo:.2f}, {hi:.2f}] {_interval_words(lo, hi)}",
                mc=tol.Z95 * mc,
                draws=self.ctx.draws,
                mc_what="bootstrap draws",
                strict=c["expect"] != "crosses zero",
            )

    def check_sign(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        want = 1 if c["expect"] == "positive" else -1
        pval = number(c["evidence"]["value"])["value"]
        key = (c["model"], c["solver"], c["reference"], "all")
        for m in self._models(c["model"], (c["solver"], c["reference"])):
            st = stats.gap(self.ctx.an, m, c["solver"], c["reference"], c["subset"])
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["solver"], c["reference"]), st, c["subset"])
            t = tol.Z95 * _sd(c["model"], st, 2)
            value = _r(st.value)
            self._decide(
                claim,
                m,
                want * value,
                want * pval,
                t,
                f"{pval:+.2f} ({c['expect']})",
                f"{value:+.2f}, {st.n_text}",
                reasons,
                c["model"],
                key,
                f"your point estimate {value:+.2f} is "
                f"{'positive' if value > 0 else 'negative' if value < 0 else 'zero'}",
            )

    def check_order(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        left_q, rights = c["left"], c["right"]
        ev = c.get("evidence") or {}
        arms = _arms(left_q)
        chooser = (
            [a for a in arms if a not in MODEL_FREE_ARMS]
            or [a for a in _arms(rights[0]) if a not in MODEL_FREE_ARMS]
            or list(arms)
        )
        for m in self._models(c["model"], chooser):
            left = _quantity(self.ctx.an, m, left_q)
            if left is None:
                continue
            got = [(q, _quantity(self.ctx.an, m, q)) for q in rights]
            lacks = [_label(q) for q, st in got if st is None]
            got = [(q, s) for q, s in got if s is not None]
            if not got:
                continue
            reasons = self.ctx.reasons(m, c["model"], arms, left, left_q.get("subset", "full"))
            for q, st in got:
                reasons += self.ctx.reasons(m, c["model"], _arms(q), st, q.get("subset", "full"))
            q, best = max(got, key=lambda g: g[1].value)
            lv, bv = _r(left.value), _r(best.value)
            margin = lv - bv
            t = tol.Z95 * math.hypot(_sd(c["model"], left, 1), _sd(c["model"], best, 1))
            pl = number(ev["left"])["value"] if ev.get("left") else None
            right_refs = ev.get("right") or []
            pr = [number(r)["value"] for r in right_refs] if right_refs else None
            pm = (pl - max(pr)) if pl is not None and pr else None
            paper_text = (
                f"{pl:.2f} against {max(pr):.2f}" if pm is not None else f"{pl:.2f}" if pl is not None else "as stated"
            )
            self._decide(
                claim,
                m,
                margin,
                pm,
                t,
                paper_text,
                f"{lv:.2f} against {_label(q)} {bv:.2f}",
                list(dict.fromkeys(reasons)),
                c["model"],
                said=f"yours is {margin:+.2f} over the largest of the others ({_label(q)})",
                lacks=lacks,
            )

    def check_within_interval(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        for m in self._models(c["model"], c["comparisons"][0]):  # the models that ran its first comparison
            parts, reasons, worst, lacks, band = [], [], None, [], 0.0
            for solver, reference in c["comparisons"]:
                full = stats.gap(self.ctx.an, m, solver, reference, "all")
                part = stats.gap(self.ctx.an, m, solver, reference, c["subset"])
                if full is None or part is None:
                    lacks.append(f"{solver} \u2212 {reference}")
                    continue
                reasons += self.ctx.reasons(m, c["model"], (solver, reference), full, "all")
                reasons += self.ctx.reasons(m, c["model"], (solver, reference), part, c["subset"])
                lo, hi, v = _r(full.lo), _r(full.hi), _r(part.value)
                margin = min(v - lo, hi - v)
                worst = margin if worst is None else min(worst, margin)
                band = max(band, tol.Z95 * tol.interval_end_sd(full.lo, full.hi, self.ctx.draws))
                parts.append(f"{solver} \u2212 {reference}: {v:+.2f} in [{lo:.2f}, {hi:.2f}]")
            if not parts:
                continue
            self._decide(
                claim,
                m,
                worst,
                None,
                0.0,
                "no headline gap leaves its interval (s10)",
                "; ".join(parts),
                list(dict.fromkeys(reasons)),
                c["model"],
                said="every gap without the replaced calculators lies in your full-set interval"
                if worst >= 0
                else "a gap without the replaced calculators leaves your full-set interval",
                lacks=lacks,
                mc=band,
                draws=self.ctx.draws,
                mc_what="bootstrap draws",
            )

    def check_zero(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        q = c["quantity"]
        if q["quantity"] == "none_rows":
            for m in self._models(c["model"], (q["arm"],)):
                st = stats.share(self.ctx.an, m, q["arm"], "none")
                if st is None:
                    continue
                reasons = self.ctx.reasons(m, c["model"], (q["arm"],), st, "full")
                self._decide(
                    claim,
                    m,
                    -float(st.extra["count"]),
                    None,
                    0.0,
                    "none",
                    f"{st.extra['count']} of {st.rows:,} rows",
                    reasons,
                    c["model"],
                    said=f"{st.extra['count']} unanswered rows",
                )
            return
        for pm, m, tr, ran, lacks, reasons in self._truncations(c["models"]):
            self._decide(
                claim,
                m,
                -float(tr["correct"]),
                None,
                0.0,
                "none",
                f"{tr['correct']} truncated rows scored correct ({tr['truncated']} of {tr['calls']:,} calls "
                f"cut; arms {', '.join(ran)})",
                reasons,
                pm,
                said=f"{tr['correct']} such rows",
                lacks=lacks,
            )

    def check_equals(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        q = c["quantity"]
        want = number(c["evidence"]["value"])
        for m in self._models(None, (q["arm"],)):
            st = _quantity(self.ctx.an, m, q)
            if st is None:
                continue
            reasons = self.ctx.reasons(m, None, (q["arm"],), st, q["subset"], construction=True)
            shown = round(st.value, want["digits"])
            self._decide(
                claim,
                MODEL_FREE if q["arm"] in MODEL_FREE_ARMS else m,
                -abs(shown - want["value"]),
                None,
                0.0,
                f"{want['value']:.2f}",
                f"{shown:.2f}, {st.n_text}",
                reasons,
                None,
                said=f"yours is {shown:.2f}",
            )

    def check_p_value(self, claim: dict[str, Any]) -> None:
        """The permutation p of a comparison, Holm within its family, against the paper's bound, in the paper's
        direction (module docstring: Monte Carlo, family members not run)."""
        c = claim["check"]
        p_paper = number(c["evidence"]["value"])["value"]
        bound = p_paper if c["relation"] == "<" else P_LEVEL
        reading = f"p < {p_paper:g}" if c["relation"] == "<" else f"p = {p_paper:.3f}, read as p < {P_LEVEL:g}"
        want = _direction(c["model"], c["solver"], c["reference"])
        for m in self._models(c["model"], (c["solver"], c["reference"])):
            st = stats.gap(self.ctx.an, m, c["solver"], c["reference"], "all")
            row = self.ctx.an.gap(m, c["solver"], c["reference"], "all")
            if st is None or row is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["solver"], c["reference"]), st, "all")
            fam = holm_bounds(self.ctx.an, m, row, self.ctx.draws)
            p = _r(fam["point"], P_DECIMALS)
            ours = (
                f"p = {p:.4f} (Holm over {fam['members']} comparison(s) of the '{row['family']}' family; raw "
                f"{float(row['perm_p_case']):.4f}; {self.ctx.draws:,} sign flips; gap {_r(st.value):+.2f})"
            )
            # the family members not run are listed only where they could change the verdict (the bounds carry
            # them at 0 and at 1)
            out = Decided(
                paper_model=c["model"],
                lacks=fam["lacks"],
                margin=_r(bound - fam["point"], P_DECIMALS),
                decimals=P_DECIMALS,
            )
            if reasons:
                self.add(claim, m, NOT_COMPARABLE, "; ".join(reasons), reading, ours, **out)
                continue
            value = _r(st.value)
            if want and value * want <= 0:
                self._with_lacks(
                    claim,
                    m,
                    NOT_HELD,
                    f"your gap {value:+.2f} is not in the paper's direction "
                    f"({'negative' if want < 0 else 'positive'}), whatever its p",
                    reading,
                    ours,
                    {**out, "lacks": []},
                )
                continue
            lo, hi = _r(fam["lower"], P_DECIMALS), _r(fam["upper"], P_DECIMALS)
            if hi < bound:
                self._with_lacks(
                    claim,
                    m,
                    HELD,
                    f"your p is below {bound:g} (Monte Carlo 95%: {lo:.4f} to {hi:.4f})",
                    reading,
                    ours,
                    {**out, "lacks": []},
                )
            elif lo >= bound:
                self._with_lacks(
                    claim,
                    m,
                    NOT_HELD,
                    f"your p is not below {bound:g} (Monte Carlo 95%: {lo:.4f} to {hi:.4f})",
                    reading,
                    ours,
                    {**out, "lacks": []},
                )
            elif fam["lacks"] and not (fam["point_upper"] < bound or fam["point_lower"] >= bound):
                self.add(
                    claim,
                    m,
                    NOT_COMPARABLE,
                    f"these results lack {'; '.join(fam['lacks'])}: Holm over the "
                    f"family with them could give {_r(fam['point_lower'], P_DECIMALS):.4f} to "
                    f"{_r(fam['point_upper'], P_DECIMALS):.4f} against {bound:g}",
                    reading,
                    ours,
                    **out,
                )
            else:
                need = flips_needed(fam, bound, self.ctx.draws)
                floor = fam["floor"]
                why = (
                    f"undecided at {self.ctx.draws:,} sign flips (at least {need:,} needed): your p {p:.4f} has "
                    f"Monte Carlo 95% interval {lo:.4f} to {hi:.4f} around {bound:g}"
                )
                if floor >= bound:
                    why += (
                        f"; the smallest p {self.ctx.draws:,} flips can give after Holm over "
                        f"{fam['members'] + len(fam['lacks'])} comparisons is {_r(floor, P_DECIMALS):.4f}"
                    )
                self.add(claim, m, UNDECIDED, why, reading, ours, **{**out, "lacks": []})

    def check_agreement(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        want = number(c["evidence"]["value"])["value"]
        for m in self._models(c["model"], (c["arm"],)):
            st = stats.pairwise_agreement(self.ctx.an, m, c["arm"], c["subset"])
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["arm"],), st, c["subset"])
            allow = _r(tol.binomial_allowance(st.value, st.rows))
            value = _r(st.value)
            if c["relation"] == "about":
                margin = ABOUT + allow - abs(value - want)
                paper_text = f"about {want:g}% (read as {want - ABOUT:g} to {want + ABOUT:g})"
            else:
                margin = value - (want - 0.05 - allow)
                paper_text = f"at least {want:g}%"
            self._decide(
                claim,
                m,
                margin,
                None,
                0.0,
                paper_text,
                f"{value:.2f}% mean pairwise agreement over your seeds {st.n_text} "
                f"(binomial allowance \u00b1{allow:.2f})",
                reasons,
                c["model"],
                said=f"your seeds agree on {value:.2f}%",
            )

    def check_at_most(self, claim: dict[str, Any]) -> None:
        c = claim["check"]
        want = number(c["evidence"]["value"])
        for pm, m, tr, ran, lacks, reasons in self._truncations(c["models"]):
            allow = _r(tol.binomial_allowance(tr["share"], tr["calls"]))
            share = _r(tr["share"])
            bound = want["value"] + 0.5 * 10 ** -want["digits"] + allow
            self._decide(
                claim,
                m,
                bound - share,
                None,
                0.0,
                f"at most {want['value']:g}%",
                f"{share:.2f}% ({tr['truncated']} of {tr['calls']:,} calls, arms {', '.join(ran)}; "
                f"binomial allowance {allow:.2f})",
                reasons,
                pm,
                said=f"{share:.2f}% of your calls end at the limit",
                lacks=lacks,
                rescuable=True,
            )

    def check_range(self, claim: dict[str, Any]) -> None:
        """A range over checkpoints: with `ends` (its ends are the paper's members'), one row over every
        checkpoint; without (which members it spans is the kit's reading), one row per checkpoint whose members
        each lie in it."""
        c = claim["check"]
        lo_n, hi_n = number(c["evidence"]["low"]), number(c["evidence"]["high"])
        rounding = 0.5 * 10 ** -max(lo_n["digits"], hi_n["digits"])
        paper_text = f"{lo_n['value']:g} to {hi_n['value']:g}"
        users = [m for m in self.ctx.an.data.models if m != MODEL_FREE]
        ours_of = lambda ms: "; ".join(f"{label} {v:.2f}" for label, v, _ in ms)  # noqa: E731
        groups = []  # (paper checkpoints, model label, members, lacks, reasons)
        missing = []
        for pm in c["models"]:
            here = [u for u in users if same_model(u, pm)]
            if not here:
                missing.append(SHORT.get(pm, pm))
            for m in here:
                reasons: list[str] = []
                lacks: list[str] = []
                groups.append((pm, m, self._members(c["member"], m, pm, reasons, lacks), lacks, reasons))
        if not any(g[2] for g in groups):
            names = ", ".join(SHORT.get(pm, pm) for pm in c["models"])
            other, reasons = [], []
            for m in [u for u in users if not any(same_model(u, p) for p in paper_checkpoints())]:
                # a model that is none of the paper's checkpoints: its members are shown, never judged
                other += self._members(c["member"], m, f"one of {names}", reasons, [])
            if other:
                return self.add(
                    claim,
                    ", ".join(users),
                    NOT_COMPARABLE,
                    "; ".join(dict.fromkeys(reasons)),
                    paper_text,
                    ours_of(other),
                )
            return self.add(claim, "", NO_RESULT, "none of the members ran here", paper_text, "")

        def beyond(members: list[Member]) -> list[Member]:
            return [
                (label, v, t)
                for label, v, t in members
                if v < lo_n["value"] - rounding - t or v > hi_n["value"] + rounding + t
            ]

        if not c["ends"]:
            for pm, m, members, lacks, reasons in groups:
                if not members:
                    continue
                out = beyond(members)
                verdict, why = (
                    (
                        NOT_HELD,
                        "beyond the range (with its tolerance): "
                        + "; ".join(f"{label} {v:.2f} (\u00b1{t:.2f})" for label, v, t in out),
                    )
                    if out
                    else (
                        HELD,
                        "every member lies in the range (with its tolerance); which members the paper's range spans "
                        "is the kit's reading, so its ends are not compared",
                    )
                )
                if reasons:
                    self.add(
                        claim,
                        m,
                        NOT_COMPARABLE,
                        "; ".join(dict.fromkeys(reasons)),
                        paper_text,
                        ours_of(members),
                        paper_model=pm,
                        lacks=lacks,
                    )
                else:
                    self._with_lacks(
                        claim,
                        m,
                        verdict,
                        why,
                        paper_text,
                        ours_of(members),
                        Decided(paper_model=pm, gap=None, lacks=lacks, margin=None, paper_margin=None, tolerance=None),
                    )
            return
        members = [x for g in groups for x in g[2]]
        lacks = [x for g in groups for x in g[3]] + [f"the {name} checkpoint" for name in missing]
        reasons = [x for g in groups for x in g[4]]
        who = ", ".join(sorted({g[1] for g in groups if g[2]}))
        row = Decided(
            paper_model=", ".join(c["models"]), gap=None, lacks=lacks, margin=None, paper_margin=None, tolerance=None
        )
        if reasons:
            return self.add(
                claim, who, NOT_COMPARABLE, "; ".join(dict.fromkeys(reasons)), paper_text, ours_of(members), **row
            )
        out = beyond(members)
        if out:
            return self._with_lacks(
                claim,
                who,
                NOT_HELD,
                "beyond the range (with its tolerance): "
                + "; ".join(f"{label} {v:.2f} (\u00b1{t:.2f})" for label, v, t in out),
                paper_text,
                ours_of(members),
                row,
            )
        (lo_l, lo_v, lo_t), (hi_l, hi_v, hi_t) = min(members, key=lambda x: x[1]), max(members, key=lambda x: x[1])
        off = [
            f"low end {lo_v:.2f} ({lo_l}) against {lo_n['value']:g}"
            for _ in [0]
            if abs(lo_v - lo_n["value"]) > lo_t + rounding
        ] + [
            f"high end {hi_v:.2f} ({hi_l}) against {hi_n['value']:g}"
            for _ in [0]
            if abs(hi_v - hi_n["value"]) > hi_t + rounding
        ]
        if off:  # the ends rest on every checkpoint: a missing one could move them back
            return self._with_lacks(
                claim,
                who,
                NOT_HELD,
                "every member in the range, but its ends moved beyond rerun noise: " + "; ".join(off),
                paper_text,
                ours_of(members),
                row,
                rescuable=True,
            )
        return self._with_lacks(
            claim,
            who,
            HELD,
            "every member in the range and both ends within rerun noise",
            paper_text,
            ours_of(members),
            row,
        )

    def _members(self, member: dict, m: str, pm: str, reasons: list[str], lacks: list[str]) -> list[Member]:
        """(label, value, tolerance) of each member a model contributes to a range (as shown: two decimals); the
        members it lacks are added to `lacks`."""
        an, out, short = self.ctx.an, [], SHORT.get(pm, m)
        q = member["quantity"]
        if q == "gap":
            st = stats.gap(an, m, member["solver"], member["reference"], member["subset"])
            if st is None:
                lacks.append(f"{short} {member['solver']} \u2212 {member['reference']}")
            else:
                reasons += self.ctx.reasons(m, pm, (member["solver"], member["reference"]), st, member["subset"])
                out.append((short, _r(st.value), _r(tol.Z95 * _sd(pm, st, 2))))
        elif q in ("icc", "effective_n"):
            for solver, reference in member["comparisons"]:
                got = stats.icc_and_ess(an, m, solver, reference)
                if got is None:
                    lacks.append(f"{short} {solver} \u2212 {reference}")
                    continue
                reasons += self.ctx.reasons(m, pm, (solver, reference), got["stat"], "all")
                # no rerun evidence of the paper's for an ICC: the printed rounding only (tolerance.py)
                out.append((f"{short} {solver} \u2212 {reference}", _r(got[q]), 0.0))
        elif q == "seed_agreement":
            for arm in stats.greedy_arms(member["arms"]):
                s = stats.seed_agreement(an, m, arm)
                if s is None:
                    lacks.append(f"{short} {arm}")
                    continue
                st = stats.Stat(s["agree"], n_cases=s["cases"], seeds=tuple(an.data.seeds_of(m, arm)))
                reasons += self.ctx.reasons(m, pm, (arm,), st, "full")
                out.append((f"{short} {arm}", _r(s["agree"]), _r(tol.binomial_allowance(s["agree"], s["cases"]))))
        return out


def _direction(paper_model: str, solver: str, reference: str) -> int | None:
    """The gap's direction the paper reports for a comparison (its sign claim), or None."""
    for c in paper_claims():
        k = c["check"]
        if k["kind"] == "sign" and (k.get("model"), k.get("solver"), k.get("reference")) == (
            paper_model,
            solver,
            reference,
        ):
            return 1 if k["expect"] == "positive" else -1
    return None


def _monte_carlo(an: Analysis, model: str, row: dict) -> bool:
    """Whether a gap's sign-flip p came from Monte Carlo draws (more non-zero paired differences than the exact
    enumeration takes: harness.analysis.stats.hypothesis_tests.sign_flip_p)."""
    d = an.data
    smask = np.isin(d.seeds, row["seeds"])
    a, r = d.block(model, row["solver"])[smask], d.block(model, row["reference"])[smask]
    calcs = stats.subset_calculators(an, row["subset"])
    cases = ~np.isnan(a).any(axis=0) & ~np.isnan(r).any(axis=0) & d.case_mask(calcs)
    return int(np.count_nonzero(np.nansum(a - r, axis=0)[cases])) > EXACT_MAX_NONZERO


def _flip_interval(p: float, draws: int, mc: bool) -> tuple[float, float]:
    """95% Clopper-Pearson interval of a sign-flip p = (1 + k) / (1 + draws) (exact p: itself)."""
    if not mc:
        return p, p
    k = max(0, min(draws, int(round(p * (draws + 1) - 1))))
    from scipy.stats import beta  # at use: scipy.stats costs about 0.7 CPU-s to import

    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, draws - k + 1))
    hi = 1.0 if k == draws else float(beta.ppf(0.975, k + 1, draws - k))
    return lo, hi


def holm_bounds(an: Analysis, model: str, row: dict, draws: int) -> dict:
    """The Holm-adjusted p of one gap row within its (model, family), as the analysis gives it (`point`), and its
    bounds: the family members' Monte Carlo intervals carried through Holm, with the declared members that did not
    run at 0 (`lower`) and at 1 (`upper`); `point_lower`/`point_upper` the same without Monte Carlo error; the
    floor m/(draws+1)."""
    fam = [g for g in an.gaps if g["model"] == model and g["family"] == row["family"]]
    i = next(k for k, g in enumerate(fam) if g is row)
    present = {(g["solver"], g["reference"], g["subset"]) for g in fam}
    lacks = [
        f"{c.solver} \u2212 {c.reference}" + ("" if c.subset == "all" else f" ({c.subset})")
        for c in declared_comparisons(an.data.arms)
        if c.family == row["family"] and (c.solver, c.reference, c.subset) not in present
    ]
    raw = [float(g["perm_p_case"]) for g in fam]
    ends = [_flip_interval(p, draws, _monte_carlo(an, model, g)) for p, g in zip(raw, fam)]

    def adjusted(values: list[float], fill: float) -> float:
        return float(holm(np.array(values + [fill] * len(lacks)))[i])

    point = float(holm(np.array(raw))[i])
    return {
        "point": point,
        "raw": raw[i],
        "members": len(fam),
        "lacks": lacks,
        "lower": adjusted([e[0] for e in ends], 0.0),
        "upper": adjusted([e[1] for e in ends], 1.0),
        "point_lower": adjusted(raw, 0.0),
        "point_upper": adjusted(raw, 1.0),
        "floor": (len(fam) + len(lacks)) / (draws + 1),
    }


def flips_needed(fam: dict, bound: float, draws: int) -> int:
    """Sign flips at which the present estimate's 95% Monte Carlo interval would clear `bound` (to the next 1,000,
    and more than `draws`, at which it did not): the raw p against bound / (its Holm multiplier, the family's
    members not run counted as the bound's side needs: at 1 to hold, at 0 not to), with the floor of a p at zero
    exceedances (3.69 / flips)."""
    p = max(fam["raw"], 1e-12)
    if fam["point"] < bound:
        q = bound / max(1.0, fam["point_upper"] / p)
        need = max(tol.Z95**2 * p * (1 - p) / max(q - p, 1e-12) ** 2, 3.69 / q)
    else:
        q = bound / max(1.0, fam["point_lower"] / p)
        need = tol.Z95**2 * p * (1 - p) / max(p - q, 1e-12) ** 2
    return int(math.ceil(max(need, draws + 1) / 1000.0) * 1000)


def _records_stat(an: Analysis, tr: dict) -> stats.Stat:
    """The cases and seeds behind a records-based statistic, for the coverage check."""
    return stats.Stat(0.0, n_cases=tr["cases"], seeds=tr["seeds"])


def _interval_words(lo: float, hi: float) -> str:
    return "clears zero (above)" if lo > 0 else "clears zero (below)" if hi < 0 else "crosses zero"


def _interval_margin(expect: str, lo: float | None, hi: float | None) -> float | None:
    if lo is None or hi is None:
        return None
    if expect == "above zero":
        return lo
    if expect == "below zero":
        return -hi
    return min(-lo, hi)  # crosses zero: both ends on their side


def _arms(q: dict) -> tuple[str, ...]:
    return (q["arm"],) if "arm" in q else (q["solver"], q["reference"])


def _label(q: dict) -> str:
    return q["arm"] if "arm" in q else f"{q['solver']} \u2212 {q['reference']} ({q['subset']})"


def _quantity(an: Analysis, model: str, q: dict) -> stats.Stat | None:
    if q["quantity"] == "accuracy":
        return stats.accuracy(an, model, q["arm"], q["subset"])
    if q["quantity"] == "difference":
        return stats.difference(an, model, q["solver"], q["reference"], q["subset"])
    raise ValueError(f"unknown quantity {q['quantity']!r}")


def claim_rows(ctx: Context) -> list[dict]:
    """Every claim of the paper checked on these results (module docstring); claims the results cannot check
    get a 'no result' row, so every claim is listed."""
    b = ClaimRows(ctx)
    for claim in paper_claims():
        before = len(b.rows)
        check = getattr(b, f"check_{claim['check']['kind']}", None)  # a claim kind is a `check_` method's name
        if check is None:
            raise ValueError(f"claim {claim['id']}: no check of kind {claim['check']['kind']!r}")
        check(claim)
        if len(b.rows) == before:
            b.add(claim, None, NO_RESULT, "nothing in these results to check it with")
    if ctx.synthetic:  # a synthetic set is compared nowhere, whatever a check found
        for r in b.rows:
            if r["verdict"] in (HELD, NOT_HELD, UNDECIDED):
                r["verdict"], r["why"] = NOT_COMPARABLE, "synthetic (rehearsal records, never a model)"
    return b.rows


__all__ = ["CLAIM_VERDICTS", "HELD", "NOT_COMPARABLE", "NOT_HELD", "NO_RESULT", "UNDECIDED", "claim_rows"]
