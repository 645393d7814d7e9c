"""What runs in the fresh child (layers 1-4 inside one forked process).

The zygote builds one ``ChildTemplate`` at start-up (allowed modules imported and warmed,
module proxies holding the frozen clock, restricted builtins with the identity-refusing
``hash``, the seccomp filter object) and forks a child per program.
``run_child`` is the whole life of that child, in this order:

1. descriptors: the result pipe moved to ``policy.RESULT_FD``, the request pipe to
   ``REQUEST_FD``, /dev/null on 0/1/2, every other descriptor closed (the child cannot write
   into the supervisor's protocol stream);
2. empty environment (``os.environ`` and the C ``environ`` cleared);
3. rlimits, soft = hard; the real ``time.time`` replaced by the frozen clock's (policy.py,
   "Determinism"); a fixed warm-up program of the executor's own (``_warm_spare``); the
   file-system finder taken out of the import system; the seccomp call path exercised once
   (``BpfFilter.prepare``: no_new_privs, set once in the zygote and inherited, is checked).
   Then the child waits (it is a *spare* forked ahead by the zygote, so all of this is off the
   request path) until it receives its nonce and program, and closes the request pipe;
4. stdout/stderr replaced by in-memory captures with caps;
5. the program is checked by the AST policy and compiled (no program code runs yet; see
   ``_check_and_compile`` for why this precedes seccomp);
6. seccomp filter loaded (default deny; only ``write`` to RESULT_FD, memory, clock, exit):
   one ``prctl(PR_SET_SECCOMP)``; the program runs under the executed-line cap with the
   restricted builtins;
7. one JSON line ``{"nonce": ..., "outcome": ..., ...}`` is written to RESULT_FD and the child
   ``_exit``s; memory addresses in the text it reports are masked (``mask_addresses``). The line cap and the output-flood limit end the child the same way from inside
   the tracer / capture, so a bare ``except:`` in the program cannot swallow them.

Every layer is still per program: each child loads its own filter and sets its own limits
after its fork, and nothing a program does outlives its process (SECURITY.md, "Where each
layer happens").

Nothing here returns to the supervisor: every path ends in ``os._exit``.
"""

from __future__ import annotations

import builtins
import datetime
import fcntl
import gc
import json
import math
import mmap
import os
import re
import resource
import signal
import sys
import types
from dataclasses import dataclass, field

from executor import policy, static_check
from executor.outcomes import Outcome

# names for the type checker only: the child never imports typing (it stays out of the program's process)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, NoReturn, TypeVar

    from _typeshed import TraceFunction

    from executor.seccomp_filter import BpfFilter

    _T = TypeVar("_T")

LAYERS = tuple(policy.LAYER_SWITCHES)  # the test-only switch names (policy.LAYER_SWITCHES)
EXIT_RESULT_WRITE_FAILED = 70  # the child could not write its result line (the supervisor reads it so)
_MISSING = object()


# --- module proxies and builtins (layer 2) ---------------------------------------------------


def exposed_names(module: types.ModuleType) -> list[str]:
    """The names of ``module`` a program may use, per policy.MODULE_EXPOSED_NAMES."""
    spec: Sequence[str] | None = policy.MODULE_EXPOSED_NAMES[module.__name__]
    if spec is None:
        spec = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    hidden = set(policy.MODULE_HIDDEN_NAMES)
    return [
        n
        for n in spec
        if n not in hidden
        and not n.startswith("_")
        and hasattr(module, n)
        and not isinstance(getattr(module, n), types.ModuleType)
    ]


def make_module_proxy(
    module: types.ModuleType, replaced: dict[str, Callable[..., Any]] | None = None
) -> types.SimpleNamespace:
    """A namespace holding copies of the module's exposed attributes and no reference to the
    module itself (so neither ``.sys`` nor ``AttributeError.obj`` reaches it). ``replaced``
    maps exposed names to the executor's own versions (the frozen clock)."""
    replaced = replaced or {}
    return types.SimpleNamespace(**{n: replaced.get(n, getattr(module, n)) for n in exposed_names(module)})


