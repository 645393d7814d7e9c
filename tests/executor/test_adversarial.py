"""The adversarial suite (tests/adversarial/cases.py) on every backend, with all layers on, with
layers 1-2 (static policy, builtins allow-list) turned off by the test-only switch, which proves
the OS layers hold alone, and with layer 2 alone off, which proves layer 1 holds without it
(issue 40). Each case asserts its precise outcome and that nothing escaped: no marker file on
the host, no canary read, touched or connected to (tests/adversarial/canaries.py: the memory
canary in every nonce, a host file, a listener, the harness's environment, host paths).
"""

from __future__ import annotations

import json
import os

import pytest

from executor.outcomes import Outcome
from tests.adversarial.canaries import ALL_LAYERS, OS_LAYERS_ALONE, STATIC_ALONE, Configuration
from tests.adversarial.cases import CASES, Adv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _marker(case: Adv) -> str:
    return f"/tmp/executor-adversarial-marker-{case.name}-{os.getpid()}"


def _run_case(ex, case: Adv, canaries):
    marker = _marker(case)
    if os.path.lexists(marker):
        os.rmdir(marker) if os.path.isdir(marker) else os.remove(marker)
    result = ex.run(canaries.substitute(case.source.replace("MARKER", marker)))
    return result, marker


def _assert_nothing_escaped(result, case: Adv, marker: str, canaries, config: Configuration) -> None:
    assert not os.path.lexists(marker), f"{case.name}: marker {marker} was created on the host"
    assert canaries.escapes(result, config) == [], f"{case.name}: escaped ({config.name})"
    dumped = json.dumps(result.to_dict())
    for s in case.leak:
        assert s not in dumped, f"{case.name}: {s!r} leaked"
    assert REPO not in (result.error or ""), f"{case.name}: host path in the error message"
    assert "site-packages" not in (result.error or "")
    assert result.outcome != Outcome.INFRA_ERROR.value, result.error


def _assert_all_layers_specifics(result, case: Adv) -> None:
    """What the issue-40 cases must give with every layer on (the frozen clock and the mask are
    layer 2's and the child's)."""
    if case.name in {"datetime_max_real_clock", "datetime_arithmetic_real_clock"}:
        assert result.answer == 0.5, (case.name, result.answer)  # the frozen instant: microsecond 0
    if case.name == "datetime_max_isinstance":
        assert result.answer == 1
    if case.name == "address_split_across_writes":
        assert " at 0x?>" in result.stdout and result.addresses_masked == 1, result.stdout
    if case.name in {"frozen_class_method_replaced", "frozen_class_method_replaced_loop"}:
        assert "cannot set" in result.error and "immutable type 'datetime.datetime'" in result.error


def _assert_case_specifics(ex, result, case: Adv) -> None:
    if result.outcome == Outcome.OK.value:
        assert result.kind in {"number", "date", "weeks_days"}
    if case.name == "print_forged_result":
        assert result.answer == 1 and '"answer": 99' in result.stdout
    if case.name in {"print_flood", "single_huge_print"}:
        assert result.stdout_truncated and 0 < len(result.stdout) <= 16384
    if case.name in {"environment_size", "clock_helper_globals"} and result.outcome == Outcome.OK.value:
        assert result.answer == 0
    if case.name == "kill_supervisor":  # the supervisor must still serve
        assert ex.run("answer = 2").answer == 2
    if case.name == "huge_identifier_in_the_error":
        assert len(result.error) <= 500, len(result.error)
    if case.name == "wide_characters_fill_the_channel":
        assert result.stdout_truncated and 0 < len(result.stdout) <= 16384
    if case.name == "wide_characters_on_both_streams" and result.outcome == Outcome.OK.value:
        assert result.stdout_truncated and result.stderr_truncated and result.stdout and result.stderr


def _honest_probe(ex, case: Adv) -> None:
    """Cross-program effects: the next program on the same executor still gets its answer."""
    probe = ex.run("import math\nanswer = math.factorial(6) + 0.5\n")
    assert (probe.outcome, probe.answer) == ("OK", 720.5), f"after {case.name}: {probe.outcome} ({probe.error})"


