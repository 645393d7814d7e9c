"""THE executor policy: every rule the sandbox enforces, in one readable file.

Everything else in ``executor/`` reads its rules from here; nothing else holds a list of allowed
modules, builtins, AST constructs, limits or system calls. ``policy_hash()`` fingerprints the
whole policy (it goes into the run manifest), ``seccomp_profile_json()`` renders the docker-level
seccomp profile from the same source.

Threat model (short; SECURITY.md has the long form)
--------------------------------------------------
The program is untrusted Python written by a language model that may have been steered by the
text of a clinical note. It must only compute a value. It must not read or write files, talk to
the network, start processes or threads, learn anything about the host (environment, paths,
users), exhaust the machine, or forge the verdict the executor reports. Layers, each of which
must hold on its own (tests prove each):

1. static AST policy (``static_check.py``): deny by default on syntax (issue 40: only the node
   types and fields of ALLOWED_SYNTAX), no imports outside ALLOWED_MODULES, no dunder names
   or attributes (``__x__``: closes ``__class__``/``__subclasses__``/``__globals__``/``__self__``/
   ``__traceback__``/``__builtins__`` ...; reading ``__name__`` is the one exception), no
   frame/generator/code introspection attributes, no async or generator constructs (as the
   paper), no class definitions, no ``str.format`` on anything but a literal whose fields reach
   no dunder or forbidden attribute (format fields read attributes by string:
   ``"{0.__class__}".format(x)``), every attribute named by the program through one check
   (``.x``, a class pattern's keyword, a format field, a from-import), no read of a forbidden
   builtin name that can reach the builtin (``del`` and the end of ``except ... as`` unbind).
   It must hold with layer 2 off (tests run the adversarial suite so). Each rule and what it
   protects: "Static rules and their reasons" below.
2. builtins allow-list (``child.py``): a fresh builtins dict holding only ALLOWED_BUILTINS, a
   restricted ``__import__`` that hands out attribute-copy proxies of ALLOWED_MODULES (without
   ``sys``: ``datetime.sys`` and ``calendar.sys`` exist in CPython 3.11; the clock functions
   frozen, "Determinism"), a ``print`` that writes to the captured stdout and does not expose
   the builtins module, and a ``hash`` that refuses objects hashed by identity. The executor's
   own helpers are compiled in namespaces of their own (no path to the executor's globals) and
   are not counted by the line cap.
3. child process (``zygote.py`` / ``child.py`` / ``supervisor.py``): a fresh forked process per program, empty
   environment (the supervisor re-executes itself with none, and the zygote is executed with
   nothing but the policy's ``PYTHONHASHSEED``, so /proc/<pid>/environ holds nothing of the
   host), rlimits with soft = hard, stdin/stdout/stderr on /dev/null (output is captured in
   memory with caps, and made storable: ``result.make_storable``), executed-line cap (a program
   whose tracer stopped is LINE_CAP, never OK), wall clock enforced by the parent with SIGKILL,
   the result returned over a dedicated descriptor (RESULT_FD) with a per-run nonce and checked
   field by field by the supervisor, whose own replies carry an HMAC under a one-time key per
   request; supervisor, zygote and children are not dumpable; a stopped spare is killed.
4. seccomp (``seccomp_filter.py``): default-deny filter, built once in the supervisor and loaded
   in each child after imports and after the program was parsed and compiled (CPython's parser
   tries to open the program "file" to quote a SyntaxError line), before any of its code runs.
   Allowed: CHILD_SYSCALLS only.
5. container (``containers/executor``): gVisor, no network, read-only root, dropped
   capabilities, and a docker seccomp profile from ``seccomp_profile_json()``.
6. the retrying pool (``pool.py``): recycling, replacement of dead supervisors, retry; a program
   that fails as infrastructure on every attempt while a control program answers is the scored
   PERSISTENT_INFRA_ERROR; a reply without its MAC is the program's SANDBOX_VIOLATION.
7. the start-up self-test (``selftest.py``): canaries that every layer above holds.

Decisions worth a reviewer's eye
--------------------------------
* ``time`` is allowed (the paper lists it) but exposed without ``sleep`` (a program that sleeps
  only burns wall clock); seccomp also blocks ``clock_nanosleep``.
* ``datetime.datetime`` answers are accepted as dates (their date part): models often do date
  arithmetic on datetimes. A ``datetime.time`` or ``timedelta`` answer is a wrong return kind.
* ``type``, ``object``, ``super``, ``getattr``-family, ``vars``, ``dir``, ``globals``,
  ``locals``, ``id``, ``open``, ``input``, ``eval``, ``exec``, ``compile``, ``memoryview``,
  ``breakpoint``, ``help``, ``exit``/``quit`` are absent: each is either an introspection
  primitive or an I/O primitive that no calculation needs.
* Time zone and codecs (issue 22): a child runs with TZ = CHILD_TIMEZONE (UTC on both backends)
  and every ``encodings`` codec preloaded, and it cannot import from disk once its program may
  run (no file-system finder: an ImportError). So ``time.mktime``, ``time.strftime('%Z')`` and
  ``str.encode('cp1252')``, documented behaviour of admitted modules, never reach the filter.
* Determinism (issue 33): a program's result is a function of its text and of this policy;
  what cannot be made so is named in "Determinism" below and recorded on the result.
* The forbidden-name rule is scope-aware (static_check._Scopes): a program's own ``type`` counts
  only where CPython resolves the read to it (function-local, or a top-level binding that surely
  ran before), so a binding in a dead branch does not lift the rule.
* An unset ``answer`` is a PROGRAM_ERROR with its own message (the paper counts "no value" as a
  raised error, and the repair turn shows that message).
* Generator *expressions* are rejected too ("generator constructs", as the paper); a list
  comprehension does the same job.
* Every C builtin's ``__self__`` is the builtins module; only layer 1 (the dunder rule) stops that
  path and ``().__class__.__base__.__subclasses__()``. Layer 2 alone does not stop dunder
  introspection; layers 3-5 are what hold when 1-2 are bypassed (tests prove it).

Static rules and their reasons (layer 1; issue 33 narrowed them to what they protect)
-------------------------------------------------------------------------------------
Layer 1 must hold when layer 2 is off (tests run it alone), so each rule closes a path to the
interpreter's internals that a program could take with the full builtins; nothing else is
refused, because every refusal of an honest program moves the measured rates away from the
paper's (whose executor refused only async and generator constructs statically).

* Deny by default on syntax (issue 40): ALLOWED_SYNTAX lists every node type a program may
  contain with every field it may carry and each field's role; a node type or a field missing
  there is refused by name (FORBIDDEN_NODES words the refusals made on purpose). A construct the
  policy has not reasoned about (a class pattern's keywords were read as plain names until the
  hidden set used ``case str(format=f)``; the syntax a newer Python adds) is never admitted by
  default.
* One attribute check (``static_check.attribute_problem``): every way a program names an
  attribute: ``x.a`` (read, written, deleted), a class pattern's keyword ``case C(a=v)``, a
  field of a format template ``"{0.a}"``, a name taken ``from`` a module. Python's other ways
  to read an attribute by a name are closed before they reach it: ``getattr``/``vars``/``dir``
  (FORBIDDEN_NAMES), ``operator.attrgetter`` (the import rule), descriptors through
  ``__dict__``/``__get__``/``__getattribute__`` (the dunder rule), and ``str.format`` of a
  template the check cannot read (STRING_DRIVEN_ATTRIBUTES: ``format`` only on a literal).
* Dunder names and attributes (``__x__``, ``static_check._is_dunder``). Every known escape from
  Python-level restrictions walks dunders: ``().__class__.__base__.__subclasses__()``,
  ``f.__globals__``, ``len.__self__`` (the builtins module), ``e.__traceback__``,
  ``__builtins__``, ``__import__``, ``__build_class__``. The rule covers every identifier a
  program writes (names, attributes, function and argument names, keywords, aliases, match
  captures). Plain single-underscore names (``_now``, ``_helper``, ``import math as _m``) carry
  no capability (no builtin, proxy or reachable object holds anything under such a name that
  leads further than the public names) and are allowed since issue 33; the paper's executor
  allowed them too. ``__name__`` may be read (``if __name__ == "__main__":``, which model
  programs write): it is the string PROGRAM_NAME in the program's own namespace.
* FORBIDDEN_ATTRIBUTES: the non-dunder attributes that lead to frames, code, tracebacks, globals,
  the method resolution order, the object an AttributeError was raised on, or a module handle.
* FORBIDDEN_NAMES: builtins that read attributes by string (``getattr``), reach namespaces
  (``globals``, ``vars``), compile or run text (``eval``), open files or the console (``open``,
  ``input``), or build types (``type``, ``object``, ``super``). Layer 2 does not have them
  either; this rule is what stops them when layer 2 is off. A builtin the policy does not
  classify (ALLOWED_BUILTINS, WRAPPED_BUILTINS, HARMLESS_ABSENT_BUILTINS) counts as forbidden.
  A program's own variable of that name counts where CPython resolves the read to it
  (``_Scopes``): never after an unbinding of the name (``del``, and the end of an ``except ...
  as name`` handler, which CPython compiles to ``del name``: issue 40, with layer 2 off a module-
  level handler named ``getattr`` let the next read fall through to the real builtin).
* ``str.format`` / ``format_map`` on a non-literal template: a template read at run time can
  name ``{0.__class__}``, which no static check sees. A literal template is checked field by
  field like any other attribute read (``"{0.real:.2f}"`` is fine, ``"{0.__class__}"`` is not).
* Async, generator and ``except*`` constructs: as the paper's executor (generators and
  coroutines carry frames: ``gi_frame``/``cr_frame``).
* Class definitions: a class body hooks the executor's own code paths (``__str__`` inside
  ``print``, ``__float__``/``__eq__`` inside the answer check, ``__del__`` at exit) and pulls in
  ``__build_class__`` and metaclasses; defining those hooks needs dunder function names anyway.
  A program that defines a class is refused (REJECTED_STATIC).
* ``global`` / ``nonlocal`` are allowed since issue 33: they only reach the program's own
  namespace (``global __builtins__`` is still a dunder); ``_Scopes`` follows them.
* MAX_AST_DEPTH, MAX_SOURCE_CHARS: bounds on what the checker and compiler are given.

Layer 2 and the C code of the allowed modules: ``time.strptime`` imports ``_strptime`` on every
call, through the ``__import__`` of the running frame's builtins, and then takes the module from
the interpreter's module table, not from what ``__import__`` returned; ``str.encode(...,
'namereplace')`` and the ``unicode_escape`` codec's ``\\N{...}`` do the same with ``unicodedata``
(issue 40). The restricted importer therefore answers the names in C_LEVEL_IMPORTS with an empty
namespace: the C caller gets the real module (the zygote imported it), a program that imports
the name gets nothing. The adversary (tests/adversarial/fuzz.py) counts every program CPython
runs that the executor fails, which is how the next such name would show.

Determinism (issue 33)
----------------------
The paper's premise is a deterministic solver: the same program gives the same result on every
worker, backend and day. A result (``result.DETERMINISTIC_FIELDS``: everything but the timing
and provenance fields) is a function of the program text and of this policy, except where named.

* ``str``/``bytes`` hash secret: fixed, HASH_SEED (PYTHONHASHSEED) for the zygote and every
  child on both backends; the zygote refuses to start unless ``sys.hash_info`` is
  HASH_ALGORITHM (a 64-bit SipHash-1-3: the same hash values on every worker). Set iteration
  order of strings, bytes, dates and tuples of them, and ``hash("...")``, are therefore fixed.
  The supervisor's loop keeps a random secret: it is the process that parses bytes a program
  wrote (result lines), and a known secret is worth nothing to a program there.
* Clock: frozen at CLOCK_INSTANT in every child. The paper's executor read the real clock, so
  a program that used ``date.today()`` answered differently each day; MedCalc-Bench's notes
  carry every date a calculation needs, so a clock read is a bug whose value should at least
  not depend on the day of the run. ``time.time()``, ``time_ns()``, ``datetime.now()``,
  ``utcnow()``, ``today()``, ``date.today()`` and the current-time defaults of ``localtime``,
  ``gmtime``, ``ctime``, ``asctime`` and ``strftime`` read CLOCK_INSTANT (in the fixed time zone
  CHILD_TIMEZONE); the interval clocks (``monotonic``, ``perf_counter``, ``process_time``) read
  0 and never advance (FROZEN_CLOCK lists each). The module proxies hold the frozen functions;
  ``datetime.datetime`` is a subclass whose ``now``/``utcnow``/``today`` read the instant (its
  C type name is ``datetime.datetime``, so reprs and error messages are unchanged); the real
  ``time.time``, which the C code of ``date.today()`` calls, is replaced in each child. The
  frozen class is closed (issue 40): no real C class is reachable from it (its ``min`` and
  ``max`` are its own instances, and everything that makes a datetime from one keeps the
  class), it is immutable like the C type (its metaclass refuses to set or delete attributes,
  with CPython's message), and ``isinstance`` and ``min``/``max`` are CPython's; the answer
  check calls the real classes' methods only (child.check_answer). The instant is part of the
  policy and so of its hash, which every run manifest records.
* Memory addresses: the zygote (and so every child) is executed with
  ``personality(ADDR_NO_RANDOMIZE)`` where the kernel honours it. On Linux it does, and a child's
  layout is then the same on every start. After any history too since issue 46: a lambda's
  address was, but 3,000 functions' addresses were not (the zygote's heap changed between
  forks), so every spare is now forked from a mould whose state never changes (zygote.Mould;
  tests/executor/test_executor_issue46.py runs such programs at many positions of pools of
  1 and 3 workers). gVisor refuses the bit
  (20221219 measured: EINVAL; its sys_personality.go allows only PER_LINUX, PER_BSD,
  SHORT_INODE and WHOLE_SECONDS), and two interpreter builds (the host's, the image's) lay out
  memory differently in any case. So addresses are made unobservable where the executor can:
  ``hash()`` refuses objects hashed by identity (a TypeError: functions, methods, None, NaN,
  ...; VALUE_HASHED_TYPES lists what it hashes), ``id`` is a forbidden name, and every memory
  address in a default repr (`` at 0x...``, ADDRESS_PATTERN) in the stdout, stderr and error a
  result reports is replaced by ADDRESS_MASK, counted in ``addresses_masked``, over each whole
  stream (child.AddressMask: a repr printed in two pieces is masked too, issue 40), and what is
  kept and whether the output floods are decided on the masked text. What remains:
  a value a program computes from an address inside itself (the digits of ``repr(f)``, the
  iteration order of a set of functions). Each result records ``address_layout`` ("fixed" or
  "randomised"): with "fixed" such a value is the same on every run of that backend and build.
  ASLR weighed: a program can read its own layout anyway (``repr`` of any function, and in
  3.11 ``hash(None)`` is None's address), so randomising the zygote and children hides nothing
  from the program. ASLR protects a process from an attacker who cannot read its memory; the
  loop, which parses the bytes programs write, is not executed with the personality and keeps
  it. The zygote reads only the loop's commands.
* Work a program drives inside the executor's own code is under the line cap: every Python
  line that runs while the program runs counts, the executor's helpers included (``print``,
  the output capture, ``hash()``'s walk of a tuple, the frozen clock), and the answer check runs
  no program code (issue 40: both ran uncounted and ended as CPU_LIMIT or TIMEOUT_WALL by load).
* Not made deterministic, recorded on the result: whether a program near a limit (CPU_LIMIT,
  TIMEOUT_WALL, MEMORY_LIMIT, LINE_CAP where one line does much C work) finishes first depends
  on machine speed and load (``cpu_ms``, ``wall_ms``); a crash of the C stack (CRASH, or CPU_LIMIT where gVisor is slower); and
  differences between two CPython builds (the host venv and the image's Debian python3 are
  both 3.11 on glibc 2.36, recorded as ``host_python``/``python`` in the manifest).

Residual risks (documented, tested in tests/executor/test_adversarial.py)
----------------------------------------------------------------
* With layers 1-2 bypassed, a program has full Python inside its child: it can read the run's
  nonce from the harness frame and write its own verdict (it gains nothing beyond choosing its
  answer, and escapes nothing), and it can print in-memory facts such as stdlib module paths.
* The parser and compiler see the source before seccomp is loaded (rlimits already apply).
* Runtime-built nesting (hash() of a 400k-deep tuple, a 400k-deep map() chain) overflows the C
  stack: a contained CRASH (see MAX_AST_DEPTH for why no static bound reaches it).
"""

