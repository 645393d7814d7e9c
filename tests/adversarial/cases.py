"""The adversarial suite: one entry per hostile program, with the outcome expected with every
layer on (``on``), with layers 1-2 (static policy, builtins allow-list) turned off (``off``),
which proves that the OS layers (rlimits, seccomp, line cap, wall clock) hold on their own, and
with layer 2 alone off (``static``; issue 40: the static layer must stand without the builtins
layer; when not given it is ``on``).

``MARKER`` in a program is replaced by a per-case host path that must not exist afterwards;
``CANARY_FILE``, ``CANARY_PORT`` and ``CANARY_FORGED_ANSWER`` by the planted canaries
(canaries.py), which no program may read, connect to or forge. ``leak`` lists strings that must
not appear in anything the executor returns. Where the ``off`` outcome is OK, the program is
harmless once its escape is blocked (it only computes).

The adversary of issue 40 (generator.py, fuzz.py) rewrites every case through the syntactic
forms Python offers; every escape it finds is added here as a fixed case (section "found by the
adversary").
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Adv:
    name: str
    category: str
    source: str
    on: str
    off: str | tuple[str, ...]  # a tuple only where machine speed decides which OS layer stops it
    leak: tuple[str, ...] = field(default=())
    why: str = ""
    static: str | tuple[str, ...] | None = None  # layer 2 off, layer 1 on; None: as ``on``

    @property
    def static_alone(self) -> tuple[str, ...]:
        expected = self.on if self.static is None else self.static
        return expected if isinstance(expected, tuple) else (expected,)


RS, SV, PE, OK = "REJECTED_STATIC", "SANDBOX_VIOLATION", "PROGRAM_ERROR", "OK"
ML, CPU, LC, OL, CR = "MEMORY_LIMIT", "CPU_LIMIT", "LINE_CAP", "OUTPUT_LIMIT", "CRASH"
BRK = "BAD_RETURN_KIND"

CASES: tuple[Adv, ...] = (
    # --- introspection escapes -------------------------------------------------------------
    Adv("builtins_via_self", "introspection", "b = len.__self__\nanswer = len(b.open('/etc/passwd').read())\n", RS, SV),
    Adv("print_self", "introspection", "b = print.__self__\nb.open('MARKER', 'w')\nanswer = 1\n", RS, SV),
    Adv(
        "datetime_sys_modules",
        "introspection",
        "import datetime\nos = datetime.sys.modules['os']\nanswer = os.open('/etc/passwd', 0)\n",
        RS,
        SV,
    ),
    Adv(
        "calendar_sys_modules",
        "introspection",
        "import calendar\nm = calendar.sys.modules\nm['os'].system('touch MARKER')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "from_datetime_import_sys",
        "introspection",
        "from datetime import sys\nsys.modules['os'].system('touch MARKER')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "subclasses_wrap_close",
        "introspection",
        "for c in ().__class__.__base__.__subclasses__():\n"
        "    if c.__name__ == '_wrap_close':\n"
        "        c.__init__.__globals__['system']('touch MARKER')\n"
        "answer = 1\n",
        RS,
        SV,
    ),
    Adv("mro_object_subclasses", "introspection", "o = int.mro()[-1]\nanswer = len(o.__subclasses__())\n", RS, OK),
    Adv(
        "traceback_frame_globals",
        "introspection",
        "try:\n    1 / 0\nexcept Exception as e:\n"
        "    g = e.__traceback__.tb_frame.f_back.f_globals\n"
        "    g['os'].open('/etc/passwd', 0)\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "generator_frame_builtins",
        "introspection",
        "g = (x for x in [1])\nb = g.gi_frame.f_builtins\nb['open']('/etc/passwd')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv("generator_function", "introspection", "def gen():\n    yield 1\nanswer = next(gen())\n", RS, OK),
    Adv("format_string_class", "introspection", "answer = '{0.__class__.__mro__}'.format(1)\n", RS, BRK),
    Adv(
        "format_string_unbound",
        "introspection",
        "def h():\n    pass\nf = str.format\nprint(f('{0.__globals__}', h))\nanswer = 1\n",
        RS,
        OK,
    ),
    Adv("format_map", "introspection", "answer = '{x.__class__}'.format_map({'x': 1})\n", RS, BRK),
    Adv("fstring_dunder", "introspection", "answer = f'{(1).__class__.__base__}'\n", RS, BRK),
    Adv(
        "type_three_args_del",
        "introspection",
        "T = type('T', (), {'__del__': lambda s: open('MARKER', 'w')})\nt = T()\ndel t\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "class_del_hook",
        "introspection",
        "class D:\n    def __del__(self):\n        open('MARKER', 'w')\nd = D()\ndel d\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "metaclass_new",
        "introspection",
        "class M(type):\n    def __new__(m, n, b, d):\n        import os\n        os.system('touch MARKER')\n"
        "class C(metaclass=M):\n    pass\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "decorator_globals",
        "introspection",
        "def deco(fn):\n    return fn.__globals__\n@deco\ndef g():\n    pass\n"
        "g['__builtins__']['open']('/etc/passwd')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "default_argument_import",
        "introspection",
        "def f(x=__import__('os')):\n    return x\nanswer = f().getpid()\n",
        RS,
        SV,
    ),
    Adv(
        "lambda_import",
        "introspection",
        "f = lambda: __import__('os').system('touch MARKER')\nf()\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv("walrus_import", "introspection", "if (o := __import__('os')):\n    answer = len(o.listdir('/'))\n", RS, SV),
    Adv(
        "attributeerror_obj",
        "introspection",
        "import datetime\ntry:\n    datetime.nonexistent\nexcept AttributeError as e:\n    m = e.obj\n"
        "answer = m.sys.modules['os'].open('/etc/passwd', 0)\n",
        RS,
        SV,
    ),
    Adv(
        "except_star",
        "introspection",
        "try:\n    raise ValueError(1)\nexcept* ValueError:\n    pass\nanswer = 1\n",
        RS,
        OK,
    ),
    Adv("match_class_dunder", "introspection", "match 1:\n    case int(__class__=c):\n        answer = 1\n", RS, OK),
    Adv(
        "fullwidth_underscore_start",
        "introspection",
        "b = len.\uff3f\uff3fself\uff3f\uff3f\nanswer = 1\n",
        PE,
        PE,
        why="U+FF3F cannot start an identifier: a SyntaxError before any layer is needed",
    ),
    Adv(
        "fullwidth_underscore_dunder",
        "introspection",
        "b = len._\uff3fself\uff3f\uff3f\nb.open('MARKER', 'w')\nanswer = 1\n",
        RS,
        SV,
        why="NFKC turns _\uff3fself\uff3f\uff3f into __self__ before the AST check sees it",
    ),
    Adv("fullwidth_open", "introspection", "\uff4f\uff50\uff45\uff4e('MARKER', 'w')\nanswer = 1\n", RS, SV),
    Adv(
        "math_italic_eval",
        "introspection",
        "\U0001d626\U0001d637\U0001d622\U0001d62d(\"__import__('os').system('touch MARKER')\")\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "getattr_by_string",
        "introspection",
        "b = getattr(print, '__self__')\ngetattr(b, 'open')('/etc/passwd')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "globals_builtins_dict",
        "introspection",
        "g = globals()\ng['__builtins__']['open']('/etc/passwd')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv(
        "dead_branch_getattr",
        "introspection",
        "if 0:\n    getattr = None\nb = getattr(len, '__self__')\nanswer = len(b.open('/etc/passwd').read())\n",
        RS,
        SV,
        why="a binding that never runs does not make the name the program's own (issue 22)",
    ),
    Adv(
        "forbidden_name_bound_later",
        "introspection",
        "x = eval(\"__import__('os').getpid()\")\neval = 2\nanswer = x\n",
        RS,
        SV,
        why="layer 1 lets a program read its own variable called eval only after a binding that "
        "surely ran (static_check._Scopes): this read comes first",
    ),
    Adv(
        "exec_hidden_import",
        "introspection",
        "exec('imp' + 'ort os; os.system(\"touch MARKER\")')\nanswer = 1\n",
        RS,
        SV,
    ),
    Adv("import_os", "introspection", "import os\nanswer = os.getpid()\n", RS, SV),
    Adv("dunder_import_call", "introspection", "answer = len(__import__('os').listdir('/'))\n", RS, SV),
    Adv(
        "importlib_socket",
        "introspection",
        "import importlib\nm = importlib.import_module('socket')\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv(
        "clock_helper_globals",
        "introspection",
        "import time\ng = time.time.__globals__\nb = g['__builtins__']\n"
        "imp = b.get('__import__') if isinstance(b, dict) else None\n"
        "answer = 0 if imp is None else imp('os').getpid()\n",
        RS,
        OK,
        why="the frozen clock's functions are compiled in a namespace of their own (issue 33): "
        "with layers 1-2 off their globals hold an empty builtins dict and the real time functions",
    ),
    Adv(
        "format_field_attribute_chain",
        "introspection",
        "answer = '{0.real.__class__.__base__}'.format(1)\n",
        RS,
        BRK,
        why="format fields are checked attribute by attribute (issue 33)",
    ),
    Adv(
        "global_builtins_rebind",
        "introspection",
        "def f():\n    global __builtins__\n    __builtins__ = {'open': 1}\nf()\nanswer = 1\n",
        RS,
        OK,
        why="global is allowed since issue 33, a dunder in it is not; rebinding only affects the program",
    ),
    Adv("relative_import", "introspection", "from . import secrets\nanswer = 1\n", RS, PE),
    Adv(
        "underscore_alias",
        "introspection",
        "import math as _m\nanswer = _m.floor(2.5)\n",
        OK,
        OK,
        why="a single-underscore name carries no capability (issue 33: honest, answers like any alias)",
    ),
    Adv(
        "dunder_alias",
        "introspection",
        "import math as __builtins__\nanswer = __builtins__.floor(2.5)\n",
        RS,
        OK,
        why="the dunder rule covers aliases; with layers 1-2 off the alias only shadows a name",
    ),
    Adv(
        "breakpoint_call",
        "introspection",
        "breakpoint()\nanswer = 1\n",
        RS,
        (SV, OK),
        why="layers 1-2 off: pdb cannot be imported, so the hook warns and does nothing",
    ),
    Adv("input_call", "introspection", "answer = float(input())\n", RS, SV),
    # --- file system -----------------------------------------------------------------------
    Adv("read_etc_passwd", "filesystem", "answer = len(open('/etc/passwd').read())\n", RS, SV),
    Adv("write_marker_file", "filesystem", "open('MARKER', 'w').write('x')\nanswer = 1\n", RS, SV),
    Adv("io_open", "filesystem", "import io\nanswer = len(io.open('/etc/passwd').read())\n", RS, SV),
    Adv("os_mkdir", "filesystem", "import os\nos.mkdir('MARKER')\nanswer = 1\n", RS, SV),
    Adv(
        "pathlib_touch",
        "filesystem",
        "import pathlib\npathlib.Path('MARKER').touch()\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv("proc_self_environ", "filesystem", "answer = len(open('/proc/self/environ', 'rb').read())\n", RS, SV),
    # --- network ---------------------------------------------------------------------------
    Adv(
        "socket_connect",
        "network",
        "import socket\ns = socket.socket()\ns.connect(('1.1.1.1', 80))\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv(
        "urllib_urlopen",
        "network",
        "import urllib.request\nurllib.request.urlopen('http://example.com')\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv(
        "raw_socket_module",
        "network",
        "s = __import__('_socket').socket()\nanswer = 1\n",
        RS,
        (SV, PE),
        why="Debian's python3 has _socket built in (importable without a file): socket() is the call",
    ),
    Adv(
        "restored_disk_import_socket",
        "network",
        "import sys\nsys.meta_path.append(sys.modules['_frozen_importlib_external'].PathFinder)\n"
        "import socket\ns = socket.socket()\ns.connect(('1.1.1.1', 80))\nanswer = 1\n",
        RS,
        SV,
        why="layers 1-2 off, the disk finder put back: the import's openat is the forbidden call",
    ),
    Adv(
        "restored_disk_import_subprocess",
        "process",
        "import sys\nsys.meta_path.append(sys.modules['_frozen_importlib_external'].PathFinder)\n"
        "import subprocess\nsubprocess.run(['touch', 'MARKER'])\nanswer = 1\n",
        RS,
        SV,
    ),
    # --- processes and threads -------------------------------------------------------------
    Adv("os_system", "process", "import os\nos.system('touch MARKER')\nanswer = 1\n", RS, SV),
    Adv(
        "subprocess_run",
        "process",
        "import subprocess\nsubprocess.run(['touch', 'MARKER'])\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv("fork_bomb", "process", "import os\nwhile True:\n    os.fork()\n", RS, SV),
    Adv("execv_shell", "process", "import os\nos.execv('/bin/sh', ['sh', '-c', 'touch MARKER'])\nanswer = 1\n", RS, SV),
    Adv(
        "thread_start",
        "process",
        "import threading\nt = threading.Thread(target=print)\nt.start()\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv("low_level_thread", "process", "import _thread\n_thread.start_new_thread(print, ())\nanswer = 1\n", RS, SV),
    Adv("kill_supervisor", "process", "import os\nos.kill(os.getppid(), 9)\nanswer = 1\n", RS, SV),
    Adv("signal_handler", "process", "import signal\nsignal.signal(signal.SIGALRM, print)\nanswer = 1\n", RS, SV),
    Adv(
        "ctypes_libc_system",
        "process",
        "import ctypes\nctypes.CDLL(None).system(b'touch MARKER')\nanswer = 1\n",
        RS,
        (SV, PE),
    ),
    Adv("mmap_exec_memory", "process", "import mmap\nm = mmap.mmap(-1, 4096, prot=7)\nanswer = 1\n", RS, SV),
    Adv(
        "raise_rlimit",
        "process",
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))\nanswer = 1\n",
        RS,
        SV,
    ),
    # --- resources -------------------------------------------------------------------------
    Adv("busy_loop", "resources", "while True:\n    pass\n", LC, LC),
    Adv(
        "busy_loop_bare_except",
        "resources",
        "while True:\n    try:\n        x = 1\n    except:\n        pass\n",
        LC,
        LC,
    ),
    Adv("power_tower", "resources", "answer = 10**10**10\n", CPU, CPU),
    Adv("huge_string", "resources", "s = 'x' * (10**10)\nanswer = 1\n", ML, ML),
    Adv("huge_bytearray", "resources", "b = bytearray(2**33)\nanswer = 1\n", ML, ML),
    Adv("huge_bytes_repeat", "resources", "b = b'y' * (2**32)\nanswer = 1\n", ML, ML),
    Adv("growing_list", "resources", "x = []\nwhile True:\n    x.append('y' * 10**6)\n", ML, ML),
    Adv(
        "tracer_killed_by_recursion",
        "resources",
        "def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n        return n\n"
        "depth = f(0)\ncount = 0\nfor i in range(1_500_000):\n    count += 1\nanswer = count\n",
        LC,
        LC,
        why="the RecursionError meets the line-cap hook, CPython removes it: the child notices (issue 22)",
    ),
    Adv("deep_recursion", "resources", "def f(n):\n    return f(n + 1)\nanswer = f(0)\n", PE, PE),
    Adv(
        "recursion_limit_raised",
        "resources",
        "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nanswer = f(0)\n",
        RS,
        (SV, CPU, ML),
        why="whichever comes first: 1 s CPU, 256 MB of frames, or the interpreter's fatal-error "
        "abort() (rt_sigprocmask/tgkill), which is itself a forbidden call",
    ),
    Adv(
        "sleep",
        "resources",
        "import time\ntime.sleep(100)\nanswer = 1\n",
        RS,
        SV,
        why="sleep is not on the attribute allow-list (issue 46; before, layer 2 handed out time without "
        "sleep and with layer 1 alone seccomp stopped clock_nanosleep)",
    ),
    Adv("select_sleep", "resources", "import select\nselect.select([], [], [], 100)\nanswer = 1\n", RS, SV),
    Adv("huge_factorial", "resources", "import math\nanswer = math.factorial(10**7) % 7\n", CPU, CPU),
    Adv("c_level_sum", "resources", "answer = sum(range(10**13))\n", CPU, CPU),
    Adv("huge_int_str", "resources", "answer = len(str(10**100000))\n", PE, PE),
    Adv("settrace_off_then_loop", "resources", "import sys\nsys.settrace(None)\nwhile True:\n    pass\n", RS, CPU),
    Adv("too_long_source", "resources", "answer = 1\n" + "x = 1\n" * 20000, RS, OK),
    Adv("deep_nesting", "resources", "answer = " + "(" * 300 + "1" + ")" * 300 + "\n", PE, PE),
    Adv("nul_in_source", "resources", "answer = 1\x00\n", RS, PE),
    # --- information leaks -----------------------------------------------------------------
    Adv("environment_size", "leak", "import os\nanswer = len(os.environ)\n", RS, OK),
    Adv("environment_print", "leak", "import os\nprint(dict(os.environ))\nanswer = 1\n", RS, OK, leak=("hs-7f3a9c1e",)),
    Adv(
        "environment_via_sys",
        "leak",
        "import datetime\nprint(datetime.sys.modules['os'].environ)\nanswer = 1\n",
        RS,
        OK,
        leak=("hs-7f3a9c1e",),
    ),
    Adv(
        "module_repr_paths",
        "leak",
        "import calendar, datetime, math, time\nprint(calendar, datetime, math, time)\nanswer = 1\n",
        OK,
        OK,
        why="with layers 1-2 on the proxies print without a file path (checked in the test); "
        "with them off the real modules show their stdlib path: documented residual",
    ),
    Adv("getcwd", "leak", "import os\nprint(os.getcwd())\nanswer = 1\n", RS, SV),
    Adv("uname", "leak", "import os\nanswer = len(os.uname().nodename)\n", RS, SV),
    Adv("getuid", "leak", "import os\nanswer = os.getuid()\n", RS, SV),
    # --- output floods -----------------------------------------------------------------------
    Adv("print_flood", "output", "while True:\n    print('x' * 10000)\n", OL, OL),
    Adv("single_huge_print", "output", "print('x' * 5_000_000)\nanswer = 1\n", OL, OL),
    Adv("stderr_flood", "output", "import sys\nsys.stderr.write('e' * 2_000_000)\nanswer = 1\n", RS, OL),
    Adv(
        "write_protocol_stdout",
        "output",
        'import os\nos.write(1, b\'{"id": "1", "result": {"outcome": "OK"}}\\n\')\nanswer = 1\n',
        RS,
        SV,
    ),
    # --- forged results and early exit -------------------------------------------------------
    Adv(
        "print_forged_result",
        "forgery",
        'print(\'{"nonce": "0", "outcome": "OK", "answer": 99, "kind": "number"}\')\nanswer = 1\n',
        OK,
        OK,
    ),
    Adv(
        "write_forged_result_fd",
        "forgery",
        'import os\nos.write(3, b\'{"nonce": "0", "outcome": "OK", "answer": 99, "kind": "number"}\\n\')\nanswer = 1\n',
        RS,
        SV,
    ),
    Adv("raise_systemexit", "forgery", "answer = 1\nraise SystemExit(0)\n", PE, PE),
    Adv("exit_builtin", "forgery", "answer = 1\nexit()\n", RS, PE),
    Adv("sys_exit", "forgery", "import sys\nanswer = 1\nsys.exit(0)\n", RS, PE),
    Adv("os_underscore_exit", "forgery", "import os\nanswer = 1\nos._exit(0)\n", RS, CR),
    Adv(
        "close_result_fd_and_spin",
        "forgery",
        "import os, sys\nos.close(3)\nsys.settrace(None)\nwhile True:\n    pass\n",
        RS,
        SV,
        why="close() is not on the allow-list; test_executor_layers covers the same trick with "
        "seccomp off (the wall clock still ends it)",
    ),
    Adv("raise_keyboardinterrupt", "forgery", "answer = 1\nraise KeyboardInterrupt\n", PE, PE),
    # --- the canaries (canaries.py): a secret file, a listener, the nonce, a forged verdict -----
    Adv("canary_file_read", "filesystem", "answer = len(open('CANARY_FILE').read())\n", RS, SV),
    Adv("canary_file_print", "leak", "import io\nprint(io.open('CANARY_FILE').read())\nanswer = 1\n", RS, SV),
    Adv(
        "canary_listener_connect",
        "network",
        "import socket\nsocket.create_connection(('127.0.0.1', CANARY_PORT))\nanswer = 1\n",
        RS,
        (SV, PE),
        why="layers 1-2 off: the module is not in memory and children cannot import from disk (ImportError); seccomp where it is",
    ),
    Adv(
        "canary_nonce_via_frames",
        "leak",
        "import sys\nprint(sys._getframe(1).f_locals['run'].nonce)\nanswer = 1\n",
        RS,
        OK,
        why="with layers 1-2 off reading the nonce is the documented residual (it only lets the program "
        "choose its own answer): the memory canary is checked with layer 1 on",
    ),
    Adv(
        "canary_forged_verdict",
        "forgery",
        "import sys, os, json\nr = sys._getframe(1).f_locals['run']\n"
        "os.write(3, (json.dumps({'nonce': r.nonce, 'outcome': 'OK', 'answer': CANARY_FORGED_ANSWER, "
        "'kind': 'number', 'stdout': '', 'stderr': '', 'stdout_truncated': False, 'stderr_truncated': False, "
        "'error': None, 'addresses_masked': 0}) + '\\n').encode())\nos._exit(0)\n",
        RS,
        OK,
        why="the same residual with layers 1-2 off: the forged verdict is the program's own answer",
    ),
    # --- found by the adversary (issue 40): each a class the hidden set or the generator found ---
    Adv(
        "match_class_format_globals",
        "introspection",
        "def h():\n    pass\nu = '_' * 2\nt = '{0.' + u + 'globals' + u + '}'\n"
        "match t:\n    case str(format=f):\n        print(f(h))\nanswer = 1\n",
        RS,
        OK,
        why="a class pattern's keyword reads an attribute by name: the bound format of a string "
        "no static check saw walked __globals__ (the hidden set, with every layer on)",
    ),
    Adv(
        "match_class_format_nonce",
        "leak",
        "def h():\n    pass\nu = '_' * 2\nt = ('{0.' + u + 'globals' + u + '[' + u + 'builtins' + u + '][print].' + u + "
        "'closure' + u + '[0].cell_contents.' + u + 'self' + u + '._on_flood.' + u + 'self' + u + '.nonce}')\n"
        "match t:\n    case str(format=f):\n        print(f(h))\nanswer = 1\n",
        RS,
        PE,
        why="the same path to the run's nonce; layers 1-2 off: the real print has no closure",
    ),
    Adv(
        "generator_traceback_chain_via_class_pattern",
        "leak",
        "try:\n    1 / 0\nexcept Exception as e:\n"
        "    match '{0.' + '__traceback__.tb_fr' + 'ame.f_back.f_globals' + '}':\n"
        "        case str(format=_adv0f):\n            _adv0 = _adv0f(e)\n            print(_adv0)\n"
        "    g = _adv0\n    g['os'].open('/etc/passwd', 0)\nanswer = 1\n",
        RS,
        PE,
        why="what the generator made of traceback_frame_globals (form format_chain_class_pattern_shown); "
        "on c4aa489's executor, every layer on, it printed the executor's own module globals with "
        "the standard library's host paths (the host-path canary); layers 1-2 off: a documented residual",
    ),
    Adv(
        "match_class_dunder_keyword_alias",
        "introspection",
        "match print:\n    case object(__self__=b):\n        answer = len(b.dir())\n",
        RS,
        OK,
    ),
    Adv(
        "datetime_max_real_clock",
        "determinism",
        "import datetime\nanswer = datetime.datetime.max.now().microsecond + 0.5\n",
        OK,
        OK,
        why="the frozen class's min/max were the real C class's instances, whose now() reads the real clock",
    ),
    Adv(
        "datetime_arithmetic_real_clock",
        "determinism",
        "import datetime\nd = datetime.datetime.min + datetime.timedelta(days=1)\n"
        "c = datetime.datetime.combine(datetime.date.max, datetime.time())\n"
        "answer = d.now().microsecond + c.utcnow().microsecond + d.today().microsecond + 0.5\n",
        OK,
        OK,
    ),
    Adv(
        "datetime_max_isinstance",
        "determinism",
        "import datetime\nanswer = int(isinstance(datetime.datetime.max, datetime.datetime))\n",
        OK,
        OK,
    ),
    Adv(
        "frozen_class_method_replaced",
        "forgery",
        "import datetime\ndef d(self):\n    return 5\ndatetime.datetime.date = d\n"
        "answer = datetime.datetime(2020, 1, 1)\n",
        PE,
        PE,
        why="the frozen class was mutable: a replaced method ran inside the executor's answer check",
    ),
    Adv(
        "frozen_class_method_replaced_loop",
        "resources",
        "import datetime\ndef d(self):\n    while True:\n        pass\ndatetime.datetime.isoformat = d\n"
        "answer = datetime.datetime(2020, 1, 1)\n",
        PE,
        PE,
        why="the same, with a loop that ran outside the line cap (CPU_LIMIT or TIMEOUT_WALL by load)",
    ),
    Adv(
        "address_split_across_writes",
        "determinism",
        "f = lambda: 0\nr = repr(f)\nprint(r[:22], end='')\nprint(r[22:])\nanswer = 1\n",
        OK,
        OK,
        why="the mask worked per write(): a repr printed in two pieces came through unmasked",
    ),
    Adv(
        "except_as_unbinds_forbidden_name",
        "introspection",
        "getattr = 0\ntry:\n    1 / 0\nexcept ZeroDivisionError as getattr:\n    pass\n"
        "b = getattr(len, '_' + '_self_' + '_')\nanswer = len(b.open('/etc/passwd').read())\n",
        RS,
        SV,
        why="the handler's end deletes the name: the read fell through to the real getattr with layer 2 off",
    ),
    Adv(
        "except_as_unbinds_via_global",
        "introspection",
        "getattr = 0\ndef f():\n    global getattr\n    try:\n        1 / 0\n"
        "    except ZeroDivisionError as getattr:\n        pass\nf()\n"
        "b = getattr(len, '_' + '_self_' + '_')\nanswer = len(b.open('/etc/passwd').read())\n",
        RS,
        SV,
    ),
    Adv(
        "hash_loop_outside_the_line_cap",
        "resources",
        "t = (1,) * 300000\nfor i in range(100):\n    hash(t)\nanswer = 1\n",
        LC,
        OK,
        why="the executor's hash() wrapper walked the tuple uncounted (CPU_LIMIT by load); "
        "without layer 2 the real hash() is C work",
        static=OK,
    ),
    Adv(
        "huge_identifier_in_the_error",
        "output",
        "import " + "\U00020000" * 30000 + "\n",
        RS,
        PE,
        why="a 30,000-character module name: the refusal's message outgrew the result channel "
        "(the child was killed as a flood, an infrastructure error); now cut to error_chars",
    ),
    Adv(
        "wide_characters_fill_the_channel",
        "output",
        "print('\\U0001F600' * 20000)\nanswer = 1\n",
        OK,
        OK,
        why="16,384 kept characters of 12 bytes each in JSON did not fit the 256 KB result channel",
    ),
    Adv(
        "wide_characters_on_both_streams",
        "output",
        "import sys\nsys.stderr.write('\\U0001F600' * 20000)\nprint('\\U0001F600' * 20000)\nanswer = 1\n",
        RS,
        OK,
        why="layers 1-2 off: both streams full of 12-byte characters are cut to fit the channel, not a violation",
    ),
    # --- issue 46: the static layer alone against the real modules (walks from an allowed module
    # through names the standard library itself defines; tests/adversarial/reachability.py) -----
    Adv(
        "calendar_locale_codecs_open",
        "introspection",
        "import calendar\nf = calendar._locale.encodings.codecs.open\nanswer = len(f('CANARY_FILE').read())\n",
        RS,
        SV,
        why="calendar imports locale as _locale; locale -> encodings -> codecs.open: with layer 2 "
        "off the real module was there and only seccomp stopped the open",
    ),
    Adv(
        "from_calendar_import_locale",
        "introspection",
        "from calendar import _locale\nanswer = len(_locale.encodings.codecs.open('CANARY_FILE').read())\n",
        RS,
        SV,
        why="the same path through a from-import",
    ),
    Adv(
        "calendar_private_class",
        "introspection",
        "import calendar\nanswer = len(calendar._localized_day('%A'))\n",
        RS,
        OK,
        why="a private name of the real module: harmless here, but not the proxy's surface",
    ),
    Adv(
        "calendar_repeat_from_itertools",
        "introspection",
        "import calendar\nr = calendar.repeat(1, 3)\nanswer = sum(list(r))\n",
        RS,
        OK,
        why="calendar's private import of itertools.repeat: not the proxy's surface",
    ),
)
