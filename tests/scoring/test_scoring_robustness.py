"""No scorer raises on any reply (issue 12), and the `medcalc` scorer's str(...) expression evaluator
agrees with the official code's eval (ncbi-nlp/MedCalc-Bench evaluation/run.py: eval with builtins
disabled and min/pow/round/abs/int/float/math/np/numpy in scope), used here as a test oracle."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest

from bench.adversarial_replies import adversarial_replies
from harness.scoring import answer_parsing, official
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
    "1" + "0" * 400,
    "1" + "0" * 400 + ".5",
    "-" + "9" * 800,
    "9" * 800 + ".25",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e308",
    "1e309",
    "١٢٣",
    "٣.٥",
    "१२",
    "１２３",
    "𝟏𝟐",
    "½",
    "²",
    "07",
    "0x1F",
    "1_000",
    "",
    "str(10**400)",
    "str(1" + "0" * 400 + ".5)",
    "str(float('inf'))",
    "str(math.factorial(10**6))",
    "str(np.power(2, -1))",
    "str(9**9**9)",
    "str(" * 200,
    ")" * 200,
    "str(lambda: 0)",
    "str([1,2][5])",
    "str(math.inf)",
    "str(math.nan)",
    "str(-math.inf)",
    "(1e400, 2)",
    "[1" + "0" * 400 + ", 3]",
    "13/45/2020",
    "02/30/2021",
    "99/99/9999",
    "(1" + "0" * 400 + ", 2)",
    "str(round(math.inf))",
]


def _replies(rng: random.Random) -> list[str]:
    out = []
    for v in ADVERSARIAL_VALUES:
        out += [v, f"Final answer: {v}", f'{{"step_by_step_thinking": "x", "answer": "{v}"}}', f'{{"answer": {v}}}']
    alphabet = "0123456789.-+eE,()[]{}\"':/%^*x nNaIifmlstr\u0661\u0967\uff11\u00bd\n"
    for _ in range(300):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        out += [body, f"Final answer: {body}", f'{{"answer": "{body}"}}']
    return out


# 100 kB replies, for every output type; these took minutes before the readers were made linear
# (bench/scoring.py times them: make bench-scoring). Junk, so every verdict is "wrong".
HUGE = [
    "7 " * 25_000 + '{"answer": "' + "ab8 " * 12_500 + '"}',
    "Final answer: " + "x9. " * 25_000,
    *adversarial_replies().values(),
]


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_no_scorer_raises_on_any_reply(scorer):
    rng = random.Random(20261123)
    for gold in GOLDS:
        for reply in _replies(rng):
            s = score_reply(reply, gold, scorer)
            assert isinstance(s, Score) and isinstance(s.correct, bool), reply[:80]
        for reply in HUGE:
            s = score_reply(reply, gold, scorer)
            assert isinstance(s, Score) and s.correct is False, (reply[:40], gold.case_id, s.reason)


def _random_texts(rng: random.Random, count: int) -> list[str]:
    pieces = [
        "7",
        "12",
        "0",
        "-",
        ".",
        ",",
        ", ",
        " ",
        "  ",
        "\n",
        "%",
        "(",
        ")",
        "[",
        "]",
        "'",
        '"',
        "}",
        "{",
        "weeks",
        "week",
        "days",
        "day",
        " out of ",
        "mL/min/1.73",
        "str(",
        'answer": ',
        'Answer":',
        "x",
        "+",
        "w",
        "d",
        "wk",
        "and ",
        "\u0663",
    ]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def test_linear_official_patterns_match_the_official_ones():
    # The official regexes, as written in the official code, against the linear rewrites that run.
    rng = random.Random(5)
    texts = _random_texts(rng, 6000) + [
        "7" * 300,
        "1." * 150,
        "7" + " " * 200 + "x",
        '{"answer": ' * 30,
        "str(" * 40,
        'answer": x}\nanswer":\n 5}',
        "str(1\n2) str(3)",
    ]
    pairs = [
        ("weeks", official._OFF_WEEKS),
        ("out_of", official._OFF_OUT_OF),
        ("list", official._OFF_LIST),
        ("percent", official._OFF_PERCENT),
        ("egfr", official._OFF_EGFR),
    ]
    for text in texts:
        for name, fast in pairs:
            slow = re.compile(official.OFFICIAL_PATTERNS[name])
            a, b = slow.search(text), fast.search(text)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (name, text)
            if name == "percent":  # the one used with findall (the others with search, as officially)
                assert slow.findall(text) == fast.findall(text), (name, text)
        assert official._answer_fields(text) == re.findall(official.OFFICIAL_PATTERNS["answer"], text), text
        m = re.search(official.OFFICIAL_PATTERNS["expr"], text)
        assert official._expr_body(text) == (m.group(1) if m else None), text


def test_atomic_paper_readers_match_their_backtracking_forms():
    # The gestational-age readers use atomic groups; the same patterns with plain groups are the reference.
    rng = random.Random(6)
    texts = _random_texts(rng, 6000) + ["7" * 300, "(7" + " " * 200 + "x", "1 weeks" + " " * 200 + "x"]
    for fast in (*answer_parsing._PAIR_FORMS, answer_parsing._WEEKS_ONLY, answer_parsing._DAYS_ONLY):
        slow = re.compile(fast.pattern.replace("(?>", "(?:"), fast.flags)
        for text in texts:
            a, b = slow.search(text), fast.search(text)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (fast.pattern, text)


def test_float_overflow_is_incorrect_not_a_crash():
    # "1" followed by 400 zeros and a fraction overflows a float: the official run loop catches the
    # OverflowError of round() and records the row Incorrect.
    reply = '{"answer": "1' + "0" * 400 + '.5"}'
    s = score_reply(reply, GOLDS[1], "medcalc")
    assert s.correct is False and s.code == "official_error"


OFFICIAL_SCOPE = {
    "min": min,
    "pow": pow,
    "round": round,
    "abs": abs,
    "int": int,
    "float": float,
    "math": math,
    "np": np,
    "numpy": np,
}


def _official(expr: str):
    for old, new in OFFICIAL_SUBSTITUTIONS:  # the official text substitutions (every letter "g" deleted, ...)
        expr = expr.replace(old, new)
    try:
        with np.errstate(all="ignore"):
            return eval(expr, {"__builtins__": None}, dict(OFFICIAL_SCOPE))  # noqa: S307 - the test oracle
    except Exception:  # noqa: BLE001
        return "N/A"


EXPRESSIONS = [
    "math.fsum([0.1, 0.2, 0.3])",
    "math.factorial(5) / 4",
    "np.mean([1, 2, 3.5])",
    "np.sum([1.5, 2.5])",
    "np.float64(3.25)",
    "[1.5, 2.5, 3.5][1]",
    "(1, 2, 3)[-1] * 2.5",
    "[1, 2, 3][0:2][1]",
    "(lambda x, y: x * y + 1)(2.5, 4)",
    "(lambda x, y=3: x + y)(1)",
    "(3.5 + 0j).real",
    "(2.0).real * 3",
    "np.power(2, -1)",
    "np.power(2.0, -1)",
    "np.power(2, 3)",
    "np.sqrt(16) + np.log(1)",
    "math.prod([1.5, 2])",
    "np.median([3, 1, 2])",
    "np.round(2.567, 2)",
    "min(3, 4.5) + abs(-2)",
    "round(2.675, 2)",
    "np.sum([x * 2 for x in [1, 2, 3]])",
    "np.mean([x for x in (1, 2, 3, 4) if x > 1])",
    "int(7.9) + float('2.5')",
    "pow(2, 10) / 3",
    "np.max([1, 5, 3]) - np.min([2, 4])",
    "np.array([1, 2])[1]",
    "1 if 2 > 1 else 0",
    "math.comb(5, 2) * 0.5",
    "np.abs(-3.5)",
    "np.exp(1) - math.e",
    # assignment expressions: bound in the eval's scope (also from inside a comprehension), a lambda's own scope
    "(x := 24.2)",
    "(x := 2.5) * x + 1",
    "[(y := v) for v in [1, 2]][0] + y",
    "(lambda: (z := 3.5))()",
    "(round := 4) + 1",
    "[(v := 1) for v in [1, 2]]",
    "x := 5",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_expression_evaluator_agrees_with_official_eval(expr):
    want, got = _official(expr), official_expression(expr)
    if isinstance(want, str):
        assert got == "N/A", (expr, got)
    else:
        assert str(got) == str(want), (expr, got, want)


def test_walrus_reply_scores_as_the_official_code_does():
    # str((x := v)): the official eval binds x and returns v; a walrus rebinding a comprehension variable is a
    # compile-time SyntaxError there ("N/A").
    gold = Gold("decimal", "24.2", "22.99", "25.41", 6, "6-x")
    assert _official("(x := 24.2)") == 24.2
    assert score_reply('{"answer": "str((x := 24.2))"}', gold, "medcalc").correct is True
    assert score_reply('{"answer": "str((x := 12.1) * 2)"}', gold, "medcalc").correct is True
    assert score_reply('{"answer": "str([(v := 24.2) for v in [1]][0])"}', gold, "medcalc").correct is False


def test_np_power_of_an_integer_to_a_negative_integer_follows_numpy():
    assert _official("np.power(2, -1)") == "N/A"  # numpy raises ValueError
    assert official_expression("np.power(2, -1)") == "N/A"
    gold = Gold("decimal", "0.5", "0.475", "0.525", 2, "2-x")
    assert score_reply('{"answer": "str(np.power(2, -1))"}', gold, "medcalc").correct is False
    assert score_reply('{"answer": "str(np.power(2.0, -1))"}', gold, "medcalc").correct is True
