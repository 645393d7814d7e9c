"""Formulate-Solve: validate the model's structured reply and evaluate its expression tree exactly.

The reply (see prompts.FORMULATE) is a JSON object with `calculation`, `formula`, `variables` (name ->
number), `missing` (names) and `tree`. A node is a number, a variable name, or {"op": OP, "args": [...]}.
Evaluation uses exact rational arithmetic (fractions.Fraction) for + - * / min max, comparisons and
"if"; "^" is exact for integer exponents and falls back to float for fractional ones (the one place
exactness is impossible). Comparisons give 1 or 0.

Every way a reply can fail raises TreeAbstain with a reason: the arm then abstains (paper: invalid
tree or variables, a referenced variable listed as missing, or an evaluation error).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

MAX_NODES = 2000
MAX_DEPTH = 64
BINARY = {"+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "!="}
VARIADIC = {"+", "*", "min", "max"}
OPS = BINARY | VARIADIC | {"neg", "if"}


class TreeAbstain(ValueError):
    """The reply cannot be evaluated; the message says why."""


def _number(value: Any, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TreeAbstain(f"{where}: {value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise TreeAbstain(f"{where}: {value!r} is not finite")
    return Fraction(value)


def parse_reply(obj: Any) -> dict:
    """Check the structured reply; return {calculation, formula, variables: {name: Fraction}, missing: set, tree}."""
    if not isinstance(obj, dict):
        raise TreeAbstain("the reply holds no JSON object")
    for key in ("variables", "tree"):
        if key not in obj:
            raise TreeAbstain(f"the reply lacks the {key!r} field")
    variables = obj["variables"]
    if not isinstance(variables, dict):
        raise TreeAbstain("'variables' is not an object")
    values = {}
    for name, value in variables.items():
        if value is None:
            continue  # a null value is as good as missing; referencing it abstains below
        values[str(name)] = _number(value, f"variable {name!r}")
    missing = obj.get("missing") or []
    if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
        raise TreeAbstain("'missing' is not a list of names")
    return {
        "calculation": obj.get("calculation"),
        "formula": obj.get("formula"),
        "variables": values,
        "missing": set(missing),
        "tree": obj["tree"],
    }


def evaluate(
    tree: Any, variables: dict[str, Fraction], missing: set[str] | frozenset = frozenset()
) -> Fraction | float:
    """Evaluate a tree; raise TreeAbstain on an unknown op, a bad arity, an unknown or missing variable,
    division by zero, a non-finite result, or a tree larger than MAX_NODES / deeper than MAX_DEPTH."""
    count = [0]

    def ev(node: Any, depth: int) -> Fraction | float:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise TreeAbstain(f"the tree exceeds {MAX_NODES} nodes or depth {MAX_DEPTH}")
        if isinstance(node, str):
            if node in missing:
                raise TreeAbstain(f"the tree uses {node!r}, which the reply lists as missing")
            if node not in variables:
                raise TreeAbstain(f"the tree uses {node!r}, which is not among the variables")
            return variables[node]
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return _number(node, "constant")
        if not isinstance(node, dict) or "op" not in node or not isinstance(node.get("args"), list):
            raise TreeAbstain(f"invalid node {str(node)[:80]!r}: need a number, a name or {{op, args}}")
        op, args = node["op"], node["args"]
        if op not in OPS:
            raise TreeAbstain(f"unknown operator {op!r}")
        if op == "if":
            if len(args) != 3:
                raise TreeAbstain("'if' takes [condition, value_if_true, value_if_false]")
            return ev(args[1], depth + 1) if ev(args[0], depth + 1) != 0 else ev(args[2], depth + 1)
        vals = [ev(a, depth + 1) for a in args]
        if op == "neg":
            if len(vals) != 1:
                raise TreeAbstain("'neg' takes one argument")
            return -vals[0]
        if op in VARIADIC:
            if len(vals) < (1 if op in {"min", "max"} else 2):
                raise TreeAbstain(f"{op!r} needs at least {1 if op in {'min', 'max'} else 2} arguments")
        elif len(vals) != 2:
            raise TreeAbstain(f"{op!r} takes two arguments, got {len(vals)}")
        return _apply(op, vals)

    result = ev(tree, 0)
    if isinstance(result, float) and not math.isfinite(result):
        raise TreeAbstain("the tree evaluates to a non-finite number")
    return result


def _apply(op: str, vals: list[Fraction | float]) -> Fraction | float:
    a = vals[0]
    if op == "+":
        return sum(vals[1:], a)
    if op == "*":
        out = a
        for v in vals[1:]:
            out = out * v
        return out
    if op == "min":
        return min(vals)
    if op == "max":
        return max(vals)
    b = vals[1]
    if op == "-":
        return a - b
    if op == "/":
        if b == 0:
            raise TreeAbstain("division by zero")
        return a / b
    if op == "^":
        return _power(a, b)
    compare = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}
    return Fraction(int(compare[op]))


def _power(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    if isinstance(b, Fraction) and b.denominator == 1 and abs(b.numerator) <= 64 and isinstance(a, Fraction):
        if a == 0 and b < 0:
            raise TreeAbstain("zero to a negative power")
        return a ** int(b)
    try:
        out = float(a) ** float(b)
    except (OverflowError, ZeroDivisionError) as exc:
        raise TreeAbstain(f"power failed: {exc}") from None
    if isinstance(out, complex) or not math.isfinite(out):
        raise TreeAbstain("power of a negative base to a fractional exponent, or overflow")
    return out


def solve_reply(obj: Any) -> tuple[float, dict]:
    """Validate and evaluate; return (value as float, parsed reply summary)."""
    parsed = parse_reply(obj)
    value = evaluate(parsed["tree"], parsed["variables"], parsed["missing"])
    try:
        number = float(value)
    except OverflowError:
        raise TreeAbstain("the result is too large") from None
    if not math.isfinite(number):
        raise TreeAbstain("the tree evaluates to a non-finite number")
    return number, parsed