from __future__ import annotations

import hashlib
import json

# names for the type checker only: the supervisor and the zygote import this module, and typing stays
# out of them (child.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

POLICY_VERSION = "2"

# --- the layers, numbered as in SECURITY.md ------------------------------------------------------
# Every module, test and document refers to a layer by this number. SWITCHES are the test-only
# names (EXECUTOR_UNSAFE_DISABLE_LAYERS / --unsafe-disable-layers) and the layer each belongs to.
LAYERS: dict[int, str] = {
    1: "static AST policy (static_check.py)",
    2: "builtins allow-list and module proxies (child.py)",
    3: "fresh child process per program: rlimits, line cap, wall clock, result channel (zygote.py, child.py, supervisor.py)",
    4: "child seccomp filter (seccomp_filter.py)",
    5: "gVisor container (containers/executor/, run-flags.txt, the profile of seccomp_profile_json)",
    6: "retrying pool: recycling, replacement, retry (pool.py)",
    7: "start-up self-test (selftest.py)",
}
LAYER_SWITCHES: dict[str, int] = {"static": 1, "builtins": 2, "rlimits": 3, "linecap": 3, "seccomp": 4}

# --- layer 1 + 2: what a program may import -------------------------------------------------
ALLOWED_MODULES: tuple[str, ...] = ("math", "datetime", "time", "calendar")

