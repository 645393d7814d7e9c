"""harness/data/values.py, the one value parser: every accepted form, every option on and off, and the
errors. The callers' option sets are pinned too (dataset loader, scorers' gold, library, catalogue)."""

from __future__ import annotations

import datetime as dt

import pytest

from harness.calculators.base import parse_date as library_parse_date
from harness.calculators.entities import parse_us_date
from harness.data import values
from harness.data.dataset import parse_gold
from harness.data.values import looks_like_weeks_days, parse_date, parse_number, parse_weeks_days
from harness.scoring.gold import Gold

D = dt.date(2006, 3, 31)


@pytest.mark.parametrize("text, value", [("25.238", 25.238), ("-1", -1.0), (" 4 ", 4.0), ("1e3", 1000.0), (7, 7.0)])
def test_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text, why",
    [
        ("about 67", "expected a number"),
        ("nan", "finite"),
        ("inf", "finite"),
        ("-Infinity", "finite"),
        ("", "expected a number"),
    ],
)
def test_bad_numbers(text, why):
    with pytest.raises(ValueError, match=why):
        parse_number(text)


@pytest.mark.parametrize("text", ["03/31/2006", "3/31/2006", " 03/31/2006 ", "3/31/2006\n"])
def test_month_day_year_always(text):
    assert parse_date(text) == D


@pytest.mark.parametrize(
    "option, text, value",
    [
        ("iso", "2006-03-31", D),
        ("iso", "2006-3-31", D),
        ("dashes", "03-31-2006", D),
        ("dashes", "3-31-2006", D),
        ("two_digit_year", "03/31/06", D),
        ("two_digit_year", "3/31/68", dt.date(2068, 3, 31)),
        ("two_digit_year", "3/31/69", dt.date(1969, 3, 31)),
        ("month_names", "March 31, 2006", D),
        ("month_names", "Mar 31, 2006", D),
        ("month_names", "march  31,  2006", D),
        ("month_names", "Sept 3, 2006", dt.date(2006, 9, 3)),
    ],
)
def test_date_options(option, text, value):
    assert parse_date(text, **{option: True}) == value
    with pytest.raises(ValueError, match=r"expected a date like 08/23/2021 \(MM/DD/YYYY\)"):
        parse_date(text)  # off by default


@pytest.mark.parametrize(
    "text",
    ["02/30/2021", "13/01/2021", "31/03/2006", "2006/03/31", "March 31,2006", "02/24-2000", "03/31/20067", "3/31", ""],
)
def test_bad_dates_with_every_option(text):
    with pytest.raises(ValueError):
        parse_date(text, iso=True, dashes=True, two_digit_year=True, month_names=True)


def test_date_errors_name_the_forms_and_the_day():
    with pytest.raises(ValueError, match=r"MM/DD/YYYY or YYYY-MM-DD, got 'x'"):
        parse_date("x", iso=True)
    with pytest.raises(ValueError, match=r"day is out of range"):
        parse_date("02/30/2021")
    assert parse_date(D) == D and parse_date(dt.datetime(2006, 3, 31, 12)) == D


@pytest.mark.parametrize(
    "text, value",
    [
        ("('4 weeks', '2 days')", (4, 2)),
        ('("4 weeks", "2 days")', (4, 2)),
        ("('1 week', '1 day')", (1, 1)),
        ("(4 Weeks, 2 Days)", (4, 2)),
        (" ( 40 weeks , 0 days ) ", (40, 0)),
        ("(8, 0)", (8, 0)),
        ("(8,0)", (8, 0)),
    ],
)
def test_weeks_days(text, value):
    assert parse_weeks_days(text) == value
    assert looks_like_weeks_days(text)


def test_weeks_days_options():
    # brackets: lists only when asked
    for text in ("[4, 2]", "['4 weeks', '2 days']"):
        assert not looks_like_weeks_days(text) and looks_like_weeks_days(text, brackets=True)
        with pytest.raises(ValueError, match=r"expected a gestational age"):
            parse_weeks_days(text)
        assert parse_weeks_days(text, brackets=True) == (4, 2)
    # max_days: the files' 0..6 by default; any count when the caller reduces
    with pytest.raises(ValueError, match=r"days must be 0\.\.6"):
        parse_weeks_days("('34 weeks', '9 days')")
    assert parse_weeks_days("('34 weeks', '9 days')", max_days=None) == (34, 9)


@pytest.mark.parametrize(
    "text",
    [
        "('34 weeks', 3)",
        "('34 weeks')",
        "34 weeks, 3 days",
        "(4, 2]",
        "[4, 2)",
        "(-1, 2)",
        "(4.5, 2)",
        "(4, 2, 1)",
        "()",
        "('4 days', '2 weeks')",
    ],
)
def test_bad_weeks_days(text):
    with pytest.raises(ValueError, match=r"expected a gestational age"):
        parse_weeks_days(text, brackets=True, max_days=None)


def test_callers_use_their_stated_options():
    # dataset loader: file forms only
    assert parse_gold("01/09/2007", "date") == dt.date(2007, 1, 9)
    with pytest.raises(ValueError):
        parse_gold("2007-01-09", "date")
    with pytest.raises(ValueError):
        parse_gold("('3 weeks', '9 days')", "weeks_days")
    # scorers' gold: ISO dates, lists, any day count
    assert Gold("date", "2007-01-09").value == dt.date(2007, 1, 9)
    assert Gold("integer", "[3, 9]").value == (3, 9) and Gold("integer", "[3, 9]").kind == "weeks_days"
    # library: every option; catalogue: slashes or dashes, four-digit years
    assert (
        library_parse_date("March 31, 2006") == library_parse_date("03/31/06") == library_parse_date("2006-03-31") == D
    )
    assert parse_us_date("03-31-2006") == D
    with pytest.raises(ValueError):
        parse_us_date("03/31/06")  # was read as the year 6 before the one parser
    assert values.MONTHS["sept"] == 9


def test_parse_number_is_the_one_number_parser():
    """Gold answers (strict) and the calculators' gold entities (thousands=True) read numbers with one rule."""
    assert parse_number(" 1e3 ") == 1000.0 and parse_number(".5") == 0.5 and parse_number(7) == 7.0
    assert parse_number("1,234.5", thousands=True) == 1234.5
    for bad in ("1,234.5", "1_000", "0x10", True, "", "12 mg"):
        with pytest.raises(ValueError, match="expected a number"):
            parse_number(bad)
    for bad in ("nan", "-inf", float("inf")):
        with pytest.raises(ValueError, match="expected a finite number"):
            parse_number(bad)
    from harness.calculators.base import entity_number
    from harness.calculators.entities import Entities

    assert entity_number("2,000") == 2000.0
    assert Entities({"Platelet count": "2,000"}).pair("platelet count") == (2000.0, "")
    assert Entities({"Platelet count": "1_000"}).pair("platelet count") == (None, "")
