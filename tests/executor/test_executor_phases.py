"""Issue 25: where a program's time goes, and the per-program work moved ahead of demand.

The phase probe (bench/phase_probe.py) runs the executor's own ``child.run_child`` in
forked children of a zygote-like process; these tests run it for real on the host (the process
backend's conditions) and read its system calls with strace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from executor import seccomp_filter

ROOT = Path(__file__).resolve().parents[2]


def _bench_module():
    import bench.executor

    return bench.executor


def _probe(*args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "bench.phase_probe", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_the_probe_times_every_phase_of_the_executors_own_child():
    report = _probe("6")
    assert report["outcomes"] == {"OK": 6}, report["outcomes"]  # the probe's programs really ran
    assert report["phases"][0] == "fork" and report["phases"][-1] == "reap"
    for phase in report["phases"]:
        samples = report["samples"][phase]
        assert len(samples) == 6 and all(s is not None and s >= 0 for s in samples), (phase, samples)
    for i in range(6):  # the request path is its phases, end to end
        parts = sum(report["samples"][p][i] for p in report["request_path"])
        assert abs(parts - report["totals"]["request_path"][i]) < 0.01
    assert len(report["fork_floor_ms"]) >= 10 and len(report["zygote_fork_exit_wait_ms"]) >= 10
    assert all(f > 0 for f in report["child_minor_faults"])


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed (scripts/install-test-tools.sh)")
def test_the_filter_is_one_system_call_on_the_request_path_and_no_new_privs_is_set_once_in_the_zygote(tmp_path):
    bench = _bench_module()
    traces = bench.strace_probe(5, tmp_path)
    counts = bench.count_syscalls_by_phase(traces)
    assert counts["children"] >= 4, counts
    by_name = counts["calls_by_name_per_child"]
    assert by_name["seccomp"] == {"prctl": 1.0}, by_name["seccomp"]
    assert by_name["program"] == {}, by_name["program"]  # the program phase makes no system call
    assert by_name["result"] == {"exit_group": 1.0, "write": 1.0}, by_name["result"]  # one write
    assert "prctl" in by_name["warm"]  # no_new_privs read back ahead of demand
    lines = [ln for text in traces.values() for ln in text.splitlines()]
    set_seccomp = [ln for ln in lines if "prctl(PR_SET_SECCOMP" in ln]
    set_nnp = [ln for ln in lines if "prctl(PR_SET_NO_NEW_PRIVS" in ln]
    get_nnp = [ln for ln in lines if "prctl(PR_GET_NO_NEW_PRIVS" in ln]
    # one filter per child (plus the kill-action probe's), no_new_privs set by the zygote and
    # the kill-action probe child only, never by a program's child
    assert len(set_seccomp) >= counts["children"] + 1
    assert len(set_nnp) == 2, set_nnp
    assert len(get_nnp) >= counts["children"] and all(ln.rstrip().endswith("= 1") for ln in get_nnp), get_nnp


def test_a_child_without_no_new_privs_refuses_to_prepare_its_filter():
    flt = seccomp_filter.compile_child_filter("KILL_PROCESS")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a fresh child of this test process: no_new_privs was never set here
        try:
            os.close(r)
            try:
                flt.prepare()
                os.write(w, b"prepared")
            except RuntimeError as exc:
                os.write(w, str(exc).encode())
        finally:
            os._exit(0)
    os.close(w)
    message = os.read(r, 4096).decode()
    os.close(r)
    os.waitpid(pid, 0)
    if message == "prepared":
        pytest.skip("this test process already runs with no_new_privs set")
    assert "no_new_privs is not set" in message


def test_syscall_counts_split_by_markers():
    child = "\n".join(
        [
            "set_robust_list(0x1, 24) = 0",
            "dup2(5, 3) = 3",
            *(['write(3, "", 0) = 0'] * 7),
            'write(3, "{}", 2) = 2',
            "exit_group(0) = ?",
            "+++ exited with 0 +++",
        ]
    )
    zygote = "\n".join(["clone(child_stack=NULL, flags=SIGCHLD) = 101", 'write(3, "", 0) = 0', "wait4(101) = 101"])
    counts = _bench_module().count_syscalls_by_phase({100: zygote, 101: child})
    assert counts["children"] == 1
    assert counts["median_calls"]["descriptors"] == 2  # set_robust_list, dup2
    assert counts["median_calls"]["rlimits"] == 0
    assert counts["calls_by_name_per_child"]["result"] == {"exit_group": 1.0, "write": 1.0}
