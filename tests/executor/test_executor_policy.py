"""policy.py, outcomes.py and the seccomp pieces that do not need a supervisor."""

from __future__ import annotations

import json
import os
import signal

import pytest

from executor import policy, seccomp_filter
from executor.outcomes import PRECEDENCE, RETRIED, TAXONOMY, Outcome, parse_outcome, stronger, taxonomy

PAPER_TAXONOMY = {"answered", "sandbox_rejection", "raised_error", "wrong_return_kind"}


def test_policy_hash_is_stable_and_tracks_limits():
    h = policy.policy_hash()
    assert h == policy.policy_hash() and len(h) == 64
    assert policy.policy_hash({"cpu_seconds": 1}) != h
    assert policy.policy_hash({"cpu_seconds": policy.LIMITS["cpu_seconds"]}) == h


def test_unknown_or_bad_limit_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown executor limit 'cpu'"):
        policy.policy_dict({"cpu": 1})
    with pytest.raises(ValueError, match="non-negative number"):
        policy.policy_dict({"cpu_seconds": -1})


def test_policy_holds_the_issue_contract():
    assert policy.ALLOWED_MODULES == ("math", "datetime", "time", "calendar")
    for forbidden in (
        "open",
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "input",
        "breakpoint",
        "memoryview",
        "type",
    ):
        assert forbidden not in policy.ALLOWED_BUILTINS
    lim = policy.LIMITS
    assert lim["address_space_bytes"] == 256 * 1024 * 1024
    assert lim["file_size_bytes"] == 0 and lim["core_bytes"] == 0 and lim["wall_seconds"] == 5.0
    assert set(policy.CHILD_SYSCALLS) == {"write", "exit_group", "brk", "munmap", "mremap", "mmap", "clock_gettime"}


def test_docker_profile_is_rendered_from_the_policy():
    prof = json.loads(policy.seccomp_profile_json())
    assert prof == json.loads(seccomp_filter.docker_profile_json())
    assert prof["defaultAction"] == "SCMP_ACT_ERRNO"
    names = set(prof["syscalls"][0]["names"])
    assert set(policy.CHILD_SYSCALLS) <= names
    assert {"fork", "wait4", "openat", "execve"} <= names  # the supervisor's own needs
    assert {"socket", "connect", "ptrace", "mount", "bpf"}.isdisjoint(names)
    assert policy.policy_hash() in prof["comment"]


def test_outcome_enum_is_closed_and_mapped():
    assert set(PRECEDENCE) == set(Outcome)
    assert set(TAXONOMY) == set(Outcome) - {Outcome.INFRA_ERROR}
    assert set(TAXONOMY.values()) == PAPER_TAXONOMY
    assert RETRIED == {Outcome.INFRA_ERROR}
    assert taxonomy("OK") == "answered" and taxonomy("REJECTED_STATIC") == "sandbox_rejection"
    assert taxonomy(Outcome.BAD_RETURN_KIND) == "wrong_return_kind"
    with pytest.raises(ValueError, match="retry it, never score it"):
        taxonomy("INFRA_ERROR")
    with pytest.raises(ValueError, match="unknown executor outcome 'FINE'"):
        parse_outcome("FINE")
    assert stronger(Outcome.OK, Outcome.SANDBOX_VIOLATION) is Outcome.SANDBOX_VIOLATION
    assert stronger(Outcome.INFRA_ERROR, Outcome.REJECTED_STATIC) is Outcome.INFRA_ERROR


def test_unknown_kill_action_is_an_error():
    with pytest.raises(ValueError, match="unknown seccomp kill action"):
        seccomp_filter.build_child_filter("KILL_NICELY")


@pytest.mark.parametrize("action", ["KILL_PROCESS", "KILL_THREAD"])
def test_each_kill_action_loads_and_kills_on_this_kernel(action):
    """The probe the supervisor runs at start: the filter loads in a throw-away child and a
    forbidden call (getuid) kills it by SIGSYS. KILL_THREAD is gVisor's fallback."""
    got = seccomp_filter.probe_kill_action((action,))
    assert got["action"] == action, got
    assert got["signal"] == signal.SIGSYS


def test_probe_falls_back_in_order_and_reports_what_it_tried():
    got = seccomp_filter.probe_kill_action(("KILL_PROCESS", "KILL_THREAD"))
    assert got["tried"][0]["action"] == "KILL_PROCESS"
    assert got["action"] in {"KILL_PROCESS", "KILL_THREAD"}


def test_write_rule_allows_only_the_result_fd():
    """Fork a child, load the real child filter, write to RESULT_FD (allowed) then to fd 1
    (forbidden): the child must die by SIGSYS after the first write arrived."""
    flt = seccomp_filter.build_child_filter("KILL_PROCESS")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(w, policy.RESULT_FD)
            flt.load()
            os.write(policy.RESULT_FD, b"ok")
            os.write(1, b"escaped")
        finally:
            os._exit(0)
    os.close(w)
    data = os.read(r, 100)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert data == b"ok"
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS
