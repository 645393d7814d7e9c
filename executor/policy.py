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

1. static AST policy (``static_check.py``): no imports outside ALLOWED_MODULES, no names or
   attributes beginning with ``_`` (closes ``__class__``/``__subclasses__``/``__globals__``/
   ``__self__``/``__traceback__`` ...), no frame/generator/code introspection attributes, no
   async or generator constructs (as the paper), no class definitions (they exist to hook dunder
   methods such as ``__del__``/``__format__``, which the ``_`` rule forbids anyway, and they pull
   in ``__build_class__`` and metaclasses), no ``global``/``nonlocal`` (they exist to reach the
   executor's own names), no ``str.format`` on anything but a literal with plain fields (format
   fields read attributes by string: ``"{0.__class__}".format(x)``).
2. builtins allow-list (``child.py``): a fresh builtins dict holding only ALLOWED_BUILTINS, a
   restricted ``__import__`` that hands out attribute-copy proxies of ALLOWED_MODULES (without
   ``sys``: ``datetime.sys`` and ``calendar.sys`` exist in CPython 3.11) and a ``print`` that
   writes to the captured stdout and does not expose the builtins module.
3. child process (``zygote.py`` / ``child.py`` / ``supervisor.py``): a fresh forked process per program, empty
   environment (the supervisor re-executes itself with none, so /proc/<pid>/environ is empty
   too), rlimits with soft = hard, stdin/stdout/stderr on /dev/null (output is captured in
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
* Children of one zygote share the address layout and the ``str`` hash secret (fork). Both only
  help a memory-corruption exploit, a program can read both from its own process anyway, and
  re-randomising needs an exec per program; a crash or violation retires the supervisor, so
  an exploit gets one try per layout. Accepted, tested (test_executor_issue22.py).
* The forbidden-name rule is scope-aware (static_check._Scopes): a program's own ``type`` counts
  only where CPython resolves the read to it (function-local, or a top-level binding that surely
  ran before), so a binding in a dead branch does not lift the rule.
* An unset ``answer`` is a PROGRAM_ERROR with its own message (the paper counts "no value" as a
  raised error, and the repair turn shows that message).
* Generator *expressions* are rejected too ("generator constructs", as the paper); a list
  comprehension does the same job. The bare name ``_`` is allowed (throwaway loop variable).
* Every C builtin's ``__self__`` is the builtins module; only layer 1 (the ``_`` rule) stops that
  path and ``().__class__.__base__.__subclasses__()``. Layer 2 alone does not stop dunder
  introspection; layers 3-5 are what hold when 1-2 are bypassed (tests prove it).

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

POLICY_VERSION = "1"

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
    "time": ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
             "process_time", "process_time_ns", "gmtime", "localtime", "mktime", "strftime",
             "strptime", "asctime", "ctime", "struct_time", "timezone", "altzone", "daylight",
             "tzname"),
    "calendar": None,
}
# Never exposed whatever MODULE_EXPOSED_NAMES says (module handles, locale-dependent code that
# opens files, interactive helpers).
MODULE_HIDDEN_NAMES: tuple[str, ...] = (
    "sys", "os", "datetime_CAPI", "LocaleTextCalendar", "LocaleHTMLCalendar", "main",
    "different_locale",
)

# --- layer 2: the builtins a program sees ---------------------------------------------------
ALLOWED_BUILTINS: tuple[str, ...] = (
    # values and containers
    "bool", "int", "float", "complex", "str", "list", "tuple", "dict", "set", "frozenset",
    "range", "slice", "bytes", "bytearray",
    # functions
    "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "enumerate", "filter",
    "format", "hash", "hex", "isinstance", "issubclass", "iter", "len", "map", "max", "min",
    "next", "oct", "ord", "pow", "repr", "reversed", "round", "sorted", "sum", "zip",
    # exceptions a calculation may raise or catch
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError",
    "KeyError", "LookupError", "NameError", "NotImplementedError", "OverflowError",
    "RecursionError", "RuntimeError", "StopIteration", "TypeError", "ValueError",
    "ZeroDivisionError",
    # constants
    "True", "False", "None", "NotImplemented", "Ellipsis",
)
# "print" is provided by the executor (a wrapper writing to the captured stdout) and
# "__import__" by the restricted importer; both are added on top of ALLOWED_BUILTINS.
WRAPPED_BUILTINS: tuple[str, ...] = ("print", "__import__")

