"""The one place value strings are parsed: numbers, calendar dates and gestational ages, as the
benchmark files (gold answers, limits, Relevant Entities) and the kit's stores write them.

Every reader of such strings uses these functions: the dataset loader (harness/data/dataset.py), the
scorers' gold model (harness/scoring/gold.py), the library's date variables
(harness/calculators/base.py) and the formula catalogue's entities (harness/calculators/entities.py). Where
the callers accept different forms, the difference is an explicit keyword argument, never a second
parser. Reading values out of free model replies is another job (harness/scoring/answer_parsing.py).

Forms (each raises ValueError naming the text when it does not fit):

* `parse_number`: a plain decimal number ("25.238", "-1", "4", "1e3", ".5", "+2."), surrounding
  whitespace allowed, or an int or float given as one (never a bool); NaN and infinities are refused.
  Option: ``thousands``: also "1,234.5" (commas dropped; the calculators' gold entities; default off).
* `parse_date`: always month/day/year with slashes, one- or two-digit month and day and a four-digit
  year ("01/09/2007", "1/9/2007"; the benchmark's form); whitespace around the whole allowed; an
  impossible day ("02/30/2021") is an error. Options, all off by default:
  ``iso``: also YYYY-MM-DD (one- or two-digit month and day); ``dashes``: also M-D-YYYY;
  ``two_digit_year``: also M/D/YY (00-68 -> 2000-2068, 69-99 -> 1969-1999, as strptime's %y);
  ``month_names``: also "March 31, 2006" / "Mar 31, 2006" (any case).
  A datetime.date (or datetime) is returned as a date.
* `parse_weeks_days`: a gestational age written as a Python tuple: "('4 weeks', '2 days')" (singular
  "week"/"day" too, any case, quotes optional) or a pair of whole numbers "(4, 2)"; whitespace allowed
  around every part. Options: ``brackets``: also "[...]" lists (default off); ``max_days``: the largest
  day count accepted (default 6, the files' form; None accepts any, for callers that reduce).
  Weeks and days are ASCII digits, never negative.
* `looks_like_weeks_days`: whether a gold string is written as a tuple (the benchmark's gestational-age
  format, whatever the row's Output Type says); ``brackets`` as above.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

__all__ = ["MONTHS", "calendar_day", "looks_like_weeks_days", "parse_date", "parse_number", "parse_weeks_days"]


# ----------------------------------------------------------------------------- numbers


_DECIMAL = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def parse_number(text: Any, *, thousands: bool = False) -> float:
    """A plain decimal number (or an int/float, never a bool) -> float; ValueError for non-numbers, NaN and
    infinities. ``thousands``: commas are dropped first ("1,234" -> 1234.0)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        s = str(text).strip()
        if thousands:
            s = s.replace(",", "")
        if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueError(f"expected a finite number, got {text!r}")
        if not _DECIMAL.fullmatch(s):
            raise ValueError(f"expected a number, got {text!r}")
        value = float(s)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


# ----------------------------------------------------------------------------- dates

MONTHS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))

_MDY = re.compile(r"\s*([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})\s*")
_MDY_DASH = re.compile(r"\s*([0-9]{1,2})-([0-9]{1,2})-([0-9]{4})\s*")
_MDY_SHORT = re.compile(r"\s*([0-9]{1,2})/([0-9]{1,2})/([0-9]{2})\s*")
_ISO = re.compile(r"\s*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})\s*")
_NAMED = re.compile(rf"\s*({_MONTH_ALT})\s+([0-9]{{1,2}}),\s+([0-9]{{4}})\s*", re.IGNORECASE)


def calendar_day(year: int | str, month: int | str, day: int | str) -> dt.date:
    """datetime.date(year, month, day), each an int or its digits; ValueError (naming the problem) for an
    impossible day."""
    return dt.date(int(year), int(month), int(day))


def _forms(iso: bool, dashes: bool, two_digit_year: bool, month_names: bool) -> list[str]:
    names = ["MM/DD/YYYY"]
    if iso:
        names.append("YYYY-MM-DD")
    if dashes:
        names.append("MM-DD-YYYY")
    if two_digit_year:
        names.append("MM/DD/YY")
    if month_names:
        names.append("'March 31, 2006'")
    return names


def parse_date(
    text: Any, *, iso: bool = False, dashes: bool = False, two_digit_year: bool = False, month_names: bool = False
) -> dt.date:
    """A calendar date in the forms of the module docstring; ValueError otherwise."""
    if isinstance(text, dt.datetime):
        return text.date()
    if isinstance(text, dt.date):
        return text
    s = str(text)
    m = _MDY.fullmatch(s)
    if m:
        return calendar_day(m.group(3), m.group(1), m.group(2))
    if iso and (m := _ISO.fullmatch(s)):
        return calendar_day(m.group(1), m.group(2), m.group(3))
    if dashes and (m := _MDY_DASH.fullmatch(s)):
        return calendar_day(m.group(3), m.group(1), m.group(2))
    if two_digit_year and (m := _MDY_SHORT.fullmatch(s)):
        yy = int(m.group(3))
        return calendar_day(2000 + yy if yy < 69 else 1900 + yy, m.group(1), m.group(2))
    if month_names and (m := _NAMED.fullmatch(s)):
        return calendar_day(m.group(3), MONTHS[m.group(1).lower()], m.group(2))
    forms = _forms(iso, dashes, two_digit_year, month_names)
    if len(forms) == 1:
        raise ValueError(f"expected a date like 08/23/2021 (MM/DD/YYYY), got {text!r}")
    raise ValueError(f"expected a date written {' or '.join(forms)}, got {text!r}")


# ----------------------------------------------------------------------------- gestational age

_Q = r"""\s*['"]?\s*"""
_WD_WORDS = re.compile(
    rf"\s*([(\[])\s*['\"]?\s*([0-9]+)\s*weeks?{_Q},{_Q}([0-9]+)\s*days?{_Q}([)\]])\s*", re.IGNORECASE
)
_WD_PAIR = re.compile(r"\s*([(\[])\s*([0-9]+)\s*,\s*([0-9]+)\s*([)\]])\s*")
_CLOSE = {"(": ")", "[": "]"}


def looks_like_weeks_days(text: object, *, brackets: bool = False) -> bool:
    """True when a gold string is written as a tuple (or, with brackets, a list)."""
    return isinstance(text, str) and text.strip().startswith(("(", "[") if brackets else "(")


def parse_weeks_days(text: Any, *, brackets: bool = False, max_days: int | None = 6) -> tuple[int, int]:
    """A gestational age "('4 weeks', '2 days')" or "(4, 2)" -> (weeks, days); ValueError otherwise
    (forms and options in the module docstring)."""
    s = str(text)
    m = _WD_WORDS.fullmatch(s) or _WD_PAIR.fullmatch(s)
    if m is None or _CLOSE[m.group(1)] != m.group(4) or (m.group(1) == "[" and not brackets):
        lists = " or [N, M]" if brackets else ""
        raise ValueError(f"expected a gestational age ('N weeks', 'M days') or (N, M){lists}, got {text!r}")
    weeks, days = int(m.group(2)), int(m.group(3))
    if max_days is not None and days > max_days:
        raise ValueError(f"gestational age out of range (days must be 0..{max_days}), got {text!r}")
    return weeks, days
