"""Layer 1: the static AST policy.

``check_source(source)`` parses a program and returns the list of policy violations (empty when
the program may run). Rules come from ``policy.py``. The check is deny by default on syntax
(issue 40): every node must be of a type on ``policy.ALLOWED_SYNTAX`` and carry only the fields
listed there, and every field that holds an identifier is checked by its role; so a construct
the policy has not reasoned about is refused by name, not admitted. Every way a program reads an
attribute by name (``x.a``, a class pattern's keyword ``case C(a=v)``, a field of a format
template, a name imported from a module) goes through one check, ``attribute_problem``. The
walk is iterative (``ast.walk``), so a deeply nested program cannot crash the checker. Python
NFKC-normalises identifiers while parsing, so a fullwidth or otherwise Unicode-spelled
``＿＿class＿＿`` reaches this checker as ``__class__`` and is rejected like the ASCII spelling.

A SyntaxError is not a policy violation: it is returned by ``parse_program`` for the caller to
report as a program error, exactly as running the program would.
"""

from __future__ import annotations

import _string
import ast
import builtins
import string
from dataclasses import dataclass

from executor import policy


def forbidden_builtin_names() -> frozenset[str]:
    """The builtin names layer 1 refuses to let a program read (unless the read can only see the
    program's own binding): policy.FORBIDDEN_NAMES, and every name of this interpreter's builtins
    module that the policy does not classify (deny by default: a builtin a newer Python adds is
    refused until policy.py lists it)."""
    classified = {
        *policy.ALLOWED_BUILTINS,
        *policy.WRAPPED_BUILTINS,
        *policy.HARMLESS_ABSENT_BUILTINS,
        *policy.READABLE_DUNDER_NAMES,
    }
    unclassified = {n for n in dir(builtins) if n not in classified and not _is_dunder(n)}
    return frozenset(policy.FORBIDDEN_NAMES) | unclassified


_FORBIDDEN_ATTRS = frozenset(policy.FORBIDDEN_ATTRIBUTES)
_ALLOWED_ATTRS = frozenset(policy.ALLOWED_ATTRIBUTES)
_ALLOWED_MODULES = frozenset(policy.ALLOWED_MODULES)
_READABLE_DUNDERS = frozenset(policy.READABLE_DUNDER_NAMES)
_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Violation:
    """One reason the program is rejected, with the line it is on (0 when unknown)."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.message} (line {self.line})" if self.line else self.message


def _is_dunder(name: str) -> bool:
    """``__x__``: the interpreter's own names (policy.py, "Static rules and their reasons")."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


_FORBIDDEN_NAMES = forbidden_builtin_names()


def _bad_identifier(name: str) -> str | None:
    """Why a name may not appear at all (bound or read), or None. Single-underscore names
    (``_now``) are the program's own and carry no capability."""
    if _is_dunder(name):
        return f"name {name!r} is a dunder name"
    return None


