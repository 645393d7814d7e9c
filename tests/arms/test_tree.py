"""Formulate-Solve tree: exact evaluation and every abstention reason."""

from __future__ import annotations

from fractions import Fraction

import pytest

from harness.arms.solvers.tree import TreeAbstain, evaluate, parse_reply, solve_reply


def reply(tree, variables=None, missing=None):
    return {"calculation": "c", "formula": "f", "variables": variables or {}, "missing": missing or [], "tree": tree}


def test_mean_arterial_pressure_exact():
    # MAP = (2 * DBP + SBP) / 3 with SBP 120, DBP 80 -> 93.333...
    tree = {"op": "/", "args": [{"op": "+", "args": [{"op": "*", "args": [2, "dbp"]}, "sbp"]}, 3]}
    value, parsed = solve_reply(reply(tree, {"sbp": 120, "dbp": 80}))
    assert value == pytest.approx(280 / 3) and parsed["calculation"] == "c"


def test_exact_rational_arithmetic_has_no_float_drift():
    tree = {"op": "+", "args": [0.1, 0.2, -0.3]}
    # Fraction(0.1) is the binary double; still the sum is computed without intermediate rounding
    assert evaluate(tree, {}) == Fraction(0.1) + Fraction(0.2) - Fraction(0.3)
    assert evaluate({"op": "/", "args": [1, 3]}, {}) * 3 == 1


def test_cockcroft_gault_with_comparison_and_if():
    # CrCl = (140 - age) * weight * (0.85 if female) / (72 * scr)
    tree = {
        "op": "/",
        "args": [
            {
                "op": "*",
                "args": [
                    {"op": "-", "args": [140, "age"]},
                    "weight",
                    {"op": "if", "args": [{"op": "==", "args": ["female", 1]}, 0.85, 1]},
                ],
            },
            {"op": "*", "args": [72, "scr"]},
        ],
    }
    v, _ = solve_reply(reply(tree, {"age": 53, "weight": 87, "scr": 1.39, "female": 0}))
    assert v == pytest.approx((140 - 53) * 87 / (72 * 1.39))
    v, _ = solve_reply(reply(tree, {"age": 53, "weight": 87, "scr": 1.39, "female": 1}))
    assert v == pytest.approx((140 - 53) * 87 * 0.85 / (72 * 1.39))


def test_power_integer_exact_fractional_float():
    assert evaluate({"op": "^", "args": [2, 10]}, {}) == 1024
    assert evaluate({"op": "^", "args": [4, 0.5]}, {}) == pytest.approx(2.0)
    assert evaluate({"op": "min", "args": [3, 1, 2]}, {}) == 1
    assert evaluate({"op": "neg", "args": [{"op": ">=", "args": [2, 2]}]}, {}) == -1


@pytest.mark.parametrize(
    "obj, reason",
    [
        (None, "no JSON object"),
        ({"variables": {}}, "lacks the 'tree'"),
        (reply("x", {"x": "five"}), "'five' is not a number"),
        (reply("x", {"x": True}), "not a number"),
        (reply("y", {"x": 1}), "'y', which is not among the variables"),
        (reply("x", {"x": 1}, ["x"]), "lists as missing"),
        (reply("x", {"x": None}, []), "not among the variables"),
        (reply({"op": "/", "args": [1, 0]}), "division by zero"),
        (reply({"op": "log", "args": [1]}), "unknown operator 'log'"),
        (reply({"op": "-", "args": [1, 2, 3]}), "takes two arguments"),
        (reply({"op": "+", "args": [1]}), "at least 2"),
        (reply({"op": "if", "args": [1, 2]}), "'if' takes"),
        (reply({"args": [1]}), "invalid node"),
        (reply({"op": "^", "args": [-8, 0.5]}), "negative base"),
        (reply({"op": "^", "args": [10.0, 400.5]}), "power failed|overflow"),
        (reply(1, missing="x"), "'missing' is not a list"),
    ],
)
def test_abstains_with_reason(obj, reason):
    with pytest.raises(TreeAbstain, match=reason):
        solve_reply(obj)


def test_size_limit():
    tree = 1
    for _ in range(100):
        tree = {"op": "+", "args": [tree, 1]}
    with pytest.raises(TreeAbstain, match="exceeds"):
        evaluate(tree, {})


def test_parse_reply_converts_values():
    parsed = parse_reply(reply("a", {"a": 2.5, "b": 3}, ["c"]))
    assert parsed["variables"] == {"a": Fraction(5, 2), "b": 3} and parsed["missing"] == {"c"}
