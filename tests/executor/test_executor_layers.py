"""Each layer blocks something on its own (the others turned off with the test-only switch),
the switch itself is gated, and the start-up self-test names what it could not contain."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from executor import supervisor
from executor.child import LAYERS
from executor.outcomes import Outcome
from tests.fixtures_executor import make_executor


def _only(layer: str) -> tuple[str, ...]:
    return tuple(x for x in LAYERS if x != layer)


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "escaped"
    yield str(path)
    assert not path.exists(), "a program wrote a file on the host"


def test_static_layer_alone_blocks_import_os(marker):
    with make_executor(disabled_layers=_only("static")) as ex:
        r = ex.run(f"import os\nos.system('touch {marker}')\nanswer = 1\n")
    assert r.outcome == Outcome.REJECTED_STATIC.value and "import of 'os'" in r.error


def test_builtins_layer_alone_blocks_open_and_module_sys(marker):
    with make_executor(disabled_layers=_only("builtins")) as ex:
        r = ex.run(f"f = open('{marker}', 'w')\nanswer = 1\n")
        assert r.outcome == Outcome.PROGRAM_ERROR.value and "NameError" in r.error
        r = ex.run(
            "import datetime\ntry:\n    datetime.nothing\nexcept AttributeError as e:\n"
            "    m = e.obj\nanswer = len(m.sys.modules)\n"
        )
        assert r.outcome == Outcome.PROGRAM_ERROR.value and "'sys'" in r.error
        r = ex.run("m = __import__('os')\nanswer = 1\n")
        assert r.outcome == Outcome.PROGRAM_ERROR.value and "ImportError" in r.error
        # issue 33: the name time.strptime's C code imports is answered with an empty namespace
        r = ex.run("import _strptime\nx = _strptime.locale\nanswer = 1\n")
        assert r.outcome == Outcome.PROGRAM_ERROR.value and "AttributeError" in r.error, r.error
        # the executor's own helpers do not lead to its module globals
        r = ex.run(
            "import time\ng = time.localtime.__globals__\nanswer = len([k for k in g if k not in "
            "('__builtins__', '__name__') and not callable(g[k])])\n"
        )
        assert (r.outcome, r.answer) == (Outcome.OK.value, 2), (r.outcome, r.answer, r.error)  # INSTANT, INSTANT_NS
        r = ex.run("g = hash.__globals__\nanswer = 1 if 'os' in g or 'sys' in g or g['__builtins__'] else 0\n")
        assert (r.outcome, r.answer) == (Outcome.OK.value, 0), (r.outcome, r.answer, r.error)


def test_seccomp_layer_alone_blocks_file_and_exec_memory(marker):
    with make_executor(disabled_layers=_only("seccomp")) as ex:
        r = ex.run(f"open('{marker}', 'w')\nanswer = 1\n")
        assert r.outcome == Outcome.SANDBOX_VIOLATION.value and r.signal is not None
        r = ex.run("import mmap\nm = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)\nanswer = 1\n")
        assert r.outcome == Outcome.SANDBOX_VIOLATION.value
        r = ex.run("import mmap\nm = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE)\nanswer = 1\n")
        assert r.outcome == Outcome.OK.value  # the argument rule, not a blanket ban


def test_rlimits_layer_alone_blocks_memory_and_cpu():
    with make_executor(disabled_layers=_only("rlimits")) as ex:
        r = ex.run("x = bytearray(2**31)\nanswer = 1\n")
        assert r.outcome == Outcome.MEMORY_LIMIT.value
        r = ex.run("answer = sum(range(10**13))\n")
        assert r.outcome == Outcome.CPU_LIMIT.value and r.cpu_ms >= 800


def test_linecap_layer_alone_stops_python_loops():
    with make_executor(disabled_layers=_only("linecap"), limits={"line_cap": 20000, "wall_seconds": 10}) as ex:
        r = ex.run("i = 0\nwhile True:\n    i += 1\n")
        assert r.outcome == Outcome.LINE_CAP.value and "20000 lines" in r.error
        r = ex.run("total = 0\nfor i in range(1000):\n    total += i\nanswer = total\n")
        assert r.outcome == Outcome.OK.value and r.answer == 499500


def test_wall_clock_alone_kills_a_sleeping_child():
    with make_executor(disabled_layers=LAYERS, limits={"wall_seconds": 1.0}) as ex:
        r = ex.run("import time\ntime.sleep(30)\nanswer = 1\n")
    assert r.outcome == Outcome.TIMEOUT_WALL.value
    assert 900 <= r.wall_ms < 5000 and r.signal == 9


def test_layer_switch_is_refused_without_testing_flag():
    env = {"EXECUTOR_UNSAFE_DISABLE_LAYERS": "static"}
    with pytest.raises(RuntimeError, match="EXECUTOR_TESTING=1 is not"):
        supervisor.disabled_layers_from_env(env)
    with pytest.raises(ValueError, match="unknown layer"):
        supervisor.disabled_layers_from_env(
            {**env, "EXECUTOR_TESTING": "1", "EXECUTOR_UNSAFE_DISABLE_LAYERS": "static,walls"}
        )
    assert supervisor.disabled_layers_from_env({**env, "EXECUTOR_TESTING": "1"}) == ["static"]
    assert supervisor.disabled_layers_from_env({}) == []


def test_disabled_layers_are_recorded_in_describe():
    with make_executor(disabled_layers=("static", "builtins")) as ex:
        d = ex.describe()
    assert d["disabled_layers"] == ["static", "builtins"]
    assert d["selftest"]["os_layers_only"]["read_etc_passwd"] == "SANDBOX_VIOLATION"


def test_selftest_names_uncontained_canaries_when_seccomp_is_off():
    """Run the real canaries through a supervisor object whose children have no seccomp filter:
    the report must fail and name the canaries that got through. (Forks from the test process;
    the canaries only read /etc/passwd, fork/exec `true` and open an unconnected socket.)"""
    import gc

    from executor.selftest import run_selftest

    sup = supervisor.Supervisor({"cpu_seconds": 1}, disabled_layers=("seccomp",))
    try:
        report = run_selftest(sup)
    finally:
        sup.close()  # stops its zygote
        gc.unfreeze()  # Supervisor() froze this (pytest) process's heap
    assert not report["ok"]
    failed = " ".join(report["failed"])
    assert "[os_layers_only] read_etc_passwd: OK" in failed
    assert "[os_layers_only] open_socket" in failed
    assert "busy_loop" not in failed and "memory_bomb" not in failed
    assert report["results"]["all_layers"]["read_etc_passwd"] == "REJECTED_STATIC"


def test_supervisor_refuses_to_start_with_a_clear_error():
    cmd = supervisor.supervisor_command(limits={"cpu_seconds": 1})
    i = cmd.index("--limits")
    cmd[i + 1] = json.dumps({"cpu_secs": 1})
    out = subprocess.run(cmd, input=b"", capture_output=True, env={}, timeout=60)
    assert out.returncode == 1
    first = json.loads(out.stdout.splitlines()[0])
    assert first["ready"] is False and "unknown executor limit 'cpu_secs'" in first["error"]


def test_supervisor_runs_under_debian_system_python():
    """The container runs Debian's /usr/bin/python3 (3.11.2): the same supervisor must start
    and answer there (pyseccomp from the venv via --sys-path)."""
    from tests.conftest import require

    require(os.path.exists("/usr/bin/python3"), "Debian system python3 not installed")
    cmd = supervisor.supervisor_command("/usr/bin/python3")
    req = json.dumps({"id": "a", "source": "import math\nanswer = math.floor(7.9)\n", "key": "0" * 64}) + "\n"
    out = subprocess.run(cmd, input=req.encode(), capture_output=True, env={}, timeout=60)
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert lines[0]["ready"] is True and lines[0]["python"].startswith("3.11"), out.stderr[-500:]
    assert lines[1] == {
        "id": "a",
        "mac": lines[1]["mac"],
        "result": {**lines[1]["result"], "outcome": "OK", "answer": 7},
    }


def test_closing_the_result_channel_does_not_end_the_wait():
    """With every layer off, a program that closes its result descriptor and spins is still
    killed at the wall clock and reported as TIMEOUT_WALL (not as a clean exit)."""
    with make_executor(disabled_layers=LAYERS, limits={"wall_seconds": 1.0}) as ex:
        r = ex.run("import os\nos.close(3)\nwhile True:\n    pass\n")
    assert r.outcome == Outcome.TIMEOUT_WALL.value and r.signal == 9
    assert 900 <= r.wall_ms < 6000
