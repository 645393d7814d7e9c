"""Read MedCalc-Bench gold "Relevant Entities" dicts: alias lookup, conversion delegated to ``harness.core.units``.

The benchmark's entity dicts spell the same variable several ways across releases ("QT interval" /
"QT Interval", "FiO₂" / "FiO2", "Hypertension" / "Hypertension history") and give quantities as
``[value, unit]`` pairs in whatever unit the note used. :class:`Entities` finds a variable under any of its
aliases; every unit conversion is made by the one units module, ``harness.core.units``, under the
:class:`~harness.core.units.Convention` the view was built with (the same constants the library uses). A
unit that module does not know for the quantity raises ``UnitError``; a bare number (no unit) is taken to
be in the unit the formula text states.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

from harness.calculators.base import entity_flag, entity_number, normalize_key
from harness.core import units
from harness.core.units import EXACT, Convention, UnitError, get_convention
from harness.data.values import parse_date

__all__ = ["Entities", "UnitError", "normalize_key", "parse_us_date"]


def parse_us_date(text: str) -> _dt.date:
    """Parse the benchmark's month/day/year date strings ("02/24/2000", "02-24-2000"; four-digit
    years) with harness/data/values.py."""
    return parse_date(text, dashes=True)


class Entities:
    """Alias-aware view of one case's gold entity dict; quantities converted by ``harness.core.units`` under
    ``convention`` (a :class:`~harness.core.units.Convention` or its name)."""

    def __init__(self, raw: dict[str, Any], convention: Convention | str = EXACT):
        self.raw = dict(raw)
        self.convention = get_convention(convention)
        self._norm = {normalize_key(k): v for k, v in raw.items()}

    # ----- raw access -------------------------------------------------------------------------
    def lookup(self, *names: str) -> Any:
        """The value stored under the first present alias (normalized match), else None."""
        for n in names:
            v = self._norm.get(normalize_key(n))
            if v is not None:
                return v
        return None

    def has(self, *names: str) -> bool:
        return self.lookup(*names) is not None

    def pair(self, *names: str) -> tuple[float | None, str]:
        """(value, unit) of a quantity; unit '' when the entity is a bare number."""
        v = self.lookup(*names)
        if v is None:
            return None, ""
        if isinstance(v, (list, tuple)):
            if len(v) >= 2 and isinstance(v[-1], str) and not isinstance(v[0], str):
                return entity_number(v[0]), v[-1].strip()
            return entity_number(v[0]), ""
        if isinstance(v, bool):
            return float(v), ""
        try:
            return entity_number(v), ""
        except ValueError:
            return None, ""

    def flag(self, *names: str) -> bool:
        """True when any alias is present and truthy (absent criteria count as absent, as the
        benchmark's explanations assume)."""
        return any(entity_flag(self._norm.get(normalize_key(n)), strict=False) for n in names)

    def text(self, *names: str) -> str:
        """A categorical entity as a lowercase string ('' when absent)."""
        v = self.lookup(*names)
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v).strip().lower()

    def date(self, *names: str) -> _dt.date | None:
        v = self.lookup(*names)
        return None if v is None else parse_us_date(str(v))

    # ----- typed quantities (conversion in harness.core.units) ---------------------------------
    def _convert(self, names: tuple[str, ...], fn: Callable[..., float], default_unit: str) -> float | None:
        v, u = self.pair(*names)
        if v is None:
            return None
        try:
            return fn(v, u or default_unit)
        except UnitError as exc:
            raise UnitError(f"entity {names[0]!r}: {exc}") from None

    def number(self, *names: str, unit: str | None = None) -> float | None:
        """A number. ``unit=None``: a unitless number (INR, pH, GCS, a score), an entity with a unit is an
        error; else the quantity converted to ``unit`` (see ``harness.core.units.convert``)."""
        v, u = self.pair(*names)
        if v is None:
            return None
        if unit is None:
            if u:
                raise UnitError(f"entity {names[0]!r}: read as a unitless number but given in {u!r}")
            return v
        return self._convert(names, lambda x, s: units.convert(x, s, unit, self.convention), unit)

    def in_unit(self, names: tuple[str, ...], accepted: set[str] | frozenset[str], default: str) -> float | None:
        """A quantity the benchmark gives in a single unit (drinks per day, mL/day, µg/kg/min): its value when
        the entity's unit is one of ``accepted`` (normalized spellings) or absent, else UnitError."""
        return self._convert(names, units.dimensionless(names[0], accepted), default)

    def age_years(self) -> float | None:
        return self._convert(("age",), lambda x, s: units.age_years(x, s, self.convention), "years")

    def height_cm(self) -> float | None:
        return self._convert(("height",), units.height_cm, "cm")

    def weight_kg(self) -> float | None:
        return self._convert(("weight",), units.weight_kg, "kg")

    def temperature_c(self, *names: str) -> float | None:
        return self._convert(names or ("Temperature",), units.temperature_c, "degrees celsius")

    def mg_dl(self, analyte: str, *names: str) -> float | None:
        """A concentration of ``analyte`` (a ``harness.core.units.COMPOUNDS`` key) in mg/dL."""
        return self._convert(names, lambda x, s: units.concentration(analyte, x, s, "mg/dL", self.convention), "mg/dL")

    def mmol_l(self, analyte: str, *names: str) -> float | None:
        """An electrolyte of ``analyte`` in mmol/L (= mEq/L for the monovalent ions)."""
        return self._convert(
            names, lambda x, s: units.concentration(analyte, x, s, "mmol/L", self.convention), "mmol/L"
        )

    def g_dl(self, analyte: str, *names: str) -> float | None:
        """A protein concentration (albumin, hemoglobin) in g/dL."""
        return self._convert(names, lambda x, s: units.concentration(analyte, x, s, "g/dL", self.convention), "g/dL")

    def per_ul(self, *names: str) -> float | None:
        """A cell count per µL (= per mm³)."""
        return self._convert(names, lambda x, s: units.cells_per_ul(x, s, self.convention), "µL")

    def mcg_kg_min(self, *names: str) -> float | None:
        return self.in_unit(names, {"mcg/kg/min", "µg/kg/min", "ug/kg/min"}, "µg/kg/min")

    def fraction_percent(self, *names: str) -> float | None:
        """FiO₂ as a percent (0.4 -> 40)."""
        v = self._convert(names, units.percent, "%")
        if v is None:
            return None
        return v * 100.0 if v <= 1.0 else v
