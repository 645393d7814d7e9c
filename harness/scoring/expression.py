"""A safe evaluator for the official scorer's "str(<expr>)" answers: Python expressions walked as an AST,
never passed to `eval`.

The official code evaluates with ``eval(expr, {"__builtins__": None}, {min, pow, round, abs, int, float,
math, np, numpy})`` (ncbi-nlp/MedCalc-Bench evaluation/run.py). `evaluate` gives the same names in
scope: min/pow/round/abs/int/float, every public math function and constant, and a whitelist of numpy
functions computed BY numpy (so numpy's rules hold: np.power of an integer to a negative integer
raises). Supported forms: literals, arithmetic (on numbers and numpy arrays; + and * of sequences),
comparisons, and/or/not, if-else, tuples and lists, subscripts and slices, list comprehensions and
generator expressions, lambdas (positional parameters with defaults), calls without * or **, the
.real/.imag of numbers, and assignment expressions (``(x := v)``: the name is bound where Python binds it,
the eval's own scope, or a lambda's; from inside a comprehension, the scope that holds the comprehension).
The expression is first compiled (never run) so the errors Python raises at compile time, not at parse
time (a walrus rebinding a comprehension's iteration variable), give "N/A" as in the official eval.

Left out, each raising `Unsupported` (the official scorer then reads "N/A" where the official code
might compute a value; deviations documented in harness/scoring/official.py): any other attribute
access (methods of values, dunder attributes), numpy functions off the whitelist, names outside the
scope, * and ** arguments, and results past the size guards (an integer power or shift of over
_MAX_BITS bits, math.factorial above _MAX_FACTORIAL, a sequence of over _MAX_ITEMS items), which in
the official code would take seconds to minutes or exhaust memory.

`evaluate` raises for every failure (Unsupported for a form left out, the Python or numpy exception
otherwise); callers map failures to the official "N/A".
"""

from __future__ import annotations

import ast
import math
import numbers
import operator
from collections import ChainMap
from collections.abc import Callable, MutableMapping
from typing import Any

import numpy as np

__all__ = ["Unsupported", "evaluate"]

_MATH_NAMES = (
    "sqrt",
    "exp",
    "log",
    "log10",
    "log2",
    "log1p",
    "expm1",
    "pow",
    "floor",
    "ceil",
    "fabs",
    "trunc",
    "sin",
    "cos",
    "tan",
    "atan",
    "atan2",
    "asin",
    "acos",
    "sinh",
    "cosh",
    "tanh",
    "hypot",
    "isclose",
    "degrees",
    "radians",
    "fsum",
    "factorial",
    "prod",
    "comb",
    "perm",
    "gcd",
    "lcm",
    "isqrt",
    "copysign",
    "fmod",
    "modf",
    "isfinite",
    "isinf",
    "isnan",
    "erf",
    "erfc",
    "gamma",
    "lgamma",
    "dist",
    "cbrt",
    "exp2",
    "remainder",
    "pi",
    "e",
    "tau",
    "inf",
    "nan",
)
_MATH_FUNCS: dict[str, Any] = {n: getattr(math, n) for n in _MATH_NAMES if hasattr(math, n)}
_NP_NAMES = (
    "sqrt",
    "cbrt",
    "square",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log10",
    "log2",
    "log1p",
    "power",
    "float_power",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "around",
    "abs",
    "absolute",
    "fabs",
    "sign",
    "mean",
    "average",
    "median",
    "sum",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "maximum",
    "minimum",
    "clip",
    "std",
    "var",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "floor_divide",
    "mod",
    "remainder",
    "hypot",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "radians",
    "degrees",
    "deg2rad",
    "rad2deg",
    "isclose",
    "array",
    "asarray",
    "where",
    "float64",
    "float32",
    "float16",
    "int64",
    "int32",
    "int16",
    "int8",
    "int_",
    "float_",
    "double",
    "pi",
    "e",
    "inf",
    "nan",
)
_NP_FUNCS: dict[str, Any] = {n: getattr(np, n) for n in _NP_NAMES if hasattr(np, n)}
_NAMES: dict[str, Any] = {
    "min": min,
    "pow": pow,
    "round": round,
    "abs": abs,
    "int": int,
    "float": float,
    "math": _MATH_FUNCS,
    "np": _NP_FUNCS,
    "numpy": _NP_FUNCS,
}
_VALUE_ATTRS = frozenset({"real", "imag"})
_BINOPS: dict[type, Callable] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_UNOPS: dict[type, Callable] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_CMPOPS: dict[type, Callable] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_MAX_BITS = 1_000_000
_MAX_FACTORIAL = 20_000  # math.factorial beyond this takes seconds; "N/A" (a documented deviation)
_MAX_ITEMS = 100_000  # longest sequence a comprehension or multiplication may build


def _check_size(base: Any, exponent: Any) -> None:
    """Refuse an integer power or shift whose result would exceed _MAX_BITS bits."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if abs(base).bit_length() * exponent > _MAX_BITS:
            raise Unsupported("result too large")


class Unsupported(Exception):
    """An expression form (or result size) the evaluator leaves out; the message names it."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.number, np.bool_))


def _guarded_call(func: Any, args: list, kwargs: dict) -> Any:
    if func is pow and len(args) >= 2:
        _check_size(args[0], args[1])
    if func is _NP_FUNCS.get("power") or func is _NP_FUNCS.get("float_power"):
        if len(args) >= 2 and isinstance(args[0], int) and isinstance(args[1], int):
            _check_size(args[0], args[1])
    if func is math.factorial and args and isinstance(args[0], int) and args[0] > _MAX_FACTORIAL:
        raise Unsupported("factorial too large")
    return func(*args, **kwargs)


