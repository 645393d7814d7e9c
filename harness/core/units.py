"""The one unit-conversion module: every conversion the calculator library (``harness.calculators``) and the
formula catalogue (``harness.calculators.catalogue``) make goes through here.

The conversion convention is an explicit, frozen :class:`Convention` (its name, its constants and its
rounding rule) passed as an argument to every function that depends on it; nothing reads a global or a
context variable. Two conventions exist (``CONVENTIONS``):

- ``exact`` (:data:`EXACT`): plain arithmetic. MedCalc-Bench Verified's reference code
  (``calculator_implementations/unit_converter_new.py`` of nikhilk7153/MedCalc-Bench-Verified) rounds each
  step to 5 decimals (``rounding.py``), which is exact to well inside the benchmark's ±5% interval.
- ``medcalc-v1.0`` (:data:`MEDCALC_V1`): MedCalc-Bench v1.0's conversion routine, which rounds after every
  step of a mass <-> amount conversion (values above 0.001 to 3 decimals, smaller ones to 3 significant
  digits), e.g. 4.75 mmol/L cholesterol -> 0.005 mol -> 1.933 g -> 193.3 mg/dL instead of 183.7. v1.0's gold
  answers for those rows depend on it.

Both share the benchmark's constants (docs/LIBRARY.md cites each): molar masses creatinine 113.12, glucose
180.16, sodium 22.99, chloride 35.45, bicarbonate 61.02, calcium 40.08, potassium 39.10, urea nitrogen
28.02, cholesterol 386.654, triglycerides 861.338, bilirubin 548.66 (the benchmark's figure in Child-Pugh;
its SOFA uses the true value 584.66, compound "bilirubin-584.66"), albumin 66,500, hemoglobin 64,500 g/mol; valences
Na, K, Cl, HCO3 1 and Ca 2; 1 lb = 0.453592
kg, 1 oz = 0.0283495 kg, 1 in = 2.54 cm, 1 ft = 30.48 cm; an age in months is /12 year, in weeks 7/365.25,
in days 1/365.25.

Unknown units are an error everywhere: every function raises :class:`UnitError` naming the quantity, the
unit it cannot handle and the units it knows. Nothing passes a value through in a unit it does not know.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "COMPOUNDS",
    "CONVENTIONS",
    "EXACT",
    "MEDCALC_V1",
    "Convention",
    "UnitError",
    "age_years",
    "benchmark_round",
    "blood_pressure_mmhg",
    "bmi_kg_m2",
    "cells_per_ul",
    "concentration",
    "convert",
    "dimensionless",
    "enzyme_u_per_l",
    "get_convention",
    "heart_rate_bpm",
    "height_cm",
    "insulin_uiu_per_ml",
    "interval_ms",
    "norm_unit",
    "percent",
    "platelets_per_nl",
    "respiratory_rate",
    "temperature_c",
    "weight_kg",
]


class UnitError(ValueError):
    """A value's unit is unknown or not convertible for this quantity."""


def benchmark_round(x: float) -> float:
    """MedCalc-Bench v1.0's rounding rule: 3 decimals above 0.001, else 3 significant digits."""
    if x > 0.001:
        return round(x, 3)
    if x == 0:
        return 0.0
    return round(x, -int(math.floor(math.log10(abs(x)))) + 2)


# compound -> (molar mass g/mol or None, valence or None)
COMPOUNDS: Mapping[str, tuple[float | None, int | None]] = MappingProxyType(
    {
        "creatinine": (113.12, None),
        "glucose": (180.16, None),
        "sodium": (22.99, 1),
        "potassium": (39.10, 1),
        "chloride": (35.45, 1),
        "bicarbonate": (61.02, 1),
        "calcium": (40.08, 2),
        "bun": (28.02, None),
        "cholesterol": (386.654, None),
        "triglycerides": (861.338, None),
        "bilirubin": (548.66, None),
        "bilirubin-584.66": (584.66, None),
        "albumin": (66500.0, None),
        "hemoglobin": (64500.0, None),
    }
)

