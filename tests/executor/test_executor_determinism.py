"""Issue 33, item 1: the same program gives the same result on every worker, backend and day.

The programs below are the kit's own, each written so that its answer or output depends on one
source of nondeterminism the issue names: the str/bytes hash secret, set iteration order, object
addresses (``id``, default reprs, identity hashes) and the clock. Each is run

* on each backend: a fresh pool with one worker, every program three times through that one
  supervisor's zygote with a varying number of other programs in between; a second fresh pool
  with two workers, each replaced after three programs (``recycle_after``) and after a crashing
  program run every fifth;
* on the process backend, the CLI (``executor run``), whose every call starts a fresh pool;

and the ``result.DETERMINISTIC_FIELDS`` of every run must be byte-identical (as canonical JSON),
across backends too. Left out of the comparison, because they are timing and provenance, not
what the program computed: ``wall_ms``, ``cpu_ms`` (``result.TIMING_FIELDS``), ``backend`` and
``address_layout`` (``result.PROVENANCE_FIELDS``).

What cannot be made deterministic (policy.py, "Determinism"): a value a program computes from an
address inside itself. ``ADDRESS_VALUE`` programs do that; on a backend whose results say
``address_layout == "fixed"`` (Linux: the process backend) they are identical across pools and
restarts too; on a "randomised" one (gVisor) the result records it, and that is what is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from executor import policy, pool
from executor.outcomes import Outcome
from executor.result import DETERMINISTIC_FIELDS, FIELDS, PROVENANCE_FIELDS, TIMING_FIELDS, ExecResult
from tests.fixtures_executor import BACKENDS, TEST_LIMITS, make_executor

EXECUTOR_BIN = os.path.join(os.path.dirname(sys.executable), "executor")

DETERMINISTIC: dict[str, str] = {
    # --- the hash secret ---------------------------------------------------------------------------
    "hash_of_str": "answer = float(hash('creatinine') % 1000)\n",
    "hash_of_bytes_and_tuple": "print(hash(b'sodium'), hash(('k', 4.2, 7)))\nanswer = hash(('k', 1)) % 9973\n",
    "hash_of_date": "import datetime\nanswer = hash(datetime.date(2024, 2, 29)) % 10007\n",
    # --- set iteration order -------------------------------------------------------------------------
    "first_of_a_set_of_strings": (
        "labs = {'sodium', 'potassium', 'chloride', 'bicarbonate', 'glucose', 'urea', 'creatinine'}\n"
        "print(list(labs))\nanswer = len(next(iter(labs)))\n"
    ),
    "float_sum_in_set_order": (
        "weights = {'age': 0.1, 'hr': 0.7, 'sbp': 1e-17, 'rr': 3.3, 'temp': 1e17, 'gcs': -1e17}\n"
        "total = 0.0\nfor name in set(weights):\n    total = total * 1.000001 + weights[name]\n"
        "answer = total\n"
    ),
    "set_of_dates_and_tuples": (
        "import datetime\ndays = {datetime.date(2021, 1, d) for d in range(1, 25)}\n"
        "pairs = {('a', i) for i in range(30)}\nprint([d.day for d in days][:5], list(pairs)[:3])\n"
        "answer = list(days)[0]\n"
    ),
    "frozenset_repr_and_dict_from_set": (
        "fs = frozenset(['x', 'y', 'zz', 'www'])\nd = dict.fromkeys({'cough', 'fever', 'rash'}, 1)\n"
        "print(fs, list(d))\nanswer = len(list(d)[0])\n"
    ),
    # --- addresses: printed (masked), hashed (refused), id (refused) ---------------------------------
    "addresses_printed": (
        "import calendar\nf = lambda: 0\ndef g():\n    pass\n"
        "print(f, g, [].append, iter([1]), map(abs, []), calendar.TextCalendar(), print)\n"
        "print(f'{f!r:>60}')\nanswer = 1\n"
    ),
    "address_in_an_error_message": "f = lambda x: x\nanswer = [1, 2].index(f)\n",
    "address_in_a_key_error": "table = {}\nanswer = table[len]\n",
    "hash_of_a_function": "def f():\n    return 1\nanswer = hash(f) % 1000\n",
    "hash_of_none": "answer = hash(None)\n",
    "hash_of_nan": "answer = hash(float('nan'))\n",
    "hash_of_a_tuple_holding_a_method": "answer = hash((1, [].append))\n",
    "id_of_an_object": "answer = id(len) % 1000\n",
    # --- the clock -----------------------------------------------------------------------------------
    "time_time": "import time\nanswer = time.time()\n",
    "time_ns_and_intervals": (
        "import time\nprint(time.time_ns(), time.monotonic(), time.monotonic_ns(), time.perf_counter(),\n"
        "      time.perf_counter_ns(), time.process_time(), time.process_time_ns())\n"
        "answer = time.perf_counter() - time.perf_counter()\n"
    ),
    "date_today": "import datetime\nanswer = datetime.date.today()\n",
    "datetime_now_variants": (
        "from datetime import datetime, timezone, timedelta\n"
        "print(repr(datetime.now()), datetime.utcnow(), datetime.today(), datetime.now(timezone.utc),\n"
        "      datetime.now(timezone(timedelta(hours=-5))))\n"
        "answer = (datetime.now() - datetime(2000, 1, 1)).days\n"
    ),
    "time_struct_defaults": (
        "import time\nprint(time.localtime(), time.gmtime(), time.localtime(None), time.ctime(), time.asctime())\n"
        "print(time.strftime('%Y-%m-%d %H:%M:%S %Z %c'))\nanswer = time.localtime().tm_yday\n"
    ),
    "age_from_today": (
        "from datetime import date\ndob = date(1958, 4, 12)\ntoday = date.today()\n"
        "age = today.year - dob.year - ((today.month, today.day) < (dob.month, dob.day))\nanswer = age\n"
    ),
    "gestational_age_from_now": (
        "import datetime\nlmp = datetime.datetime(2024, 6, 3)\ndays = (datetime.datetime.now() - lmp).days\n"
        "answer = (days // 7, days % 7)\n"
    ),
}

ADDRESS_VALUE: dict[str, str] = {
    "digits_of_a_repr": "f = lambda: 0\nanswer = int(repr(f).split()[-1][:-1], 16) % 100003\n",
    "set_of_functions_order": (
        "def a():\n    return 1\ndef b():\n    return 2\ndef c():\n    return 3\n"
        "order = [f() for f in {a, b, c, len, abs}  if f not in (len, abs)]\nanswer = order[0] * 100 + order[1] * 10 + order[2]\n"
    ),
}

FILLER = (
    "import math\nanswer = math.factorial(12) / 7\n",
    "x = [str(i) * 20 for i in range(5000)]\nanswer = len(x)\n",
    "answer = 1 / 0\n",
    "import os\n",
)
CRASH = "t = ()\nfor i in range(150_000):\n    t = (t,)\nanswer = hash(t)\n"  # retires its supervisor


def _key(result) -> str:
    """The deterministic part of a result as canonical JSON (what must be byte-identical)."""
    data = result.to_dict() if hasattr(result, "to_dict") else result
    return json.dumps({k: data[k] for k in DETERMINISTIC_FIELDS}, sort_keys=True, separators=(",", ":"))


def _through_one_zygote(ex, programs: dict[str, str], rounds: int = 3) -> dict[str, list]:
    """Every program ``rounds`` times through one supervisor (so one zygote), a different number
    of other programs before each, so that the zygote's history differs every time."""
    runs: dict[str, list] = {name: [] for name in programs}
    k = 0
    for rnd in range(rounds):
        for i, (name, source) in enumerate(programs.items()):
            for _ in range((i + rnd) % 3):
                ex.run(FILLER[k % len(FILLER)])
                k += 1
            runs[name].append(ex.run(source))
    return runs


def _restarting_pool(backend: str, request):
    """A fresh pool of two supervisors, each replaced after three programs (pool.recycle_after)."""
    from tests.fixtures_container import container_runtime

    if backend == "container":
        image = request.getfixturevalue("container_backend")["image"]
        return pool.ContainerPool(2, image, limits=TEST_LIMITS, recycle_after=3, runtime=container_runtime())
    return pool.ProcessPool(2, limits=TEST_LIMITS, recycle_after=3)


def _run_set(backend: str, request) -> dict[str, dict[str, list]]:
    """{"name of run": {program: [results]}} for one backend (see the module docstring)."""
    if backend == "container":
        request.getfixturevalue("container_backend")
    programs = {**DETERMINISTIC, **ADDRESS_VALUE}
    out: dict[str, dict[str, list]] = {}
    with make_executor(backend, workers=1) as ex:
        out["fresh pool, one zygote, 3 rounds"] = _through_one_zygote(ex, programs)
        assert ex._impl.stats["started"] == 1, ex._impl.stats  # one supervisor served them all
    with _restarting_pool(backend, request) as p:
        results = {}
        for i, (name, source) in enumerate(programs.items()):
            if i % 5 == 2:
                assert p.run(CRASH)["outcome"] in ("CRASH", "CPU_LIMIT")  # retires its supervisor
            results[name] = ExecResult.from_dict(p.run(source))
        out["fresh pool, 2 workers restarting every 3 programs and after crashes"] = {
            n: [r] for n, r in results.items()
        }
        assert p.stats["recycled"] >= 8, p.stats
    return out


@pytest.fixture(scope="module")
def process_runs(request):
    request.getfixturevalue("host_secret")
    return _run_set("process", request)


@pytest.fixture(scope="module")
def container_runs(request):
    request.getfixturevalue("host_secret")
    return _run_set("container", request)


def test_fields_split_into_deterministic_timing_and_provenance():
    assert set(DETERMINISTIC_FIELDS) | set(TIMING_FIELDS) | set(PROVENANCE_FIELDS) == set(FIELDS)
    assert set(TIMING_FIELDS) == {"wall_ms", "cpu_ms"} and set(PROVENANCE_FIELDS) == {"backend", "address_layout"}
    assert {"outcome", "answer", "stdout", "error", "addresses_masked"} <= set(DETERMINISTIC_FIELDS)


