"""Scoring: the reply corpus (exact expected outcomes for both scorers), the parsing rules of the
paper scorer, typed values, and the errors for cases that cannot be scored."""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.scoring.answer_parsing import final_answer_text, first_date, first_number, first_weeks_days
from harness.scoring.official import _DATE_IDS, _DECIMAL_IDS, _INTEGER_IDS, _WEEKS_IDS, _branch
from harness.scoring.scorers import SCORERS, Gold, Score, ScoringError, score_all, score_reply, score_value

CORPUS = Path(__file__).resolve().parent / "reply_corpus.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def gold_of_entry(e: dict) -> Gold:
    return Gold(e["output_type"], e["gold_answer"], e["lower"], e["upper"], e["calculator_id"])


# dev row 1 (Cockcroft-Gault), row 41 (CHA2DS2-VASc), row 929 (due date), row 1030 (gestational age)
CRCL = Gold("decimal", "25.238", "23.9761", "26.4999", 2, "2-1")
CHADS = Gold("integer", "4", "4", "4", 4, "4-41")
DUE = Gold("date", "01/09/2007", "01/09/2007", "01/09/2007", 13, "13-929")
GEST = Gold("weeks_days", "('3 weeks', '4 days')", "('3 weeks', '4 days')", "('3 weeks', '4 days')", 69, "69-1030")


# ----------------------------------------------------------------------------- the corpus


def test_corpus_is_large_and_well_formed():
    assert len(ENTRIES) >= 100
    keys = {"reply", "output_type", "gold_answer", "lower", "upper", "calculator_id", "expected", "rule"}
    for e in ENTRIES:
        assert keys <= set(e), e
        assert {"paper", "medcalc"} <= set(e["expected"]) <= set(SCORERS)
        assert all(isinstance(v, bool) for v in e["expected"].values())
    # every scorer has both outcomes (medcalc_line on a subset), and paper and medcalc disagree both ways
    for name in SCORERS:
        assert {e["expected"][name] for e in ENTRIES if name in e["expected"]} == {True, False}
    assert sum("medcalc_line" in e["expected"] for e in ENTRIES) >= 20
    pairs = {(e["expected"]["paper"], e["expected"]["medcalc"]) for e in ENTRIES}
    assert pairs == {(True, True), (True, False), (False, True), (False, False)}
    # every output type is exercised
    assert {e["output_type"] for e in ENTRIES} >= {"decimal", "integer", "date", "weeks_days"}


CORPUS_CASES = [(e, name) for e in ENTRIES for name in sorted(e["expected"])]


@pytest.mark.parametrize(
    "entry, scorer",
    CORPUS_CASES,
    ids=[f"{ENTRIES.index(e) + 1}-{name}:{e['rule'][:40]}" for e, name in CORPUS_CASES],
)
def test_corpus_expected_outcome(entry, scorer):
    s = score_reply(entry["reply"], gold_of_entry(entry), scorer)
    assert isinstance(s, Score)
    assert s.scorer == scorer
    assert s.correct is entry["expected"][scorer], s.reason
    assert s.reason.startswith(s.code + ":")
    if not s.correct and s.parsed is None:
        assert s.code in {"no_number", "no_date", "no_weeks_days", "official_error"}, s.reason


# ----------------------------------------------------------------------------- final-answer text


@pytest.mark.parametrize(
    "reply, text, rule",
    [
        ("Step 1: 3 + 4\nFinal answer: 7 points", "7 points", "final_answer_phrase"),
        ("Final answer:\n\n  42 mL  \n", "42 mL", "final_answer_phrase"),
        ("Final answer: 7\nThe answer is 8", "7", "final_answer_phrase"),
        ("So the final answer, is 7\n## Final Answer\n**8**", "**8**", "final_answer_phrase"),
        ("Answer: 1\nThe answer is 2.\nOK", "2.", "answer_phrase"),
        ('{"step_by_step_thinking": "the answer is 5", "answer": "6"}', "6", "json_key"),
        ('{"answer": 6.5, "unit": "kg"}', "6.5", "json_key"),
        ("$\\boxed{\\frac{1}{2}}$ is it", "\\frac{1}{2}", "boxed"),
        ("no marker here\n\nlast line 9\n```", "last line 9", "last_line"),
        ("<think>Answer: 1</think>The value: 3", "The value: 3", "last_line"),
        ("", "", "empty"),
        ("To answer this, see 5", "To answer this, see 5", "last_line"),
    ],
)
def test_final_answer_text(reply, text, rule):
    assert final_answer_text(reply) == (text, rule)


