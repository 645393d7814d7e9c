"""Building blocks of the calculator library: ``Variable``, ``Calculator`` and ``LibraryAbstain``.

A ``Calculator`` pairs a plain-number function (``compute``) with the list of variables it needs.
Each ``Variable`` knows
- the unit ``compute`` expects and a description (what the Extract-Solve prompt asks for),
- which keys of MedCalc-Bench's gold 'Relevant Entities' carry it (``entity_keys``),
- how to turn a raw value ``[value, unit]`` / string / bool into that unit (``convert``).

``from_entities`` reads gold variables; ``parse_extraction`` validates a model's JSON extraction.
Both raise ``LibraryAbstain`` with a message naming the calculator and the variable.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.core.units import EXACT, Convention, UnitError, get_convention
from harness.data import values as value_parsing
from harness.data.values import parse_number

__all__ = ["Calculator", "LibraryAbstain", "Variable", "parse_date", "parse_sex"]


class LibraryAbstain(Exception):
    """The library cannot answer: calculator outside the library, or a missing/invalid variable."""

    def __init__(self, message: str, *, calculator_id: int | None = None, variable: str | None = None):
        super().__init__(message)
        self.calculator_id = calculator_id
        self.variable = variable


def parse_date(value: Any) -> _dt.date:
    """A calendar date from a ``date``, ``datetime`` or a string. MedCalc-Bench writes dates as
    month/day/year (``03/31/2006``); ISO ``2006-03-31``, ``03-31-2006``, ``03/31/06`` and month-name
    forms (``March 31, 2006``) are also accepted (harness/data/values.py, every option on)."""
    try:
        return value_parsing.parse_date(value, iso=True, dashes=True, two_digit_year=True, month_names=True)
    except ValueError:
        raise ValueError(f"not a date (expected MM/DD/YYYY): {value!r}") from None


def parse_sex(value: Any) -> str:
    """'male' or 'female' from the benchmark's 'Male'/'Female' (or M/F, man/woman)."""
    s = str(value).strip().lower()
    if s in {"male", "m", "man", "boy"}:
        return "male"
    if s in {"female", "f", "woman", "girl"}:
        return "female"
    raise ValueError(f"sex must be male or female, got {value!r}")


_NUMBER_WITH_UNIT = re.compile(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s].*)?")


_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def normalize_key(key: str) -> str:
    """Case-, subscript-, space- and punctuation-insensitive form of an entity name: the one rule by which the
    library's variables and the catalogue's Entities find a gold entity."""
    k = str(key).translate(_SUBSCRIPTS).lower().replace("≤", "<=").replace("≥", ">=")
    k = re.sub(r"[^a-z0-9<>=#%]+", " ", k)
    return " ".join(k.split())


_TRUE_WORDS = frozenset({"true", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "no", "0"})
# The benchmark files' spellings of a criterion that is not present (its own typo "not mentinoed" included).
_ABSENT_WORDS = frozenset({"", "false", "no", "none", "absent", "not mentioned", "not mentinoed"})


def entity_flag(raw: Any, *, strict: bool) -> bool:
    """A gold entity's yes/no, the one reader of both rules. ``strict`` (the library's bool variables): a bool, or
    true/yes/1 and false/no/0 in any case, else ValueError. Not strict (the catalogue's score criteria, where
    the benchmark's explanations count anything written as present): a string is true unless it is one of the
    benchmark's spellings of absent, any other value by its truth."""
    if isinstance(raw, bool):
        return raw
    if strict:
        s = str(raw).strip().lower()
        if s in _TRUE_WORDS:
            return True
        if s in _FALSE_WORDS:
            return False
        raise ValueError(f"expected true/false, got {raw!r}")
    if isinstance(raw, str):
        return raw.strip().lower() not in _ABSENT_WORDS
    return bool(raw)


def entity_number(x: Any) -> float:
    """A gold entity's number (harness.data.values.parse_number, thousands separators allowed)."""
    return parse_number(x, thousands=True)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@dataclass(frozen=True)
