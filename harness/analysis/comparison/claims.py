"""The paper's claims, each checked with the user's own statistics.

A claim (paper_values.json `claims`, extracted with its .tex line) says something about the paper's numbers: an
interval clears or crosses zero, a point estimate's sign, an ordering, a range over arms or checkpoints, a bound,
a p-value, a rerun agreement. Each is checked on the user's run (their interval, their sign, their ordering) and
gets one verdict:

* **held**: the user's statistic says what the paper says;
* **did not hold**: it does not (the numbers are named);
* **not comparable: reasons**: a statistic behind it is not the paper's setting (harness.analysis.comparison.context);
* **no result**: the results have nothing for it.

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

from harness.analysis.comparison import ours as stats
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.context import MODEL_FREE_ARMS, Context, same_model
from harness.analysis.comparison.values import claims as paper_claims, number, paper_checkpoints
from harness.model.rehearsal.labels import MODEL_FREE

HELD, NOT_HELD, NOT_COMPARABLE, NO_RESULT = "held", "did not hold", "not comparable", "no result"
CLAIM_VERDICTS = (HELD, NOT_HELD, NOT_COMPARABLE, NO_RESULT)
P_LEVEL = 0.05            # "p=0.010" read as significant at the conventional level
ABOUT = 2.5               # "about 95%": the nearest 5%
SHORT = {"Qwen2.5-7B-Instruct": "7B", "Qwen2.5-32B-Instruct-AWQ": "32B", "Mistral-7B-Instruct-v0.3": "Mistral-7B",
         "Phi-3.5-mini-instruct": "Phi-3.5-mini"}


def _sd(ctx: Context, paper_model, st: stats.Stat | None, arms: int) -> float:
    """The rerun SD (pp) of a statistic: the larger of the paper's rerun agreement and the user's seed spread."""
    if st is None:
        return 0.0
    t = tol.for_stat(paper_model, st, 2, arms)
    return max(t.sd_paper or 0.0, t.sd_seeds or 0.0)


class ClaimRows:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.rows: list[dict] = []

    def add(self, claim: dict, model: str | None, verdict: str, why: str, paper: str = "", ours: str = "",
            paper_model: str | None = None, gap=None) -> None:
        chk = claim["check"]
        self.rows.append({"id": claim["id"], "line": claim["line"], "says": claim["says"],
                          "headline": bool(claim["headline"]), "kind": chk["kind"],
                          "paper_model": paper_model if paper_model is not None else chk.get("model") or "",
                          "model": model or "", "verdict": verdict, "why": why, "paper": paper, "ours": ours,
                          "gap": gap})

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _decide(self, claim, model, margin_user, margin_paper, tolerance, paper_text, ours_text, reasons,
                paper_model=None, gap=None, said=""):
        """held when the user's margin is on the claimed side (>= 0); also when the paper's own margin is within
        the tolerance of zero and the user's within it of the paper's (a claim made by a hair); else did not hold.
        `said` is what the user's statistic says, in words."""
        if reasons:
            return self.add(claim, model, NOT_COMPARABLE, "; ".join(reasons), paper_text, ours_text, paper_model, gap)
        if margin_user >= 0:
            return self.add(claim, model, HELD, said, paper_text, ours_text, paper_model, gap)
        if margin_paper is not None and abs(margin_paper) <= tolerance and \
                abs(margin_user - margin_paper) <= tolerance:
            return self.add(claim, model, HELD, f"{said}, but the paper makes the claim by a hair: its own margin "
                            f"{margin_paper:.2f} and yours {margin_user:.2f} are both within rerun noise "
                            f"(\u00b1{tolerance:.2f}) of zero", paper_text, ours_text, paper_model, gap)
        return self.add(claim, model, NOT_HELD, said + (f" (margin {margin_user:.2f}; the paper's {margin_paper:.2f}, "
                                                        f"rerun noise \u00b1{tolerance:.2f})"
                                                        if margin_paper is not None else ""),
                        paper_text, ours_text, paper_model, gap)

    def _models(self, paper_model, arms):
        return self.ctx.models_for(paper_model, tuple(arms))

    def _pairs(self, paper_models: list[str], has) -> list[tuple[str, str]]:
        """(paper checkpoint, user's model) for a claim over several checkpoints: each checkpoint's own model;
        when none is here, every model that has data (then not comparable: another model), once."""
        users = [m for m in self.ctx.an.data.models if m != MODEL_FREE and has(m)]
        pairs = [(pm, m) for pm in paper_models for m in users if same_model(m, pm)]
        if pairs:
            return pairs
        names = ", ".join(SHORT.get(pm, pm) for pm in paper_models)
        return [(paper_models[0] if len(paper_models) == 1 else f"one of {names}", m) for m in users
                if not any(same_model(m, p) for p in paper_checkpoints())]

    def _truncations(self, paper_models: list[str]):
        """(paper checkpoint, model, truncation counts, formula arms it ran, reasons) for the truncation claims."""
        an, arms = self.ctx.an, stats.formula_arms()
        for pm, m in self._pairs(paper_models, lambda x: any(an.data.has(x, a) for a in arms)):
            tr = stats.truncation(an, m, arms)
            if tr is not None:
                ran = tuple(a for a in arms if an.data.has(m, a))
                yield pm, m, tr, ran, self.ctx.reasons(m, pm, ran, _records_stat(an, tr), "full")

    # ---- kinds -----------------------------------------------------------------------------------------------
    def interval(self, claim):
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
            margin_user, margin_paper = _interval_margin(c["expect"], st.lo, st.hi), \
                _interval_margin(c["expect"], plo, phi) if plo is not None else None
            mc = tol.interval_end_sd(st.lo, st.hi, self.ctx.draws) if st.lo is not None else 0.0
            mc_paper = tol.interval_end_sd(plo, phi, tol.paper_draws()) if plo is not None else 0.0
            t = tol.Z95 * math.sqrt(_sd(self.ctx, c["model"], st, 2) ** 2 + mc ** 2 + mc_paper ** 2)
            paper_text = (f"{pval:+.2f} [{plo:.2f}, {phi:.2f}]" if plo is not None else
                          f"{pval:+.2f} (interval not printed)" if pval is not None else "") + f": {c['expect']}"
            self._decide(claim, m, margin_user, margin_paper, t, paper_text,
                         f"{st.value:+.2f} [{st.lo:.2f}, {st.hi:.2f}], {st.n_text}", reasons, c["model"], key,
                         f"your interval [{st.lo:.2f}, {st.hi:.2f}] {_interval_words(st.lo, st.hi)}")

    def sign(self, claim):
        c = claim["check"]
        want = 1 if c["expect"] == "positive" else -1
        pval = number(c["evidence"]["value"])["value"]
        key = (c["model"], c["solver"], c["reference"], "all")
        for m in self._models(c["model"], (c["solver"], c["reference"])):
            st = stats.gap(self.ctx.an, m, c["solver"], c["reference"], c["subset"])
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["solver"], c["reference"]), st, c["subset"])
            t = tol.Z95 * _sd(self.ctx, c["model"], st, 2)
            self._decide(claim, m, want * st.value, want * pval, t, f"{pval:+.2f} ({c['expect']})",
                         f"{st.value:+.2f}, {st.n_text}", reasons, c["model"], key,
                         f"your point estimate {st.value:+.2f} is {'positive' if st.value > 0 else 'negative' if st.value < 0 else 'zero'}")

    def order(self, claim):
        c = claim["check"]
        left_q, rights = c["left"], c["right"]
        ev = c.get("evidence") or {}
        arms = _arms(left_q)
        chooser = [a for a in arms if a not in MODEL_FREE_ARMS] or \
            [a for a in _arms(rights[0]) if a not in MODEL_FREE_ARMS] or list(arms)
        for m in self._models(c["model"], chooser):
            left = _quantity(self.ctx.an, m, left_q)
            if left is None:
                continue
            got = [(q, _quantity(self.ctx.an, m, q)) for q in rights]
            got = [(q, s, i) for i, (q, s) in enumerate(got) if s is not None]
            if not got:
                continue
            reasons = self.ctx.reasons(m, c["model"], arms, left, left_q.get("subset", "full"))
            for q, s, _ in got:
                reasons += self.ctx.reasons(m, c["model"], _arms(q), s, q.get("subset", "full"))
            q, best, i = max(got, key=lambda g: g[1].value)
            margin = left.value - best.value
            t = tol.Z95 * math.hypot(_sd(self.ctx, c["model"], left, 1), _sd(self.ctx, c["model"], best, 1))
            pl = number(ev["left"])["value"] if ev.get("left") else None
            right_refs = ev.get("right") or []
            pr = [number(r)["value"] for r in right_refs] if right_refs else None
            pm = (pl - max(pr)) if pl is not None and pr else None
            paper_text = (f"{pl:.2f} against {max(pr):.2f}" if pm is not None else
                          f"{pl:.2f}" if pl is not None else "as stated")
            self._decide(claim, m, margin, pm, t, paper_text,
                         f"{left.value:.2f} against {_label(q)} {best.value:.2f}", list(dict.fromkeys(reasons)),
                         c["model"], said=f"yours is {margin:+.2f} over the largest of the others ({_label(q)})")

    def within_interval(self, claim):
        c = claim["check"]
        for m in self._models(c["model"], ("program-solve", "open-book")):
            parts, reasons, worst = [], [], None
            for solver, reference in c["comparisons"]:
                full = stats.gap(self.ctx.an, m, solver, reference, "all")
                part = stats.gap(self.ctx.an, m, solver, reference, c["subset"])
                if full is None or part is None:
                    continue
                reasons += self.ctx.reasons(m, c["model"], (solver, reference), full, "all")
                reasons += self.ctx.reasons(m, c["model"], (solver, reference), part, c["subset"])
                margin = min(part.value - full.lo, full.hi - part.value)
                t = tol.Z95 * tol.interval_end_sd(full.lo, full.hi, self.ctx.draws)
                worst = margin + t if worst is None else min(worst, margin + t)
                parts.append(f"{solver} \u2212 {reference}: {part.value:+.2f} in [{full.lo:.2f}, {full.hi:.2f}]")
            if not parts:
                continue
            self._decide(claim, m, worst, None, 0.0, "no headline gap leaves its interval (s10)",
                         "; ".join(parts), list(dict.fromkeys(reasons)), c["model"],
                         said="every gap without the replaced calculators lies in your full-set interval"
                         if worst >= 0 else "a gap without the replaced calculators leaves your full-set interval")

    def zero(self, claim):
        c = claim["check"]
        q = c["quantity"]
        if q["quantity"] == "none_rows":
            for m in self._models(c["model"], (q["arm"],)):
                st = stats.share(self.ctx.an, m, q["arm"], "none")
                if st is None:
                    continue
                reasons = self.ctx.reasons(m, c["model"], (q["arm"],), st, "full")
                self._decide(claim, m, -float(st.extra["count"]), None, 0.0, "none",
                             f"{st.extra['count']} of {st.rows:,} rows", reasons, c["model"],
                             said=f"{st.extra['count']} unanswered rows")
            return
        for pm, m, tr, ran, reasons in self._truncations(c["models"]):
            self._decide(claim, m, -float(tr["correct"]), None, 0.0, "none",
                         f"{tr['correct']} truncated rows scored correct ({tr['truncated']} of {tr['calls']:,} calls "
                         f"cut; arms {', '.join(ran)})", reasons, pm, said=f"{tr['correct']} such rows")

    def equals(self, claim):
        c = claim["check"]
        q = c["quantity"]
        want = number(c["evidence"]["value"])
        for m in self._models(None, (q["arm"],)):
            st = _quantity(self.ctx.an, m, q)
            if st is None:
                continue
            reasons = self.ctx.reasons(m, None, (q["arm"],), st, q["subset"], construction=True)
            shown = round(st.value, want["digits"])
            self._decide(claim, MODEL_FREE if q["arm"] in MODEL_FREE_ARMS else m, -abs(shown - want["value"]), None,
                         0.0, f"{want['value']:.2f}", f"{st.value:.2f}, {st.n_text}", reasons, None,
                         said=f"yours is {shown:.2f}")

    def p_value(self, claim):
        c = claim["check"]
        p_paper = number(c["evidence"]["value"])["value"]
        for m in self._models(c["model"], (c["solver"], c["reference"])):
            st = stats.gap(self.ctx.an, m, c["solver"], c["reference"], "all")
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["solver"], c["reference"]), st, "all")
            p = float(st.extra["perm_p"])
            bound = p_paper if c["relation"] == "<" else P_LEVEL
            reading = f"p < {p_paper:g}" if c["relation"] == "<" else f"p = {p_paper:.3f}, read as p < {P_LEVEL:g}"
            self._decide(claim, m, bound - p, None, 0.0, reading,
                         f"p = {p:.4f} (Holm within family; raw {float(st.extra['perm_p_raw']):.4f}; "
                         f"{self.ctx.draws:,} sign flips)", reasons, c["model"],
                         said=f"your p {'is' if p < bound else 'is not'} below {bound:g}")

    def agreement(self, claim):
        c = claim["check"]
        want = number(c["evidence"]["value"])["value"]
        for m in self._models(c["model"], (c["arm"],)):
            st = stats.pairwise_agreement(self.ctx.an, m, c["arm"], c["subset"])
            if st is None:
                continue
            reasons = self.ctx.reasons(m, c["model"], (c["arm"],), st, c["subset"])
            allow = tol.binomial_allowance(st.value, st.rows)
            if c["relation"] == "about":
                margin = ABOUT + allow - abs(st.value - want)
                paper_text = f"about {want:g}% (read as {want - ABOUT:g} to {want + ABOUT:g})"
            else:
                margin = st.value - (want - 0.05 - allow)
                paper_text = f"at least {want:g}%"
            self._decide(claim, m, margin, None, 0.0, paper_text,
                         f"{st.value:.2f}% mean pairwise agreement over your seeds {st.n_text} "
                         f"(binomial allowance \u00b1{allow:.2f})", reasons, c["model"],
                         said=f"your seeds agree on {st.value:.2f}%")

    def at_most(self, claim):
        c = claim["check"]
        want = number(c["evidence"]["value"])
        for pm, m, tr, ran, reasons in self._truncations(c["models"]):
            allow = tol.binomial_allowance(tr["share"], tr["calls"])
            bound = want["value"] + 0.5 * 10 ** -want["digits"] + allow
            self._decide(claim, m, bound - tr["share"], None, 0.0, f"at most {want['value']:g}%",
                         f"{tr['share']:.2f}% ({tr['truncated']} of {tr['calls']:,} calls, arms {', '.join(ran)}; "
                         f"binomial allowance {allow:.2f})", reasons, pm,
                         said=f"{tr['share']:.2f}% of your calls end at the limit")

    def range(self, claim):
        c = claim["check"]
        lo_n, hi_n = number(c["evidence"]["low"]), number(c["evidence"]["high"])
        rounding = 0.5 * 10 ** -max(lo_n["digits"], hi_n["digits"])
        members, missing, reasons = [], [], []
        users = [m for m in self.ctx.an.data.models if m != MODEL_FREE]
        for pm in c["models"]:
            got = []
            for m in [u for u in users if same_model(u, pm)]:
                got += self._members(c["member"], m, pm, reasons)
            if not got:
                missing.append(SHORT.get(pm, pm))
            members += got
        if not members:
            names = ", ".join(SHORT.get(pm, pm) for pm in c["models"])
            other = []
            for m in [u for u in users if not any(same_model(u, p) for p in paper_checkpoints())]:
                # a model that is none of the paper's checkpoints: its members are shown, never judged
                other += self._members(c["member"], m, f"one of {names}", reasons)
            if other:
                return self.add(claim, ", ".join(users), NOT_COMPARABLE, "; ".join(dict.fromkeys(reasons)),
                                f"{lo_n['value']:g} to {hi_n['value']:g}",
                                "; ".join(f"{label} {v:.2f}" for label, v, _ in other))
            return self.add(claim, "", NO_RESULT, "none of the members ran here",
                            f"{lo_n['value']:g} to {hi_n['value']:g}", "")
        ours = "; ".join(f"{label} {v:.2f}" for label, v, _ in members)
        paper_text = f"{lo_n['value']:g} to {hi_n['value']:g}"
        who = ", ".join(sorted({label.split(" ")[0] for label, _, _ in members}))
        if reasons:
            return self.add(claim, who, NOT_COMPARABLE, "; ".join(dict.fromkeys(reasons)), paper_text, ours)
        beyond = [(label, v, t) for label, v, t in members
                   if v < lo_n["value"] - rounding - t or v > hi_n["value"] + rounding + t]
        if beyond:
            return self.add(claim, who, NOT_HELD, "beyond the range (with its tolerance): " + "; ".join(
                f"{label} {v:.2f} (\u00b1{t:.2f})" for label, v, t in beyond), paper_text, ours)
        if c["ends"]:
            if missing:
                return self.add(claim, who, NOT_COMPARABLE, f"the range is over {len(c['models'])} checkpoints; "
                                f"these results lack {', '.join(missing)} (each member present lies in the range)",
                                paper_text, ours)
            (lo_l, lo_v, lo_t), (hi_l, hi_v, hi_t) = min(members, key=lambda x: x[1]), max(members, key=lambda x: x[1])
            off = [f"low end {lo_v:.2f} ({lo_l}) against {lo_n['value']:g}"
                   for _ in [0] if abs(lo_v - lo_n["value"]) > lo_t + rounding] + \
                  [f"high end {hi_v:.2f} ({hi_l}) against {hi_n['value']:g}"
                   for _ in [0] if abs(hi_v - hi_n["value"]) > hi_t + rounding]
            if off:
                return self.add(claim, who, NOT_HELD, "every member in the range, but its ends moved beyond rerun "
                                "noise: " + "; ".join(off), paper_text, ours)
            return self.add(claim, who, HELD, "every member in the range and both ends within rerun noise", paper_text, ours)
        note = f" (these results lack {', '.join(missing)})" if missing else ""
        return self.add(claim, who, HELD, "every member of yours lies in the range (with its tolerance); which "
                        "members the paper's range spans is the kit's reading, so its ends are not compared" + note,
                        paper_text, ours)

    def _members(self, member: dict, m: str, pm: str, reasons: list) -> list[tuple[str, float, float]]:
        """(label, value, tolerance) of each member a model contributes to a range."""
        an, out, short = self.ctx.an, [], SHORT.get(pm, m)
        q = member["quantity"]
        if q == "gap":
            st = stats.gap(an, m, member["solver"], member["reference"], member["subset"])
            if st is not None:
                reasons += self.ctx.reasons(m, pm, (member["solver"], member["reference"]), st, member["subset"])
                out.append((short, st.value, tol.Z95 * _sd(self.ctx, pm, st, 2)))
        elif q in ("icc", "effective_n"):
            for solver, reference in member["comparisons"]:
                got = stats.icc_and_ess(an, m, solver, reference)
                if got is None:
                    continue
                reasons += self.ctx.reasons(m, pm, (solver, reference), got["stat"], "all")
                sd = tol.jackknife_sd(got[f"loo_{q}"]) or 0.0
                out.append((f"{short} {solver} \u2212 {reference}", got[q], tol.Z95 * sd))
        elif q == "seed_agreement":
            for arm in stats.greedy_arms(member["arms"]):
                s = stats.seed_agreement(an, m, arm)
                if s is None:
                    continue
                st = stats.Stat(s["agree"], n_cases=s["cases"],
                                seeds=tuple(an.data.seeds_of(m, arm)))
                reasons += self.ctx.reasons(m, pm, (arm,), st, "full")
                out.append((f"{short} {arm}", s["agree"], tol.binomial_allowance(s["agree"], s["cases"])))
        return out


