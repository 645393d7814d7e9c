"""The gold side of scoring: how a case's gold answer and its tolerance are read.

`case` is a harness.data.dataset.Case or anything with its attributes `output_type`, `gold_answer`,
`lower_limit`, `upper_limit` (strings as in the file), and optionally `calculator_id` and `case_id`
(`gold_value` is not read: every scorer parses the file's strings itself); a mapping with those keys
(or the results store's `gold` {answer, lower, upper}) works too (`Gold.from_mapping`). A case that
cannot be scored (unknown output type, unreadable gold or limit) raises `ScoringError` naming the case
and the field.

Gold kind: a row whose output type is "weeks_days", or whose gold is written as a tuple (the
benchmark's gestational-age format, whatever the Output Type column says), is a (weeks, days) case;
"date" rows are calendar days; every other row is a number. Gold strings are parsed by
harness/data/values.py, more leniently than the dataset loader, since a gold may come from a results
store or a mapping as well as a validated file: dates also as ISO YYYY-MM-DD, gestational ages also as
"[W, D]" lists and with any day count (the paper scorer reduces them).

Tolerance (`Gold.interval`, used by the `paper` scorer): the benchmark's own interval, the file's
[Lower Limit, Upper Limit]: gold +-5% for decimal outputs and gold exactly for integer outputs, whose
files set both limits to the gold. When a row has no limits, decimal uses gold +-5% and integer the
gold.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.data.values import looks_like_weeks_days, parse_date, parse_number, parse_weeks_days

__all__ = ["OUTPUT_TYPES", "Gold", "ScoringError", "gold_of"]

OUTPUT_TYPES = ("decimal", "integer", "date", "weeks_days")


def _parse_gold_date(text: str) -> dt.date:
    return parse_date(text, iso=True)


def _parse_gold_weeks_days(text: str) -> tuple[int, int]:
    return parse_weeks_days(text, brackets=True, max_days=None)


class ScoringError(ValueError):
    """A case, scorer name or value kind that cannot be scored; the message names the problem."""


@dataclass(frozen=True)
class Gold:
    """What a scorer needs from a case. `kind` and `value` are derived and validated on creation."""

    output_type: str
    gold_answer: str
    lower_limit: str | None = None
    upper_limit: str | None = None
    calculator_id: int | None = None
    case_id: str = ""
    kind: str = field(init=False)  # "number" | "date" | "weeks_days"
    value: Any = field(init=False)

    def __post_init__(self) -> None:
        where = f"case {self.case_id!r}" if self.case_id else "case"
        if self.output_type not in OUTPUT_TYPES:
            raise ScoringError(f"{where}: unknown output_type {self.output_type!r}; expected one of {OUTPUT_TYPES}")
        if isinstance(self.gold_answer, (int, float)) and not isinstance(self.gold_answer, bool):
            object.__setattr__(self, "gold_answer", str(self.gold_answer))  # e.g. a typed Parquet cell
        if not isinstance(self.gold_answer, str) or not self.gold_answer.strip():
            raise ScoringError(f"{where}: gold_answer must be a non-empty string, got {self.gold_answer!r}")
        if self.calculator_id is not None:
            try:
                object.__setattr__(self, "calculator_id", int(self.calculator_id))
            except (TypeError, ValueError):
                raise ScoringError(f"{where}: calculator_id is not an integer: {self.calculator_id!r}") from None
        parse: Callable[[str], float | dt.date | tuple[int, int]]
        if self.output_type == "weeks_days" or looks_like_weeks_days(self.gold_answer, brackets=True):
            kind, parse = "weeks_days", _parse_gold_weeks_days
        elif self.output_type == "date":
            kind, parse = "date", _parse_gold_date
        else:
            kind, parse = "number", parse_number
        try:
            value = parse(self.gold_answer)
        except ValueError as exc:
            raise ScoringError(f"{where}: unreadable gold_answer for output_type {self.output_type!r}: {exc}") from None
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "value", value)

    @classmethod
    def from_mapping(cls, m: Mapping) -> Gold:
        """From a dict: keys output_type, gold_answer (or answer), lower_limit (or lower), upper_limit
        (or upper), calculator_id, case_id; a results-store record (gold nested under "gold") works."""
        nested = m.get("gold")
        g: Mapping = nested if isinstance(nested, Mapping) else m
        answer = g.get("gold_answer", g.get("answer"))
        if "output_type" not in m or answer is None:
            raise ScoringError(f"case mapping needs output_type and gold_answer/answer; has keys {sorted(m)}")
        return cls(
            output_type=m["output_type"],
            gold_answer=answer,
            lower_limit=g.get("lower_limit", g.get("lower")),
            upper_limit=g.get("upper_limit", g.get("upper")),
            calculator_id=m.get("calculator_id"),
            case_id=str(m.get("case_id", "") or ""),
        )

    def interval(self) -> tuple[float, float]:
        """The benchmark's own interval for a numeric case (see the module docstring)."""
        where = f"case {self.case_id!r}" if self.case_id else "case"
        gold = self.value
        bounds: list[float | None] = []
        for name, raw in (("lower_limit", self.lower_limit), ("upper_limit", self.upper_limit)):
            if raw is None or (isinstance(raw, float) and math.isnan(raw)) or str(raw).strip() == "":
                bounds.append(None)
                continue
            try:
                bounds.append(parse_number(raw))
            except ValueError:
                raise ScoringError(f"{where}: unreadable {name} {raw!r} for a numeric output") from None
        default = sorted((gold * 0.95, gold * 1.05)) if self.output_type == "decimal" else (gold, gold)
        lo = default[0] if bounds[0] is None else bounds[0]
        hi = default[1] if bounds[1] is None else bounds[1]
        if lo > hi:
            raise ScoringError(f"{where}: lower_limit {lo} exceeds upper_limit {hi}")
        return lo, hi


def gold_of(case: Any) -> Gold:
    """The Gold of a Case-like object, a mapping, or a Gold (returned as is)."""
    if isinstance(case, Gold):
        return case
    if isinstance(case, Mapping):
        return Gold.from_mapping(case)
    missing = [a for a in ("output_type", "gold_answer") if not hasattr(case, a)]
    if missing:
        raise ScoringError(f"cannot score {type(case).__name__}: missing attribute(s) {missing}")
    case_id = getattr(case, "case_id", "") or ""
    return Gold(
        output_type=case.output_type,
        gold_answer=case.gold_answer,
        lower_limit=getattr(case, "lower_limit", None),
        upper_limit=getattr(case, "upper_limit", None),
        calculator_id=getattr(case, "calculator_id", None),
        case_id=str(case_id),
    )
