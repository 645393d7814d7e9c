"""No scorer raises on any reply (issue 12), and the `medcalc` scorer's str(...) expression evaluator
agrees with the official code's eval (ncbi-nlp/MedCalc-Bench evaluation/run.py: eval with builtins
disabled and min/pow/round/abs/int/float/math/np/numpy in scope), used here as a test oracle."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harness.scoring.official import OFFICIAL_SUBSTITUTIONS, official_expression
from harness.scoring.scorers import SCORERS, Gold, Score, score_reply

GOLDS = [
    Gold("decimal", "25.238", "23.9761", "26.4999", 2, "2-1"),
    Gold("integer", "4", "4", "4", 4, "4-41"),
    Gold("integer", "3", "3", "3", 33, "33-1"),
    Gold("date", "01/09/2007", "01/09/2007", "01/09/2007", 13, "13-929"),
    Gold("weeks_days", "('3 weeks', '4 days')", "('3 weeks', '4 days')", "('3 weeks', '4 days')", 69, "69-1030"),
    Gold("decimal", "1.5", "1.425", "1.575", 99, "unknown-id"),
]

ADVERSARIAL_VALUES = [
    "1" + "0" * 400, "1" + "0" * 400 + ".5", "-" + "9" * 800, "9" * 800 + ".25", "nan", "NaN", "inf", "-inf",
    "Infinity", "1e308", "1e309", "١٢٣", "٣.٥", "१२", "１２３", "𝟏𝟐", "½", "²", "07", "0x1F", "1_000", "",
    "str(10**400)", "str(1" + "0" * 400 + ".5)", "str(float('inf'))", "str(math.factorial(10**6))",
    "str(np.power(2, -1))", "str(9**9**9)", "str(" * 200, ")" * 200, "str(lambda: 0)", "str([1,2][5])",
    "str(math.inf)", "str(math.nan)", "str(-math.inf)", "(1e400, 2)", "[1" + "0" * 400 + ", 3]",
    "13/45/2020", "02/30/2021", "99/99/9999", "(1" + "0" * 400 + ", 2)", "str(round(math.inf))",
]


def _replies(rng: random.Random) -> list[str]:
    out = []
    for v in ADVERSARIAL_VALUES:
        out += [v, f"Final answer: {v}", f'{{"step_by_step_thinking": "x", "answer": "{v}"}}',
                f'{{"answer": {v}}}']
    alphabet = "0123456789.-+eE,()[]{}\"':/%^*x nNaIifmlstr\u0661\u0967\uff11\u00bd\n"
    for _ in range(300):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        out += [body, f"Final answer: {body}", f'{{"answer": "{body}"}}']
    return out


# 100 kB replies. Not for gestational age: the paper scorer's (weeks, days) reader is quadratic in the
# reply length (about 25 s on 150 kB), and the official integer rule's list regex is quadratic in the
# length of a digit run; speed problems left for a benchmark, not crashes.
HUGE = ["7 " * 25_000 + '{"answer": "' + "ab8 " * 12_500 + '"}', "Final answer: " + "x9. " * 25_000]


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_no_scorer_raises_on_any_reply(scorer):
    rng = random.Random(20261123)
    for gold in GOLDS:
        for reply in _replies(rng):
            s = score_reply(reply, gold, scorer)
            assert isinstance(s, Score) and isinstance(s.correct, bool), reply[:80]
        if gold.kind != "weeks_days":
            for reply in HUGE:
                assert isinstance(score_reply(reply, gold, scorer).correct, bool)


def test_float_overflow_is_incorrect_not_a_crash():
    # "1" followed by 400 zeros and a fraction overflows a float: the official run loop catches the
    # OverflowError of round() and records the row Incorrect.
    reply = '{"answer": "1' + "0" * 400 + '.5"}'
    s = score_reply(reply, GOLDS[1], "medcalc")
    assert s.correct is False and s.code == "official_error"


OFFICIAL_SCOPE = {"min": min, "pow": pow, "round": round, "abs": abs, "int": int, "float": float,
                  "math": math, "np": np, "numpy": np}


def _official(expr: str):
    for old, new in OFFICIAL_SUBSTITUTIONS:   # the official text substitutions (every letter "g" deleted, ...)
        expr = expr.replace(old, new)
    try:
        with np.errstate(all="ignore"):
            return eval(expr, {"__builtins__": None}, dict(OFFICIAL_SCOPE))  # noqa: S307 - the test oracle
    except Exception:  # noqa: BLE001
        return "N/A"


EXPRESSIONS = [
    "math.fsum([0.1, 0.2, 0.3])", "math.factorial(5) / 4", "np.mean([1, 2, 3.5])", "np.sum([1.5, 2.5])",
    "np.float64(3.25)", "[1.5, 2.5, 3.5][1]", "(1, 2, 3)[-1] * 2.5", "[1, 2, 3][0:2][1]",
    "(lambda x, y: x * y + 1)(2.5, 4)", "(lambda x, y=3: x + y)(1)", "(3.5 + 0j).real", "(2.0).real * 3",
    "np.power(2, -1)", "np.power(2.0, -1)", "np.power(2, 3)", "np.sqrt(16) + np.log(1)", "math.prod([1.5, 2])",
    "np.median([3, 1, 2])", "np.round(2.567, 2)", "min(3, 4.5) + abs(-2)", "round(2.675, 2)",
    "np.sum([x * 2 for x in [1, 2, 3]])", "np.mean([x for x in (1, 2, 3, 4) if x > 1])",
    "int(7.9) + float('2.5')", "pow(2, 10) / 3", "np.max([1, 5, 3]) - np.min([2, 4])", "np.array([1, 2])[1]",
    "1 if 2 > 1 else 0", "math.comb(5, 2) * 0.5", "np.abs(-3.5)", "np.exp(1) - math.e",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_expression_evaluator_agrees_with_official_eval(expr):
    want, got = _official(expr), official_expression(expr)
    if isinstance(want, str):
        assert got == "N/A", (expr, got)
    else:
        assert str(got) == str(want), (expr, got, want)


def test_np_power_of_an_integer_to_a_negative_integer_follows_numpy():
    assert _official("np.power(2, -1)") == "N/A"          # numpy raises ValueError
    assert official_expression("np.power(2, -1)") == "N/A"
    gold = Gold("decimal", "0.5", "0.475", "0.525", 2, "2-x")
    assert score_reply('{"answer": "str(np.power(2, -1))"}', gold, "medcalc").correct is False
    assert score_reply('{"answer": "str(np.power(2.0, -1))"}', gold, "medcalc").correct is True