def _bind(target: ast.AST, value: Any, env: MutableMapping[str, Any]) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        items = list(value)
        if len(items) != len(target.elts):
            raise ValueError("cannot unpack")
        for t, v in zip(target.elts, items):
            _bind(t, v, env)
    else:
        raise Unsupported("assignment target")


def _comprehension(node: ast.ListComp | ast.GeneratorExp, env: MutableMapping[str, Any]) -> list:
    out: list = []

    def walk(i: int, scope: MutableMapping[str, Any]) -> None:
        if i == len(node.generators):
            out.append(_eval_node(node.elt, scope))
            if len(out) > _MAX_ITEMS:
                raise Unsupported("sequence too long")
            return
        gen = node.generators[i]
        if gen.is_async:
            raise Unsupported("async")
        for item in _eval_node(gen.iter, scope):
            # The comprehension's own names in front of the scope that holds it (which an assignment
            # expression inside the comprehension writes to: _assignment_scope).
            inner = scope.new_child() if isinstance(scope, ChainMap) else ChainMap({}, scope)
            _bind(gen.target, item, inner)
            if all(_eval_node(c, inner) for c in gen.ifs):
                walk(i + 1, inner)

    walk(0, env)
    return out


def _assignment_scope(env: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Where `(name := value)` binds: the innermost scope that is not a comprehension's."""
    return env.maps[-1] if isinstance(env, ChainMap) else env


def _lambda(node: ast.Lambda, env: MutableMapping[str, Any]) -> Callable:
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise Unsupported("lambda signature")
    names = [x.arg for x in a.args]
    defaults = [_eval_node(d, env) for d in a.defaults]

    def call(*args: Any) -> Any:
        if len(args) > len(names) or len(args) < len(names) - len(defaults):
            raise TypeError("lambda called with the wrong number of arguments")
        missing = len(names) - len(args)
        full = list(args) + (defaults[len(defaults) - missing :] if missing else [])
        return _eval_node(node.body, {**env, **dict(zip(names, full))})  # the lambda's own scope: a new dict

    return call


def _eval_node(node: ast.AST, env: MutableMapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id not in _NAMES:
            raise Unsupported(node.id)
        return _NAMES[node.id]
    if isinstance(node, ast.Attribute):
        owner = _eval_node(node.value, env)
        if isinstance(owner, dict):
            if node.attr not in owner:
                raise Unsupported(node.attr)
            return owner[node.attr]
        if node.attr in _VALUE_ATTRS and _is_number(owner):
            return getattr(owner, node.attr)
        raise Unsupported(node.attr)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_eval_node(e, env) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Subscript):
        owner = _eval_node(node.value, env)
        if not isinstance(owner, (list, tuple, str, np.ndarray)):
            raise Unsupported("subscript of a non-sequence")
        sl = node.slice
        if isinstance(sl, ast.Slice):
            parts = [None if p is None else _eval_node(p, env) for p in (sl.lower, sl.upper, sl.step)]
            return owner[slice(*parts)]
        index = _eval_node(sl, env)
        return owner[index]
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _comprehension(node, env)
    if isinstance(node, ast.Lambda):
        return _lambda(node, env)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval_node(node.left, env), _eval_node(node.right, env)
        if isinstance(node.op, ast.Mult) and isinstance(left, (list, tuple, str)) != isinstance(
            right, (list, tuple, str)
        ):
            seq, n = (left, right) if isinstance(left, (list, tuple, str)) else (right, left)
            if isinstance(n, int) and len(seq) * max(n, 0) > _MAX_ITEMS:
                raise Unsupported("sequence too long")
            return _BINOPS[ast.Mult](left, right)
        if isinstance(node.op, ast.Add) and type(left) is type(right):
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
        if not (_is_number(left) or isinstance(left, np.ndarray)) or not (
            _is_number(right) or isinstance(right, np.ndarray)
        ):
            raise Unsupported("arithmetic on non-numbers")
        if isinstance(node.op, ast.Pow):
            _check_size(left, right)
        if isinstance(node.op, ast.LShift) and isinstance(right, int) and right > _MAX_BITS:
            raise Unsupported("result too large")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
        return _UNOPS[type(node.op)](_eval_node(node.operand, env))
    if isinstance(node, ast.Compare) and all(type(o) in _CMPOPS for o in node.ops):
        left = _eval_node(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval_node(comp, env)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        value = None
        for v in node.values:
            value = _eval_node(v, env)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value
    if isinstance(node, ast.NamedExpr):
        value = _eval_node(node.value, env)
        _assignment_scope(env)[node.target.id] = value  # the target of := is always a plain name
        return value
    if isinstance(node, ast.IfExp):
        return _eval_node(node.body, env) if _eval_node(node.test, env) else _eval_node(node.orelse, env)
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
        func = _eval_node(node.func, env)
        if not callable(func) or isinstance(func, dict):
            raise Unsupported("call")
        args = [_eval_node(a, env) for a in node.args]
        kwargs = {k.arg: _eval_node(k.value, env) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise Unsupported("**kwargs")
        return _guarded_call(func, args, kwargs)
    raise Unsupported(type(node).__name__)


def evaluate(expr: str) -> Any:
    """The value of a Python expression under the official eval scope (module docstring). Raises on
    any failure."""
    tree = ast.parse(expr, mode="eval")
    compile(tree, "<answer>", "eval", dont_inherit=True)  # compile-time errors only; the code object is never run
    with np.errstate(all="ignore"):
        return _eval_node(tree.body, {})