@pytest.mark.parametrize(
    "text, value",
    [
        ("25.2 mL/min", 25.2),
        ("-0.4", -0.4),
        ("\u22120.4", -0.4),
        ("+3", 3.0),
        ("1,234,567.5", 1234567.5),
        ("1,2345", 1.0),
        ("4,5", 4.0),
        ("3/4", 3.0),
        (".5", 0.5),
        ("1.2e3", 1200.0),
        ("1.2E-3", 0.0012),
        ("1.2 x 10^3", 1200.0),
        ("5×10^-2", 0.05),
        ("12.5%", 12.5),
        ("70kg", 70.0),
        ("CKD-EPI 2021", 2021.0),
        ("3-4", 3.0),
        ("approx. 24.", 24.0),
        ("1e999", None),
        ("none", None),
        ("", None),
    ],
)
def test_first_number(text, value):
    assert first_number(text) == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("01/09/2007", dt.date(2007, 1, 9)),
        ("1/9/2007.", dt.date(2007, 1, 9)),
        ("2007-01-09", dt.date(2007, 1, 9)),
        ("12-31-2020", dt.date(2020, 12, 31)),
        ("September 5, 2021", dt.date(2021, 9, 5)),
        ("sept. 5th 2021", dt.date(2021, 9, 5)),
        ("5 Sep 2021", dt.date(2021, 9, 5)),
        ("02/30/2021 or 03/01/2021", dt.date(2021, 3, 1)),
        ("25/12/2021", None),
        ("1/9/07", None),
        ("May 2021", None),
        ("2021-13-01", None),
    ],
)
def test_first_date(text, value):
    assert first_date(text) == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("(4, 2)", (4, 2)),
        ("[4,2]", (4, 2)),
        ("('4 weeks', '2 days')", (4, 2)),
        ("4 weeks and 2 days", (4, 2)),
        ("4 wks 2 d", (4, 2)),
        ("4w2d", (4, 2)),
        ("34+3", (34, 3)),
        ("4 weeks 9 days", (5, 2)),
        ("4 weeks", (4, 0)),
        ("30 days", (4, 2)),
        ("4, 2", (4, 2)),
        ("4.5 weeks", None),
        ("unknown", None),
        ("about 4 weeks (4 weeks and 2 days)", (4, 2)),
        ("(4 weeks and 2 days) about 4 weeks", (4, 2)),
    ],
)
def test_first_weeks_days(text, value):
    assert first_weeks_days(text) == value


# ----------------------------------------------------------------------------- paper rules on scores


def test_paper_integer_is_exact_and_decimal_uses_file_interval():
    assert score_reply("Final answer: 4", CHADS).correct
    assert not score_reply("Final answer: 4.2", CHADS).correct
    assert score_reply("Final answer: 26.4999", CRCL).correct
    assert not score_reply("Final answer: 26.50", CRCL).correct


def test_tuple_gold_is_a_gestational_age_whatever_the_file_type():
    for file_type in ("integer", "date", "weeks_days"):
        g = Gold(file_type, "('34 weeks', '3 days')", calculator_id=69)
        assert (g.kind, g.value) == ("weeks_days", (34, 3))
        assert score_reply("Final answer: 34 weeks and 3 days", g).correct
        assert score_reply('{"answer": "(34, 3)"}', g, "medcalc").correct


def test_paper_missing_limits_fall_back_to_five_percent():
    g = Gold("decimal", "100", None, "", 2)
    assert g.interval() == pytest.approx((95.0, 105.0))
    g = Gold("decimal", "-100", None, None, 38)
    assert g.interval() == pytest.approx((-105.0, -95.0))
    assert Gold("integer", "7", None, None, 4).interval() == (7.0, 7.0)


def test_paper_parsed_values_and_reason():
    s = score_reply("The final answer is 25.2 mL/min", CRCL)
    assert (s.correct, s.parsed, s.scorer, s.code) == (True, 25.2, "paper", "correct")
    assert "answer_phrase" in s.reason
    s = score_reply("Final answer: (3, 11)", GEST)
    assert (s.correct, s.parsed) == (False, (4, 4))
    s = score_reply("Final answer: none", DUE)
    assert (s.correct, s.parsed, s.code) == (False, None, "no_date")
    assert score_reply(None, CRCL).code == "no_number"