def _records_stat(an, tr: dict) -> stats.Stat:
    """The cases and seeds behind a records-based statistic, for the coverage check."""
    return stats.Stat(0.0, n_cases=tr["cases"], seeds=tr["seeds"])


def _interval_words(lo: float, hi: float) -> str:
    return "clears zero (above)" if lo > 0 else "clears zero (below)" if hi < 0 else "crosses zero"


def _interval_margin(expect: str, lo, hi) -> float | None:
    if lo is None or hi is None:
        return None
    if expect == "above zero":
        return lo
    if expect == "below zero":
        return -hi
    return min(-lo, hi)   # crosses zero: both ends on their side


def _arms(q: dict) -> tuple[str, ...]:
    return (q["arm"],) if "arm" in q else (q["solver"], q["reference"])


def _label(q: dict) -> str:
    return q["arm"] if "arm" in q else f"{q['solver']} \u2212 {q['reference']} ({q['subset']})"


def _quantity(an, model, q: dict) -> stats.Stat | None:
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
        getattr(b, claim["check"]["kind"])(claim)
        if len(b.rows) == before:
            b.add(claim, None, NO_RESULT, "nothing in these results to check it with")
    if ctx.synthetic:   # a synthetic set is compared nowhere, whatever a check found
        for r in b.rows:
            if r["verdict"] in (HELD, NOT_HELD):
                r["verdict"], r["why"] = NOT_COMPARABLE, "synthetic (rehearsal records, never a model)"
    return b.rows


__all__ = ["claim_rows", "CLAIM_VERDICTS", "HELD", "NOT_HELD", "NOT_COMPARABLE", "NO_RESULT"]
