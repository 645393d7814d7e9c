"""Shared ``Variable`` definitions (name, unit, converter, gold entity keys) used by several calculators."""

from __future__ import annotations

from collections.abc import Callable

from harness.core import units
from harness.core.units import Convention

from .base import Variable


def conc(name: str, compound: str, unit: str, description: str, *keys: str) -> Variable:
    """A lab concentration converted to ``unit`` through ``units.concentration`` (under the convention)."""

    def convert(value: float, src: str, convention: Convention, _c: str = compound, _t: str = unit) -> float:
        return units.concentration(_c, value, src, _t, convention)

    return Variable(name, unit, description, "quantity", keys, convert)


def plain(fn: Callable[[float, str], float]) -> Callable[[float, str, Convention], float]:
    """A converter that no convention changes (weight, height, pressure...), in ``Variable.convert``'s form."""

    def convert(value: float, unit: str, convention: Convention) -> float:
        return fn(value, unit)

    convert.__doc__ = fn.__doc__
    return convert


def _age(value: float, unit: str, convention: Convention) -> float:
    return units.age_years(value, unit, convention)


SEX = Variable("sex", "male|female", "patient's sex: male or female", "sex", ("sex", "gender"))
AGE = Variable("age", "years", "patient's age in years", "quantity", ("age",), _age)
WEIGHT = Variable(
    "weight", "kg", "patient's body weight in kg", "quantity", ("weight", "body weight"), plain(units.weight_kg)
)
HEIGHT = Variable("height", "cm", "patient's height in cm", "quantity", ("height",), plain(units.height_cm))
CREATININE = conc("creatinine", "creatinine", "mg/dL", "serum creatinine in mg/dL", "creatinine", "serum creatinine")
SODIUM = conc("sodium", "sodium", "mmol/L", "serum sodium in mmol/L (= mEq/L)", "Sodium")
CHLORIDE = conc("chloride", "chloride", "mmol/L", "serum chloride in mmol/L (= mEq/L)", "Chloride")
BICARBONATE = conc(
    "bicarbonate", "bicarbonate", "mmol/L", "serum bicarbonate (HCO3-) in mmol/L (= mEq/L)", "Bicarbonate", "HCO3"
)
ALBUMIN = conc("albumin", "albumin", "g/dL", "serum albumin in g/dL", "Albumin")
GLUCOSE = conc("glucose", "glucose", "mg/dL", "serum/blood glucose in mg/dL", "Glucose")
HEART_RATE = Variable(
    "heart_rate",
    "beats/min",
    "heart rate in beats per minute",
    "quantity",
    ("Heart Rate or Pulse", "heart rate", "pulse"),
    plain(units.heart_rate_bpm),
)
QT = Variable(
    "qt_interval",
    "ms",
    "measured QT interval in milliseconds",
    "quantity",
    ("QT interval", "QT"),
    plain(units.interval_ms),
)
LMP = Variable(
    "last_menstrual_date",
    "MM/DD/YYYY",
    "first day of the last menstrual period (month/day/year)",
    "date",
    ("Last menstrual date", "last menstrual period", "LMP"),
)

__all__ = [
    "AGE",
    "ALBUMIN",
    "BICARBONATE",
    "CHLORIDE",
    "CREATININE",
    "GLUCOSE",
    "HEART_RATE",
    "HEIGHT",
    "LMP",
    "QT",
    "SEX",
    "SODIUM",
    "WEIGHT",
    "conc",
    "plain",
]
TOTAL_CHOL = conc("total_cholesterol", "cholesterol", "mg/dL", "total cholesterol in mg/dL", "Total cholesterol")
HDL = conc(
    "hdl", "cholesterol", "mg/dL", "HDL cholesterol in mg/dL", "high-density lipoprotein cholesterol", "HDL cholesterol"
)
TRIGLYCERIDES = conc("triglycerides", "triglycerides", "mg/dL", "triglycerides in mg/dL", "Triglycerides")
RACE = Variable(
    "race", "black|other", "patient's race: black or other (not stated: other)", "race", ("Race",), default="other"
)