def _isolated(source: str, filename: str, module_name: str, **names: object) -> dict[str, Any]:
    """Run executor-written ``source`` in a namespace of its own holding only ``names``: the
    functions it defines have no path to this module's globals (``f.__globals__`` is that
    namespace), as for ``print``."""
    namespace: dict[str, Any] = {"__builtins__": {}, "__name__": module_name, **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


# --- the frozen clock (policy.CLOCK_INSTANT; policy.py, "Determinism") -------------------------
_CLOCK_SOURCE = (
    "def time():\n    return INSTANT\n"
    "def time_ns():\n    return INSTANT_NS\n"
    + "".join(
        f"def {name}():\n    return {0 if name.endswith('_ns') else 0.0!r}\n"
        for name in policy.FROZEN_CLOCK["time.interval"]
    )
    + "def current(args):\n"
    "    if not args or (args[0] is None and not args[1:]):\n"
    "        return (INSTANT,)\n"
    "    return args\n"
    "def gmtime(*args):\n    return real_gmtime(*current(args))\n"
    "def localtime(*args):\n    return real_localtime(*current(args))\n"
    "def ctime(*args):\n    return real_ctime(*current(args))\n"
    "def asctime(*args):\n    return real_asctime(*(args or (real_localtime(INSTANT),)))\n"
    "def strftime(format, *args):\n    return real_strftime(format, *(args or (real_localtime(INSTANT),)))\n"
)
_DATETIME_CLOCK_SOURCE = (
    "def now(cls, tz=None):\n    return cls.fromtimestamp(INSTANT, tz)\n"
    "def utcnow(cls):\n    return cls.utcfromtimestamp(INSTANT)\n"
    "def today(cls):\n    return cls.fromtimestamp(INSTANT)\n"
    # the metaclass's: the class is as immutable as CPython's C type, with CPython's message
    "def refuse(cls, name, value=None):\n"
    "    raise TypeError('cannot set ' + repr(name) + ' attribute of immutable type ' + repr(cls.__name__))\n"
)


def clock_instant() -> float:
    """policy.CLOCK_INSTANT in seconds since the epoch."""
    return datetime.datetime.fromisoformat(policy.CLOCK_INSTANT).timestamp()


def make_frozen_clock(time_module: types.ModuleType) -> dict[str, dict[str, Callable[..., Any]]]:
    """The frozen replacements: {"time": {name: function}, "datetime": {"datetime": class}}.

    ``datetime.datetime`` becomes a subclass whose ``now``/``utcnow``/``today`` read the
    instant, closed the way the issue-40 review asked (policy.py, "Determinism"):

    * no real class is reachable from it: its class attributes ``min`` and ``max`` are its own
      instances (CPython's are the C class's, whose inherited ``now()`` reads the real clock),
      and everything that makes a datetime from one (arithmetic, ``combine``, ``replace``,
      ``astimezone``, the constructors) makes the subclass (the C code builds ``type(self)`` or
      ``cls``; tests/executor/test_executor_frozen_clock.py calls every method);
    * it is immutable, like the C type: its metaclass refuses to set or delete an attribute,
      with CPython's message, so no program code can be planted in a method the executor or
      the C code calls;
    * ``isinstance(x, datetime.datetime)`` and ``min``/``max`` behave as in CPython, and its
      type name stays ``datetime.datetime``, so reprs and error messages read as before.
    """
    instant = clock_instant()
    clock = _isolated(
        _CLOCK_SOURCE,
        "<executor-clock>",
        "time",
        INSTANT=instant,
        INSTANT_NS=int(instant) * 1_000_000_000,
        real_gmtime=time_module.gmtime,
        real_localtime=time_module.localtime,
        real_ctime=time_module.ctime,
        real_asctime=time_module.asctime,
        real_strftime=time_module.strftime,
    )
    names = [n for key in ("time.instant", "time.interval", "time.default") for n in policy.FROZEN_CLOCK[key]]
    methods = _isolated(
        _DATETIME_CLOCK_SOURCE, "<executor-clock>", "datetime", INSTANT=instant, TypeError=TypeError, repr=repr
    )
    base = datetime.datetime
    closed_type = type(
        "type",
        (type,),
        {"__slots__": (), "__module__": "builtins", "__setattr__": methods["refuse"], "__delattr__": methods["refuse"]},
    )
    frozen_datetime = closed_type(
        "datetime.datetime",
        (base,),
        {
            "__slots__": (),
            "__module__": "datetime",
            "__qualname__": "datetime",
            "__doc__": base.__doc__,
            **{name: classmethod(methods[name]) for name in policy.FROZEN_CLOCK["datetime.datetime"]},
        },
    )
    for name in ("min", "max"):  # the executor's own write, past the metaclass
        real = getattr(base, name)
        type.__setattr__(frozen_datetime, name, frozen_datetime.combine(real.date(), real.timetz()))
    return {"time": {n: clock[n] for n in names}, "datetime": {"datetime": frozen_datetime}}


def freeze_real_time(clock: dict[str, dict[str, Callable[..., Any]]]) -> None:
    """Replace ``time.time`` in the real module: the C code of ``date.today()`` calls it
    (through the interpreter's module table, not the program's proxy). Only in a child."""
    import time

    time.time = clock["time"]["time"]


_ADDRESS = re.compile(policy.ADDRESS_PATTERN)
_ADDRESS_AT_END = re.compile(policy.ADDRESS_PATTERN + r"\Z")
# the end of a text that may be the start of an address: a proper prefix of ADDRESS_PREFIX,
# or all of it with no digit yet (" ", " a", " at", ..., " at 0x")
_ADDRESS_START_AT_END = re.compile(
    "(?:" + "|".join(re.escape(policy.ADDRESS_PREFIX[:k]) for k in range(len(policy.ADDRESS_PREFIX), 0, -1)) + r")\Z"
)


def mask_addresses(text: str) -> tuple[str, int]:
    """``text`` with every memory address of a default repr replaced by policy.ADDRESS_MASK,
    and how many were replaced (policy.py, "Determinism")."""
    return _ADDRESS.subn(policy.ADDRESS_MASK, text)


class AddressMask:
    """``mask_addresses`` over a whole stream that arrives in pieces: what ``feed`` returns,
    joined, with ``pending`` at the end, is exactly ``mask_addresses`` of everything fed. A piece
    ending in what may begin an address keeps that tail (at most len(ADDRESS_PREFIX) characters,
    no address digit) until the next piece decides; a piece ending inside an address has already
    given the mask, and the next piece's leading digits belong to the same address. So the masked
    text is known (and counted) as it is written, whatever the address's digits, and no more than
    a few characters wait."""

    def __init__(self) -> None:
        self.pending = ""  # a tail that may begin an address
        self.in_address = False  # the last piece ended in address digits
        self.count = 0

    def feed(self, text: str) -> str:
        if self.in_address:
            text = text.lstrip(policy.ADDRESS_DIGITS)
            self.in_address = not text
        text, self.pending = self.pending + text, ""
        start = _ADDRESS_START_AT_END.search(text)
        if start:
            text, self.pending = text[: start.start()], text[start.start() :]
        masked, n = _ADDRESS.subn(policy.ADDRESS_MASK, text)
        self.count += n
        self.in_address = self.in_address or bool(n and not self.pending and _ADDRESS_AT_END.search(text))
        return masked


class OutputCapture:
    """A text stream kept in memory, memory addresses masked over the whole stream
    (``AddressMask``): the first ``keep`` characters are stored; past ``flood`` characters in
    total the child ends with OUTPUT_LIMIT. Both counts are of the masked text, so what is kept
    and whether the program floods do not depend on its addresses."""

    def __init__(self, keep: int, flood: int, on_flood: Callable[[], object]) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0
        self.truncated = False
        self.mask = AddressMask()
        self._keep = keep
        self._flood = flood
        self._on_flood = on_flood

    @property
    def masked(self) -> int:
        """Memory addresses replaced so far."""
        return self.mask.count

    def write(self, text: object) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        piece = policy.OUTPUT_PIECE_CHARS
        if len(text) <= piece:
            self._write(text)
        else:  # in pieces: no copy of a huge text is made (policy.OUTPUT_PIECE_CHARS)
            for start in range(0, len(text), piece):
                self._write(text[start : start + piece])
        return len(text)

    def _write(self, text: str) -> None:
        masked = self.mask.feed(text)
        self.total += len(masked)
        if self.kept < self._keep:
            self.parts.append(masked[: self._keep - self.kept])
            self.kept += len(self.parts[-1])
        self.truncated = self.truncated or self.total > self._keep
        if self.total + len(self.mask.pending) > self._flood:  # pending masks to at least its length
            self._on_flood()

    def emit(self, *args: object, sep: object = " ", end: object = "\n") -> None:
        """print() semantics for the wrapper handed to programs: each argument's text, the
        separators and the end are written one after the other (the stream, masked as a whole,
        is the same as one joined write, and a huge argument is not copied)."""
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        if not isinstance(sep, str) or not isinstance(end, str):
            raise TypeError("sep and end must be None or a string")
        texts = [str(a) for a in args]  # every str() first, as print does before writing
        for i, text in enumerate(texts):
            if i:
                self.write(sep)
            self.write(text)
        self.write(end)

    def flush(self) -> None:
        return None

    def text(self) -> str:
        """What is kept: the masked stream's first ``keep`` characters (a tail that may still
        have begun an address is written as it is: the stream ended)."""
        tail = self.mask.pending[: self._keep - self.kept]
        if len(self.mask.pending) > len(tail):
            self.truncated = True
        return "".join(self.parts) + tail


# A print() for programs, compiled in a namespace of its own: its globals hold nothing but the
# factory, and it has no __self__ (a C builtin's __self__ is the builtins module).
_PRINT_FACTORY_SOURCE = (
    "def factory(emit):\n"
    "    def print(*args, sep=' ', end='\\n', file=None, flush=False):\n"
    "        emit(*args, sep=sep, end=end)\n"
    "    return print\n"
)


def make_print(capture: OutputCapture) -> Callable[..., None]:
    namespace: dict[str, Any] = {"__builtins__": {}}
    exec(compile(_PRINT_FACTORY_SOURCE, "<executor-print>", "exec"), namespace)
    print_: Callable[..., None] = namespace["factory"](capture.emit)
    return print_


def make_importer(proxies: dict[str, types.SimpleNamespace]) -> Callable[..., types.SimpleNamespace]:
    """``__import__`` for the restricted builtins: allowed modules only, served as proxies. The
    names in policy.C_LEVEL_IMPORTS (imported by C code of an allowed module, which then takes
    the real module from the interpreter's module table) get an empty namespace."""
    internal = types.SimpleNamespace()

    def restricted_import(
        name: str, globals: object = None, locals: object = None, fromlist: object = (), level: int = 0
    ) -> types.SimpleNamespace:
        if level == 0 and name in proxies:
            return proxies[name]
        if level == 0 and name in policy.C_LEVEL_IMPORTS:
            return internal
        raise ImportError(f"import of {name!r} is not allowed (allowed: {', '.join(policy.ALLOWED_MODULES)})")

    return restricted_import


# hash() for programs (policy.VALUE_HASHED_TYPES): an object hashed by identity would hand the
# program its memory address as a number, which differs between runs (policy.py, "Determinism").
_HASH_SOURCE = (
    "def hash(obj):\n"
    "    pending = [obj]\n"
    "    while pending:\n"
    "        item = pending.pop()\n"
    "        if isinstance(item, CONTAINERS):\n"
    "            pending.extend(item)\n"
    "        elif not isinstance(item, VALUE_TYPES) or item != item:\n"
    "            what = 'NaN' if isinstance(item, VALUE_TYPES) else repr(type(item).__name__) + ' objects'\n"
    "            raise TypeError('hash() of ' + what + ' is derived from a memory address, which '\n"
    "                            'differs between runs; the executor does not compute it')\n"
    "    return real_hash(obj)\n"
)


def _value_hashed_types() -> tuple[type, ...]:
    found = []
    for dotted in policy.VALUE_HASHED_TYPES:
        module, _, name = dotted.rpartition(".")
        found.append(getattr(datetime if module == "datetime" else builtins, name))
    return tuple(found)


def make_hash() -> Callable[[object], int]:
    hash_: Callable[[object], int] = _isolated(
        _HASH_SOURCE,
        "<executor-hash>",
        "builtins",
        real_hash=builtins.hash,
        isinstance=isinstance,
        type=type,
        repr=repr,
        TypeError=TypeError,
        CONTAINERS=(tuple, frozenset),
        VALUE_TYPES=_value_hashed_types(),
    )["hash"]
    return hash_


def make_safe_builtins(proxies: dict[str, types.SimpleNamespace]) -> dict[str, Any]:
    """The builtins dict a program sees (print is added per child, bound to its capture)."""
    safe = {name: getattr(builtins, name) for name in policy.ALLOWED_BUILTINS}
    safe["__import__"] = make_importer(proxies)
    safe["hash"] = make_hash()
    return safe


# --- the template built once in the supervisor -------------------------------------------------


@dataclass
class ChildTemplate:
    """Everything a child needs, prepared before any fork."""

    limits: dict[str, int | float]
    disabled_layers: frozenset[str]
    seccomp_filter: BpfFilter | None
    proxies: dict[str, types.SimpleNamespace] = field(default_factory=dict)
    safe_builtins: dict[str, Any] = field(default_factory=dict)
    clock: dict[str, dict[str, Callable[..., Any]]] = field(default_factory=dict)  # make_frozen_clock's replacements


def prepare_time_zone() -> None:
    """Fix the C library's time zone to policy.CHILD_TIMEZONE (see the policy for why): after
    this, glibc's tzset() (called by mktime, strftime('%Z'), ...) finds TZ unchanged and
    returns without touching the file system. Each child sets TZ again after clearing its
    environment (run_child), so the value glibc remembers still matches."""
    import time

    os.environ["TZ"] = policy.CHILD_TIMEZONE
    time.tzset()


def preload_codecs() -> list[str]:
    """Import every codec module of the ``encodings`` package and register it in the codec
    cache, so that str.encode / bytes.decode with any codec name never imports from disk in a
    child (policy.py, "Decisions"). Codecs whose module cannot load here (Windows-only ones, the
    CJK extension modules the image strips) stay unknown: a LookupError, not a kill."""
    import codecs
    import encodings

    left_out = set(policy.CODEC_MODULES_LEFT_OUT)  # one codec set on both backends (issue 46)
    loaded = []
    for directory in encodings.__path__:
        for entry in sorted(os.listdir(directory)):
            name, dot, ext = entry.partition(".")
            if ext != "py" or name.startswith("_") or name == "aliases" or name in left_out:
                continue
            try:
                codecs.lookup(name)
                loaded.append(name)
            except (LookupError, ImportError):
                pass
    for alias, module in sorted(encodings.aliases.aliases.items()):
        if module in left_out:
            continue
        try:
            codecs.lookup(alias)
        except (LookupError, ImportError):
            pass
    return loaded


def import_and_warm_modules() -> dict[str, types.ModuleType]:
    """Import the allowed modules and exercise the lazily imported parts (strptime, locale
    tables, the warnings machinery) so that no child ever needs to open a file."""
    import calendar
    import time
    import warnings  # noqa: F401  (shows SyntaxWarnings without opening files)

    prepare_time_zone()
    import linecache  # noqa: F401

    datetime.datetime.strptime("2020-01-31", "%Y-%m-%d")
    time.strptime("2020-01-31", "%Y-%m-%d")
    time.localtime()
    time.strftime("%Y-%m-%d %A %B", time.localtime())
    calendar.month_name[1], calendar.day_name[0], calendar.monthrange(2020, 2)
    calendar.TextCalendar().formatmonth(2020, 2)
    json.loads(json.dumps({"a": [1.5, "x"]}))
    "{:.2f} {}".format(1.0, "x")
    compile(static_check.parse_program("x = 1\n"), "<program>", "exec")
    # a non-ASCII identifier makes the parser import unicodedata (for NFKC normalisation)
    static_check.parse_program("\uff58 = 1\n")
    import unicodedata  # noqa: F401

    preload_codecs()
    return {name: sys.modules[name] for name in policy.ALLOWED_MODULES}


def build_template(
    limits: dict[str, int | float],
    disabled_layers: Iterable[str] = frozenset(),
    seccomp_filter: BpfFilter | None = None,
) -> ChildTemplate:
    """The template a zygote forks children from. ``seccomp_filter`` is a compiled
    ``seccomp_filter.BpfFilter`` (required unless the seccomp layer is off)."""
    modules = import_and_warm_modules()
    clock = make_frozen_clock(modules["time"])
    proxies = {name: make_module_proxy(mod, clock.get(name)) for name, mod in modules.items()}
    off = frozenset(disabled_layers)
    if "seccomp" not in off and seccomp_filter is None:
        raise ValueError("the seccomp layer is on but no compiled filter was given")
    return ChildTemplate(
        limits=dict(limits),
        disabled_layers=off,
        seccomp_filter=None if "seccomp" in off else seccomp_filter,
        proxies=proxies,
        safe_builtins=make_safe_builtins(proxies),
        clock=clock,
    )


# --- answer checking ----------------------------------------------------------------------------


def weeks_days_problem(weeks: int, days: int) -> str | None:
    """Why (weeks, days) is not a gestational-age reading (policy.WEEKS_DAYS_RANGE), or None."""
    most_weeks, most_days = policy.WEEKS_DAYS_RANGE
    if not 0 <= days <= most_days:
        return f"days must be 0 to {most_days}"
    if not 0 <= weeks <= most_weeks:
        return f"weeks must be 0 to {most_weeks}"
    return None


def check_answer(value: object) -> tuple[str | None, object, str | None]:
    """(kind, JSON value, error) for a program's ``answer``; kind None means a wrong kind.

    Only the real classes' own methods are called (``int.__index__``, ``float.__float__``,
    ``datetime.date.isoformat``, ``tuple.__len__``), never a method looked up on the value, so no
    program code runs here, outside the line cap (issue 40: a replaced method of the frozen
    datetime class ran inside this check)."""
    if value is _MISSING:
        return None, None, "the program did not assign a value to `answer`"
    if isinstance(value, bool):
        return None, None, "answer is a bool, expected a number, a date or a (weeks, days) tuple"
    if isinstance(value, int):
        number: int | float = int.__index__(value)
        try:
            float(number)
        except OverflowError:
            return None, None, "answer is an integer too large to be a finite number"
        return "number", number, None
    if isinstance(value, float):
        number = float.__float__(value)
        if not math.isfinite(number):
            return None, None, f"answer is {number!r}, not a finite number"
        return "number", number, None
    if isinstance(value, datetime.date):  # a datetime counts: date.isoformat gives its date part
        return "date", datetime.date.isoformat(value), None
    if isinstance(value, tuple) and tuple.__len__(value) == 2:
        parts = [tuple.__getitem__(value, 0), tuple.__getitem__(value, 1)]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in parts):
            weeks, days = (int.__index__(v) for v in parts)
            problem = weeks_days_problem(weeks, days)
            if problem:
                return None, None, f"answer ({weeks!r}, {days!r}) is not a (weeks, days) gestational age: {problem}"
            return "weeks_days", [weeks, days], None
    return (
        None,
        None,
        (f"answer has type {type(value).__name__}, expected a number, a date or a (weeks, days) tuple of ints"),
    )