def test_how_many_cases_stop_at_the_static_check():
    """Issue 22, item 7: how many of the suite never reach layers 2-7 (the reviewer's hidden set:
    44 of 56). Every case whose outcome with all layers on is REJECTED_STATIC is refused by
    static_check alone, and no other case is; SECURITY.md quotes the figure."""
    from executor.static_check import check_source

    def stopped(src: str) -> bool:
        try:
            return bool(check_source(src))
        except SyntaxError:
            return False

    at_static = [c.name for c in CASES if stopped(c.source)]
    assert at_static == [c.name for c in CASES if c.on == Outcome.REJECTED_STATIC.value]
    assert (len(at_static), len(CASES)) == (100, 129)


def test_suite_is_large_and_unique():
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.category for c in CASES} >= {
        "introspection",
        "filesystem",
        "network",
        "process",
        "resources",
        "leak",
        "output",
        "forgery",
    }
    for c in CASES:
        for o in (c.on, *(c.off if isinstance(c.off, tuple) else (c.off,))):
            Outcome(o)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_adversarial_all_layers(case, backend_executor, canaries):
    _backend, ex = backend_executor
    result, marker = _run_case(ex, case, canaries)
    assert result.outcome == case.on, f"{case.name}: {result.outcome} ({result.error})"
    _assert_nothing_escaped(result, case, marker, canaries, ALL_LAYERS)
    _assert_case_specifics(ex, result, case)
    _assert_all_layers_specifics(result, case)
    _honest_probe(ex, case)
    if case.name == "module_repr_paths":
        assert "namespace(" in result.stdout and "/" not in result.stdout


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_adversarial_static_layer_alone(case, backend_executor_static_alone, canaries):
    """Issue 40: layer 1 stands on its own. With layer 2 off (the real builtins and modules),
    every case the static check refuses is still refused, and no case reads the nonce, forges
    a verdict or touches a canary."""
    _backend, ex = backend_executor_static_alone
    result, marker = _run_case(ex, case, canaries)
    assert result.outcome in case.static_alone, f"{case.name}: {result.outcome} ({result.error})"
    _assert_nothing_escaped(result, case, marker, canaries, STATIC_ALONE)
    _assert_case_specifics(ex, result, case)
    _honest_probe(ex, case)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_adversarial_os_layers_alone(case, backend_executor_os_layers, canaries):
    _backend, ex = backend_executor_os_layers
    result, marker = _run_case(ex, case, canaries)
    allowed = case.off if isinstance(case.off, tuple) else (case.off,)
    assert result.outcome in allowed, f"{case.name}: {result.outcome} ({result.error})"
    _assert_nothing_escaped(result, case, marker, canaries, OS_LAYERS_ALONE)
    _assert_case_specifics(ex, result, case)
    _honest_probe(ex, case)


def test_residual_nonce_theft_needs_layers_1_2_off_and_only_forges_own_answer(
    process_executor, process_executor_os_layers
):
    """Documented residual: a program with full Python powers (layers 1-2 off) can read the
    nonce from the harness frame and write its own verdict. It gains nothing beyond choosing
    its answer (which any program can do) and escapes nothing; with the layers on it never runs."""
    src = (
        "import sys, os, json\n"
        "r = sys._getframe(1).f_locals['run']\n"
        "msg = {'nonce': r.nonce, 'outcome': 'OK', 'answer': 42, 'kind': 'number', 'stdout': '',"
        " 'stderr': '', 'stdout_truncated': False, 'stderr_truncated': False, 'error': None}\n"
        "os.write(3, (json.dumps(msg) + '\\n').encode())\n"
        "os._exit(0)\n"
    )
    assert process_executor.run(src).outcome == Outcome.REJECTED_STATIC.value
    forged = process_executor_os_layers.run(src)
    assert forged.outcome in {Outcome.OK.value, Outcome.SANDBOX_VIOLATION.value}
    assert forged.answer in (42, None)