# ----------------------------------------------------------------------------- typed values


@pytest.mark.parametrize(
    "value, kind, gold, paper, medcalc",
    [
        (25.238, "number", CRCL, True, True),
        (25, "number", CRCL, True, True),
        (27.0, "number", CRCL, False, False),
        (4, "number", CHADS, True, True),
        (2.9999999999999996 + 1, "number", CHADS, True, True),  # floating noise around an integer gold
        (4.4, "number", CHADS, False, True),  # medcalc rounds integer answers
        (4.5, "number", CHADS, False, True),  # half to even
        (5.5, "number", CHADS, False, False),
        ("2007-01-09", "date", DUE, True, True),
        (dt.date(2007, 1, 9), "date", DUE, True, True),
        (dt.datetime(2007, 1, 9, 13, 0), "date", DUE, True, True),
        ("2007-01-10", "date", DUE, False, False),
        ((3, 4), "weeks_days", GEST, True, True),
        ([3, 4], "weeks_days", GEST, True, True),
        ([2, 11], "weeks_days", GEST, True, False),  # the paper reduces, the official check does not
        ((4, 3), "weeks_days", GEST, False, False),
    ],
)
def test_score_value(value, kind, gold, paper, medcalc):
    sp = score_value(value, kind, gold, "paper")
    sm = score_value(value, kind, gold, "medcalc")
    assert (sp.correct, sm.correct) == (paper, medcalc), (sp.reason, sm.reason)
    assert (sp.scorer, sm.scorer) == ("paper", "medcalc")


@pytest.mark.parametrize(
    "value, kind, gold, code",
    [
        (None, "number", CRCL, "no_value"),
        (True, "number", CHADS, "unreadable_value"),
        ("25.2", "number", CRCL, "unreadable_value"),
        (float("nan"), "number", CRCL, "unreadable_value"),
        (float("inf"), "number", CRCL, "unreadable_value"),
        ("01/09/2007", "date", DUE, "unreadable_value"),
        ("2007-02-30", "date", DUE, "unreadable_value"),
        (20070109, "date", DUE, "unreadable_value"),
        ((3, 4.5), "weeks_days", GEST, "unreadable_value"),
        ((3, -1), "weeks_days", GEST, "unreadable_value"),
        ((3, 4, 0), "weeks_days", GEST, "unreadable_value"),
        ("2007-01-09", "date", CRCL, "wrong_kind"),
        (25.2, "number", DUE, "wrong_kind"),
        (25, "number", GEST, "wrong_kind"),
    ],
)
def test_score_value_unreadable_or_wrong_kind(value, kind, gold, code):
    for name in SCORERS:
        s = score_value(value, kind, gold, name)
        assert (s.correct, s.code, s.scorer) == (False, code, name), s.reason


# ----------------------------------------------------------------------------- API and errors


def test_case_like_objects_and_mappings():
    @dataclass
    class FakeCase:
        output_type: str = "decimal"
        gold_answer: str = "25.238"
        lower_limit: str = "23.9761"
        upper_limit: str = "26.4999"
        calculator_id: int = 2
        case_id: str = "2-1"

    assert score_reply("Final answer: 25", FakeCase()).correct
    record = {
        "output_type": "decimal",
        "calculator_id": 2,
        "case_id": "2-1",
        "gold": {"answer": "25.238", "lower": "23.9761", "upper": "26.4999"},
    }
    assert score_reply('{"answer": "25"}', record, "medcalc").correct
    both = score_all(record, reply_text='{"answer": "25.9 mL/min"}')
    assert {k: v.correct for k, v in both.items()} == {"paper": True, "medcalc": True, "medcalc_line": True}
    assert all(k == v.scorer for k, v in both.items())
    assert set(both) == set(SCORERS) == {"paper", "medcalc", "medcalc_line"}
    vals = score_all(GEST, value=[3, 4], kind="weeks_days")
    assert all(s.correct for s in vals.values())


