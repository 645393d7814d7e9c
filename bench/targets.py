"""A benchmark's targets, one type for all of them: a bound on a measured figure, and its verdict.

    Target("pool_seconds_for_1100", "<=", 8.0).verdict(53.6)
      -> {"target": "\u2264 8.0", "measured": 53.6, "met": False, "off_by": 6.7}

`off_by` is how far a missed target is, as a factor (measured / bound for an upper bound, bound / measured for a
lower one). `label` is the name the report files it under when that is not the figure's own name (the rehearsal's
"program_requests_per_s>=100", the statistics benchmark's "speedup_min").
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_SIGNS = {"<=": "\u2264", "<": "<", ">=": "\u2265", ">": ">"}


@dataclass(frozen=True)
class Target:
    name: str  # the measured figure
    op: str  # "<=", "<", ">=", ">"
    bound: float
    label: str | None = None  # the report's name for it [default: name]

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"target {self.name}: operator {self.op!r} is not one of {', '.join(_OPS)}")

    @property
    def key(self) -> str:
        return self.label or self.name

    @property
    def upper(self) -> bool:
        """An upper bound (lower is better)."""
        return self.op in ("<=", "<")

    def met(self, measured: float | None) -> bool | None:
        """Whether `measured` meets it; None when there is no measurement."""
        return None if measured is None else bool(_OPS[self.op](measured, self.bound))

    def off_by(self, measured: float) -> float | None:
        """A missed target's distance as a factor (None when met)."""
        if self.met(measured):
            return None
        return round(measured / self.bound if self.upper else self.bound / measured, 2)

    def verdict(self, measured: float) -> dict:
        return {
            "target": f"{_SIGNS[self.op]} {self.bound}",
            "measured": measured,
            "met": self.met(measured),
            "off_by": self.off_by(measured),
        }
