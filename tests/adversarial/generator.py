"""The adversary's program generator (issue 40): a list proves what we thought of, a generator
finds what we did not.

Programs come from three families:

* ``hostile``: every case of the adversarial corpus (cases.py) with one of its accesses, or
  several in turn, rewritten through a syntactic form Python offers for it;
* ``honest``: the honest corpus (bench/honest_programs.py) rewritten the same way: programs in
  the shape models write, through every form, which the executor must answer as CPython does;
* ``grammar``: random well-formed programs from hypothesmith's grammar (``grammar_programs``);
* ``walk`` (issue 46): walks from an allowed module through the *real* module's attributes,
  every name ``dir()`` shows (private and imported ones included), to ``WALK_DEPTH`` steps: the
  same graph the reachability check (reachability.py) walks through the names layer 1 admits,
  here through all of them, read, from-imported, called and aimed at the canaries;
* ``memory`` (issue 46): memory-pressure forms: exhaustion inside an exception's construction
  and its message, inside print, inside the answer, and an answer computed while holding all
  the memory there is, at drawn sizes.

An *access* is a name read, an attribute read, a call, an import or a statement. Its forms
(``FORMS``): in place (``(lambda: E)()``, ``[E for _ in (0,)][0]``, walrus, ...), through a
statement before it (a default argument, a decorator, an annotation, ``global`` or ``nonlocal``
in a helper, a class body, ``match``, star-unpacking, augmented assignment, a ``for`` target),
the unbinding forms for a name (``del``, the end of ``except ... as``, ``global`` + ``del``),
the by-name forms for an attribute (``getattr``, format fields of a literal or of a variable,
a class pattern's keyword, ``vars``, ``operator.attrgetter``, ``__getattribute__``, a type's
``__dict__``), the import forms (``__import__``, ``importlib``, an import in a function,
``exec``), and the scopes a statement can be moved into (a function with ``global``, a class
body, a loop, ``try``, ``match``, an ``else`` branch). Every variant is compiled before it is
handed out; one that does not compile is dropped.

Everything is deterministic for a seed: ``programs(n, seed)`` gives the same n programs, so a
run of ``make fuzz-executor`` can be repeated and any program it reports regenerated.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bench.honest_programs import CORPUS as HONEST_CORPUS
from tests.adversarial.cases import CASES

PREFIX = "_adv"  # names the rewrites introduce (single underscore: the program's own)


@dataclass(frozen=True)
class Program:
    source: str
    family: str  # "hostile" | "honest" | "grammar" | "walk" | "memory"
    origin: str  # the case or corpus program it was made from
    forms: tuple[str, ...]  # the rewrites applied, in order

    @property
    def label(self) -> str:
        return f"{self.family}:{self.origin}:{'+'.join(self.forms) or 'as-is'}"


# --- where the accesses are ----------------------------------------------------------------------

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension)
_PATTERNS = (ast.pattern,)


def _parents(tree: ast.AST) -> dict[ast.AST, tuple[ast.AST, str, int]]:
    """node -> (parent, field, its index in the field's list or -1)."""
    out = {}
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        out[child] = (node, field, i)
            elif isinstance(value, ast.AST):
                out[value] = (node, field, -1)
    return out


@dataclass
class _Access:
    node: ast.AST
    kind: str  # "name" | "attribute" | "call" | "import" | "statement"
    hoistable: bool  # a statement may be put before the one holding it
    block: list | None  # the statement list holding the enclosing statement
    index: int  # the enclosing statement's place in it
    module_level: bool


def _accesses(tree: ast.Module) -> list[_Access]:
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            kind = "import" if isinstance(node, (ast.Import, ast.ImportFrom)) else "statement"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            kind = "name"
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            kind = "attribute"
        elif isinstance(node, ast.Call):
            kind = "call"
        else:
            continue
        hoistable, current, block, index, inside, module_level = True, node, None, 0, False, False
        while current in parents:  # up to the statement holding the access
            parent, field, position = parents[current]
            if isinstance(current, ast.stmt) and position >= 0:
                block, index, module_level = getattr(parent, field), position, parent is tree
                break
            if isinstance(parent, _PATTERNS) or (isinstance(parent, ast.match_case) and field == "pattern"):
                inside = True  # a pattern's value must stay a dotted name
            if (
                isinstance(parent, (*_SCOPES, ast.ExceptHandler))
                or (isinstance(parent, ast.IfExp) and field != "test")
                or (isinstance(parent, ast.BoolOp) and parent.values[0] is not current)
                or (isinstance(parent, ast.While) and field == "test")
                or (isinstance(parent, ast.match_case) and field == "guard")
                or isinstance(parent, ast.JoinedStr)
            ):
                hoistable = False  # evaluated later, more than once, or not at all
            current = parent
        if inside or block is None:
            continue
        found.append(_Access(node, kind, hoistable, block, index, module_level))
    return found


# --- the forms --------------------------------------------------------------------------------------


class _Names:
    def __init__(self, tree: ast.AST):
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        self._count = itertools.count(sum(1 for n in used if n.startswith(PREFIX)))

    def new(self) -> str:
        return f"{PREFIX}{next(self._count)}"


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _stmts(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def _src(node: ast.AST) -> str:
    return ast.unparse(node)


# A form: (kinds it applies to, needs a statement before the access, function(access, names) ->
# (replacement expression source or None, statements to put before the holding statement)).
Rewrite = Callable[[_Access, _Names], "tuple[str | None, list[str]]"]


def _in_place(template: str) -> Rewrite:
    def rewrite(access: _Access, names: _Names):
        return template.format(E=_src(access.node), N=names.new()), []

    return rewrite


def _before(*lines: str, result: str = "{N}") -> Rewrite:
    """Statements before the holding statement compute E (``{E}``) into a fresh name ``{N}``
    (``{M}`` a second fresh name); ``result`` replaces the access."""

    def rewrite(access: _Access, names: _Names):
        n, m = names.new(), names.new()
        fill = {"E": _src(access.node), "N": n, "M": m}
        return result.format(**fill), [line.format(**fill) for line in lines]

    return rewrite


def _unbinding(*lines: str) -> Rewrite:
    """Statements before the holding statement that bind and then unbind the name read."""

    def rewrite(access: _Access, names: _Names):
        fill = {"E": access.node.id, "N": names.new()}
        return None, [line.format(**fill) for line in lines]

    return rewrite


def _by_name(template: str, *before: str) -> Rewrite:
    """An attribute read by its name: ``{X}`` the object, ``{A}`` the attribute as a string
    literal, ``{S}`` the same string built at run time, ``{N}`` a fresh name."""

    def rewrite(access: _Access, names: _Names):
        attr = access.node.attr
        half = len(attr) // 2
        fill = {
            "X": _src(access.node.value),
            "A": repr(attr),
            "N": names.new(),
            "a": attr,
            "S": f"({attr[:half]!r} + {attr[half:]!r})",
        }
        return template.format(**fill), [line.format(**fill) for line in before]

    return rewrite


def _field_chain(node: ast.AST) -> tuple[ast.AST, str] | None:
    """``X.a[k].b`` as (X, "a[k].b"): the chain of attribute and constant-index reads a format
    field can spell, down to its base; None when the access is not such a chain."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append("." + node.attr)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, (int, str))
            and not isinstance(node.slice.value, bool)
            and not set(str(node.slice.value)) & set("[]{}:!.'\" ")
        ):
            parts.append(f"[{node.slice.value}]")
        else:
            break
        node = node.value
    if not parts or not parts[-1].startswith("."):
        return None
    return node, "".join(reversed(parts))[1:]


def _format_chain(template: str, *before: str) -> Rewrite:
    """A whole chain ``X.a[k].b`` read by one format field (``{X}``, ``{F}`` the field path as a
    literal, ``{R}`` built at run time, ``{N}`` a fresh name): the hidden set's form."""

    def rewrite(access: _Access, names: _Names):
        chain = _field_chain(access.node)
        if chain is None:
            raise ValueError("not a chain")
        base, path = chain
        half = len(path) // 2
        fill = {
            "X": _src(base),
            "F": repr("{0." + path + "}"),
            "N": names.new(),
            "R": f"('{{0.' + {path[:half]!r} + {path[half:]!r} + '}}')",
        }
        return template.format(**fill), [line.format(**fill) for line in before]

    return rewrite


def _call_form(template: str) -> Rewrite:
    def rewrite(access: _Access, names: _Names):
        call = access.node
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return "", []
        args = ", ".join(_src(a) for a in call.args)
        return template.format(F=_src(call.func), A=args, A1=(args + ",") if args else "", N=names.new()), []

    return rewrite


def _import_form(template_import: str, template_from: str) -> Rewrite:
    """An import statement replaced: ``{m}`` module, ``{b}`` bound name, ``{n}`` imported name."""

    def rewrite(access: _Access, names: _Names):
        node, lines = access.node, []
        for alias in node.names:
            if isinstance(node, ast.Import):
                bound = (alias.asname or alias.name).split(".")[0]
                lines.append(template_import.format(m=alias.name, b=bound, N=names.new()))
            elif alias.name != "*" and not node.level and node.module:
                lines.append(
                    template_from.format(m=node.module, n=alias.name, b=alias.asname or alias.name, N=names.new())
                )
            else:
                return "", []
        return None, lines

    return rewrite


def _wrapped(
    *head: str,
    indent: int = 4,
    inside_after: tuple[str, ...] = (),
    after: tuple[str, ...] = (),
    declare_global: bool = False,
) -> Rewrite:
    """The statement moved into a block: the ``head`` lines, the statement indented by
    ``indent``, ``inside_after`` at the same indent, then the ``after`` lines (``{N}`` a fresh
    name); ``declare_global`` declares what the statement binds global (a module-level
    statement moved into a function)."""

    def rewrite(access: _Access, names: _Names):
        fill = {"N": names.new()}
        body = _src(access.node).splitlines() + [line.format(**fill) for line in inside_after]
        if declare_global and _bound_names(access.node):
            body.insert(0, f"global {', '.join(sorted(_bound_names(access.node)))}")
        lines = [h.format(**fill) for h in head] + [" " * indent + b for b in body] + [a.format(**fill) for a in after]
        return "\n".join(lines), []

    return rewrite


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names a statement binds in the scope it runs in (not in the scopes it creates)."""
    names: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


EXPRESSION_FORMS: dict[str, Rewrite] = {
    "lambda_call": _in_place("(lambda: {E})()"),
    "lambda_default": _in_place("(lambda {N}={E}: {N})()"),
    "comprehension": _in_place("[{E} for {N} in (0,)][0]"),
    "comprehension_condition": _in_place("[{N} for {N} in ({E},) if True][0]"),
    "walrus": _in_place("({N} := {E})"),
    "tuple_index": _in_place("({E}, None)[0]"),
    "dict_index": _in_place("{{0: {E}}}[0]"),
    "conditional": _in_place("({E} if True else None)"),
    "star_display": _in_place("[*({E},)][0]"),
    "or_operand": _in_place("(None or {E})"),
}
HOISTED_FORMS: dict[str, Rewrite] = {
    "assignment": _before("{N} = {E}"),
    "shown": _before("{N} = {E}\nprint({N})"),  # what a program reads, it prints: a leak shows
    "default_argument": _before("def {N}({M}={E}):\n    return {M}", result="{N}()"),
    "decorator": _before("@(lambda {M}: {E})\ndef {N}():\n    pass"),
    "annotation_walrus": _before("{M}: ({N} := {E})"),
    "annotated_assignment": _before("{N}: float = {E}"),
    "global_in_a_helper": _before("def {M}():\n    global {N}\n    {N} = {E}\n{M}()"),
    "nonlocal_in_a_helper": _before(
        "def {M}():\n    {N} = None\n    def inner():\n        nonlocal {N}\n"
        "        {N} = {E}\n    inner()\n    return {N}",
        result="{M}()",
    ),
    "class_body": _before("class {M}:\n    {N} = {E}", result="{M}.{N}"),
    "match_capture": _before("match {E}:\n    case {N}:\n        pass"),
    "star_unpacking": _before("{N}, *{M} = {E}, None"),
    "augmented_assignment": _before("{N} = []\n{N} += [{E}]", result="{N}[0]"),
    "for_target": _before("for {N} in ({E},):\n    pass"),
    "try_else": _before("try:\n    {M} = 0\nexcept ZeroDivisionError:\n    raise\nelse:\n    {N} = {E}"),
    "with_nothing": _before("{N} = [{E}][0]"),
}
NAME_FORMS: dict[str, Rewrite] = {  # bind the name, then unbind it: the read may fall through
    "unbound_by_del": _unbinding("{E} = None", "del {E}"),
    "unbound_by_except": _unbinding("{E} = None", "try:\n    1 / 0\nexcept ZeroDivisionError as {E}:\n    pass"),
    "unbound_by_global_del": _unbinding("def {N}():\n    global {E}\n    {E} = None\n    del {E}", "{N}()"),
    "unbound_by_except_in_global": _unbinding(
        "def {N}():\n    global {E}\n    try:\n        1 / 0\n    except ZeroDivisionError as {E}:\n        pass",
        "{N}()",
    ),
}
ATTRIBUTE_FORMS: dict[str, Rewrite] = {
    "getattr": _by_name("getattr({X}, {A})"),
    "getattr_built_name": _by_name("getattr({X}, {S})"),
    "format_field_literal": _by_name("'{{0.{a}}}'.format({X})"),
    "format_field_variable": _by_name("{N}.format({X})", "{N} = '{{0.' + {S} + '}}'"),
    "format_field_class_pattern": _by_name(
        "{N}", "match '{{0.' + {S} + '}}':\n    case str(format={N}f):\n        {N} = {N}f({X})"
    ),
    "format_chain_literal": _format_chain("{F}.format({X})"),
    "format_chain_class_pattern_shown": _format_chain(
        "{N}", "match {R}:\n    case str(format={N}f):\n        {N} = {N}f({X})\n        print({N})"
    ),
    "class_pattern_object": _by_name("{N}", "match {X}:\n    case object({a}={N}):\n        pass"),
    "class_pattern_type": _by_name("{N}", "{N}t = type({X})\nmatch {X}:\n    case {N}t({a}={N}):\n        pass"),
    "vars": _by_name("vars({X})[{A}]"),
    "attrgetter": _by_name("operator.attrgetter({A})({X})", "import operator"),
    "getattribute": _by_name("{X}.__getattribute__({A})"),
    "object_getattribute": _by_name("object.__getattribute__({X}, {A})"),
    "type_dict": _by_name("type({X}).__dict__[{A}].__get__({X})"),
    "dir_search": _by_name("[getattr({X}, {N}) for {N} in dir({X}) if {N} == {A}][0]"),
}
CALL_FORMS: dict[str, Rewrite] = {
    "map": _call_form("list(map(lambda {N}: {F}(*{N}), [({A1})]))[0]"),
    "star_arguments": _call_form("{F}(*[{A}])"),
    "call_through_lambda": _call_form("(lambda *{N}: {F}(*{N}))({A})"),
}
IMPORT_FORMS: dict[str, Rewrite] = {
    "dunder_import": _import_form("{b} = __import__({m!r})", "{b} = __import__({m!r}).{n}"),
    "importlib": _import_form(
        "import importlib\n{b} = importlib.import_module({m!r})",
        "import importlib\n{b} = getattr(importlib.import_module({m!r}), {n!r})",
    ),
    "import_in_a_function": _import_form(
        "def {N}():\n    import {m}\n    return {m}\n{b} = {N}()",
        "def {N}():\n    from {m} import {n}\n    return {n}\n{b} = {N}()",
    ),
    "import_alias": _import_form("import {m} as {N}\n{b} = {N}", "import {m} as {N}\n{b} = {N}.{n}"),
    "exec_import": _import_form("exec('import {m}')", "exec('from {m} import {n}')"),
    "import_star": _import_form("from {m} import *", "from {m} import *"),
}
STATEMENT_FORMS: dict[str, Rewrite] = {
    "function_scope": _wrapped("def {N}():", inside_after=("pass",), after=("{N}()",), declare_global=True),
    "class_scope": _wrapped("class {N}:"),
    "if_true": _wrapped("if True:"),
    "for_once": _wrapped("for {N} in (0,):"),
    "while_once": _wrapped("while True:", inside_after=("break",)),
    "try_reraise": _wrapped("try:", after=("except Exception:", "    raise")),
    "match_wildcard": _wrapped("match 0:", "    case _:", indent=8),
    "else_branch": _wrapped("if False:", "    pass", "else:"),
}
FORMS: dict[str, tuple[tuple[str, ...], Rewrite]] = {
    **{k: (("name", "attribute", "call"), f) for k, f in EXPRESSION_FORMS.items()},
    **{k: (("name", "attribute", "call"), f) for k, f in HOISTED_FORMS.items()},
    **{k: (("name",), f) for k, f in NAME_FORMS.items()},
    **{k: (("attribute",), f) for k, f in ATTRIBUTE_FORMS.items()},
    **{k: (("call",), f) for k, f in CALL_FORMS.items()},
    **{k: (("import",), f) for k, f in IMPORT_FORMS.items()},
    **{k: (("statement", "import"), f) for k, f in STATEMENT_FORMS.items()},
}
_NEEDS_BEFORE = (
    set(HOISTED_FORMS)
    | set(NAME_FORMS)
    | {
        k
        for k, f in ATTRIBUTE_FORMS.items()
        if k
        in (
            "format_field_variable",
            "format_field_class_pattern",
            "format_chain_class_pattern_shown",
            "class_pattern_object",
            "class_pattern_type",
            "attrgetter",
        )
    }
)


def applicable(access: _Access) -> list[str]:
    """The forms that can rewrite this access."""
    out = []
    for name, (kinds, _rewrite) in FORMS.items():
        if access.kind not in kinds:
            continue
        if name in _NEEDS_BEFORE and not access.hoistable:
            continue
        if name == "function_scope" and not access.module_level:
            continue
        if access.kind == "statement" and isinstance(
            access.node, (ast.Return, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)
        ):
            continue
        out.append(name)
    return out


# --- applying a form ----------------------------------------------------------------------------


def rewrite(source: str, index: int, form: str) -> str | None:
    """``source`` with its ``index``-th access rewritten by ``form``; None when that does not
    apply or does not compile."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    accesses = _accesses(tree)
    if not 0 <= index < len(accesses) or form not in applicable(accesses[index]):
        return None
    access = accesses[index]
    names = _Names(tree)
    try:
        replacement, before = FORMS[form][1](access, names)
    except (ValueError, KeyError, IndexError, AttributeError):
        return None
    if replacement == "" and not before:
        return None
    try:
        statements = [s for text in before for s in _stmts(text)]
        if access.kind in ("statement", "import"):
            new = _stmts(replacement) if replacement is not None else []
            access.block[access.index : access.index + 1] = statements + new
        else:
            if replacement is not None:
                _replace(tree, access.node, _expr(replacement))
            access.block[access.index : access.index] = statements
        text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        compile(text, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return text


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return


def access_count(source: str) -> int:
    try:
        return len(_accesses(ast.parse(source)))
    except SyntaxError:
        return 0


def single_rewrites(source: str) -> Iterator[tuple[str, str]]:
    """Every (form, variant) with exactly one access of ``source`` rewritten, access by access."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for index, access in enumerate(_accesses(tree)):
        for form in applicable(access):
            variant = rewrite(source, index, form)
            if variant is not None:
                yield form, variant


def random_rewrites(source: str, rng: random.Random, steps: int) -> tuple[str, tuple[str, ...]]:
    """``steps`` rewrites in turn, each of a random access by a random form that applies."""
    forms: list[str] = []
    for _ in range(steps * 4):
        if len(forms) == steps:
            break
        try:
            accesses = _accesses(ast.parse(source))
        except SyntaxError:
            break
        if not accesses:
            break
        index = rng.randrange(len(accesses))
        choices = applicable(accesses[index])
        if not choices:
            continue
        form = rng.choice(choices)
        variant = rewrite(source, index, form)
        if variant is not None:
            source = variant
            forms.append(form)
    return source, tuple(forms)


# --- the families ---------------------------------------------------------------------------------

SLOW_CATEGORIES = ("resources", "output")  # cases that run to a limit: seconds each under load
# Longer programs are run as they are but not rewritten: they test the source-size rules, and each
# rewrite parses the whole program again (too_long_source, 120 KB, made the stream crawl at about
# one program a second once the other corpus programs had run out of rewrites).
MAX_REWRITTEN_SOURCE = 5_000


def seeds(quick: bool = False) -> list[tuple[str, str, str]]:
    """(family, origin, source) of every program the rewrites start from; ``quick`` leaves out
    the hostile cases that run to a limit (SLOW_CATEGORIES)."""
    hostile = [("hostile", c.name, c.source) for c in CASES if not (quick and c.category in SLOW_CATEGORIES)]
    honest = [("honest", h.name, h.source) for h in HONEST_CORPUS]
    return hostile + honest


def rewritten(seed: int = 0, max_steps: int = 4, as_is: bool = True, quick: bool = False) -> Iterator[Program]:
    """Programs from the corpora, endlessly: first every seed program as it is (unless
    ``as_is`` is false: the suite runs them anyway) and every single rewrite of each
    (interleaved across seed programs, in a seeded order), then random chains of up to
    ``max_steps`` rewrites."""
    rng = random.Random(seed)
    starts = seeds(quick)
    for family, origin, source in starts if as_is else ():
        yield Program(source, family, origin, ())
    starts = [(f, o, s) for f, o, s in starts if len(s) <= MAX_REWRITTEN_SOURCE]
    iterators = [((f, o), single_rewrites(s)) for f, o, s in starts]
    rng.shuffle(iterators)
    while iterators:
        alive = []
        for (family, origin), it in iterators:
            item = next(it, None)
            if item is not None:
                yield Program(item[1], family, origin, (item[0],))
                alive.append(((family, origin), it))
        iterators = alive
    while True:
        family, origin, source = rng.choice(starts)
        variant, forms = random_rewrites(source, rng, rng.randint(2, max_steps))
        if forms:
            yield Program(variant, family, origin, forms)


def grammar_programs(n: int, seed: int = 0) -> list[Program]:
    """``n`` random well-formed programs from hypothesmith's grammar strategy (test-only
    dependency, pinned in requirements-test.lock), drawn deterministically for ``seed``."""
    import hypothesmith
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    drawn: list[str] = []
    batch = 0
    while len(drawn) < n:

        @hypothesis_seed(seed * 1_000_003 + batch)
        @settings(
            max_examples=min(200, n - len(drawn)),
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(hypothesmith.from_grammar())
        def draw(source):
            drawn.append(source)

        draw()
        batch += 1
    return [Program(s, "grammar", f"hypothesmith-{seed}-{i}", ()) for i, s in enumerate(drawn[:n])]


# --- issue 46: walks from an allowed module, memory pressure -------------------------------------

WALK_DEPTH = 5
WALK_MODULES = ("math", "datetime", "time", "calendar")
_WALK_LEAVES = ("open", "system", "modules", "builtins", "exec", "eval", "__import__", "_getframe")


def walk_paths(depth: int = WALK_DEPTH) -> list[tuple[str, ...]]:
    """Attribute paths from each allowed module through the real modules' attributes (every
    name ``dir()`` shows but the dunders, which the dunder rule refuses anywhere), breadth first, each object
    once, to ``depth`` names. The reachability
    check walks the same graph through the names layer 1 admits (reachability.py)."""
    import importlib

    found: list[tuple[str, ...]] = []
    seen: set[int] = set()
    queue = [((m,), importlib.import_module(m)) for m in WALK_MODULES]
    keep = [obj for _p, obj in queue]
    while queue:
        path, obj = queue.pop(0)
        if len(path) > depth:
            continue
        try:
            names = sorted(n for n in dir(obj) if isinstance(n, str) and not (n.startswith("__") and n.endswith("__")))
        except Exception:
            continue
        for name in names:
            try:
                value = getattr(obj, name)
            except BaseException:
                continue
            found.append(path + (name,))
            if id(value) not in seen and len(path) < depth:
                seen.add(id(value))
                keep.append(value)
                queue.append((path + (name,), value))
    return found


_WALK_TEMPLATES = (
    "import {m}\nx = {m}.{rest}\nprint(str(x)[:80])\nanswer = 1\n",
    "from {m} import {first}\nx = {first}{tail}\nprint(str(x)[:80])\nanswer = 1\n",
    "import {m}\nx = {m}.{rest}\ntry:\n    y = x()\nexcept Exception:\n    y = None\nprint(str(y)[:80])\nanswer = 1\n",
    "import {m}\nx = {m}.{rest}\nanswer = len(str(x('CANARY_FILE').read()))\n",
    "import {m}\nf = '{{0.{dotted}}}'.format({m})\nprint(f[:80])\nanswer = 1\n",
)


def walk_programs(seed: int = 0) -> Iterator[Program]:
    """Programs that walk a path of ``walk_paths`` (in a seeded order, endlessly): read it,
    take its first step by a from-import, call what it reaches, aim it at the file canary,
    name it in a format field."""
    rng = random.Random(seed * 7 + 46)
    paths = walk_paths()
    rng.shuffle(paths)
    while True:
        for path in paths:
            m, first, rest = path[0], path[1], ".".join(path[1:])
            template = rng.choice(_WALK_TEMPLATES)
            if path[-1] not in _WALK_LEAVES and "CANARY_FILE" in template:
                template = _WALK_TEMPLATES[0]
            tail = "".join("." + n for n in path[2:])
            source = template.format(m=m, first=first, tail=tail, rest=rest, dotted=rest)
            yield Program(source, "walk", ".".join(path), (template.split("\n")[-3][:12],))


_MEMORY_TEMPLATES = {
    "message": "print('so far')\nmsg = 'x' * ({n} * 2**20)\nraise ValueError(msg)\n",
    "message_repr": "print('so far')\nmsg = 'x' * ({n} * 2**20)\nraise ValueError(msg, msg)\n",
    "in_construction": "hold = [bytearray(2**20) for _ in range({h})]\nraise ValueError('x' * ({n} * 2**20))\n",
    "in_print": "print('so far')\nhold = [bytearray(2**20) for _ in range({h})]\nprint([0] * ({n} * 2**20))\n",
    "huge_print": "print('abc')\ns = 'z' * ({n} * 2**20)\nprint(s)\nanswer = 1\n",
    "in_answer": "print('so far')\nhold = [bytearray(2**20) for _ in range({h})]\nanswer = sum([1.5] * ({n} * 2**20))\n",  # noqa: E501
    "answer_holding_all": (
        "print('start')\nhold = []\nsize = 2**20\nwhile size >= {g}:\n    try:\n"
        "        hold.append(bytearray(size))\n    except Exception:\n        size //= 2\n"
        "answer = {n} + 0.5\n"
    ),
}


def memory_programs(seed: int = 0) -> Iterator[Program]:
    """Memory-pressure programs at drawn sizes, endlessly."""
    rng = random.Random(seed * 11 + 46)
    names = sorted(_MEMORY_TEMPLATES)
    while True:
        name = rng.choice(names)
        n, h, g = rng.choice((8, 40, 100, 150, 230, 300)), rng.choice((0, 100, 200, 240)), rng.choice((1, 64, 4096))
        yield Program(_MEMORY_TEMPLATES[name].format(n=n, h=h, g=g), "memory", name, (f"n={n},h={h},g={g}",))


# one program in WALK_EVERY is a walk, one in MEMORY_EVERY a memory-pressure program
WALK_EVERY = 8
MEMORY_EVERY = 24


def programs(n: int, seed: int = 0, grammar: int = 0, as_is: bool = True, quick: bool = False) -> Iterator[Program]:
    """``n`` programs: ``grammar`` of them from hypothesmith, spread evenly, one in WALK_EVERY a
    walk from an allowed module, one in MEMORY_EVERY a memory-pressure program, the rest rewritten
    from the corpora (``rewritten``)."""
    source = rewritten(seed, as_is=as_is, quick=quick)
    walks, memory = walk_programs(seed), memory_programs(seed)
    extra = grammar_programs(min(grammar, n), seed) if grammar else []
    at = {int((k + 0.5) * n / len(extra)) for k in range(len(extra))} if extra else set()
    drawn = iter(extra)
    for i in range(n):
        if i in at:
            yield next(drawn)
        elif i % WALK_EVERY == WALK_EVERY - 1:
            yield next(walks)
        elif i % MEMORY_EVERY == MEMORY_EVERY - 2:
            yield next(memory)
        else:
            yield next(source)