class Variable:
    """One input of a calculator function.

    kind: "quantity" (number with a unit, converted by ``convert(value, unit, convention)``, the convention a
    ``harness.core.units.Convention``), "number" (unitless
    number, e.g. INR or a cycle length in days), "sex", "bool", "date", "race" ("black"/"other").
    ``default`` is used when the gold entities omit the variable (the benchmark's own convention,
    e.g. race not stated -> not Black); ``None`` means required.
    """

    name: str
    unit: str
    description: str
    kind: str = "quantity"
    entity_keys: tuple[str, ...] = ()
    convert: Callable[[float, str, Convention], float] | None = None
    default: Any = None

    def from_raw(self, raw: Any, calc: Calculator, convention: Convention = EXACT) -> Any:
        """Convert one raw value (gold entity or extracted) to this variable's unit and type, under
        ``convention`` (a ``harness.core.units.Convention``)."""
        try:
            if self.kind == "quantity":
                if isinstance(raw, dict):
                    raw = [raw.get("value"), raw.get("unit")]
                if (
                    isinstance(raw, (list, tuple))
                    and len(raw) >= 4
                    and len(raw) % 2 == 0
                    and all(isinstance(u, str) for u in raw[1::2])
                ):
                    # compound value, e.g. [5, 'ft', 10, 'in']: sum of the converted parts
                    assert self.convert is not None
                    return sum(self.convert(entity_number(v), u, convention) for v, u in zip(raw[::2], raw[1::2]))
                if isinstance(raw, str):
                    m = _NUMBER_WITH_UNIT.fullmatch(raw.strip())
                    if m and m.group(2):
                        raw = [m.group(1), m.group(2)]  # "154 lbs" -> [154, "lbs"]
                if isinstance(raw, (list, tuple)) and len(raw) == 2:
                    value, unit = raw
                    if unit is None or (isinstance(unit, str) and not unit.strip()):
                        unit = self.unit
                elif _is_number(raw) or isinstance(raw, str):
                    value, unit = raw, self.unit
                else:
                    raise ValueError(f"expected [value, unit], got {raw!r}")
                value = entity_number(value)
                assert self.convert is not None
                return self.convert(value, str(unit), convention)
            if self.kind == "number":
                if isinstance(raw, dict):
                    raw = raw.get("value")
                if isinstance(raw, (list, tuple)) and len(raw) == 2:
                    raw = raw[0]
                return entity_number(raw)
            if self.kind == "sex":
                return parse_sex(raw)
            if self.kind == "bool":
                return entity_flag(raw, strict=True)
            if self.kind == "date":
                return parse_date(raw)
            if self.kind == "race":
                text = str(raw).strip().lower()
                return "black" if ("black" in text or "african" in text) else "other"
        except (UnitError, ValueError, TypeError) as exc:
            raise LibraryAbstain(
                f"{calc.name} (calculator {calc.calculator_id}): variable {self.name!r}: {exc}",
                calculator_id=calc.calculator_id,
                variable=self.name,
            ) from exc
        raise AssertionError(f"unknown variable kind {self.kind}")