# Names each module proxy exposes. None = the module's __all__ (or, without one, its names not
# starting with "_") minus MODULE_HIDDEN_NAMES; a tuple = exactly those names. A value that is
# itself a module is never exposed (calendar.datetime would lead to datetime.sys).
MODULE_EXPOSED_NAMES: dict[str, tuple[str, ...] | None] = {
    "math": None,
    "datetime": ("date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR"),
    "time": (
        "time",
        "time_ns",
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "process_time_ns",
        "gmtime",
        "localtime",
        "mktime",
        "strftime",
        "strptime",
        "asctime",
        "ctime",
        "struct_time",
        "timezone",
        "altzone",
        "daylight",
        "tzname",
    ),
    "calendar": None,
}
# Never exposed whatever MODULE_EXPOSED_NAMES says (module handles, locale-dependent code that
# opens files, interactive helpers).
MODULE_HIDDEN_NAMES: tuple[str, ...] = (
    "sys",
    "os",
    "datetime_CAPI",
    "LocaleTextCalendar",
    "LocaleHTMLCalendar",
    "main",
    "different_locale",
)

# --- layer 2: the builtins a program sees ---------------------------------------------------
ALLOWED_BUILTINS: tuple[str, ...] = (
    # values and containers
    "bool",
    "int",
    "float",
    "complex",
    "str",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "range",
    "slice",
    "bytes",
    "bytearray",
    # functions
    "abs",
    "all",
    "any",
    "ascii",
    "bin",
    "callable",
    "chr",
    "divmod",
    "enumerate",
    "filter",
    "format",
    "hash",
    "hex",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "map",
    "max",
    "min",
    "next",
    "oct",
    "ord",
    "pow",
    "repr",
    "reversed",
    "round",
    "sorted",
    "sum",
    "zip",
    # exceptions a calculation may raise or catch
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "Exception",
    "IndexError",
    "KeyError",
    "LookupError",
    "NameError",
    "NotImplementedError",
    "OverflowError",
    "RecursionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "ValueError",
    "ZeroDivisionError",
    # constants
    "True",
    "False",
    "None",
    "NotImplemented",
    "Ellipsis",
)
# "print" is provided by the executor (a wrapper writing to the captured stdout) and
# "__import__" by the restricted importer; both are added on top of ALLOWED_BUILTINS. "hash" is
# allowed but is a wrapper that refuses objects hashed by identity (VALUE_HASHED_TYPES).
WRAPPED_BUILTINS: tuple[str, ...] = ("print", "__import__", "hash")

