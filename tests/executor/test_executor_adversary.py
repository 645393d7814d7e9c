"""Issue 40, item 2: the executor's adversary in the suite. The generator (tests/adversarial/
generator.py) rewrites every access of the adversarial and honest corpora through every syntactic
form, and draws random programs from hypothesmith's grammar; the fuzzer (fuzz.py) runs them with
the canaries planted (canaries.py) on two fresh pools (the determinism oracle), on layer 1 alone,
and in plain CPython (reference.py). CI runs a bounded slice here, on the process backend;
``make fuzz-executor N=...`` runs a large one (runs/bench/fuzz-executor.json).

The oracle is shown able to fail: with layers 1-2 off a program reads the nonce (an escape) and
the real clock (nondeterministic), and both are caught.
"""

from __future__ import annotations

import ast
import collections
import dataclasses

from executor.result import ExecResult
from tests.adversarial import fuzz, generator
from tests.adversarial.canaries import ALL_LAYERS, Canaries
from tests.adversarial.cases import CASES
from tests.fixtures_executor import make_executor


def test_every_form_applies_somewhere_and_every_variant_compiles():
    """Across a few corpus programs every form of generator.FORMS produces a program, and what
    it produces compiles (the generator drops what does not)."""
    sources = [
        c.source
        for c in CASES
        if c.name in ("builtins_via_self", "datetime_sys_modules", "lambda_import", "format_string_class", "import_os")
    ]
    sources.append(
        "import math\nfrom datetime import date\nx = math.floor(2.5)\ndef f(a):\n    return abs(a)\n"
        "answer = f(x) + len(str(date(2020, 1, 1)))\n"
    )
    seen = collections.Counter()
    for source in sources:
        for form, variant in generator.single_rewrites(source):
            compile(variant, "<variant>", "exec", dont_inherit=True)
            seen[form] += 1
    assert set(seen) == set(generator.FORMS), sorted(set(generator.FORMS) - set(seen))


def test_a_rewrite_moves_the_access_into_its_form():
    src = "import math\nanswer = math.floor(2.5)\n"
    accesses = [type(a.node).__name__ for a in generator._accesses(ast.parse(src))]
    attribute = accesses.index("Attribute")
    assert "getattr(math, 'floor')" in generator.rewrite(src, attribute, "getattr")
    assert "case object(floor=" in generator.rewrite(src, attribute, "class_pattern_object")
    assert "'{0.floor}'.format(math)" in generator.rewrite(src, attribute, "format_field_literal")
    name = accesses.index("Name")
    unbound = generator.rewrite(src, name, "unbound_by_except")
    assert "except ZeroDivisionError as math:" in unbound
    assert generator.rewrite(src, 0, "importlib").startswith("import importlib\nmath = importlib.import_module('math')")


def test_the_programs_are_the_same_for_a_seed_and_spread_over_the_corpora():
    first = list(generator.programs(500, seed=3, as_is=False))
    assert [p.source for p in first] == [p.source for p in generator.programs(500, seed=3, as_is=False)]
    assert (
        len({p.origin for p in first}) >= len(generator.seeds()) - 5
    )  # one rewrite of each corpus program first (a few do not parse)
    families = collections.Counter(p.family for p in first)
    assert families["hostile"] > 100 and families["honest"] > 100


def test_the_oracle_catches_an_escape_and_a_nondeterminism(canaries):
    """The checks can fail: with layers 1-2 off (the documented residual) a program reads the
    nonce, and another reads the real clock; the canary check and the two-pool comparison see
    both. With every layer on, the same programs are refused."""
    nonce = "import sys\nprint(sys._getframe(1).f_locals['run'].nonce)\nanswer = 1\n"
    clock = "import datetime\nanswer = datetime.datetime.now().microsecond + 0.5\n"
    with (
        make_executor(disabled_layers=("static", "builtins"), canary=canaries.memory) as a,
        make_executor(disabled_layers=("static", "builtins"), canary=canaries.memory) as b,
    ):
        leaked = a.run(nonce)
        assert "the memory canary (the run's nonce)" in canaries.escapes(leaked, ALL_LAYERS)
        ra, rb = a.run(clock), b.run(clock)
        assert fuzz.differences(ra, rb) == ["answer"] and fuzz.residual(ra, rb, False) is None
    with make_executor(canary=canaries.memory) as on:
        assert on.run(nonce).outcome == "REJECTED_STATIC"
        assert on.run(clock).answer == 0.5