_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Scopes:
    """Where each forbidden builtin name (policy.FORBIDDEN_NAMES) that a program reads is
    resolved, decided the way CPython's compiler decides it.

    A read may use the program's own variable called ``type`` or ``getattr`` only where it
    can never fall back to the builtin:

    * in a function, lambda or comprehension that binds the name anywhere (the name is local:
      unassigned, it raises UnboundLocalError), or in a scope nested in such a function (a
      free variable: NameError when unassigned). A name a function declares ``global`` or
      ``nonlocal`` is not bound there: its reads resolve in the module (by the rule below) or
      in the enclosing function that binds it.
    * at module level (and in functions reading a module-level name), a read looks in the
      globals and then in the builtins, so a binding counts only if it *surely ran before*
      the read, on every path the module's control flow can take to it (``_module_flow``, a
      definite-assignment pass over the module's statements: an assignment, def or import
      earlier in the same block; a name bound in every branch of an ``if``/``elif``/``else``;
      the target of the ``for`` loop whose body holds the read; for a function, lambda or
      comprehension: what was surely bound when its definition ran), and no unbinding of the
      name anywhere: ``del``, or the end of an ``except ... as name`` handler, which deletes
      the name (issue 40: with layer 2 off, the read after it fell through to the real
      builtin). ``if 0: getattr = None`` therefore does not make ``getattr`` the program's
      own, nor does a ``for type in ...`` loop for a read after the loop (it may have run no
      iteration); issue 46 item 5: reads inside the loop's body, and after an if/elif/else
      binding the name in every branch, are the program's own, as CPython resolves them.
    """

    def __init__(self, tree: ast.Module):
        self.parent: dict[ast.AST, ast.AST] = {}
        self.bound: dict[ast.AST, set[str]] = {tree: set()}
        self.declared: dict[ast.AST, set[str]] = {}  # global/nonlocal names of each function
        self.reads: list[tuple[ast.Name, ast.AST, frozenset[str]]] = []
        self.deleted: set[str] = set()
        self.module = tree
        self.flow = _module_flow(tree)
        for stmt in tree.body:
            self._visit(stmt, tree, self.flow.get(stmt, frozenset()))

    def _bind(self, scope: ast.AST, name: str) -> None:
        if name not in self.declared.get(scope, ()):
            self.bound.setdefault(scope, set()).add(name)

    def _new_scope(self, node: ast.AST, scope: ast.AST) -> ast.AST:
        self.parent[node] = scope
        self.bound.setdefault(node, set())
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.declared[node] = _global_and_nonlocal_names(node.body)
        return node

    def _visit(self, node: ast.AST, scope: ast.AST, surely: frozenset[str]) -> None:
        # explicit stack: deep programs must not exhaust the checker's own recursion. ``surely``:
        # the module-level names surely bound whenever the node runs (``_module_flow``; a node
        # not in the flow map, e.g. a statement in a function body, inherits its parent's)
        stack = [(node, scope, surely)]
        while stack:
            node, scope, surely = stack.pop()
            surely = self.flow.get(node, surely)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(scope, node.name)
                outer = [
                    *node.decorator_list,
                    *node.args.defaults,
                    *[d for d in node.args.kw_defaults if d is not None],
                ]
                if node.returns is not None:
                    outer.append(node.returns)
                inner = self._new_scope(node, scope)
                for a in (
                    *node.args.posonlyargs,
                    *node.args.args,
                    *node.args.kwonlyargs,
                    *([node.args.vararg] if node.args.vararg else []),
                    *([node.args.kwarg] if node.args.kwarg else []),
                ):
                    self._bind(inner, a.arg)
                    if a.annotation is not None:
                        outer.append(a.annotation)
                stack.extend((n, scope, surely) for n in outer)
                stack.extend((n, inner, surely) for n in node.body)
            elif isinstance(node, ast.Lambda):
                stack.extend(
                    (n, scope, surely)
                    for n in (*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None])
                )
                inner = self._new_scope(node, scope)
                for a in (
                    *node.args.posonlyargs,
                    *node.args.args,
                    *node.args.kwonlyargs,
                    *([node.args.vararg] if node.args.vararg else []),
                    *([node.args.kwarg] if node.args.kwarg else []),
                ):
                    self._bind(inner, a.arg)
                stack.append((node.body, inner, surely))
            elif isinstance(node, _COMPREHENSIONS):
                inner = self._new_scope(node, scope)
                for i, gen in enumerate(node.generators):
                    # the first iterable is evaluated in the enclosing scope
                    stack.append((gen.iter, scope if i == 0 else inner, surely))
                    stack.append((gen.target, inner, surely))
                    stack.extend((n, inner, surely) for n in gen.ifs)
                parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                stack.extend((n, inner, surely) for n in parts)
            elif isinstance(node, ast.NamedExpr):
                target_scope = scope
                while isinstance(target_scope, _COMPREHENSIONS):  # := binds outside comprehensions
                    target_scope = self.parent[target_scope]
                self._bind(target_scope, node.target.id)
                stack.append((node.value, scope, surely))
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.reads.append((node, scope, surely))
                else:
                    self._bind(scope, node.id)
                    if isinstance(node.ctx, ast.Del):
                        self.deleted.add(node.id)
            else:
                if isinstance(node, ast.alias):
                    self._bind(scope, (node.asname or node.name).split(".")[0])
                elif isinstance(node, ast.ExceptHandler) and node.name:
                    # the handler's end deletes the name (CPython compiles `except E as n: body`
                    # as `try: body finally: n = None; del n`): an unbinding like `del`
                    self._bind(scope, node.name)
                    self.deleted.add(node.name)
                elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                    self._bind(scope, node.name)
                elif isinstance(node, ast.MatchMapping) and node.rest:
                    self._bind(scope, node.rest)
                stack.extend((child, scope, surely) for child in ast.iter_child_nodes(node))

    def program_owns(self, read: ast.Name, scope: ast.AST, surely: frozenset[str]) -> bool:
        """True when this read of a name can only ever see the program's own binding."""
        name = read.id
        while scope is not self.module:
            if name in self.bound.get(scope, ()):
                return True
            scope = self.parent[scope]
        return name in surely and name not in self.deleted

    def forbidden_reads(self) -> list[ast.Name]:
        """Reads of forbidden builtin names that may reach the builtin."""
        return [
            read
            for read, scope, surely in self.reads
            if read.id in _FORBIDDEN_NAMES and not self.program_owns(read, scope, surely)
        ]


