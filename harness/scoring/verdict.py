"""A scoring decision and the typed values scorers accept.

`Score` is one decision: `correct`, the value read (`parsed`), `reason` ("<code>: <detail>") and the
scorer that decided. Codes: `correct`, `wrong`, `no_number`, `no_date`, `no_weeks_days` (nothing
readable in the reply), `wrong_kind` (a value of another kind than the case needs), `unreadable_value`
(a value of the right kind that is malformed), `no_value` (None), `official_error` (medcalc scorers
only: the official code raises on this reply, which its run loop records as Incorrect).

`typed_value` reads an executor or library value of a declared kind: "number" (int/float, finite,
not bool), "date" ("YYYY-MM-DD" string or datetime.date), "weeks_days" ((weeks, days) tuple or list
of whole non-negative numbers, reduced).
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

from harness.scoring.answer_parsing import reduce_weeks_days
from harness.scoring.gold import ScoringError

__all__ = ["VALUE_KINDS", "Score", "short", "typed_value"]

VALUE_KINDS = ("number", "date", "weeks_days")


@dataclass(frozen=True)
class Score:
    """One scoring decision. `parsed` is the value read (float, datetime.date or (weeks, days)) or
    None; `reason` is "<code>: <detail>"; `scorer` names the scorer that decided."""

    correct: bool
    parsed: Any
    reason: str
    scorer: str

    @property
    def code(self) -> str:
        return self.reason.split(":", 1)[0]

    def parsed_json(self) -> Any:
        """`parsed` as JSON: number, "YYYY-MM-DD", [weeks, days] or null."""
        p = self.parsed
        if isinstance(p, dt.date):
            return p.isoformat()
        if isinstance(p, tuple):
            return list(p)
        return p

    def to_dict(self) -> dict:
        return {"correct": self.correct, "parsed": self.parsed_json(), "reason": self.reason, "scorer": self.scorer}


def short(text: str, n: int = 80) -> str:
    """`text` on one line, cut to `n` characters, as repr (for reasons)."""
    text = " ".join(str(text).split())
    return repr(text if len(text) <= n else text[: n - 3] + "...")


def typed_value(value: Any, kind: str) -> tuple[Any, str]:
    """(parsed, "") or (None, "<code>: why") for an executor/library value of a declared kind."""
    if kind not in VALUE_KINDS:
        raise ScoringError(f"unknown value kind {kind!r}; expected one of {VALUE_KINDS}")
    if value is None:
        return None, "no_value: the value is None"
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None, f"unreadable_value: a number must be an int or float, got {type(value).__name__}"
        v = int(value) if isinstance(value, numbers.Integral) else float(value)
        if not math.isfinite(v):
            return None, f"unreadable_value: not a finite number ({v!r})"
        return v, ""
    if kind == "date":
        if isinstance(value, dt.datetime):
            return value.date(), ""
        if isinstance(value, dt.date):
            return value, ""
        if isinstance(value, str):
            text = value.strip()
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
                return None, f"unreadable_value: date string {value!r} is not YYYY-MM-DD"
            try:
                return dt.date.fromisoformat(text), ""
            except ValueError as exc:
                return None, f"unreadable_value: date string {value!r}: {exc}"
        return None, f"unreadable_value: a date must be 'YYYY-MM-DD' or datetime.date, got {type(value).__name__}"
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return None, f"unreadable_value: gestational age must be a (weeks, days) pair, got {value!r}"
    parts = []
    for p in value:
        if (
            isinstance(p, bool)
            or not isinstance(p, numbers.Real)
            or not math.isfinite(p)
            or p != math.trunc(p)
            or p < 0
        ):
            return None, f"unreadable_value: weeks and days must be whole non-negative numbers, got {value!r}"
        parts.append(int(math.trunc(p)))
    return reduce_weeks_days(*parts), ""