def test_score_json_forms():
    s = score_value("2007-01-09", "date", DUE)
    assert s.parsed_json() == "2007-01-09"
    assert score_value((3, 4), "weeks_days", GEST).to_dict() == {
        "correct": True,
        "parsed": [3, 4],
        "reason": "correct: (3, 4) == gold (3, 4)",
        "scorer": "paper",
    }


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: score_reply("1", CRCL, "exact"), "unknown scorer 'exact'"),
        (lambda: score_value(1, "integer", CRCL), "unknown value kind 'integer'"),
        (lambda: score_reply(b"1", CRCL), "reply_text must be a str"),
        (lambda: score_reply("1", Gold("ratio", "1")), "unknown output_type 'ratio'"),
        (lambda: score_reply("1", Gold("date", "2007-13-45", case_id="13-1")), "case '13-1': unreadable gold_answer"),
        (lambda: score_reply("1", Gold("decimal", "n/a")), "unreadable gold_answer"),
        (lambda: score_reply("1", Gold("decimal", "")), "gold_answer must be a non-empty string"),
        (lambda: score_reply("1", Gold("decimal", "5", "4", "x")), "unreadable upper_limit 'x'"),
        (lambda: score_reply("1", Gold("decimal", "5", "6", "4")), "lower_limit 6.0 exceeds upper_limit 4.0"),
        (lambda: score_reply("1", Gold("decimal", "5", calculator_id="two")), "calculator_id is not an integer"),
        (lambda: score_reply("1", object()), "missing attribute(s) ['output_type', 'gold_answer']"),
        (lambda: score_reply("1", {"gold": {}}), "needs output_type and gold_answer"),
    ],
)
def test_bad_input_raises_naming_the_problem(call, message):
    with pytest.raises(ScoringError) as info:
        call()
    assert message in str(info.value)


def test_medcalc_expression_guard_is_fast():
    t0 = time.monotonic()
    s = score_reply('{"answer": "str(9**9**9**9)"}', CRCL, "medcalc")
    assert time.monotonic() - t0 < 1.0
    assert not s.correct


def test_medcalc_line_reads_the_final_answer_line():
    reply = "CHA2DS2-VASc: age 1, sex 1, hypertension 1, diabetes 1.\nFinal answer: 4 points"
    assert score_reply(reply, CHADS, "medcalc_line").correct
    assert not score_reply(reply, CHADS, "medcalc").correct  # no JSON answer field
    # the official per-rule quirks still apply to the line: last number, rounding, anchored dates
    assert not score_reply("Final answer: 4 (of 9)", CHADS, "medcalc_line").correct
    assert score_reply("Final answer: 3.5", CHADS, "medcalc_line").correct
    assert not score_reply("Final answer: Jan 9, 2007", DUE, "medcalc_line").correct
    assert score_value(4.5, "number", CHADS, "medcalc_line").correct


def test_medcalc_reason_shows_official_answer():
    s = score_reply('{"answer": "1, 0, 1, 1"}', CHADS, "medcalc")
    assert (s.correct, s.parsed) == (True, 4)
    assert "'4'" in s.reason and "integer rule" in s.reason
    s = score_reply("Final answer: 4", CHADS, "medcalc")
    assert (s.correct, s.code) == (False, "official_error")


@pytest.mark.parametrize(
    "expr",
    [
        "9**9**9**9",
        "(9**9999)**9999",
        "pow(7, 10**7)",
        "1 << 10**9",
        "'a' * 10**10",
        "[0] * 10**10",
        "'%999999999d' % 1",
    ],
)
def test_medcalc_expression_evaluation_is_bounded(expr):
    t0 = time.monotonic()
    s = score_reply(json.dumps({"answer": f"str({expr})"}), CRCL, "medcalc")
    assert time.monotonic() - t0 < 1.0
    assert (s.correct, s.code) == (False, "official_error")  # evaluation refused -> N/A -> eval raises


def test_calculator_69_follows_the_weeks_days_rule_only():
    # The official lists name 69 under weeks/days and (unreachably) under integer; the weeks/days rule
    # is tested first, so it is the only one that applies (evidence in harness/scoring/official.py).
    assert _branch(GEST) == "weeks_days"
    assert 69 in _WEEKS_IDS and 69 not in _INTEGER_IDS | _DECIMAL_IDS | _DATE_IDS
    # "(3, 4)" is the gold pair under the weeks/days rule; the integer rule would read the comma list
    # "3, 4" as a count of 2 and score it wrong.
    assert score_reply('{"answer": "(3, 4)"}', GEST, "medcalc").correct is True
    assert score_reply('{"answer": "(3, 4)"}', Gold("integer", "2", "2", "2", 4, "4-x"), "medcalc").correct is True
    assert score_reply('{"answer": "(3, 4)"}', Gold("integer", "34", "34", "34", 4, "4-y"), "medcalc").correct is False