def _all_results(runs: dict[str, dict[str, list]], name: str) -> list:
    return [r for by_program in runs.values() for r in by_program[name]]


def _expected_outcomes(results_by_name: dict[str, object]) -> None:
    """What the programs must give (so that "identical" is not "identically broken")."""
    r = results_by_name
    assert (r["hash_of_str"].outcome, r["hash_of_str"].answer) == ("OK", 812.0)  # PYTHONHASHSEED=0, siphash13
    assert r["addresses_printed"].stdout.count(policy.ADDRESS_MASK) == 8 and "0x7" not in r["addresses_printed"].stdout
    assert r["addresses_printed"].addresses_masked == 8  # 7 reprs + the right-aligned one
    assert r["address_in_an_error_message"].error.startswith("ValueError: <function <lambda> at 0x?> is not in list")
    assert r["address_in_a_key_error"].error == "KeyError: <built-in function len> (line 2)"
    for name in ("hash_of_a_function", "hash_of_none", "hash_of_nan", "hash_of_a_tuple_holding_a_method"):
        assert r[name].outcome == Outcome.PROGRAM_ERROR.value and "memory address" in r[name].error, r[name]
    assert r["id_of_an_object"].outcome == Outcome.REJECTED_STATIC.value
    instant = policy.CLOCK_INSTANT
    assert r["time_time"].answer == 1735689600.0 and r["date_today"].answer == instant[:10]
    assert r["time_ns_and_intervals"].stdout == "1735689600000000000 0.0 0 0.0 0 0.0 0\n"
    assert r["time_ns_and_intervals"].answer == 0.0
    assert r["datetime_now_variants"].stdout.startswith("datetime.datetime(2025, 1, 1, 0, 0) 2025-01-01 00:00:00 ")
    assert "2024-12-31 19:00:00-05:00" in r["datetime_now_variants"].stdout
    assert r["time_struct_defaults"].answer == 1 and "2025-01-01 00:00:00 UTC" in r["time_struct_defaults"].stdout
    assert r["age_from_today"].answer == 66 and r["gestational_age_from_now"].answer == [30, 2]
    for name in DETERMINISTIC:
        assert r[name].outcome != Outcome.INFRA_ERROR.value, (name, r[name].error)


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_program_same_result_across_pools_restarts_and_zygote_history(backend, request):
    runs = request.getfixturevalue(f"{backend}_runs")
    _expected_outcomes({name: runs["fresh pool, one zygote, 3 rounds"][name][0] for name in DETERMINISTIC})
    for name in DETERMINISTIC:
        keys = {_key(r) for r in _all_results(runs, name)}
        assert len(keys) == 1, (name, keys)


@pytest.mark.docker
def test_same_program_same_result_on_both_backends(process_runs, container_runs):
    for name in DETERMINISTIC:
        on_process = _key(process_runs["fresh pool, one zygote, 3 rounds"][name][0])
        on_container = _key(container_runs["fresh pool, one zygote, 3 rounds"][name][0])
        assert on_process == on_container, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_address_values_are_fixed_where_the_layout_is_and_recorded_where_not(backend, request):
    """The residual: a value computed from an address. Linux honours ADDR_NO_RANDOMIZE (the
    process backend's results say "fixed" and agree everywhere); gVisor refuses it (the
    container backend's results say "randomised", which is what a reader must know)."""
    runs = request.getfixturevalue(f"{backend}_runs")
    for name in ADDRESS_VALUE:
        results = _all_results(runs, name)
        assert {r.outcome for r in results} == {Outcome.OK.value}, [(r.outcome, r.error) for r in results]
        layouts = {r.address_layout for r in results}
        if backend == "process":
            assert layouts == {"fixed"}
            assert len({_key(r) for r in results}) == 1, name
        else:
            assert layouts == {"randomised"}
    for name in DETERMINISTIC:  # every result records its layout, whatever the program
        assert {r.address_layout for r in _all_results(runs, name)} == (
            {"fixed"} if backend == "process" else {"randomised"}
        )


def test_cli_run_three_times_gives_the_same_json(tmp_path):
    """The issue's reproduction: ``executor run`` three times (a fresh pool each time)."""
    program = tmp_path / "p.py"
    program.write_text(
        DETERMINISTIC["hash_of_str"].replace("answer =", "h =")
        + DETERMINISTIC["datetime_now_variants"]
        + "labs = {'sodium', 'potassium', 'chloride'}\nprint(list(labs), lambda: 0)\n"
    )
    outs = []
    for _ in range(3):
        out = subprocess.run(
            [EXECUTOR_BIN, "run", "--backend", "process", str(program)], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        outs.append(_key(json.loads(out.stdout)))
    assert len(set(outs)) == 1 and "0x?" in outs[0], outs