# --- layer 1: the syntax a program may use (deny by default; reasons: module docstring) ------
# Every AST node type a program may contain, each with every field it has and what the field
# holds. A node type missing here is refused by name (FORBIDDEN_NODES gives the message for the
# ones refused on purpose; any other, such as syntax a newer Python adds, is refused as "not on
# the allow-list"), and so is a node carrying a field this table does not list. Roles:
#   node       child nodes: checked in turn
#   constant   literal data (numbers, strings, a conversion code, a type comment)
#   false      must be false (comprehension.is_async: async comprehensions)
#   name       an identifier read, bound or deleted (Name.id): the dunder rule; reads of
#              forbidden builtin names are resolved by scope (static_check._Scopes)
#   binding    an identifier the program binds (def, parameter, except/match/import alias)
#   declared   names of global/nonlocal
#   keyword    a keyword argument's name
#   attribute  an attribute read, written or deleted BY NAME: THE attribute check
#              (static_check.attribute_problem), also for class-pattern keywords
#              (`case C(attr=x)` reads C's attribute), format fields and from-imports
#   import     a module name or a name imported from one: checked by the import statement
_NODE = "node"
ALLOWED_SYNTAX: dict[str, dict[str, str]] = {
    # statements
    "Module": {"body": _NODE, "type_ignores": _NODE},
    "FunctionDef": {
        "name": "binding",
        "args": _NODE,
        "body": _NODE,
        "decorator_list": _NODE,
        "returns": _NODE,
        "type_comment": "constant",
    },
    "Return": {"value": _NODE},
    "Delete": {"targets": _NODE},
    "Assign": {"targets": _NODE, "value": _NODE, "type_comment": "constant"},
    "AugAssign": {"target": _NODE, "op": _NODE, "value": _NODE},
    "AnnAssign": {"target": _NODE, "annotation": _NODE, "value": _NODE, "simple": "constant"},
    "For": {"target": _NODE, "iter": _NODE, "body": _NODE, "orelse": _NODE, "type_comment": "constant"},
    "While": {"test": _NODE, "body": _NODE, "orelse": _NODE},
    "If": {"test": _NODE, "body": _NODE, "orelse": _NODE},
    "With": {"items": _NODE, "body": _NODE, "type_comment": "constant"},
    "Match": {"subject": _NODE, "cases": _NODE},
    "Raise": {"exc": _NODE, "cause": _NODE},
    "Try": {"body": _NODE, "handlers": _NODE, "orelse": _NODE, "finalbody": _NODE},
    "Assert": {"test": _NODE, "msg": _NODE},
    "Import": {"names": _NODE},
    "ImportFrom": {"module": "import", "names": _NODE, "level": "constant"},
    "Global": {"names": "declared"},
    "Nonlocal": {"names": "declared"},
    "Expr": {"value": _NODE},
    "Pass": {},
    "Break": {},
    "Continue": {},
    # expressions
    "BoolOp": {"op": _NODE, "values": _NODE},
    "NamedExpr": {"target": _NODE, "value": _NODE},
    "BinOp": {"left": _NODE, "op": _NODE, "right": _NODE},
    "UnaryOp": {"op": _NODE, "operand": _NODE},
    "Lambda": {"args": _NODE, "body": _NODE},
    "IfExp": {"test": _NODE, "body": _NODE, "orelse": _NODE},
    "Dict": {"keys": _NODE, "values": _NODE},
    "Set": {"elts": _NODE},
    "ListComp": {"elt": _NODE, "generators": _NODE},
    "SetComp": {"elt": _NODE, "generators": _NODE},
    "DictComp": {"key": _NODE, "value": _NODE, "generators": _NODE},
    "Compare": {"left": _NODE, "ops": _NODE, "comparators": _NODE},
    "Call": {"func": _NODE, "args": _NODE, "keywords": _NODE},
    "FormattedValue": {"value": _NODE, "conversion": "constant", "format_spec": _NODE},
    "JoinedStr": {"values": _NODE},
    "Constant": {"value": "constant", "kind": "constant"},
    "Attribute": {"value": _NODE, "attr": "attribute", "ctx": _NODE},
    "Subscript": {"value": _NODE, "slice": _NODE, "ctx": _NODE},
    "Starred": {"value": _NODE, "ctx": _NODE},
    "Name": {"id": "name", "ctx": _NODE},
    "List": {"elts": _NODE, "ctx": _NODE},
    "Tuple": {"elts": _NODE, "ctx": _NODE},
    "Slice": {"lower": _NODE, "upper": _NODE, "step": _NODE},
    # parts of the above
    "comprehension": {"target": _NODE, "iter": _NODE, "ifs": _NODE, "is_async": "false"},
    "ExceptHandler": {"type": _NODE, "name": "binding", "body": _NODE},
    "arguments": {
        "posonlyargs": _NODE,
        "args": _NODE,
        "vararg": _NODE,
        "kwonlyargs": _NODE,
        "kw_defaults": _NODE,
        "kwarg": _NODE,
        "defaults": _NODE,
    },
    "arg": {"arg": "binding", "annotation": _NODE, "type_comment": "constant"},
    "keyword": {"arg": "keyword", "value": _NODE},
    "alias": {"name": "import", "asname": "binding"},
    "withitem": {"context_expr": _NODE, "optional_vars": _NODE},
    "match_case": {"pattern": _NODE, "guard": _NODE, "body": _NODE},
    "MatchValue": {"value": _NODE},
    "MatchSingleton": {"value": "constant"},
    "MatchSequence": {"patterns": _NODE},
    "MatchMapping": {"keys": _NODE, "patterns": _NODE, "rest": "binding"},
    "MatchClass": {"cls": _NODE, "patterns": _NODE, "kwd_attrs": "attribute", "kwd_patterns": _NODE},
    "MatchStar": {"name": "binding"},
    "MatchAs": {"pattern": _NODE, "name": "binding"},
    "MatchOr": {"patterns": _NODE},
    # contexts and operators: no fields
    **{
        name: {}
        for name in (
            "Load",
            "Store",
            "Del",
            "And",
            "Or",
            "Add",
            "Sub",
            "Mult",
            "MatMult",
            "Div",
            "Mod",
            "Pow",
            "LShift",
            "RShift",
            "BitOr",
            "BitXor",
            "BitAnd",
            "FloorDiv",
            "Invert",
            "Not",
            "UAdd",
            "USub",
            "Eq",
            "NotEq",
            "Lt",
            "LtE",
            "Gt",
            "GtE",
            "Is",
            "IsNot",
            "In",
            "NotIn",
        )
    },
}
# Node types refused on purpose, with the message a program gets: async and generator constructs
# (as the paper's executor), except* (exception groups), class definitions (hooks into the
# executor's own code paths). global/nonlocal are allowed since issue 33 (static_check._Scopes
# follows them).
FORBIDDEN_NODES: dict[str, str] = {
    "AsyncFunctionDef": "async functions are not allowed",
    "AsyncFor": "async for is not allowed",
    "AsyncWith": "async with is not allowed",
    "Await": "await is not allowed",
    "Yield": "generators (yield) are not allowed",
    "YieldFrom": "generators (yield from) are not allowed",
    "GeneratorExp": "generator expressions are not allowed; use a list comprehension",
    "ClassDef": "class definitions are not allowed",
    "TryStar": "except* is not allowed",
}
# Dunder names (``__x__``) are rejected everywhere a program writes an identifier; these are the
# dunders it may read all the same (a name in the program's own namespace, PROGRAM_NAME).
READABLE_DUNDER_NAMES: tuple[str, ...] = ("__name__",)
# Attribute names rejected although they are not dunders: frame, generator, coroutine,
# traceback and code introspection, the method resolution order, AttributeError.obj, the
# mapping-driven formatting entry point and module handles.
FORBIDDEN_ATTRIBUTES: tuple[str, ...] = (
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "gi_running",
    "gi_suspended",
    "cr_frame",
    "cr_code",
    "cr_await",
    "cr_running",
    "cr_origin",
    "cr_suspended",
    "ag_frame",
    "ag_code",
    "ag_await",
    "ag_running",
    "f_back",
    "f_builtins",
    "f_code",
    "f_globals",
    "f_locals",
    "f_trace",
    "f_lasti",
    "f_lineno",
    "tb_frame",
    "tb_next",
    "tb_lasti",
    "tb_lineno",
    "co_code",
    "co_consts",
    "co_names",
    "co_varnames",
    "co_filename",
    "mro",
    "obj",
    "format_map",
    "with_traceback",
    # module handles: datetime.sys / calendar.sys lead to sys.modules (layer 2 hides them too)
    "sys",
    "os",
    "modules",
    "builtins",
)
# Attributes that read *other* attributes by a string the program supplies, and where they may be
# read: str.format's fields (``"{0.__class__}"``) name attributes, so ``format`` may only be read
# from a string literal, whose fields are checked one by one like code. Read any other way (from a
# variable, a class pattern ``case str(format=f)``, a format field) it is refused, because the
# template it would format is not known to the check. (getattr, vars, operator.attrgetter, dir,
# descriptors through ``__dict__``/``__get__`` are closed by FORBIDDEN_NAMES, the import rule and
# the dunder rule.)
STRING_DRIVEN_ATTRIBUTES: dict[str, str] = {
    "format": "str.format reads the attributes its template names; only a string literal's, checked field by field",
}
# Attribute names a program may use (issue 46, item 1): layer 1 is deny by default on attributes
# as it is on syntax. Every attribute a program names (``x.attr`` read, written or deleted, a
# class pattern's keyword, a format field, a name taken by a from-import) must be on this list
# (static_check.attribute_problem), besides passing the dunder rule and FORBIDDEN_ATTRIBUTES. The
# list is the public surface of what a program can hold: the names each allowed module's proxy
# exposes and the public attributes and methods of the allowed builtin types, datetime's
# classes, struct_time, calendar's classes and the exceptions a program catches (every name
# of the honest corpus is here; tests/executor/test_executor_issue46.py checks that and that each
# name is on one of those). What it leaves out is what reached capabilities when layer 2 was
# off: the real modules' private and imported names (``calendar._locale`` -> ``locale`` ->
# ``encodings.codecs.open``, ``datetime._time``, ``calendar.repeat``, ...), which the proxies
# hid only while layer 2 was on. A name on it is safe on *every* object a program can reach,
# not only the one it was listed for: tests/executor/test_executor_reachability.py walks every
# path from what a program can name through these names, with layer 2 off, and fails if one
# leads to a module other than the allowed ones, a forbidden builtin, a frame, a code object or
# the executor's code. A name a newer Python adds is refused until it is listed here.
ALLOWED_ATTRIBUTES: tuple[str, ...] = (
    # module math (its proxy's names)
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "comb",
    "copysign",
    "cos",
    "cosh",
    "degrees",
    "dist",
    "e",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "factorial",
    "floor",
    "fmod",
    "frexp",
    "fsum",
    "gamma",
    "gcd",
    "hypot",
    "inf",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isqrt",
    "lcm",
    "ldexp",
    "lgamma",
    "log",
    "log10",
    "log1p",
    "log2",
    "modf",
    "nan",
    "nextafter",
    "perm",
    "pi",
    "pow",
    "prod",
    "radians",
    "remainder",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tau",
    "trunc",
    "ulp",
    # module datetime (its proxy's names)
    "MAXYEAR",
    "MINYEAR",
    "date",
    "datetime",
    "time",
    "timedelta",
    "timezone",
    "tzinfo",
    # module time (its proxy's names)
    "altzone",
    "asctime",
    "ctime",
    "daylight",
    "gmtime",
    "localtime",
    "mktime",
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "process_time",
    "process_time_ns",
    "strftime",
    "strptime",
    "struct_time",
    "time_ns",
    "tzname",
    # module calendar (its proxy's names)
    "Calendar",
    "FRIDAY",
    "HTMLCalendar",
    "IllegalMonthError",
    "IllegalWeekdayError",
    "MONDAY",
    "SATURDAY",
    "SUNDAY",
    "THURSDAY",
    "TUESDAY",
    "TextCalendar",
    "WEDNESDAY",
    "calendar",
    "day_abbr",
    "day_name",
    "firstweekday",
    "isleap",
    "leapdays",
    "month",
    "month_abbr",
    "month_name",
    "monthcalendar",
    "monthrange",
    "prcal",
    "prmonth",
    "setfirstweekday",
    "timegm",
    "weekday",
    "weekheader",
    # int, float, complex, bool
    "as_integer_ratio",
    "bit_count",
    "bit_length",
    "conjugate",
    "denominator",
    "from_bytes",
    "fromhex",
    "hex",
    "imag",
    "is_integer",
    "numerator",
    "real",
    "to_bytes",
    # str, bytes, bytearray
    "append",
    "capitalize",
    "casefold",
    "center",
    "clear",
    "copy",
    "count",
    "decode",
    "encode",
    "endswith",
    "expandtabs",
    "extend",
    "find",
    "format",
    "index",
    "insert",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "pop",
    "remove",
    "removeprefix",
    "removesuffix",
    "replace",
    "reverse",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "translate",
    "upper",
    "zfill",
    # list, tuple, dict, set, frozenset, range, slice
    "add",
    "difference",
    "difference_update",
    "discard",
    "fromkeys",
    "get",
    "indices",
    "intersection",
    "intersection_update",
    "isdisjoint",
    "issubset",
    "issuperset",
    "items",
    "keys",
    "popitem",
    "setdefault",
    "sort",
    "start",
    "step",
    "stop",
    "symmetric_difference",
    "symmetric_difference_update",
    "union",
    "update",
    "values",
    # datetime's classes
    "astimezone",
    "combine",
    "day",
    "days",
    "dst",
    "fold",
    "fromisocalendar",
    "fromisoformat",
    "fromordinal",
    "fromtimestamp",
    "fromutc",
    "hour",
    "isocalendar",
    "isoformat",
    "isoweekday",
    "max",
    "microsecond",
    "microseconds",
    "min",
    "minute",
    "now",
    "resolution",
    "second",
    "seconds",
    "timestamp",
    "timetuple",
    "timetz",
    "today",
    "toordinal",
    "total_seconds",
    "utc",
    "utcfromtimestamp",
    "utcnow",
    "utcoffset",
    "utctimetuple",
    "year",
    # time.struct_time
    "n_fields",
    "n_sequence_fields",
    "n_unnamed_fields",
    "tm_gmtoff",
    "tm_hour",
    "tm_isdst",
    "tm_mday",
    "tm_min",
    "tm_mon",
    "tm_sec",
    "tm_wday",
    "tm_yday",
    "tm_year",
    "tm_zone",
    # calendar's classes and its day/month name sequences
    "cssclass_month",
    "cssclass_month_head",
    "cssclass_noday",
    "cssclass_year",
    "cssclass_year_head",
    "cssclasses",
    "cssclasses_weekday_head",
    "formatday",
    "formatmonth",
    "formatmonthname",
    "formatweek",
    "formatweekday",
    "formatweekheader",
    "formatyear",
    "formatyearpage",
    "getfirstweekday",
    "itermonthdates",
    "itermonthdays",
    "itermonthdays2",
    "itermonthdays3",
    "itermonthdays4",
    "iterweekdays",
    "monthdatescalendar",
    "monthdays2calendar",
    "monthdayscalendar",
    "prweek",
    "pryear",
    "yeardatescalendar",
    "yeardays2calendar",
    "yeardayscalendar",
    # exceptions a program may catch
    "add_note",
    "args",
    "encoding",
    "end",
    "msg",
    "name",
    "object",
    "path",
    "reason",
    "value",
)
# Builtin names a program may not read unless it binds the name itself (a variable called
# `type` or `input` is the program's own value; the builtin is absent from layer 2 anyway).
FORBIDDEN_NAMES: tuple[str, ...] = (
    "eval",
    "exec",
    "compile",
    "open",
    "input",
    "breakpoint",
    "help",
    "globals",
    "locals",
    "vars",
    "dir",
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "type",
    "object",
    "super",
    "memoryview",
    "exit",
    "quit",
    "id",
    # the site module's (absent under `python -S`, as in every child): license() reads a file
    "copyright",
    "credits",
    "license",
)
# Builtins absent from layer 2 that carry no capability (exception classes, the descriptor
# factories, which need a class to do anything, and the async iteration helpers): with layer 2
# off a program may read them. Every other name of the interpreter's builtins module that is not
# on ALLOWED_BUILTINS or WRAPPED_BUILTINS counts as forbidden for layer 1, so a builtin a newer
# Python adds is refused until it is classified here (static_check.forbidden_builtin_names;
# tests/executor/test_executor_static.py checks that every builtin of this interpreter is).
HARMLESS_ABSENT_BUILTINS: tuple[str, ...] = (
    "BaseException",
    "BaseExceptionGroup",
    "ExceptionGroup",
    "GeneratorExit",
    "KeyboardInterrupt",
    "SystemExit",
    "StopAsyncIteration",
    "MemoryError",
    "BufferError",
    "EOFError",
    "FloatingPointError",
    "ImportError",
    "ModuleNotFoundError",
    "IndentationError",
    "TabError",
    "SyntaxError",
    "SystemError",
    "ReferenceError",
    "UnboundLocalError",
    "UnicodeError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeTranslateError",
    "OSError",
    "EnvironmentError",
    "IOError",
    "BlockingIOError",
    "ChildProcessError",
    "ConnectionError",
    "BrokenPipeError",
    "ConnectionAbortedError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "FileExistsError",
    "FileNotFoundError",
    "InterruptedError",
    "IsADirectoryError",
    "NotADirectoryError",
    "PermissionError",
    "ProcessLookupError",
    "TimeoutError",
    "Warning",
    "UserWarning",
    "DeprecationWarning",
    "PendingDeprecationWarning",
    "SyntaxWarning",
    "RuntimeWarning",
    "FutureWarning",
    "ImportWarning",
    "UnicodeWarning",
    "BytesWarning",
    "ResourceWarning",
    "EncodingWarning",
    "classmethod",
    "staticmethod",
    "property",
    "aiter",
    "anext",
)
MAX_SOURCE_CHARS = 100_000
# Deepest syntax tree a program may have (static_check counts nodes from the Module down). The
# parser and compiler have limits of their own (200 nested brackets, C-stack guards), which end
# as REJECTED_STATIC too; this bound makes the limit the policy's, the same on every CPython
# build. Model programs measured in the kit's tests and stored results stay under 30.
# Not a defence against the two C-stack crashers the reviewer found (hash() of a 400k-deep
# nested tuple, next() on a 400k-deep map() chain): they build their depth at run time in a
# loop of a few lines, which no bound on the *source* can see, and the line cap (1M lines)
# admits 400k iterations. CPython 3.11 has no recursion guard in tuple hashing or map
# iteration, so the child dies of SIGSEGV: a contained CRASH (a scored raised_error), the
# supervisor and the next program unaffected (tests/executor/test_executor_issue22.py).
MAX_AST_DEPTH = 100