_AGE_YEARS = MappingProxyType(
    {
        "years": 1.0,
        "year": 1.0,
        "yr": 1.0,
        "yrs": 1.0,
        "y": 1.0,
        "months": 1 / 12,
        "month": 1 / 12,
        "mo": 1 / 12,
        "weeks": 7 / 365.25,
        "week": 7 / 365.25,
        "days": 1 / 365.25,
        "day": 1 / 365.25,
    }
)


@dataclass(frozen=True)
class Convention:
    """A unit-conversion convention: its name, its constants and its rounding rule.

    ``rounding``: "none" (plain arithmetic) or "v1.0-stepwise" (:func:`benchmark_round` after every step of
    a mass <-> amount conversion between mmol/L or µmol/L and mg/dL, as MedCalc-Bench v1.0 does)."""

    name: str
    description: str
    rounding: str
    compounds: Mapping[str, tuple[float | None, int | None]] = field(
        default_factory=lambda: COMPOUNDS, repr=False, compare=False
    )
    age_years: Mapping[str, float] = field(default_factory=lambda: _AGE_YEARS, repr=False, compare=False)
    # A cell count "per m^3": MedCalc-Bench v1.0 reads that spelling as per mm^3 (its worked explanations
    # compare "6370 count/m^3" with the per-mm^3 thresholds); Verified converts it as the cubic metre it
    # names (unit_converter_new.py, convert_to_units_per_liter_explanation: 'm^3': 1e3 L), 1e-9 per mm^3.
    cells_per_m3_to_per_ul: float = 1e-9
    # Whose reference code the library's calculators reproduce where a benchmark's code departs from its own
    # text or from the clinical rule (docs/LIBRARY.md, "Reference behaviour"): "verified" (MedCalc-Bench
    # Verified's calculator_implementations/) or "medcalc-v1.0" (v1.0's gold answers). Used by calculators
    # through ``harness.calculators.base.Calculator.convention_args``; not a unit conversion.
    reference: str = "verified"

    def __post_init__(self) -> None:
        if self.rounding not in ("none", "v1.0-stepwise"):
            raise ValueError(f"convention {self.name!r}: unknown rounding rule {self.rounding!r}")
        if self.reference not in ("verified", "medcalc-v1.0"):
            raise ValueError(f"convention {self.name!r}: unknown reference {self.reference!r}")

    def __str__(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        """What a run manifest records about the convention."""
        return {
            "name": self.name,
            "rounding": self.rounding,
            "molar_mass": {k: v[0] for k, v in sorted(self.compounds.items()) if v[0] is not None},
            "age_years": dict(sorted(self.age_years.items())),
            "cells_per_m3_to_per_ul": self.cells_per_m3_to_per_ul,
            "reference": self.reference,
        }


EXACT = Convention("exact", "plain arithmetic (MedCalc-Bench Verified's reference code)", "none")
MEDCALC_V1 = Convention(
    "medcalc-v1.0",
    "MedCalc-Bench v1.0's stepwise-rounded mass <-> amount conversions",
    "v1.0-stepwise",
    cells_per_m3_to_per_ul=1.0,
    reference="medcalc-v1.0",
)
CONVENTIONS: Mapping[str, Convention] = MappingProxyType({c.name: c for c in (EXACT, MEDCALC_V1)})


def get_convention(convention: Convention | str) -> Convention:
    """A :class:`Convention` from itself or its name; ``ValueError`` naming the known ones otherwise."""
    if isinstance(convention, Convention):
        return convention
    try:
        return CONVENTIONS[str(convention)]
    except KeyError:
        raise ValueError(f"unknown unit convention {convention!r}; known: {sorted(CONVENTIONS)}") from None


def norm_unit(unit: str) -> str:
    """Canonical spelling of a unit string: micro signs unified, spaces and case folded."""
    u = str(unit).strip()
    u = u.replace("\u03bc", "µ").replace("\u00b5", "µ")  # greek mu and micro sign -> one glyph
    u = re.sub(r"\s+", "", u).lower()
    u = u.replace("^", "").replace("**", "")
    return u


def _lookup(table: Mapping[str, float], quantity: str, unit: str) -> float:
    key = norm_unit(unit)
    if key not in table:
        raise UnitError(f"{quantity}: unit {unit!r} not supported (known: {sorted(table)})")
    return table[key]


_WEIGHT_KG = MappingProxyType(
    {
        "kg": 1.0,
        "kgs": 1.0,
        "g": 0.001,
        "mg": 1e-6,
        "lb": 0.453592,
        "lbs": 0.453592,
        "pound": 0.453592,
        "pounds": 0.453592,
        "oz": 0.0283495,
    }
)
_HEIGHT_CM = MappingProxyType(
    {"cm": 1.0, "m": 100.0, "mm": 0.1, "in": 2.54, "inch": 2.54, "inches": 2.54, "ft": 30.48, "feet": 30.48}
)


def weight_kg(value: float, unit: str) -> float:
    """Body weight in kg from kg, g, mg, lb(s) or oz."""
    return float(value) * _lookup(_WEIGHT_KG, "weight", unit)


def height_cm(value: float, unit: str) -> float:
    """Height in cm from cm, m, mm, in or ft."""
    return float(value) * _lookup(_HEIGHT_CM, "height", unit)


def age_years(value: float, unit: str, convention: Convention = EXACT) -> float:
    """Age in years from years, months, weeks or days (the convention's year fractions)."""
    return float(value) * _lookup(get_convention(convention).age_years, "age", unit)


# unit -> (kind, factor to the base of that kind per litre): mass in g/L, amount in mol/L, eq/L
_CONC = MappingProxyType(
    {
        "g/l": ("mass", 1.0),
        "g/dl": ("mass", 10.0),
        "mg/dl": ("mass", 1e-2),
        "mg/l": ("mass", 1e-3),
        "mg/ml": ("mass", 1.0),
        "µg/dl": ("mass", 1e-5),
        "µg/ml": ("mass", 1e-3),
        "mol/l": ("amount", 1.0),
        "mmol/l": ("amount", 1e-3),
        "µmol/l": ("amount", 1e-6),
        "umol/l": ("amount", 1e-6),
        "mm": ("amount", 1e-3),
        "eq/l": ("eq", 1.0),
        "meq/l": ("eq", 1e-3),
        "meq/dl": ("eq", 1e-2),
    }
)


def _v1_mass_amount(value: float, unit: str, target: str, mm: float) -> float | None:
    """v1.0's stepwise-rounded mass <-> amount conversion for the unit pairs in its gold rows
    (mmol/L or µmol/L <-> mg/dL); ``None`` for any other pair (plain arithmetic then applies)."""
    r = benchmark_round
    src, dst = norm_unit(unit), norm_unit(target)
    amount = {"mmol/l": 1e-3, "µmol/l": 1e-6, "umol/l": 1e-6}
    if src in amount and dst == "mg/dl":
        mol = r(value * amount[src])
        grams = r(mol * mm)
        mg = r(grams * 1000.0)
        return r(mg / 10.0)  # per L -> per dL
    if src == "mg/dl" and dst in amount:
        grams = r(value * 0.001)
        mol = r(grams / mm)
        sub = r(mol / amount[dst])
        return r(sub / 0.1)  # per dL -> per L
    return None


def concentration(compound: str, value: float, unit: str, target: str, convention: Convention = EXACT) -> float:
    """Convert a concentration of ``compound`` between mass (g/L, g/dL, mg/dL...), amount (mmol/L,
    µmol/L...) and equivalent (mEq/L) units, with the convention's molar mass and valence. Under
    "medcalc-v1.0", mass <-> amount steps are rounded as v1.0 does."""
    conv = get_convention(convention)
    if compound not in conv.compounds:
        raise UnitError(f"{compound}: no conversion data (known compounds: {sorted(conv.compounds)})")
    mm, valence = conv.compounds[compound]
    src = _CONC.get(norm_unit(unit))
    dst = _CONC.get(norm_unit(target))
    if src is None:
        raise UnitError(f"{compound}: unit {unit!r} not supported (known: {sorted(_CONC)})")
    if dst is None:
        raise UnitError(f"{compound}: target unit {target!r} not supported")
    kind, f = src
    x = float(value) * f  # in base units of `kind` per litre
    if kind == "mass":
        mol = None if mm is None else x / mm
    elif kind == "amount":
        mol = x
    else:
        mol = None if valence is None else x / valence
    dkind, df = dst
    if kind == dkind:
        return x / df
    if conv.rounding == "v1.0-stepwise" and mm is not None and {kind, dkind} == {"mass", "amount"}:
        legacy = _v1_mass_amount(float(value), unit, target, mm)
        if legacy is not None:
            return legacy
    if mol is None:
        raise UnitError(f"{compound}: cannot convert {unit!r} to {target!r} (no molar mass/valence)")
    if dkind == "amount":
        return mol / df
    if dkind == "mass":
        if mm is None:
            raise UnitError(f"{compound}: cannot convert {unit!r} to {target!r} (no molar mass)")
        return mol * mm / df
    if valence is None:
        raise UnitError(f"{compound}: cannot convert {unit!r} to {target!r} (no valence)")
    return mol * valence / df


# count-per-volume units -> multiplier to 10^9 cells per litre
_PLATELETS = MappingProxyType(
    {
        "l": 1e-9,
        "/l": 1e-9,
        "µl": 1e-3,
        "/µl": 1e-3,
        "mm3": 1e-3,
        "/mm3": 1e-3,
        "cells/µl": 1e-3,
        "109/l": 1.0,
        "10e9/l": 1.0,
        "x109/l": 1.0,
        "×109/l": 1.0,
        "103/µl": 1.0,
        "k/µl": 1.0,
        "x103/µl": 1.0,
        "×103/µl": 1.0,
        "giga/l": 1.0,
    }
)
# count-per-volume units -> divisor to cells per µL (the catalogue's texts state counts per µL)
_CELLS_PER_UL_DIV = MappingProxyType(
    {"µl": 1.0, "/µl": 1.0, "mm3": 1.0, "/mm3": 1.0, "cells/µl": 1.0, "l": 1e6, "/l": 1e6}
)
_CELLS_PER_UL_MUL = MappingProxyType(
    {
        "109/l": 1000.0,
        "x109/l": 1000.0,
        "10e9/l": 1000.0,
        "×109/l": 1000.0,
        "103/µl": 1000.0,
        "x103/µl": 1000.0,
        "×103/µl": 1000.0,
        "k/µl": 1000.0,
    }
)


def platelets_per_nl(value: float, unit: str) -> float:
    """Platelet count in 10^9/L (= 10^3/µL) from a count per L, per µL (mm^3) or 10^9/L, 10^3/µL."""
    return float(value) * _lookup(_PLATELETS, "platelet count", unit)


def cells_per_ul(value: float, unit: str, convention: Convention = EXACT) -> float:
    """A cell count per µL (= per mm^3) from a count per L, per µL (mm^3), 10^9/L or 10^3/µL, or per m^3 (read
    as the convention says: ``Convention.cells_per_m3_to_per_ul``)."""
    key = norm_unit(unit)
    if key in ("m3", "/m3"):
        return float(value) * get_convention(convention).cells_per_m3_to_per_ul
    if key in _CELLS_PER_UL_DIV:
        return float(value) / _CELLS_PER_UL_DIV[key]
    if key in _CELLS_PER_UL_MUL:
        return float(value) * _CELLS_PER_UL_MUL[key]
    raise UnitError(
        f"cell count: unit {unit!r} not supported (known: {sorted({*_CELLS_PER_UL_DIV, *_CELLS_PER_UL_MUL})})"
    )


def _identity(quantity: str, accepted: set[str]) -> Callable[[float, str], float]:
    frozen = frozenset(accepted)

    def conv(value: float, unit: str) -> float:
        if norm_unit(unit) not in frozen:
            raise UnitError(f"{quantity}: unit {unit!r} not supported (known: {sorted(frozen)})")
        return float(value)

    conv.__doc__ = f"{quantity} in its only accepted unit family {sorted(frozen)}."
    conv.accepted = frozen  # type: ignore[attr-defined]
    return conv


blood_pressure_mmhg = _identity("blood pressure", {"mmhg", "torr"})
interval_ms = _identity("QT interval", {"msec", "ms", "millisecond", "milliseconds"})
heart_rate_bpm = _identity("heart rate", {"beatsperminute", "bpm", "/min", "beats/min", "min-1"})
respiratory_rate = _identity("respiratory rate", {"breathsperminute", "breaths/min", "/min", "min-1", "bpm"})
enzyme_u_per_l = _identity("enzyme activity", {"u/l", "iu/l", "units/l"})
bmi_kg_m2 = _identity("body mass index", {"kg/m2", "kg/m²"})
percent = _identity("percentage", {"%", "percent"})
_INSULIN = MappingProxyType({"µiu/ml": 1.0, "uiu/ml": 1.0, "miu/l": 1.0, "µu/ml": 1.0, "uu/ml": 1.0, "pmol/l": 1 / 6.0})


def insulin_uiu_per_ml(value: float, unit: str) -> float:
    """Insulin in µIU/mL (= mIU/L); pmol/L divided by 6 (1 µIU/mL = 6 pmol/L, the conventional
    factor; Knopp JL et al. J Diabetes Sci Technol 2019;13:597-600)."""
    return float(value) * _lookup(_INSULIN, "insulin", unit)


# The benchmark's entity files spell Celsius and Fahrenheit in several ways, misspellings included.
_CELSIUS = frozenset({"c", "°c", "degc", "celsius", "degreescelsius", "degreescelsisus", "degreecelsius"})
_FAHRENHEIT = frozenset(
    {"f", "°f", "degf", "fahrenheit", "degreesfahrenheit", "degreesfahreinheit", "degreefahrenheit"}
)


def temperature_c(value: float, unit: str) -> float:
    """Temperature in °C from Celsius or Fahrenheit (the benchmark's spellings, misspellings included)."""
    key = norm_unit(unit)
    if key in _CELSIUS:
        return float(value)
    if key in _FAHRENHEIT:
        return (float(value) - 32.0) * 5.0 / 9.0
    raise UnitError(f"temperature: unit {unit!r} not supported (known: {sorted(_CELSIUS | _FAHRENHEIT)})")


def dimensionless(quantity: str, accepted: set[str] | frozenset[str]) -> Callable[[float, str], float]:
    """A converter that accepts a value only in one of ``accepted`` unit spellings (normalized) and returns
    it unchanged: for the quantities the benchmark gives in a single unit (drinks per day, mL/day, µg/kg/min)."""
    return _identity(quantity, set(accepted))


# Quantities by target unit, for ``convert``: target spelling (normalized) -> converter(value, unit).
_BY_TARGET: dict[str, Callable[[float, str], float]] = {
    "kg": weight_kg,
    "cm": height_cm,
    "mmhg": blood_pressure_mmhg,
    "ms": interval_ms,
    "beats/min": heart_rate_bpm,
    "breaths/min": respiratory_rate,
    "u/l": enzyme_u_per_l,
    "kg/m2": bmi_kg_m2,
    "%": percent,
    "µiu/ml": insulin_uiu_per_ml,
    "°c": temperature_c,
    "109/l": platelets_per_nl,
    "/µl": cells_per_ul,
}


def convert(value: float, unit: str, target: str, convention: Convention = EXACT) -> float:
    """``value`` in ``unit`` converted to ``target`` (one of the targets above, or "years"); UnitError for a
    unit that is unknown for the target's quantity, or a target this module does not know."""
    t = norm_unit(target)
    if t == "years":
        return age_years(value, unit, convention)
    if t == "/µl":
        return cells_per_ul(value, unit, convention)
    fn = _BY_TARGET.get(t)
    if fn is None:
        raise UnitError(f"no converter to {target!r} (known targets: {sorted(_BY_TARGET) + ['years']})")
    return fn(value, unit)