@dataclass(frozen=True)
class Calculator:
    """A hand-written calculator: metadata, inputs and the function over plain values."""

    calculator_id: int
    name: str
    output_type: str  # "decimal" | "integer" | "date" | "weeks_days"
    source: str  # formula + citation
    variables: list[Variable]
    fn: Callable[..., Any] = field(repr=False)
    # Keyword arguments of ``fn`` that a convention decides (a benchmark's reference behaviour, e.g. the sign of
    # the due date's cycle adjustment): ``convention_args(convention) -> {name: value}``, added by
    # ``from_entities`` and ``parse_extraction``; ``fn``'s defaults apply when ``compute`` is called without them.
    convention_args: Callable[[Convention], dict] | None = field(default=None, repr=False)

    @property
    def answer_kind(self) -> str:
        """The executor/scorer kind of this calculator's value: "number", "date" or "weeks_days"."""
        return {"decimal": "number", "integer": "number"}.get(self.output_type, self.output_type)

    def variable_lines(self) -> list[str]:
        """One line per variable, ``name (unit): description``, for an extraction prompt."""
        return [f"{v.name} ({v.unit}): {v.description}" for v in self.variables]

    def compute(self, **values: Any) -> Any:
        """Run the formula on plain values in the variables' units."""
        names = {v.name for v in self.variables}
        missing = names - values.keys()
        extra = values.keys() - names - set(self.convention_args(EXACT) if self.convention_args else ())
        if missing or extra:
            raise LibraryAbstain(
                f"{self.name} (calculator {self.calculator_id}): missing {sorted(missing)} unexpected {sorted(extra)}",
                calculator_id=self.calculator_id,
                variable=sorted(missing or extra)[0],
            )
        try:
            result = self.fn(**values)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError) as exc:
            raise LibraryAbstain(
                f"{self.name} (calculator {self.calculator_id}): {exc}", calculator_id=self.calculator_id
            ) from exc
        if isinstance(result, complex) or (isinstance(result, float) and not math.isfinite(result)):
            raise LibraryAbstain(
                f"{self.name} (calculator {self.calculator_id}): no real finite result for {values}",
                calculator_id=self.calculator_id,
            )
        return result

    def _find(self, entities: dict, var: Variable) -> tuple[bool, Any]:
        folded = {normalize_key(k): v for k, v in entities.items()}
        for key in (var.name, *var.entity_keys):
            if normalize_key(key) in folded:
                return True, folded[normalize_key(key)]
        return False, None

    def _find_unit(self, obj: dict, var: Variable) -> tuple[bool, Any]:
        folded = {normalize_key(k): v for k, v in obj.items()}
        for key in (var.name, *var.entity_keys):
            for suffix in ("_unit", " unit", "_units"):
                if normalize_key(key + suffix) in folded:
                    return True, folded[normalize_key(key + suffix)]
        return False, None

    def from_entities(self, entities: dict, *, convention: Convention | str = EXACT) -> dict:
        """Gold 'Relevant Entities' -> keyword arguments of ``compute`` (units converted).

        ``convention``: a ``harness.core.units.Convention`` or its name: "exact" (default; MedCalc-Bench
        Verified) or "medcalc-v1.0" (v1.0's stepwise-rounded molar conversions, which its gold answers
        depend on)."""
        conv = get_convention(convention)
        if not isinstance(entities, dict):
            raise LibraryAbstain(
                f"{self.name} (calculator {self.calculator_id}): entities must be a "
                f"dict, got {type(entities).__name__}",
                calculator_id=self.calculator_id,
            )
        out = {}
        for var in self.variables:
            found, raw = self._find(entities, var)
            if not found:
                if var.default is None:
                    raise LibraryAbstain(
                        f"{self.name} (calculator {self.calculator_id}): variable {var.name!r} "
                        f"missing from the gold entities (looked for {[var.name, *var.entity_keys]})",
                        calculator_id=self.calculator_id,
                        variable=var.name,
                    )
                out[var.name] = var.default
                continue
            out[var.name] = var.from_raw(raw, self, conv)
        return {**out, **(self.convention_args(conv) if self.convention_args else {})}

    def parse_extraction(self, obj: Any, *, convention: Convention | str = EXACT) -> dict:
        """Validate a model's JSON extraction ``{name: value | [value, unit] | {"value", "unit"}}``
        and return ``compute``'s keyword arguments. Unknown keys are ignored; a missing required
        variable, a non-numeric value or an unknown unit raises ``LibraryAbstain``. ``convention`` as in
        ``from_entities``."""
        conv = get_convention(convention)
        if not isinstance(obj, dict):
            raise LibraryAbstain(
                f"{self.name} (calculator {self.calculator_id}): extraction must be "
                f"a JSON object, got {type(obj).__name__}",
                calculator_id=self.calculator_id,
            )
        out = {}
        for var in self.variables:
            found, raw = self._find(obj, var)
            if found and var.kind == "quantity" and (_is_number(raw) or isinstance(raw, str)):
                unit_found, unit = self._find_unit(obj, var)
                if unit_found and isinstance(unit, str) and unit.strip():
                    raw = [raw, unit]  # {"weight": 70, "weight_unit": "lb"}
            if not found or raw is None:
                if var.default is None:
                    raise LibraryAbstain(
                        f"{self.name} (calculator {self.calculator_id}): variable {var.name!r} "
                        f"missing from the extraction",
                        calculator_id=self.calculator_id,
                        variable=var.name,
                    )
                out[var.name] = var.default
                continue
            out[var.name] = var.from_raw(raw, self, conv)
        return {**out, **(self.convention_args(conv) if self.convention_args else {})}