# --- layer 3: process limits -----------------------------------------------------------------
LIMITS: dict[str, int | float] = {
    "address_space_bytes": 256 * 1024 * 1024,  # RLIMIT_AS, soft = hard
    "cpu_seconds": 4,  # RLIMIT_CPU, soft = hard (SIGXCPU)
    "open_files": 16,  # RLIMIT_NOFILE
    "processes": 1,  # RLIMIT_NPROC (no new processes or threads)
    "file_size_bytes": 0,  # RLIMIT_FSIZE
    "core_bytes": 0,  # RLIMIT_CORE
    "wall_seconds": 5.0,  # parent SIGKILLs the child after this
    "line_cap": 1_000_000,  # executed Python lines (sys.settrace)
    "recursion_limit": 1000,
    "stdout_chars": 16_384,  # kept; more sets stdout_truncated
    "stderr_chars": 16_384,  # kept; more sets stderr_truncated
    "output_flood_chars": 1_048_576,  # total written beyond this -> OUTPUT_LIMIT
    "error_chars": 500,  # length of the error message shown to a model
    "result_bytes": 262_144,  # result channel cap read by the parent
}

# --- layer 3: the result path under memory exhaustion (issue 46, item 3) ----------------------
# A program that exhausts its address space must still get its result line: MEMORY_LIMIT with the
# output so far, or OK where the answer was computed; never CRASH (exit 70, no line). Each child
# maps RESULT_RESERVE_BYTES of address space (never touched, so no memory is used) before its
# program runs and unmaps it at the start of the result path (child._ChildRun.release_reserve):
# building, masking and writing the line then has that much room whatever the program left.
# The result line is at most LIMITS["result_bytes"]; its JSON encoding and the error's masking
# need a few times that, far below the reserve. The reserve is counted inside the child's
# address-space limit, so it is part of what the executor's runtime takes, not the program's.
RESULT_RESERVE_BYTES = 16 * 1024 * 1024
# An exception message longer than this is cut to it before the error text is built from it (the
# error a result reports is at most LIMITS["error_chars"] anyway): a message of hundreds of MB
# must not need a second copy of itself. Addresses are masked and counted in the cut text.
ERROR_SCAN_CHARS = 1 << 20
# print() and writes to the captured streams are fed to the output capture in pieces of at most
# this many characters, so a huge print needs no copy of its text: the flood limit ends it
# (OUTPUT_LIMIT) however large the text, instead of a MemoryError that depends on what is left.
OUTPUT_PIECE_CHARS = 1 << 16

