"""The Executor facade (process backend), its retry/replace behaviour, the supervisor protocol
and the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from executor import policy, supervisor
from executor.api import ExecResult, Executor, ExecutorUnavailable
from executor.result import reply_mac
from tests.fixtures_executor import TEST_LIMITS, host_children, layer_switch, make_executor

RESULT_KEYS = {
    "outcome",
    "answer",
    "kind",
    "stdout",
    "stderr",
    "stdout_truncated",
    "stderr_truncated",
    "wall_ms",
    "cpu_ms",
    "exit_code",
    "signal",
    "error",
    "backend",
    "text_escaped",
    "addresses_masked",
    "address_layout",
}
EXECUTOR_BIN = os.path.join(os.path.dirname(sys.executable), "executor")


def test_exec_result_round_trip_and_validation():
    r = ExecResult(outcome="OK", answer=1, kind="number")
    assert ExecResult.from_dict(r.to_dict()) == r and set(r.to_dict()) == RESULT_KEYS
    with pytest.raises(ValueError, match="unknown executor outcome 'YES'"):
        ExecResult.from_dict({"outcome": "YES"})
    with pytest.raises(ValueError, match=r"unknown field\(s\): \['colour'\]"):
        ExecResult.from_dict({"outcome": "OK", "colour": 1})
    with pytest.raises(ValueError, match="no 'outcome'"):
        ExecResult.from_dict({"answer": 1})


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="unknown executor backend 'docker'"):
        Executor(backend="docker")
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        Executor(backend="process", workers=0)


def test_run_many_keeps_order_and_describe_goes_in_the_manifest(process_executor):
    srcs = [f"answer = {i} * 2\n" if i % 3 else "answer = 'x'\n" for i in range(12)]
    res = process_executor.run_many(srcs)
    for i, r in enumerate(res):
        if i % 3:
            assert (r.outcome, r.answer, r.backend) == ("OK", i * 2, "process")
        else:
            assert r.outcome == "BAD_RETURN_KIND"
    d = process_executor.describe()
    assert d["backend"] == "process" and d["workers"] == 2
    assert d["policy_hash"] == policy.policy_hash(TEST_LIMITS)
    assert d["seccomp"]["action"] in {"KILL_PROCESS", "KILL_THREAD"}
    assert d["selftest"]["os_layers_only"]["fork"] == "SANDBOX_VIOLATION"
    with pytest.raises(TypeError, match="source must be str"):
        process_executor.run(b"answer = 1")


def test_container_backend_is_never_a_silent_downgrade():
    """Asking for `container` where it cannot run (no executor.pool, no docker, or, as here when
    they exist, an image that does not exist) is an error; `auto` falls back and says why."""
    bad_image = "mathsolver-executor:no-such-tag-for-tests"
    with pytest.raises(ExecutorUnavailable, match="container backend unavailable"):
        Executor(backend="container", workers=1, image=bad_image)
    with layer_switch(()):
        ex = Executor(backend="auto", workers=1, image=bad_image, limits=TEST_LIMITS)
    with ex:
        d = ex.describe()
        assert ex.run("answer = 1").backend == "process"
    assert d["backend"] == "process" and d["requested_backend"] == "auto"
    assert d["backend_reason"].startswith("auto: container backend unavailable")


def test_dead_supervisor_is_replaced_and_the_program_retried_killed_supervisor_fault():
    with make_executor("process", workers=1) as ex:
        pool = ex._impl
        victim = next(iter(pool._live))
        os.kill(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait()
        r = ex.run("answer = 41 + 1\n")
        assert (r.outcome, r.answer) == ("OK", 42)
        assert pool.stats["replaced"] == 1 and victim not in pool._live
        assert ex.describe()["replaced_supervisors"] == 1


def test_hung_supervisor_times_out_and_is_replaced_stopped_supervisor_fault():
    with make_executor("process", workers=1) as ex:
        pool = ex._impl
        pool.request_timeout = 1.0
        victim = next(iter(pool._live))
        os.kill(victim.proc.pid, signal.SIGSTOP)
        try:
            r = ex.run("answer = 7\n")
        finally:
            if victim.proc.poll() is None:
                os.kill(victim.proc.pid, signal.SIGCONT)
        assert (r.outcome, r.answer) == ("OK", 7)
        assert pool.stats["replaced"] == 1


def test_supervisor_protocol_answers_every_line_even_bad_ones():
    cmd = supervisor.supervisor_command(limits=TEST_LIMITS)
    lines = [
        "not json",
        "[1]",
        json.dumps({"id": 5, "source": "answer = 1"}),
        json.dumps({"id": "b", "source": 3}),
        "",
        json.dumps({"id": "c", "source": "answer = 3", "key": "ab" * 32}),
    ]
    out = subprocess.run(cmd, input=("\n".join(lines) + "\n").encode(), capture_output=True, env={}, timeout=60)
    replies = [json.loads(x) for x in out.stdout.splitlines()]
    assert replies[0]["ready"] is True and replies[0]["policy_hash"] == policy.policy_hash(TEST_LIMITS)
    body = replies[1:]
    assert len(body) == 5  # the empty line is skipped, every other line gets one reply
    assert [b["id"] for b in body] == [None, None, None, "b", "c"]
    assert [b["result"]["outcome"] for b in body[:4]] == ["INFRA_ERROR"] * 4
    assert "not JSON" in body[0]["result"]["error"] and "'id' must be a string" in body[2]["result"]["error"]
    assert body[4]["result"]["answer"] == 3 and set(body[4]["result"]) == RESULT_KEYS
    assert body[4]["mac"] == reply_mac("ab" * 32, "c", body[4]["result"])  # authenticated reply


def test_cli_run_file_and_stdin(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text("import datetime\nanswer = datetime.date(2024, 2, 28) + datetime.timedelta(days=2)\n")
    out = subprocess.run(
        [EXECUTOR_BIN, "run", "--backend", "process", str(prog)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert set(res) == RESULT_KEYS and (res["outcome"], res["answer"], res["kind"]) == ("OK", "2024-03-01", "date")
    out = subprocess.run(
        [EXECUTOR_BIN, "run", "--backend", "process", "-"],
        input="import os\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(out.stdout)["outcome"] == "REJECTED_STATIC"
    out = subprocess.run([EXECUTOR_BIN, "run", str(tmp_path / "missing.py")], capture_output=True, text=True)
    assert out.returncode != 0 and "no such program file" in out.stderr


def test_cli_seccomp_profile_and_policy(tmp_path):
    dest = tmp_path / "seccomp.json"
    subprocess.run([sys.executable, "-m", "executor", "seccomp-profile", "-o", str(dest)], check=True, timeout=60)
    assert dest.read_text() == policy.seccomp_profile_json()
    out = subprocess.run([EXECUTOR_BIN, "policy"], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout)["policy_hash"] == policy.policy_hash()


def test_cli_selftest_reports_the_canaries():
    out = subprocess.run(
        [EXECUTOR_BIN, "selftest", "--backend", "process"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["ok"] is True and rep["backend"] == "process"
    assert set(rep["selftest"]["os_layers_only"]) == {
        "read_etc_passwd",
        "open_socket",
        "fork",
        "exec",
        "read_environment",
        "busy_loop",
        "memory_bomb",
    }


def _wait_children(pid: int, n: int, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(kids := host_children(pid)) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return kids


def _start_time(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime


def _mould_and_spares(zygote_pid: int, n: int) -> tuple[int, list[int]]:
    """The zygote's children: its mould (forked at start-up, before any spare: zygote.Mould)
    and the ``n`` spares the mould's go-betweens forked, re-parented to the zygote."""
    kids = sorted(_wait_children(zygote_pid, n + 1), key=_start_time)
    return kids[0], kids[1:]