def _global_and_nonlocal_names(body: list[ast.stmt]) -> set[str]:
    """Names a function body declares ``global`` or ``nonlocal`` (not those of nested scopes)."""
    names: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif not isinstance(node, (*_FUNCTION_SCOPES, ast.ClassDef, *_COMPREHENSIONS)):
            stack.extend(ast.iter_child_nodes(node))
    return names


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _target_names(elt)]
    return []


def _simple_bindings(stmt: ast.stmt) -> list[str]:
    """Names a simple statement binds whenever it completes. ``:=`` is not counted."""
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _target_names(t)]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return _target_names(stmt.target)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
    return []


def _module_flow(tree: ast.Module) -> dict[ast.AST, frozenset[str]]:
    """For each statement the module's own control flow runs (not those of function bodies),
    the module-level names surely bound whenever it starts: a definite-assignment pass.

    A block's statements run in order; one that does not complete either ends the program (an
    exception at module level outside ``try``) or leaves the block by ``break``/``continue``,
    after which the block's later statements do not run, so counting what it bound is safe.
    ``if``: the names bound on both arms (no ``else``: none of the body's). ``for``: its body
    starts with the target bound (each iteration binds it first); after the loop nothing new
    (it may have run no iteration). ``while``, ``with``, ``try``, ``match``: their blocks start
    with what was bound before them (``try`` handlers: the exception may come from any point of
    the body; ``else``: after the whole body) and add nothing after them (a context manager
    may swallow an exception; no case may match). Unbinding (``del``, ``except ... as``) is
    handled by the caller, which refuses any name unbound anywhere."""
    flow: dict[ast.AST, frozenset[str]] = {}

    def block(stmts: list[ast.stmt], bound: frozenset[str]) -> frozenset[str]:
        for stmt in stmts:
            bound = statement(stmt, bound)
        return bound

    def statement(stmt: ast.stmt, bound: frozenset[str]) -> frozenset[str]:
        flow[stmt] = bound
        if isinstance(stmt, ast.If):
            return block(stmt.body, bound) & block(stmt.orelse, bound)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            block(stmt.body, bound | frozenset(_target_names(stmt.target)))
            block(stmt.orelse, bound)
            return bound
        if isinstance(stmt, ast.While):
            block(stmt.body, bound)
            block(stmt.orelse, bound)
            return bound
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            block(stmt.body, bound)
            return bound
        if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            block(stmt.orelse, block(stmt.body, bound))
            for handler in stmt.handlers:
                flow[handler] = bound
                block(handler.body, bound)
            block(stmt.finalbody, bound)
            return bound
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                flow[case] = bound
                block(case.body, bound)
            return bound
        return bound | frozenset(_simple_bindings(stmt))

    block(tree.body, frozenset())
    return flow


def attribute_problem(attr: str, receiver: ast.AST | None) -> str | None:
    """Why reading (or writing) attribute ``attr`` by name is refused, or None: THE attribute check.
    Every path by which a program names an attribute comes here: ``x.attr`` (``receiver`` is
    ``x``), a class pattern's keyword (``case C(attr=v)``: no receiver node), a field of a format
    template (``"{0.attr}"``: none) and a name imported from a module (none). Deny by default
    (issue 46): a name not on policy.ALLOWED_ATTRIBUTES is refused. ``receiver`` matters
    only for policy.STRING_DRIVEN_ATTRIBUTES: ``format`` may be read from a string literal alone,
    and that literal's own fields are then checked here too."""
    if _is_dunder(attr):
        return f"attribute {attr!r} is a dunder attribute"
    if attr in _FORBIDDEN_ATTRS:
        return f"attribute {attr!r} is not allowed"
    if attr not in _ALLOWED_ATTRS:  # deny by default (issue 46): the policy's reviewed list
        return f"attribute {attr!r} is not on the policy's attribute allow-list"
    if attr in policy.STRING_DRIVEN_ATTRIBUTES:
        if not (isinstance(receiver, ast.Constant) and isinstance(receiver.value, str)):
            return f"'.{attr}' is only allowed on a string literal"
        return format_template_problem(receiver.value)
    return None


def format_template_problem(text: str) -> str | None:
    """A str.format template is checked like the code it stands for: each replacement field's
    attribute lookups (``{0.real}``) go through ``attribute_problem``, item lookups (``{0[1]}``)
    are plain indexing; recursively through nested format specs."""
    try:
        for _literal, field, spec, _conversion in _FORMATTER.parse(text):
            if field is not None:
                _first, rest = _string.formatter_field_name_split(field)
                for is_attribute, key in rest:
                    problem = attribute_problem(key, None) if is_attribute else None
                    if problem:
                        return f"format field {field!r}: {problem}"
            if spec:
                problem = format_template_problem(spec)
                if problem:
                    return problem
    except ValueError as exc:
        return f"invalid format string: {exc}"
    return None


