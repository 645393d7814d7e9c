"""Issue 33, items 2-3: no honest program is refused. The honest corpus (bench/honest_programs.py)
runs and answers on both backends, each answer the one plain CPython gives; every program the
kit's own real-model run produced (the committed CPU demo) ends as plain CPython ends it, and
none is refused. ``python -m bench honest-corpus`` reports the refusal rate of the same
programs for any executor checkout (the issue's before/after figure)."""

from __future__ import annotations

import pytest

from bench.honest_programs import CORPUS, demo_programs
from executor.outcomes import TAXONOMY, Outcome
from tests.adversarial.reference import plain_cpython  # the paper's executor: plain CPython, clock frozen

REFUSALS = {o.value for o, label in TAXONOMY.items() if label == "sandbox_rejection"}

ISSUE_EXAMPLES = {
    "time.strptime": ("import time\nanswer = time.strptime('2023-03-14', '%Y-%m-%d').tm_yday\n", 73),
    "underscore local name": (
        "import datetime\n_now = datetime.date(2023, 3, 14)\n_lmp = datetime.date(2023, 1, 1)\n"
        "answer = (_now - _lmp).days\n",
        72,
    ),
}


@pytest.mark.parametrize("example", sorted(ISSUE_EXAMPLES))
def test_issue_examples_answer_on_both_backends(example, backend_executor):
    """Issue 33, item 2, as the issue wrote them: both were refused before (PROGRAM_ERROR
    "import of '_strptime' is not allowed", REJECTED_STATIC "name starts with '_'")."""
    _backend, ex = backend_executor
    source, answer = ISSUE_EXAMPLES[example]
    r = ex.run(source)
    assert (r.outcome, r.answer) == (Outcome.OK.value, answer), (r.outcome, r.error)


def test_corpus_is_large_and_covers_the_constructs():
    assert len(CORPUS) >= 100 and len({h.name for h in CORPUS}) == len(CORPUS)
    text = "\n".join(h.source for h in CORPUS)
    for construct in (
        "strptime",
        "strftime",
        "calendar",
        "timedelta",
        "lambda",
        "def ",
        "except",
        'f"',
        "% (",
        "from math import *",
        "_now",
        "global ",
        "__name__",
        ".format(",
    ):
        assert construct in text, construct
    assert {h.category for h in CORPUS} == {"dates", "conversions", "scores", "style"}


def test_corpus_answers_are_what_plain_cpython_computes():
    """The corpus's expected answers are checked, not trusted."""
    reference = plain_cpython([h.source for h in CORPUS])
    wrong = [(h.name, h.answer, ref) for h, ref in zip(CORPUS, reference) if ref != ["OK", h.answer]]
    assert not wrong, wrong


def test_every_honest_program_runs_and_answers(backend_executor):
    backend, ex = backend_executor
    results = ex.run_many([h.source for h in CORPUS])
    failed = [
        (h.name, r.outcome, r.answer, r.error)
        for h, r in zip(CORPUS, results)
        if (r.outcome, r.answer) != (Outcome.OK.value, h.answer)
    ]
    assert not failed, f"{len(failed)} of {len(CORPUS)} honest programs did not answer on {backend}: {failed}"
    assert not [r for r in results if r.outcome in REFUSALS]


def test_demo_programs_end_as_plain_cpython_ends_them_and_none_is_refused(backend_executor):
    backend, ex = backend_executor
    demo = demo_programs()
    assert len(demo) == 16  # 8 cases x (program-solve, blind), one reply each
    reference = plain_cpython([src for _name, src in demo])
    results = ex.run_many([src for _name, src in demo])
    for (name, _src), ref, r in zip(demo, reference, results):
        assert r.outcome not in REFUSALS, (name, r.outcome, r.error)
        assert r.outcome == ref[0], (name, r.outcome, r.error, ref)
        if r.outcome == Outcome.OK.value:
            assert r.answer == ref[1], (name, r.answer, ref)
        elif ref[0] == Outcome.PROGRAM_ERROR.value and ref[1] != "no answer":
            assert r.error.startswith(ref[1]), (name, r.error, ref)