def test_dead_spare_children_are_replaced_transparently_killed_spare_fault():
    """The zygote beside each supervisor keeps `spares` children forked ahead, waiting for a
    program; if something kills them while they wait, the next program still runs (on a spare
    forked anew) and the supervisor is not replaced."""
    with make_executor("process", workers=1) as ex:
        sup_pid = next(iter(ex._impl._live)).proc.pid
        assert ex.run("answer = 1\n").answer == 1
        zygotes = host_children(sup_pid)
        assert len(zygotes) == 1, zygotes  # the loop never forks programs itself
        mould, spares = _mould_and_spares(zygotes[0], supervisor.DEFAULT_SPARES)
        assert len(spares) == supervisor.DEFAULT_SPARES, spares
        for pid in spares:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10  # until the zygote has reaped them (their pipes closed)
        while set(spares) & set(host_children(zygotes[0])) and time.monotonic() < deadline:
            time.sleep(0.01)
        r = ex.run("answer = 5\n")
        assert (r.outcome, r.answer) == ("OK", 5)
        assert ex._impl.stats["replaced"] == 0 and ex._impl.stats["retried"] == 0
        assert not set(spares) & set(_wait_children(zygotes[0], supervisor.DEFAULT_SPARES + 1))
        assert mould in host_children(zygotes[0])  # the same mould forks the replacements


def test_closed_executor_says_so():
    ex = make_executor("process", workers=1)
    ex.close()
    with pytest.raises(RuntimeError, match="Executor is closed"):
        ex.run("answer = 1")


def test_a_namespace_package_named_like_the_seccomp_binding_is_no_binding(monkeypatch):
    """supervisor.seccomp_binding_dir hands the child the directory of the importable seccomp binding; a namespace
    package of that name has no file (its __file__ is None) and is skipped, where os.path.abspath(None) raised
    TypeError (found by mypy, issue 49)."""
    import types

    namespace = types.ModuleType("seccomp")
    namespace.__file__ = None
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # importing it raises ImportError
    monkeypatch.setitem(sys.modules, "seccomp", namespace)
    assert supervisor.seccomp_binding_dir() is None
    monkeypatch.delitem(sys.modules, "pyseccomp")
    import pyseccomp

    assert supervisor.seccomp_binding_dir() == os.path.dirname(os.path.abspath(pyseccomp.__file__))
