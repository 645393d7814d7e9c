"""Pregnancy date calculators: due date, conception date, gestational age.

Dates are ``datetime.date``; the gold variables write them month/day/year (``base.parse_date``).
"""

from __future__ import annotations

import datetime as dt

from harness.core.units import Convention

from .base import Calculator, Variable
from .variables import LMP

NAEGELE_DAYS = 280  # 40 weeks from the first day of the last menstrual period
STANDARD_CYCLE = 28


def due_date(last_menstrual_date: dt.date, cycle_length: float, short_cycle: str = "subtract") -> dt.date:
    """Naegele's rule with the cycle adjustment: LMP + 280 days + (cycle - 28) days, so a shorter cycle moves
    the date earlier (``short_cycle="subtract"``: the clinical rule, the formula catalogue and MedCalc-Bench
    Verified's reference code, calculator_implementations/estimated_due_date.py).

    ``short_cycle="add"``: MedCalc-Bench v1.0, whose worked explanations and gold answers add |cycle - 28|
    days for short cycles too (the "medcalc-v1.0" convention)."""
    if short_cycle not in ("subtract", "add"):
        raise ValueError(f"short_cycle must be 'subtract' or 'add', got {short_cycle!r}")
    diff = int(round(cycle_length)) - STANDARD_CYCLE
    gap = abs(diff) if short_cycle == "add" else diff
    return last_menstrual_date + dt.timedelta(days=NAEGELE_DAYS + gap)


def _due_date_args(convention: Convention) -> dict:
    return {"short_cycle": "add" if convention.reference == "medcalc-v1.0" else "subtract"}


def conception_date(last_menstrual_date: dt.date) -> dt.date:
    """Estimated conception = LMP + 14 days (2 weeks), whatever the cycle length (benchmark convention)."""
    return last_menstrual_date + dt.timedelta(days=14)


def gestational_age(current_date: dt.date, last_menstrual_date: dt.date) -> tuple[int, int]:
    """(weeks, days) elapsed between the LMP and the current date (absolute difference)."""
    days = abs((current_date - last_menstrual_date).days)
    return days // 7, days % 7


CYCLE = Variable(
    "cycle_length", "days", "menstrual cycle length in days (not stated: 28)", "number", ("cycle length",), default=28
)
CURRENT = Variable(
    "current_date",
    "MM/DD/YYYY",
    "today's date, the date of the visit (month/day/year)",
    "date",
    ("Current Date", "today"),
)

CALCULATORS = [
    Calculator(
        13,
        "Estimated Due Date",
        "date",
        "Naegele's rule: due date = LMP + 280 days + (cycle length - 28) days (MedCalc-Bench v1.0 "
        "adds |cycle - 28| days; under its convention the library does too). Naegele FC, Lehrbuch der "
        "Geburtshulfe, 1830.",
        [LMP, CYCLE],
        due_date,
        convention_args=_due_date_args,
    ),
    Calculator(
        68,
        "Estimated of Conception",
        "date",
        "Conception date = LMP + 14 days (ovulation two weeks after the LMP in a 28-day cycle).",
        [LMP],
        conception_date,
    ),
    Calculator(
        69,
        "Estimated Gestational Age",
        "weeks_days",
        "Gestational age = (current date - LMP) in completed weeks and days (ACOG Committee "
        "Opinion 700, 2017: dating by LMP).",
        [CURRENT, LMP],
        gestational_age,
    ),
]
