"""The `paper` scorer: the paper's Scoring paragraph (Appendix).

A numeric answer is the first number on the reply's final-answer line (defined precisely in
harness/scoring/answer_parsing.py) and is correct when it lies in the benchmark's own interval, the
file's [Lower Limit, Upper Limit] (harness/scoring/gold.py: gold +-5% for decimal outputs, gold
exactly for integer outputs). Bounds are compared with a relative slack of 1e-9 so binary
floating-point noise in a computed value (2.9999999999999996 for 3) does not flip a decision. A reply
with no parseable number scores wrong. Dates are parsed to a calendar day and must equal the gold day.
Gestational ages (output type "weeks_days", or any row whose gold is written as a tuple) are reduced
to (weeks, days) integers with days < 7 and must equal the gold exactly. Typed values (score_value)
are checked by the same rules (harness/scoring/verdict.py `typed_value`).
"""

from __future__ import annotations

from typing import Any

from harness.scoring.answer_parsing import (
    final_answer_text,
    first_date,
    first_number,
    first_weeks_days,
    reduce_weeks_days,
)
from harness.scoring.gold import Gold
from harness.scoring.verdict import Score, short, typed_value

__all__ = ["REL_SLACK", "PaperScorer", "in_interval"]

REL_SLACK = 1e-9


def in_interval(x: float, lo: float, hi: float) -> bool:
    """lo <= x <= hi with a relative slack of REL_SLACK on each bound."""
    return lo - REL_SLACK * max(1.0, abs(lo)) <= x <= hi + REL_SLACK * max(1.0, abs(hi))


class PaperScorer:
    """The paper's rules (module docstring)."""

    name = "paper"
    description = (
        "first number on the final-answer line inside the benchmark interval (gold +-5% decimal, "
        "gold exactly for integers); dates to the calendar day; gestational age as (weeks, days)"
    )

    def _score(self, kind: str, parsed: Any, gold: Gold, where: str) -> Score:
        if kind == "number":
            lo, hi = gold.interval()
            ok = in_interval(parsed, lo, hi)
            return Score(
                ok,
                parsed,
                f"{'correct' if ok else 'wrong'}: {parsed!r} {'in' if ok else 'not in'} [{lo!r}, {hi!r}]{where}",
                self.name,
            )
        if kind == "date":
            ok = parsed == gold.value
            return Score(
                ok,
                parsed,
                f"{'correct' if ok else 'wrong'}: {parsed.isoformat()} "
                f"{'==' if ok else '!='} gold {gold.value.isoformat()}{where}",
                self.name,
            )
        want = reduce_weeks_days(*gold.value)
        ok = parsed == want
        return Score(
            ok, parsed, f"{'correct' if ok else 'wrong'}: {parsed} {'==' if ok else '!='} gold {want}{where}", self.name
        )

    def score_reply(self, reply: str | None, gold: Gold) -> Score:
        text, rule = final_answer_text("" if reply is None else reply)
        where = f" (final-answer text {short(text)} by {rule})"
        reader, code = {
            "number": (first_number, "no_number"),
            "date": (first_date, "no_date"),
            "weeks_days": (first_weeks_days, "no_weeks_days"),
        }[gold.kind]
        parsed = reader(text)
        if parsed is None:
            return Score(False, None, f"{code}: nothing readable as {gold.kind}{where}", self.name)
        return self._score(gold.kind, parsed, gold, where)

    def score_value(self, value: Any, kind: str, gold: Gold) -> Score:
        parsed, problem = typed_value(value, kind)
        if problem:
            return Score(False, None, problem, self.name)
        if kind != gold.kind:
            return Score(False, parsed, f"wrong_kind: a {kind} value for a {gold.kind} case", self.name)
        return self._score(kind, parsed, gold, "")