def test_refusals_are_counted_by_why():
    ok = ExecResult(outcome="OK", answer=3)
    refused = ExecResult(
        outcome="REJECTED_STATIC", error="rejected by the executor policy: name 'vars' is not allowed (line 2)"
    )
    failing = ExecResult(outcome="PROGRAM_ERROR", error="NameError: name 'OSError' is not defined (line 4)")
    assert fuzz.refusal_category(ok, ["OK", 3]) is None
    assert fuzz.refusal_category(refused, ["OK", 3]) == "static rule: name '...' is not allowed"
    assert fuzz.refusal_category(failing, ["PROGRAM_ERROR", "no answer"]).startswith("fails where CPython completes")
    assert fuzz.refusal_category(ExecResult(outcome="LINE_CAP"), ["LIMIT", "cpu"]) is None
    assert fuzz.refusal_category(ExecResult(outcome="SANDBOX_VIOLATION"), ["OK", 1]) == "sandbox: SANDBOX_VIOLATION"


# Found by the 100,000-program run (seed 0): honest corpus programs that a rewrite broke. CPython answers none of them
# (the main guard's `__name__` unbound: no answer; `.format` read through a format field and called: TypeError), the
# executor refuses them statically; they were counted against the honest bar, which is about programs CPython answers.
BROKEN_BY_A_REWRITE = [
    "def main():\n    return 1.5\n__name__ = None\ndel __name__\nif __name__ == '__main__':\n    answer = main()\n",
    "def main():\n    return 1.5\ntry:\n    1 / 0\nexcept ZeroDivisionError as __name__:\n    pass\n"
    "if __name__ == '__main__':\n    answer = main()\n",
    "hr = 68\nanswer = float('{0.format}'.format('{:.1f}')(hr))\n",
]


def test_the_honest_bar_counts_programs_cpython_answers_and_only_those():
    """An honest-shaped program CPython does not answer (a rewrite broke it) is a refusal among the others, never one
    against the honest bar; one CPython answers and the executor refuses is."""
    from tests.adversarial.reference import Reference

    honest = generator.Program(source="", family="honest", origin="main_guard", forms=("unbound_by_del",))
    assert fuzz.honest_shaped(honest)
    ref = Reference()
    try:
        verdicts = ref.run(BROKEN_BY_A_REWRITE)
    finally:
        ref.close()
    tally = fuzz.Tally()
    with make_executor() as ex:
        for source, verdict in zip(BROKEN_BY_A_REWRITE, verdicts):
            result = ex.run(source)
            assert verdict[0] == "PROGRAM_ERROR" and result.outcome == "REJECTED_STATIC", (source, verdict, result)
            category = fuzz.refusal_category(result, verdict)
            assert category and category.startswith("static rule:")
            tally.refusal(dataclasses.replace(honest, source=source), category, result, verdict)
    assert sum(tally.refusals.values()) == 3 and not tally.honest_shaped_refusals
    refused = ExecResult(outcome="REJECTED_STATIC", error="rejected by the executor policy: name 'vars' is not allowed")
    tally.refusal(honest, fuzz.refusal_category(refused, ["OK", 1.5]), refused, ["OK", 1.5])
    assert sum(tally.honest_shaped_refusals.values()) == 1


def test_a_bounded_slice_finds_no_escape_no_nondeterminism_and_refuses_no_honest_program():
    """The CI slice: a few hundred generated programs (single rewrites across the corpora, one
    per corpus program, and some of hypothesmith's), on the process backend. (The corpus programs
    as they are run in test_adversarial.py and test_executor_honest.py; the hostile cases that run
    to a limit are left to them and to ``make fuzz-executor``: seconds each.)"""
    report = fuzz.run(240, seed=40, grammar=4, container_share=0.0, batch=60, as_is=False, quick=True)
    assert report["programs"]["tried"] == 240
    assert report["escapes"]["count"] == 0, report["escapes"]["cases"][:3]
    assert report["nondeterministic"]["count"] == 0, report["nondeterministic"]["cases"][:3]
    assert report["memory_results_lost"]["count"] == 0, report["memory_results_lost"]["cases"][:3]
    families = report["programs"]["by_family"]  # issue 46: walks and memory pressure in every slice
    assert families.get("walk", 0) >= 20 and families.get("memory", 0) >= 5, families
    honest = report["refusals_of_cpython_runnable"]["honest_shaped"]
    assert honest["count"] == 0, honest["cases"][:3]
    assert report["programs"]["honest_shaped"] > 50 and report["programs"]["runs"]["static_alone"] > 50


def test_the_canaries_see_a_touch_and_a_connection(tmp_path):
    planted = Canaries(str(tmp_path))
    try:
        with open(planted.file) as fh:
            fh.read()
        import socket

        socket.create_connection(("127.0.0.1", planted.port)).close()
        found = planted.escapes({"answer": None})
        assert "a read of the file canary" in found and "a connection to the listener canary" in found
        assert planted.escapes({"answer": None}) == []
    finally:
        planted.close()
