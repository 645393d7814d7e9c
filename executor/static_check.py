"""Layer 1: the static AST policy.

``check_source(source)`` parses a program and returns the list of policy violations (empty when
the program may run). Rules come from ``policy.py``. The walk is iterative (``ast.walk``), so a
deeply nested program cannot crash the checker. Python NFKC-normalises identifiers while
parsing, so a fullwidth or otherwise Unicode-spelled ``＿＿class＿＿`` reaches this checker as
``__class__`` and is rejected like the ASCII spelling.

A SyntaxError is not a policy violation: it is returned by ``parse_program`` for the caller to
report as a program error, exactly as running the program would.
"""
from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from executor import policy

_FORBIDDEN_NAMES = frozenset(policy.FORBIDDEN_NAMES)
_FORBIDDEN_ATTRS = frozenset(policy.FORBIDDEN_ATTRIBUTES)
_ALLOWED_MODULES = frozenset(policy.ALLOWED_MODULES)
_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Violation:
    """One reason the program is rejected, with the line it is on (0 when unknown)."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.message} (line {self.line})" if self.line else self.message


def _bad_identifier(name: str) -> str | None:
    """Why a name may not appear at all (bound or read), or None."""
    if name == "_":  # the conventional throwaway variable carries no capability
        return None
    if name.startswith("_"):
        return f"name {name!r} starts with '_'"
    return None


def _bad_read(name: str, bound: frozenset[str]) -> str | None:
    """Why reading a name is not allowed: the '_' rule, or a forbidden builtin (eval, getattr,
    type, ...) that the program does not define itself. A program's own variable called
    ``type`` or ``input`` is its own value, so binding and then reading it is fine."""
    problem = _bad_identifier(name)
    if problem is None and name in _FORBIDDEN_NAMES and name not in bound:
        problem = f"name {name!r} is not allowed"
    return problem


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name the program binds anywhere (assignment targets, parameters, def, import
    aliases, except and match captures, del)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return frozenset(names)


def _bad_attribute(attr: str) -> str | None:
    if attr.startswith("_"):
        return f"attribute {attr!r} starts with '_'"
    if attr in _FORBIDDEN_ATTRS:
        return f"attribute {attr!r} is not allowed"
    return None


def _bad_format_literal(text: str) -> str | None:
    """A str.format template is safe when every replacement field is a bare index or name
    (no '.attribute' or '[item]' lookups), recursively through nested format specs."""
    try:
        parts = list(_FORMATTER.parse(text))
    except ValueError as exc:
        return f"invalid format string: {exc}"
    for _literal, field, spec, _conversion in parts:
        if field is not None and ("." in field or "[" in field):
            return f"format field {field!r} looks up attributes or items"
        if spec:
            problem = _bad_format_literal(spec)
            if problem:
                return problem
    return None


def _node_problems(node: ast.AST, bound: frozenset[str]) -> list[str]:
    kind = type(node).__name__
    problems: list[str] = []
    if kind in policy.FORBIDDEN_NODES:
        problems.append(policy.FORBIDDEN_NODES[kind])
    if isinstance(node, ast.Name):
        p = _bad_read(node.id, bound) if isinstance(node.ctx, ast.Load) else _bad_identifier(node.id)
        if p:
            problems.append(p)
    elif isinstance(node, ast.Attribute):
        p = _bad_attribute(node.attr)
        if p:
            problems.append(p)
        elif node.attr == "format":
            target = node.value
            if not (isinstance(target, ast.Constant) and isinstance(target.value, str)):
                problems.append("'.format' is only allowed on a string literal")
            else:
                p = _bad_format_literal(target.value)
                if p:
                    problems.append(p)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        p = _bad_identifier(node.name)
        if p:
            problems.append(p)
    elif isinstance(node, ast.arg):
        p = _bad_identifier(node.arg)
        if p:
            problems.append(p)
    elif isinstance(node, ast.keyword):
        if node.arg is not None:
            p = _bad_identifier(node.arg)
            if p:
                problems.append(p)
    elif isinstance(node, ast.ExceptHandler):
        if node.name:
            p = _bad_identifier(node.name)
            if p:
                problems.append(p)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in _ALLOWED_MODULES:
                problems.append(f"import of {alias.name!r} is not allowed "
                                f"(allowed: {', '.join(policy.ALLOWED_MODULES)})")
            if alias.asname:
                p = _bad_identifier(alias.asname)
                if p:
                    problems.append(p)
    elif isinstance(node, ast.ImportFrom):
        if node.level or node.module not in _ALLOWED_MODULES:
            problems.append(f"import from {'.' * node.level}{node.module or ''!s} is not allowed "
                            f"(allowed: {', '.join(policy.ALLOWED_MODULES)})")
        for alias in node.names:
            if alias.name != "*":
                p = _bad_identifier(alias.name) or (
                    f"name {alias.name!r} is not allowed" if alias.name in policy.MODULE_HIDDEN_NAMES else None)
                if p:
                    problems.append(p)
            if alias.asname:
                p = _bad_identifier(alias.asname)
                if p:
                    problems.append(p)
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
        if node.name:
            p = _bad_identifier(node.name)
            if p:
                problems.append(p)
    elif isinstance(node, ast.MatchMapping):
        if node.rest:
            p = _bad_identifier(node.rest)
            if p:
                problems.append(p)
    elif isinstance(node, ast.MatchClass):
        for attr in node.kwd_attrs:  # `case C(__class__=x)` reads attributes by name
            p = _bad_attribute(attr)
            if p:
                problems.append(p)
    return problems


def check_tree(tree: ast.AST) -> list[Violation]:
    """All policy violations in a parsed program, in source order."""
    found: list[Violation] = []
    bound = bound_names(tree)
    for node in ast.walk(tree):
        for message in _node_problems(node, bound):
            found.append(Violation(getattr(node, "lineno", 0) or 0, message))
    found.sort(key=lambda v: v.line)
    return found


def parse_program(source: str) -> ast.Module:
    """Parse program text (filename '<program>'); raises SyntaxError like running it would."""
    return ast.parse(source, filename="<program>", mode="exec")


def check_source(source: str) -> list[Violation]:
    """Violations of the static policy; SyntaxError propagates (it is a program error)."""
    if not isinstance(source, str):
        raise TypeError(f"program source must be str, got {type(source).__name__}")
    if len(source) > policy.MAX_SOURCE_CHARS:
        return [Violation(0, f"program is longer than {policy.MAX_SOURCE_CHARS} characters")]
    if "\x00" in source:
        return [Violation(0, "program contains a NUL character")]
    return check_tree(parse_program(source))