# --- layer 1: AST rules ----------------------------------------------------------------------
# ast node class names rejected wherever they appear.
FORBIDDEN_NODES: dict[str, str] = {
    "AsyncFunctionDef": "async functions are not allowed",
    "AsyncFor": "async for is not allowed",
    "AsyncWith": "async with is not allowed",
    "Await": "await is not allowed",
    "Yield": "generators (yield) are not allowed",
    "YieldFrom": "generators (yield from) are not allowed",
    "GeneratorExp": "generator expressions are not allowed; use a list comprehension",
    "ClassDef": "class definitions are not allowed",
    "Global": "global statements are not allowed",
    "Nonlocal": "nonlocal statements are not allowed",
    "TryStar": "except* is not allowed",
}
# Attribute names rejected even though they do not begin with "_": frame, generator, coroutine,
# traceback and code introspection, the method resolution order, AttributeError.obj and the
# string-driven formatting entry points (str.format is allowed only on a checked literal).
FORBIDDEN_ATTRIBUTES: tuple[str, ...] = (
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_running", "cr_origin", "cr_suspended",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti", "f_lineno",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename",
    "mro", "obj", "format_map", "with_traceback",
    # module handles: datetime.sys / calendar.sys lead to sys.modules (layer 2 hides them too)
    "sys", "os", "modules", "builtins",
)
# Builtin names a program may not read unless it binds the name itself (a variable called
# `type` or `input` is the program's own value; the builtin is absent from layer 2 anyway).
FORBIDDEN_NAMES: tuple[str, ...] = (
    "eval", "exec", "compile", "open", "input", "breakpoint", "help", "globals", "locals",
    "vars", "dir", "getattr", "setattr", "delattr", "hasattr", "type", "object", "super",
    "memoryview", "exit", "quit", "id",
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
    "address_space_bytes": 256 * 1024 * 1024,   # RLIMIT_AS, soft = hard
    "cpu_seconds": 4,                           # RLIMIT_CPU, soft = hard (SIGXCPU)
    "open_files": 16,                           # RLIMIT_NOFILE
    "processes": 1,                             # RLIMIT_NPROC (no new processes or threads)
    "file_size_bytes": 0,                       # RLIMIT_FSIZE
    "core_bytes": 0,                            # RLIMIT_CORE
    "wall_seconds": 5.0,                        # parent SIGKILLs the child after this
    "line_cap": 1_000_000,                      # executed Python lines (sys.settrace)
    "recursion_limit": 1000,
    "stdout_chars": 16_384,                     # kept; more sets stdout_truncated
    "stderr_chars": 16_384,                     # kept; more sets stderr_truncated
    "output_flood_chars": 1_048_576,            # total written beyond this -> OUTPUT_LIMIT
    "error_chars": 500,                         # length of the error message shown to a model
    "result_bytes": 262_144,                    # result channel cap read by the parent
}

# --- layer 3: what a child prepares before its filter is loaded ----------------------------
# The C library's time zone. glibc's tzset() (called by time.mktime, time.strftime('%Z'), ...)
# re-reads /etc/localtime on *every* call while TZ is unset, and the child filter kills that
# stat/openat. With TZ set to the value already loaded, tzset() returns at once. A fixed UTC
# (not the host's zone) also makes both backends compute the same local times.
CHILD_TIMEZONE = "UTC0"

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
    "read", "readv", "writev", "pread64", "openat", "open", "close", "close_range", "stat",
    "fstat", "lstat", "newfstatat", "statx", "lseek", "ioctl", "fcntl", "dup", "dup2", "dup3",
    "pipe", "pipe2", "poll", "ppoll", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "getdents64", "readlink", "readlinkat", "access", "faccessat",
    "faccessat2", "getcwd", "mprotect", "execve", "arch_prctl", "set_tid_address",
    "set_robust_list", "rseq", "prlimit64", "getrlimit", "setrlimit", "rt_sigaction",
    "rt_sigprocmask", "sigaltstack", "getpid", "getppid", "gettid", "getuid", "geteuid",
    "getgid", "getegid", "getpgrp", "setpgid", "setsid", "clone", "clone3", "fork", "vfork",
    "wait4", "waitid", "kill", "tgkill", "futex", "nanosleep", "clock_nanosleep",
    "clock_getres", "gettimeofday", "time", "sysinfo", "uname", "prctl", "seccomp",
    "sched_getaffinity", "sched_yield", "getrusage", "times", "pidfd_open", "umask",
    "restart_syscall", "exit", "exit_group", "socketpair", "getrandom",
    # the loop <-> zygote socket: messages with the spare's pipe descriptors (SCM_RIGHTS)
    "sendmsg", "recvmsg", "sendto", "recvfrom",
    # not seen under strace but part of normal process life (signal delivery, malloc trimming)
    "rt_sigreturn", "madvise",
)


def policy_dict(limits: dict[str, int | float] | None = None) -> dict:
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
        "module_exposed_names": {k: (list(v) if v is not None else None)
                                 for k, v in MODULE_EXPOSED_NAMES.items()},
        "module_hidden_names": list(MODULE_HIDDEN_NAMES),
        "allowed_builtins": list(ALLOWED_BUILTINS),
        "wrapped_builtins": list(WRAPPED_BUILTINS),
        "forbidden_nodes": dict(FORBIDDEN_NODES),
        "forbidden_attributes": list(FORBIDDEN_ATTRIBUTES),
        "forbidden_names": list(FORBIDDEN_NAMES),
        "max_source_chars": MAX_SOURCE_CHARS,
        "max_ast_depth": MAX_AST_DEPTH,
        "limits": effective,
        "result_fd": RESULT_FD,
        "child_timezone": CHILD_TIMEZONE,
        "child_syscalls": sorted(CHILD_SYSCALLS),
        "supervisor_extra_syscalls": sorted(set(SUPERVISOR_EXTRA_SYSCALLS)),
    }


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def policy_hash(limits: dict[str, int | float] | None = None) -> str:
    """sha256 of the canonical JSON of the (effective) policy."""
    return hashlib.sha256(canonical_json(policy_dict(limits)).encode()).hexdigest()


def seccomp_profile_dict() -> dict:
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