# --- the same limits on both backends (issue 46, item 4) ---------------------------------------
# LIMITS["address_space_bytes"] is what the *program* may map: each spare sets RLIMIT_AS to its
# own mapping at the end of its warm-up (VmSize from /proc/self/statm, the interpreter, the
# runtime and RESULT_RESERVE_BYTES included) plus that many bytes (child._limit_address_space).
# Before, RLIMIT_AS counted the runtime too, which the container's interpreter and gVisor map
# differently: the largest block a program could allocate differed by about 6 MiB and a 225 MiB
# table was OK on one backend and MEMORY_LIMIT on the other.
ADDRESS_SPACE_ABOVE_RUNTIME = True
# One codec set on both backends: the image strips the CJK codec extension modules
# (containers/executor/strip.txt: lib-dynload/_codecs_*.so), so the host's children do not load
# the codec modules built on them either: ``str.encode('gbk')`` is LookupError on both.
CODEC_MODULES_LEFT_OUT: tuple[str, ...] = (
    "big5",
    "big5hkscs",
    "cp932",
    "cp949",
    "cp950",
    "euc_jis_2004",
    "euc_jisx0213",
    "euc_jp",
    "euc_kr",
    "gb18030",
    "gb2312",
    "gbk",
    "hz",
    "iso2022_jp",
    "iso2022_jp_1",
    "iso2022_jp_2",
    "iso2022_jp_2004",
    "iso2022_jp_3",
    "iso2022_jp_ext",
    "iso2022_kr",
    "johab",
    "shift_jis",
    "shift_jis_2004",
    "shift_jisx0213",
)