# --- error messages for a repair turn -------------------------------------------------------


def _program_line(exc: BaseException) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename == "<program>":
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<program>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def describe_exception(exc: BaseException) -> str:
    """'TypeName: message (line N)', without paths or executor internals (``finish`` masks the
    addresses in it and then cuts it to ``error_chars``)."""
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    except MemoryError:
        raise  # the caller reports MEMORY_LIMIT: the message does not fit in memory
    except BaseException:  # a hostile __str__
        message = "<unprintable message>"
    if not isinstance(message, str):
        message = "<unprintable message>"
    if len(message) > policy.ERROR_SCAN_CHARS:  # no second copy of a huge message
        message = message[: policy.ERROR_SCAN_CHARS]
    name = type(exc).__name__
    text = f"{name}: {message}" if message else name
    line = _program_line(exc)
    if line:
        text += f" (line {line})"
    return text


def fit_result_line(message: dict[str, Any], cap: int) -> bytes:
    """The child's result line (JSON, ASCII, one line) for ``message``, no longer than ``cap``
    bytes: if the kept stdout and stderr escape to more than the room left, the one that needs
    less keeps up to half of it and the other the rest, each cut to its share (the truncation
    flag set). Deterministic: a function of the message."""
    line = (json.dumps(message) + "\n").encode("ascii")
    if len(line) <= cap:
        return line
    bare = dict(message, stdout="", stderr="")
    room = max(cap - len((json.dumps(bare) + "\n").encode("ascii")), 0)
    need = {name: len(json.dumps(message[name])) - 2 for name in ("stdout", "stderr")}
    smaller = min(need, key=lambda name: (need[name], name))
    shares = {smaller: min(need[smaller], room // 2)}
    shares["stderr" if smaller == "stdout" else "stdout"] = room - shares[smaller]
    for name, share in shares.items():
        text = message[name]
        if need[name] > share:
            text = text[: _prefix_within(text, share)]
            bare[f"{name}_truncated"] = True
        bare[name] = text
    return (json.dumps(bare) + "\n").encode("ascii")


def _prefix_within(text: str, size: int) -> int:
    """The longest prefix of ``text`` whose JSON string escape is at most ``size`` bytes."""
    low, high = 0, min(len(text), size)
    while low < high:
        middle = (low + high + 1) // 2
        if len(json.dumps(text[:middle])) - 2 <= size:
            low = middle
        else:
            high = middle - 1
    return low


# --- the child itself -------------------------------------------------------------------------


def _no_mark(_phase: str) -> None:
    return None


class _ChildRun:
    """State of one child: captures, result writing, early exits."""

    def __init__(self, template: ChildTemplate, nonce: str, mark: Callable[[str], None] = _no_mark) -> None:
        self.t = template
        self.nonce = nonce
        self.mark = mark
        lim = template.limits
        self.stdout = OutputCapture(int(lim["stdout_chars"]), int(lim["output_flood_chars"]), self.flood)
        self.stderr = OutputCapture(int(lim["stderr_chars"]), int(lim["output_flood_chars"]), self.flood)
        self.lines = 0
        self.reserve: mmap.mmap | None = None  # map_reserve(): address space for the result path

    def with_reserve(self, function: Callable[..., _T], *args: Any) -> _T:
        """``function(*args)``; if it runs out of memory while the reserve is held, the reserve
        is unmapped and it is called once more (a MemoryError then propagates). The reserve is
        released only when needed, so the common path makes no system call for it."""
        try:
            return function(*args)
        except MemoryError:
            if self.reserve is None:
                raise
        self.release_reserve()
        return function(*args)

    def release_reserve(self) -> None:
        """Unmap the reserve (idempotent): from here on the result path has its room."""
        reserve, self.reserve = self.reserve, None
        if reserve is not None:
            reserve.close()

    def describe_or_finish(self, exc: BaseException) -> str:
        """``describe_exception``, with the reserve if it needs it; a message that does not fit
        in memory even then ends the child as MEMORY_LIMIT (issue 46: a huge message was a CRASH)."""
        try:
            return self.with_reserve(describe_exception, exc)
        except MemoryError:
            self.finish(
                Outcome.MEMORY_LIMIT,
                f"MemoryError: the message of the program's "
                f"{type(exc).__name__} does not fit in the "
                f"{self.t.limits['address_space_bytes'] // (1024 * 1024)} MB memory limit",
            )

    def finish(
        self, outcome: Outcome, error: str | None = None, kind: str | None = None, answer: object = None
    ) -> NoReturn:
        """Write the one result line and end the child. Never returns.

        The line always fits the supervisor's cap (``limits["result_bytes"]``) and is the whole
        line or nothing: the error is masked and then cut to ``error_chars`` here (so the cut
        does not depend on address lengths), and kept output whose JSON escapes (up to 12 bytes
        a character) would not fit is cut further, with its truncation flag set. A line that
        does not fit in what the program left of memory is built again with the result path's
        reserve unmapped (issue 46: policy.RESULT_RESERVE_BYTES); only if even that fails does
        the child report MEMORY_LIMIT without its output (issue 40: a line the cap cut was a
        SANDBOX_VIOLATION, and so was one written in part)."""
        sys.settrace(None)
        self.mark("program")
        try:
            try:
                data = self.with_reserve(self._result_line, outcome, error, kind, answer)
            except MemoryError:
                self.stdout.parts.clear()
                self.stderr.parts.clear()
                data = self._result_line(
                    Outcome.MEMORY_LIMIT,
                    "MemoryError: no memory left to report the program's result",
                    None,
                    None,
                    keep_output=False,
                )
            view = memoryview(data)
            while view:
                view = view[os.write(policy.RESULT_FD, view) :]
        except BaseException:
            os._exit(EXIT_RESULT_WRITE_FAILED)
        os._exit(0)

    def _result_line(
        self, outcome: Outcome, error: str | None, kind: str | None, answer: object, keep_output: bool = True
    ) -> bytes:
        limits = self.t.limits
        masked = self.stdout.masked + self.stderr.masked
        if error is not None:
            error, in_error = mask_addresses(error)
            masked += in_error
            limit = int(limits["error_chars"])
            if len(error) > limit:
                error = error[: max(limit - 3, 0)] + "..."
        message = {
            "nonce": self.nonce,
            "outcome": outcome.value,
            "answer": answer,
            "kind": kind,
            "stdout": self.stdout.text() if keep_output else "",
            "stderr": self.stderr.text() if keep_output else "",
            "stdout_truncated": self.stdout.truncated,
            "stderr_truncated": self.stderr.truncated,
            "error": error,
            "addresses_masked": masked,
        }
        return fit_result_line(message, int(limits["result_bytes"]))

    def flood(self) -> NoReturn:
        self.finish(
            Outcome.OUTPUT_LIMIT,
            f"the program wrote more than {self.t.limits['output_flood_chars']} characters of output",
        )

    def check_tracer(self, tracer: TraceFunction | None) -> None:
        """End with LINE_CAP when the line-cap tracer is no longer installed. CPython removes a
        trace function that raises (a RecursionError or MemoryError met *inside* the hook, e.g.
        a program that recurses to the limit and catches the error), and with layers 1-2 off a
        program can call sys.settrace itself: either way the lines counted since are unknown,
        so the cap cannot be vouched for and the program must not end OK."""
        if tracer is not None and sys.gettrace() is not tracer:
            sys.settrace(None)
            self.finish(
                Outcome.LINE_CAP,
                "the line-cap tracer stopped while the program ran "
                f"(after {self.lines} counted lines); the line cap cannot be enforced",
            )

    def make_tracer(self) -> TraceFunction:
        cap = int(self.t.limits["line_cap"])

        def local_trace(frame: types.FrameType, event: str, arg: object) -> TraceFunction:
            if event == "line":
                self.lines += 1
                if self.lines > cap:
                    self.finish(Outcome.LINE_CAP, f"the program executed more than {cap} lines")
            return local_trace

        # every Python line that runs while the program runs counts, the executor's own helpers
        # included (print, the output capture, hash(), the frozen clock: issue 40, a program
        # looping through hash() of a huge tuple ran uncounted until the CPU limit)
        return local_trace


def map_reserve() -> mmap.mmap:
    """The result path's reserve (policy.RESULT_RESERVE_BYTES): anonymous, private, never
    touched, so it takes address space under RLIMIT_AS and no memory. Mapped by the spare before
    its program arrives, unmapped by ``_ChildRun.release_reserve``."""
    return mmap.mmap(
        -1, policy.RESULT_RESERVE_BYTES, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, mmap.PROT_READ | mmap.PROT_WRITE
    )


REQUEST_FD = policy.RESULT_FD + 1  # the spare child reads "<nonce>\n<source>" here, then closes it


def _setup_descriptors(result_w: int, request_r: int, devnull: int) -> None:
    """RESULT_FD <- result pipe, REQUEST_FD <- request pipe, 0/1/2 <- /dev/null, close the rest.
    Everything is first copied above fd 64 so that no dup2 can clobber a source descriptor."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (result_w, request_r, devnull)]
    os.dup2(high[0], policy.RESULT_FD)
    os.dup2(high[1], REQUEST_FD)
    for fd in (0, 1, 2):
        os.dup2(high[2], fd)
    os.closerange(REQUEST_FD + 1, 1 << 16)  # the copies, supervisor pipes, everything else


def _receive_request() -> tuple[str, str] | None:
    """Block until the supervisor sends this spare child its program; None on shutdown."""
    chunks = []
    while True:
        block = os.read(REQUEST_FD, 1 << 16)
        if not block:
            break
        chunks.append(block)
    os.close(REQUEST_FD)
    data = b"".join(chunks)
    if not data:
        return None
    nonce, _, source = data.partition(b"\n")
    return nonce.decode("ascii"), source.decode("utf-8", "surrogatepass")


def _set_rlimits(limits: dict[str, int | float]) -> None:
    """Every rlimit but RLIMIT_AS, soft = hard (``_limit_address_space`` sets that one last)."""
    pairs = (
        (resource.RLIMIT_CPU, max(1, int(math.ceil(limits["cpu_seconds"])))),
        (resource.RLIMIT_NOFILE, int(limits["open_files"])),
        (resource.RLIMIT_NPROC, int(limits["processes"])),
        (resource.RLIMIT_FSIZE, int(limits["file_size_bytes"])),
        (resource.RLIMIT_CORE, int(limits["core_bytes"])),
    )
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def mapped_bytes() -> int:
    """This process's address space in use (VmSize: the first field of /proc/self/statm)."""
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[0]) * _PAGE_BYTES


def _limit_address_space(limits: dict[str, int | float]) -> int:
    """RLIMIT_AS (soft = hard) = what this spare maps at the end of its warm-up, the result
    reserve included, + limits["address_space_bytes"]: the limit counts the program's memory,
    not the runtime's, so it is the same on both backends (policy.ADDRESS_SPACE_ABOVE_RUNTIME).
    Returns the limit set."""
    value = mapped_bytes() + int(limits["address_space_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (value, value))
    return value


# A fixed program of the executor's own, run by every spare before its program arrives.
_WARM_SOURCE = (
    "import math\nimport datetime\n"
    "w, h = 72.5, 1.78\nbmi = round(w / h ** 2, 2)\n"
    "d = (datetime.date(2024, 6, 20) - datetime.date(2024, 1, 2)).days\n"
    "xs = [abs(v) * 2 for v in (1.5, -2, 3) if v]\n"
    "answer = (min(bmi, max(xs)), d // 7, d % 7, f'{bmi:.1f}')\n"
)


def _warm_spare(template: ChildTemplate) -> None:
    """Walk the paths a program takes (static check, compile, exec under the tracer with the
    restricted builtins, the result encoding) in a throw-away namespace, while the spare waits.
    Under gVisor each first write to a page shared copy-on-write with the zygote, and each first
    touch of a new heap page, is a Sentry round trip; taking them here moves them off the
    request path. Nothing of it survives into the program's namespace; errors are ignored (the
    real program meets the same code again and reports normally)."""
    try:
        static_check.check_source(_WARM_SOURCE)
        code = compile(_WARM_SOURCE, "<warm-up>", "exec", dont_inherit=True)
        capture = OutputCapture(64, 1 << 20, lambda: None)
        scratch: dict[str, Any] = {"__builtins__": dict(template.safe_builtins), "__name__": "__warm__"}
        scratch["__builtins__"]["print"] = make_print(capture)
        lines = [0]

        def trace(frame: types.FrameType, event: str, arg: object) -> TraceFunction:
            lines[0] += 1
            return trace

        sys.settrace(trace)
        try:
            exec(code, scratch)
        finally:
            sys.settrace(None)
        json.dumps(
            {
                "nonce": "0" * 32,
                "outcome": Outcome.OK.value,
                "answer": 1.5,
                "kind": "number",
                "stdout": capture.text(),
                "stderr": "",
                "stdout_truncated": False,
                "stderr_truncated": False,
                "error": None,
                "addresses_masked": capture.masked,
            }
        )
    except Exception:
        pass


def run_child(
    template: ChildTemplate, result_w: int, request_r: int, devnull: int, mark: Callable[[str], None] = _no_mark
) -> None:
    """The child's whole life (see module docstring). Forked ahead of time as a *spare*: it
    prepares everything that does not depend on the program, then blocks until the supervisor
    writes "<nonce>\n<source>" and closes the request pipe. Never returns.

    ``mark(phase)`` is called at the end of every phase (descriptors, rlimits, warm, request,
    check_compile, seccomp, and program from ``_ChildRun.finish``); the executor passes
    nothing, the benchmark's phase probe (scripts/executor_phase_probe.py) a clock stamp that
    makes no system call, so it measures this very code path."""
    off = template.disabled_layers
    try:
        gc.enable()  # a mould forks with the collector off and its generations frozen (zygote.Mould)
        _setup_descriptors(result_w, request_r, devnull)
        os.environ.clear()
        os.putenv("TZ", policy.CHILD_TIMEZONE)  # C environ only (os.environ stays empty): the value
        # the zygote loaded, so tzset() does not touch the file system
        for signum in (signal.SIGINT, signal.SIGTERM):  # no Python-level handler may run
            signal.signal(signum, signal.SIG_DFL)
        mark("descriptors")
        if "rlimits" not in off:
            _set_rlimits(template.limits)
        sys.setrecursionlimit(int(template.limits["recursion_limit"]))
        if template.clock:
            freeze_real_time(template.clock)
        mark("rlimits")
        _warm_spare(template)
        # ahead of demand since issue 25 (both were on the request path): the disk finder goes
        # (the static check and compile import nothing: the warm-up walked them), and the
        # seccomp call path is exercised once so that loading the filter is one system call
        _stop_disk_imports()
        if template.seccomp_filter is not None:
            template.seccomp_filter.prepare()
        reserve = map_reserve()
        if "rlimits" not in off:
            _limit_address_space(template.limits)
        mark("warm")
        request = _receive_request()
        mark("request")
    except BaseException:
        os._exit(EXIT_RESULT_WRITE_FAILED)
    if request is None:  # the supervisor is shutting down
        os._exit(0)
    nonce, source = request
    run = _ChildRun(template, nonce, mark)
    run.reserve = reserve
    sys.stdout, sys.stderr = run.stdout, run.stderr
    code = _check_and_compile(run, source)
    mark("check_compile")
    try:
        if template.seccomp_filter is not None:
            template.seccomp_filter.load()
    except BaseException as exc:
        run.finish(Outcome.INFRA_ERROR, f"seccomp load failed: {type(exc).__name__}: {exc}")
    mark("seccomp")
    _run_program(run, code)


def _stop_disk_imports() -> None:
    """Take the file-system finder out of the import system before the filter is loaded: an
    import of a module that is not already in memory (an unknown codec name, a lazily imported
    helper) then fails with ImportError, which the caller reports or handles, instead of an
    openat that the filter punishes as a SANDBOX_VIOLATION (policy.py, "Decisions")."""
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__name__", "") != "PathFinder"]
    sys.path_importer_cache.clear()


def _check_and_compile(run: _ChildRun, source: str) -> types.CodeType:
    """Static check and compile, under the rlimits but *before* seccomp: CPython's parser and
    compiler open the program's "file" to quote the offending line of a SyntaxError (they
    try ``open('<program>')``), which the filter would punish as a violation. No program code
    runs here: the filter is loaded before ``exec``."""
    off = run.t.disabled_layers
    try:
        if "static" not in off:
            violations = static_check.check_source(source)
            if violations:
                run.finish(Outcome.REJECTED_STATIC, f"rejected by the executor policy: {violations[0]}")
        code = compile(source, "<program>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        run.finish(Outcome.PROGRAM_ERROR, describe_exception(exc))
    except MemoryError:
        run.finish(Outcome.MEMORY_LIMIT, "MemoryError while compiling the program")
    except ValueError as exc:  # NUL bytes: SyntaxError from 3.11.4 on, ValueError before
        run.finish(Outcome.PROGRAM_ERROR, describe_exception(exc))
    except (RecursionError, OverflowError) as exc:  # parser/compiler limits
        run.finish(Outcome.REJECTED_STATIC, f"rejected: the program cannot be compiled ({type(exc).__name__}: {exc})")
    return code


def _run_program(run: _ChildRun, code: types.CodeType) -> None:
    """Run compiled program code under the line cap with the restricted builtins; report."""
    t = run.t
    off = t.disabled_layers
    if "builtins" in off:
        program_builtins = dict(vars(builtins))
    else:
        program_builtins = dict(t.safe_builtins)
        program_builtins["print"] = make_print(run.stdout)
    namespace = {"__builtins__": program_builtins, "__name__": policy.PROGRAM_NAME}
    tracer = None
    if "linecap" not in off:
        tracer = run.make_tracer()
        sys.settrace(tracer)
    try:
        exec(code, namespace)
    except MemoryError:
        sys.settrace(None)
        run.finish(
            Outcome.MEMORY_LIMIT,
            f"MemoryError: the program exceeded the {t.limits['address_space_bytes'] // (1024 * 1024)} MB memory limit",
        )
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included: end of program
        # not OK whatever the tracer did: a RecursionError met inside the hook that ends the
        # program (plain runaway recursion) stays the PROGRAM_ERROR a repair turn can act on
        sys.settrace(None)
        run.finish(Outcome.PROGRAM_ERROR, run.describe_or_finish(exc))
    run.check_tracer(tracer)
    sys.settrace(None)
    raw = namespace.get("answer", _MISSING)
    if raw is _MISSING:  # "no value": a raised error in the paper's taxonomy, with its own message
        run.finish(Outcome.PROGRAM_ERROR, check_answer(raw)[2])
    try:
        kind, value, problem = run.with_reserve(check_answer, raw)
    except MemoryError:
        run.finish(Outcome.MEMORY_LIMIT, "MemoryError while checking the answer")
    except BaseException as exc:
        run.finish(Outcome.PROGRAM_ERROR, run.describe_or_finish(exc))
    if kind is None:
        run.finish(Outcome.BAD_RETURN_KIND, problem)
    run.finish(Outcome.OK, None, kind, value)
