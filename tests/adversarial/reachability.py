"""The reachability check (issue 46, item 1): everything a program can name, walked by the names
layer 1 lets it use, must lead to nothing that carries a capability.

``WALKER`` is a program the executor runs on the process backend with layer 2 (the builtins
allow-list and the module proxies) off, so it sees the *real* standard-library modules and the
real builtins, as a program does in the configuration SECURITY.md says layer 1 must hold alone.
Layer 1 itself, the line cap and the child's filter are off for the walker only, because the
walker uses ``getattr``; the rlimits stay. It starts from what a program can name:

* the allowed modules (``import math``: with layer 2 off, the real module);
* every builtin name layer 1 lets a program read (static_check.forbidden_builtin_names);
* literals of every kind, a function of the program's own (a lambda) and a caught exception;

and follows, breadth first to ``DEPTH`` steps, every edge a program can take: an attribute read
whose name layer 1 admits (``static_check.attribute_problem``; ``format`` only from a string), a
call with no arguments of what it reached (the results of allowed calls), and the first items
of a list, tuple or dict. A path *fails* when it reaches a module other than the allowed ones
(``builtins``, ``sys``, ``os``, ``locale``, ``codecs``, ...), ``exec``/``eval``/``open``/
``__import__`` or another builtin layer 1 forbids, a frame, a code object or a traceback, or
code of the executor's own modules. The report gives the number of paths walked, the objects
reached and the failing paths (shortest first).
"""

from __future__ import annotations

import json

DEPTH = 4
MAX_FAILURES = 40

WALKER = r"""
import ast, builtins, json, sys, types
from executor import policy, static_check

DEPTH = %(depth)d
MAX_FAILURES = %(max_failures)d
EXECUTOR_DIR = static_check.__file__.rsplit("/", 1)[0] + "/"
FORBIDDEN = static_check.forbidden_builtin_names()
DANGEROUS_BUILTINS = {id(getattr(builtins, n)): n for n in FORBIDDEN if hasattr(builtins, n)}
DANGEROUS_BUILTINS.update({id(builtins.__import__): "__import__", id(builtins.__build_class__): "__build_class__"})
STRING = ast.Constant("")

def why_dangerous(obj):
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", "?")
        return None if name in policy.ALLOWED_MODULES else "module " + str(name)
    if id(obj) in DANGEROUS_BUILTINS and callable(obj):
        return "builtin " + DANGEROUS_BUILTINS[id(obj)]
    if isinstance(obj, (types.FrameType, types.CodeType, types.TracebackType)):
        return type(obj).__name__
    code = getattr(obj, "__code__", None) if isinstance(obj, (types.FunctionType, types.MethodType)) else None
    if isinstance(code, types.CodeType) and code.co_filename.startswith(EXECUTOR_DIR):
        return "executor code " + code.co_filename.rsplit("/", 1)[1] + ":" + code.co_name
    if type(obj).__module__.startswith("executor"):
        return "executor object " + type(obj).__module__ + "." + type(obj).__qualname__
    return None

def names_of(obj):
    try:
        found = set(dir(obj))
    except Exception:
        found = set()
    found |= set(getattr(policy, "ALLOWED_ATTRIBUTES", ()))
    return sorted(n for n in found if isinstance(n, str))

def admitted(name, obj):
    if static_check._is_dunder(name):
        return False
    return static_check.attribute_problem(name, STRING if isinstance(obj, str) else None) is None

roots = [(m, __import__(m)) for m in policy.ALLOWED_MODULES]
roots += [(n, getattr(builtins, n)) for n in sorted(dir(builtins))
          if not static_check._is_dunder(n) and n not in FORBIDDEN]
try:
    raise ValueError("caught")
except ValueError as exc:
    caught = exc
roots += [(repr(v), v) for v in (0, 1.5, 2j, "s", b"b", (), (1, "a"), [1.5], {"k": 1}, {1}, None, True, ..., range(3))]
roots += [("(lambda: 0)", lambda: 0), ("caught_exception", caught)]

seen = set()
keep = []
queue = []
for path, obj in roots:
    if id(obj) not in seen:
        seen.add(id(obj)); keep.append(obj); queue.append((path, obj, 0))
paths = 0
failures = []
samples = []
while queue:
    path, obj, depth = queue.pop(0)
    why = why_dangerous(obj)
    if why:
        failures.append((path, why))
        continue
    if depth >= DEPTH:
        continue
    edges = []
    for name in names_of(obj):
        if not admitted(name, obj):
            continue
        try:
            value = getattr(obj, name)
        except BaseException:
            continue
        edges.append((path + "." + name, value))
    if callable(obj) and not isinstance(obj, types.ModuleType):
        try:
            edges.append((path + "()", obj()))
        except BaseException:
            pass
    if isinstance(obj, (list, tuple)):
        edges += [(path + "[%%d]" %% i, v) for i, v in enumerate(obj[:3])]
    elif isinstance(obj, dict):
        edges += [(path + "[%%r]" %% (k,), v) for k, v in list(obj.items())[:3]]
    for p, value in edges:
        paths += 1
        if len(samples) < 4000 and p.split(".", 1)[0] in policy.ALLOWED_MODULES and "(" not in p and "[" not in p:
            samples.append(p)
        if id(value) in seen:
            why = why_dangerous(value)
            if why and (p, why) not in failures:
                failures.append((p, why))
            continue
        seen.add(id(value)); keep.append(value)
        queue.append((p, value, depth + 1))
failures.sort(key=lambda f: (len(f[0]), f[0]))
print(json.dumps({"paths": paths, "objects": len(seen), "failures_total": len(failures),
                  "failures": failures[:MAX_FAILURES], "module_paths": samples[:300]}))
answer = len(failures)
""" % {"depth": DEPTH, "max_failures": MAX_FAILURES}  # noqa: UP031

# the walker runs with these off (it uses getattr and walks tens of thousands of objects);
# "builtins" off is the point: the real modules and builtins, as with layer 1 alone
WALKER_LAYERS_OFF = ("static", "builtins", "linecap", "seccomp")
WALKER_LIMITS = {"cpu_seconds": 120, "wall_seconds": 240.0, "stdout_chars": 262_144, "result_bytes": 4_194_304}


def walk() -> dict:
    """Run the walker on a process-backend executor of its own; its report."""
    from tests.fixtures_executor import make_executor

    with make_executor("process", disabled_layers=WALKER_LAYERS_OFF, limits=WALKER_LIMITS) as ex:
        r = ex.run(WALKER)
    if r.outcome not in ("OK",):
        raise RuntimeError(f"the reachability walker ended {r.outcome}: {r.error} {r.stdout[-2000:]}")
    return json.loads(r.stdout)