# --- answer kinds (child.check_answer) -------------------------------------------------------
# A (weeks, days) answer is a gestational-age reading only with 0 <= days <= 6 and
# 0 <= weeks <= the first value (issue 33): (39, 10) or (-3, 2) is the wrong return kind, like a
# bool or a string. Days 0-6 because the benchmark's gold readings are (weeks, days) with days
# 0-6 (the paper's scorer reduces "4 weeks 9 days" only when it reads a reply's *text*; a typed
# value that needs reducing is not a reading) and the scorer refuses negative parts
# (harness/scoring/verdict.py typed_value). No clinical upper bound on weeks: neither the paper
# nor the scorer sets one (a 60-week answer is scored wrong, not mis-typed); 10**9 is the range
# the result channel carries.
WEEKS_DAYS_RANGE: tuple[int, int] = (10**9, 6)

# --- layer 3: what a child prepares before its filter is loaded ----------------------------
# The C library's time zone. glibc's tzset() (called by time.mktime, time.strftime('%Z'), ...)
# re-reads /etc/localtime on *every* call while TZ is unset, and the child filter kills that
# stat/openat. With TZ set to the value already loaded, tzset() returns at once. A fixed UTC
# (not the host's zone) also makes both backends compute the same local times.
CHILD_TIMEZONE = "UTC0"

# --- determinism (issue 33; the reasoning is in the module docstring, "Determinism") ---------
# PYTHONHASHSEED of the zygote and every child: 0 = the str/bytes hash secret is all zeros.
HASH_SEED = 0
# sys.hash_info.algorithm a zygote must have (64-bit): the same hash values on every worker.
HASH_ALGORITHM = "siphash13"
# What every clock read in a child returns (UTC, ISO 8601), and the clock functions that read it.
CLOCK_INSTANT = "2025-01-01T00:00:00+00:00"
FROZEN_CLOCK: dict[str, tuple[str, ...]] = {
    # time proxy: these read CLOCK_INSTANT ...
    "time.instant": ("time", "time_ns"),
    # ... these read 0 and never advance ...
    "time.interval": (
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "process_time_ns",
    ),
    # ... and these default to CLOCK_INSTANT when called without a time
    "time.default": ("gmtime", "localtime", "ctime", "asctime", "strftime"),
    # datetime proxy: classmethods of the datetime.datetime subclass (and date.today, which
    # the C code answers through the real time.time, replaced in each child)
    "datetime.datetime": ("now", "utcnow", "today"),
}
# personality(ADDR_NO_RANDOMIZE) for the zygote (and so every child) where the kernel honours it.
FIXED_ADDRESS_LAYOUT = True
# A memory address in a default repr ("<function f at 0x7f...>"), and what replaces it in the
# stdout, stderr and error a result reports.
# Masked over each whole captured stream, not per write (issue 40: a repr printed in two pieces
# came through unmasked): child.AddressMask carries a partial address from one write to the next.
ADDRESS_PREFIX = " at 0x"
ADDRESS_DIGITS = "0123456789abcdef"
ADDRESS_PATTERN = ADDRESS_PREFIX + "[" + ADDRESS_DIGITS + "]+"
ADDRESS_MASK = " at 0x?"
# The types hash() accepts (their hash is computed from their value; tuples and frozensets of
# them too). Everything else is hashed by identity (its address) and hash() refuses it, as it
# refuses NaN (hashed by identity since Python 3.10).
VALUE_HASHED_TYPES: tuple[str, ...] = (
    "int",
    "float",
    "complex",
    "bool",
    "str",
    "bytes",
    "range",
    "datetime.date",
    "datetime.time",
    "datetime.timedelta",
    "datetime.timezone",
)
# Modules the C code of an allowed module imports at run time through the program's
# __import__ (see "Static rules and their reasons"): answered with an empty namespace.
C_LEVEL_IMPORTS: dict[str, str] = {
    "_strptime": "time.strptime and datetime.strptime (Modules/timemodule.c time_strptime, "
    "Modules/_datetimemodule.c datetime_strptime) import it on every call",
    "unicodedata": "the Unicode name database: str.encode(..., 'namereplace') (Python/codecs.c) and the "
    "unicode_escape codec's \\N{...} (Objects/unicodeobject.c) import it through "
    "PyCapsule_Import('unicodedata._ucnhash_CAPI')",
}
# __name__ in the program's namespace: a program runs as a script does.
PROGRAM_NAME = "__main__"

# --- layer 3: the out-of-band result descriptor ---------------------------------------------
RESULT_FD = 3

