"""Pregnancy date calculators: due date, conception date, gestational age.

Dates are ``datetime.date``; the gold variables write them month/day/year (``base.parse_date``).
"""
from __future__ import annotations

import datetime as dt

from ._vars import LMP
from .base import Calculator, Variable

NAEGELE_DAYS = 280  # 40 weeks from the first day of the last menstrual period
STANDARD_CYCLE = 28


def due_date(last_menstrual_date: dt.date, cycle_length: float) -> dt.date:
    """Naegele's rule with the benchmark's cycle adjustment: LMP + 280 days + |cycle - 28| days.

    Note: the benchmark ADDS the absolute difference for short cycles too (its worked explanations
    and all its gold answers do); the clinical Parikh/Mittendorf adjustment would subtract it."""
    gap = abs(int(round(cycle_length)) - STANDARD_CYCLE)
    return last_menstrual_date + dt.timedelta(days=NAEGELE_DAYS + gap)


def conception_date(last_menstrual_date: dt.date) -> dt.date:
    """Estimated conception = LMP + 14 days (2 weeks), whatever the cycle length (benchmark convention)."""
    return last_menstrual_date + dt.timedelta(days=14)


def gestational_age(current_date: dt.date, last_menstrual_date: dt.date) -> tuple[int, int]:
    """(weeks, days) elapsed between the LMP and the current date (absolute difference)."""
    days = abs((current_date - last_menstrual_date).days)
    return days // 7, days % 7


CYCLE = Variable("cycle_length", "days", "menstrual cycle length in days (not stated: 28)", "number",
                 ("cycle length",), default=28)
CURRENT = Variable("current_date", "MM/DD/YYYY", "today's date, the date of the visit (month/day/year)",
                   "date", ("Current Date", "today"))

CALCULATORS = [
    Calculator(13, "Estimated Due Date", "date",
               "Naegele's rule: due date = LMP + 280 days, adjusted by the cycle length's distance from 28 "
               "days; the benchmark adds |cycle - 28| days. Naegele FC, Lehrbuch der Geburtshulfe, 1830.",
               [LMP, CYCLE], due_date),
    Calculator(68, "Estimated of Conception", "date",
               "Conception date = LMP + 14 days (ovulation two weeks after the LMP in a 28-day cycle).",
               [LMP], conception_date),
    Calculator(69, "Estimated Gestational Age", "weeks_days",
               "Gestational age = (current date - LMP) in completed weeks and days (ACOG Committee "
               "Opinion 700, 2017: dating by LMP).",
               [CURRENT, LMP], gestational_age),
]
