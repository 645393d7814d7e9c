"""Shared ``Variable`` definitions (name, unit, converter, gold entity keys) used by several calculators."""
from __future__ import annotations

from . import units
from .base import Variable


def conc(name: str, compound: str, unit: str, description: str, *keys: str) -> Variable:
    """A lab concentration converted to ``unit`` through ``units.concentration``."""
    def convert(value: float, src: str, _c=compound, _t=unit) -> float:
        return units.concentration(_c, value, src, _t)
    return Variable(name, unit, description, "quantity", keys, convert)


SEX = Variable("sex", "male|female", "patient's sex: male or female", "sex", ("sex", "gender"))
AGE = Variable("age", "years", "patient's age in years", "quantity", ("age",), units.age_years)
WEIGHT = Variable("weight", "kg", "patient's body weight in kg", "quantity", ("weight", "body weight"),
                  units.weight_kg)
HEIGHT = Variable("height", "cm", "patient's height in cm", "quantity", ("height",), units.height_cm)
CREATININE = conc("creatinine", "creatinine", "mg/dL", "serum creatinine in mg/dL",
                  "creatinine", "serum creatinine")
SODIUM = conc("sodium", "sodium", "mmol/L", "serum sodium in mmol/L (= mEq/L)", "Sodium")
CHLORIDE = conc("chloride", "chloride", "mmol/L", "serum chloride in mmol/L (= mEq/L)", "Chloride")
BICARBONATE = conc("bicarbonate", "bicarbonate", "mmol/L", "serum bicarbonate (HCO3-) in mmol/L (= mEq/L)",
                   "Bicarbonate", "HCO3")
ALBUMIN = conc("albumin", "albumin", "g/dL", "serum albumin in g/dL", "Albumin")
GLUCOSE = conc("glucose", "glucose", "mg/dL", "serum/blood glucose in mg/dL", "Glucose")
HEART_RATE = Variable("heart_rate", "beats/min", "heart rate in beats per minute", "quantity",
                      ("Heart Rate or Pulse", "heart rate", "pulse"), units.heart_rate_bpm)
QT = Variable("qt_interval", "ms", "measured QT interval in milliseconds", "quantity",
              ("QT interval", "QT"), units.interval_ms)
LMP = Variable("last_menstrual_date", "MM/DD/YYYY", "first day of the last menstrual period (month/day/year)",
               "date", ("Last menstrual date", "last menstrual period", "LMP"))

__all__ = ["conc", "SEX", "AGE", "WEIGHT", "HEIGHT", "CREATININE", "SODIUM", "CHLORIDE", "BICARBONATE",
           "ALBUMIN", "GLUCOSE", "HEART_RATE", "QT", "LMP"]