# --- layer 4: seccomp ----------------------------------------------------------------------
# The per-child allow-list, everything else kills the process (or the thread inside gVisor,
# where KILL_PROCESS is refused with EINVAL; the supervisor probes which one works and kills).
# Measured minimal set (Linux 6.x, venv CPython 3.11.7 and Debian bookworm python3 3.11.2) over
# the normal-program tests, MemoryError, RecursionError, warnings, strptime, 200k-entry dicts,
# 50 MB strings: nothing else was needed. rt_sigreturn, madvise, getrandom were *not* needed
# (the child resets SIGINT/SIGTERM to their default action, so no Python signal handler runs).
CHILD_SYSCALLS: dict[str, str] = {
    "write": "only to RESULT_FD (argument rule in seccomp_filter.py)",
    "exit_group": "exit after the result is written",
    "brk": "heap growth",
    "mmap": "anonymous memory, only without PROT_EXEC (argument rule)",
    "munmap": "freeing memory",
    "mremap": "growing large blocks",
    "clock_gettime": "time.time(), datetime.now() when the vDSO is not used (e.g. gVisor)",
}
# The container-wide (docker) profile must let the supervisor start python3, import modules,
# fork children, wait for them and speak over pipes. CHILD_SYSCALLS are included. Checked with
# `strace -f` over a supervisor start (imports, probe, self-test) and a batch of programs.
# (ctypes.util.find_library, used by pyseccomp at import, runs ldconfig: hence vfork/execve.)
# select/pselect6 are left out: the supervisor waits with poll(), and this runsc release names
# pselect6 "pselect", so a profile listing it cannot be honoured there (tests/executor/test_executor_container_config.py).
SUPERVISOR_EXTRA_SYSCALLS: tuple[str, ...] = (
    "read",
    "readv",
    "writev",
    "pread64",
    "openat",
    "open",
    "close",
    "close_range",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "lseek",
    "ioctl",
    "fcntl",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "poll",
    "ppoll",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "getdents64",
    "readlink",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    "getcwd",
    "mprotect",
    "execve",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "prlimit64",
    "getrlimit",
    "setrlimit",
    "rt_sigaction",
    "rt_sigprocmask",
    "sigaltstack",
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getpgrp",
    "setpgid",
    "setsid",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "wait4",
    "waitid",
    "kill",
    "tgkill",
    "futex",
    "nanosleep",
    "clock_nanosleep",
    "clock_getres",
    "gettimeofday",
    "time",
    "sysinfo",
    "uname",
    "prctl",
    "seccomp",
    "sched_getaffinity",
    "sched_yield",
    "getrusage",
    "times",
    "pidfd_open",
    "umask",
    "restart_syscall",
    "exit",
    "exit_group",
    "socketpair",
    "getrandom",
    # the loop <-> zygote socket: messages with the spare's pipe descriptors (SCM_RIGHTS)
    "sendmsg",
    "recvmsg",
    "sendto",
    "recvfrom",
    # not seen under strace but part of normal process life (signal delivery, malloc trimming)
    "rt_sigreturn",
    "madvise",
)


def policy_dict(limits: dict[str, int | float] | None = None) -> dict[str, Any]:
    """The whole policy as plain data (effective limits when overrides are given)."""
    effective = dict(LIMITS)
    for name, value in (limits or {}).items():
        if name not in LIMITS:
            raise ValueError(f"unknown executor limit {name!r}; known: {', '.join(LIMITS)}")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"executor limit {name!r} must be a non-negative number, got {value!r}")
        effective[name] = value
    return {
        "version": POLICY_VERSION,
        "allowed_modules": list(ALLOWED_MODULES),
        "module_exposed_names": {k: (list(v) if v is not None else None) for k, v in MODULE_EXPOSED_NAMES.items()},
        "module_hidden_names": list(MODULE_HIDDEN_NAMES),
        "allowed_builtins": list(ALLOWED_BUILTINS),
        "wrapped_builtins": list(WRAPPED_BUILTINS),
        "allowed_syntax": {k: dict(v) for k, v in ALLOWED_SYNTAX.items()},
        "forbidden_nodes": dict(FORBIDDEN_NODES),
        "forbidden_attributes": list(FORBIDDEN_ATTRIBUTES),
        "string_driven_attributes": dict(STRING_DRIVEN_ATTRIBUTES),
        "allowed_attributes": list(ALLOWED_ATTRIBUTES),
        "forbidden_names": list(FORBIDDEN_NAMES),
        "harmless_absent_builtins": list(HARMLESS_ABSENT_BUILTINS),
        "readable_dunder_names": list(READABLE_DUNDER_NAMES),
        "max_source_chars": MAX_SOURCE_CHARS,
        "max_ast_depth": MAX_AST_DEPTH,
        "limits": effective,
        "result_fd": RESULT_FD,
        "child_timezone": CHILD_TIMEZONE,
        "hash_seed": HASH_SEED,
        "hash_algorithm": HASH_ALGORITHM,
        "clock_instant": CLOCK_INSTANT,
        "frozen_clock": {k: list(v) for k, v in FROZEN_CLOCK.items()},
        "fixed_address_layout": FIXED_ADDRESS_LAYOUT,
        "address_pattern": ADDRESS_PATTERN,
        "address_mask": ADDRESS_MASK,
        "value_hashed_types": list(VALUE_HASHED_TYPES),
        "c_level_imports": sorted(C_LEVEL_IMPORTS),
        "program_name": PROGRAM_NAME,
        "result_reserve_bytes": RESULT_RESERVE_BYTES,
        "error_scan_chars": ERROR_SCAN_CHARS,
        "output_piece_chars": OUTPUT_PIECE_CHARS,
        "address_space_above_runtime": ADDRESS_SPACE_ABOVE_RUNTIME,
        "codec_modules_left_out": list(CODEC_MODULES_LEFT_OUT),
        "weeks_days_range": list(WEEKS_DAYS_RANGE),
        "child_syscalls": sorted(CHILD_SYSCALLS),
        "supervisor_extra_syscalls": sorted(set(SUPERVISOR_EXTRA_SYSCALLS)),
    }


def canonical_json(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def policy_hash(limits: dict[str, int | float] | None = None) -> str:
    """sha256 of the canonical JSON of the (effective) policy."""
    return hashlib.sha256(canonical_json(policy_dict(limits)).encode()).hexdigest()


def seccomp_profile_dict() -> dict[str, Any]:
    """Docker seccomp profile for the executor container: default ERRNO(EPERM), allow the union
    of the supervisor's and the children's system calls. The per-child filter is far narrower
    and is loaded inside the container on top of this one (seccomp_filter.py)."""
    names = sorted(set(CHILD_SYSCALLS) | set(SUPERVISOR_EXTRA_SYSCALLS))
    return {
        "comment": f"generated from executor/policy.py (policy {policy_hash()}); do not edit",
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "syscalls": [{"names": names, "action": "SCMP_ACT_ALLOW"}],
    }


def seccomp_profile_json() -> str:
    """The docker seccomp profile as stable, pretty JSON text (ends with a newline)."""
    return json.dumps(seccomp_profile_dict(), indent=2, sort_keys=True) + "\n"