def _import_problems(node: ast.AST) -> list[str]:
    """Import statements: modules outside policy.ALLOWED_MODULES, and each name taken from a
    module, which is an attribute read of the module (``attribute_problem``) and must not be
    one of the names the proxies hide."""
    allowed = ", ".join(policy.ALLOWED_MODULES)
    if isinstance(node, ast.Import):
        return [
            f"import of {a.name!r} is not allowed (allowed: {allowed})"
            for a in node.names
            if a.name not in _ALLOWED_MODULES
        ]
    problems = []
    if node.level or node.module not in _ALLOWED_MODULES:
        problems.append(f"import from {'.' * node.level}{node.module or ''!s} is not allowed (allowed: {allowed})")
    for alias in node.names:
        if alias.name == "*":
            continue
        p = attribute_problem(alias.name, None) or (
            f"name {alias.name!r} is not allowed" if alias.name in policy.MODULE_HIDDEN_NAMES else None
        )
        if p:
            problems.append(p)
    return problems


def _identifier_problems(node: ast.AST, field: str, role: str, value: str | list[str] | None) -> list[str]:
    """What a field holding identifiers (policy.ALLOWED_SYNTAX roles) may not hold."""
    if value is None:
        return []
    if role == "attribute":
        receiver = node.value if isinstance(node, ast.Attribute) else None
        return [
            p for p in (attribute_problem(a, receiver) for a in ([value] if isinstance(value, str) else value)) if p
        ]
    if role == "name":
        if value in _READABLE_DUNDERS and isinstance(node.ctx, ast.Load):
            return []
        p = _bad_identifier(value)
        return [p] if p else []
    if role in ("binding", "declared", "keyword"):
        return [p for p in (_bad_identifier(n) for n in ([value] if isinstance(value, str) else value)) if p]
    if role == "false":
        return [f"{type(node).__name__}.{field} is not allowed (async comprehension)"] if value else []
    return []  # "import": the import statement checks its module and names (_node_problems)


# per node class: None (refused), or the (field, role) pairs to check beyond child nodes
_PLAN: dict[type, tuple[tuple[str, str], ...] | str] = {}


def _plan(cls: type) -> tuple[tuple[str, str], ...] | str:
    """How to check a node class, from policy.ALLOWED_SYNTAX (computed once per class): a refusal
    message, or the fields that need a check. A field the table does not list is a refusal."""
    name = cls.__name__
    fields = policy.ALLOWED_SYNTAX.get(name)
    if fields is None:
        plan = policy.FORBIDDEN_NODES.get(name) or (
            f"the construct {name!r} is not allowed (it is not on the policy's syntax allow-list)"
        )
    else:
        unknown = [f for f in cls._fields if f not in fields]
        plan = (
            f"the construct {name!r} has a field the policy does not know ({', '.join(unknown)})"
            if unknown
            else tuple((f, r) for f, r in fields.items() if r not in ("node", "constant"))
        )
    _PLAN[cls] = plan
    return plan


def _node_problems(node: ast.AST) -> list[str]:
    plan = _PLAN.get(type(node)) or _plan(type(node))
    if isinstance(plan, str):
        return [plan]
    problems: list[str] = []
    for field, role in plan:
        problems.extend(_identifier_problems(node, field, role, getattr(node, field, None)))
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        problems.extend(_import_problems(node))
    return problems


def check_tree(tree: ast.AST) -> list[Violation]:
    """All policy violations in a parsed program, in source order."""
    found: list[Violation] = []
    depth = _nesting_depth(tree)
    if depth > policy.MAX_AST_DEPTH:
        return [
            Violation(0, f"the program is nested more than {policy.MAX_AST_DEPTH} levels deep (policy.MAX_AST_DEPTH)")
        ]
    for node in ast.walk(tree):
        for message in _node_problems(node):
            found.append(Violation(getattr(node, "lineno", 0) or 0, message))
    for read in _Scopes(tree).forbidden_reads():
        found.append(Violation(read.lineno, f"name {read.id!r} is not allowed"))
    found.sort(key=lambda v: v.line)
    return found


def _nesting_depth(tree: ast.AST) -> int:
    """Depth of the syntax tree (iterative: the checker itself never recurses)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= policy.MAX_AST_DEPTH:  # no need to look deeper than the bound
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


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
