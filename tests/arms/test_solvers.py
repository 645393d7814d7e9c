"""The solver protocol: one object per solver kind, reached from an arm through the registry; the plan's
request bounds and token assumptions and the rescoring rule come from it (no caller switches on a name)."""

from __future__ import annotations

import dataclasses

import pytest

from harness.arms.registry import ARMS, register_arm, unregister_arm
from harness.arms.solvers import (
    SOLVERS,
    ExtractLibrarySolver,
    ReplySolver,
    Scoring,
    Solver,
    register_solver,
    unregister_solver,
)
from harness.arms.spec import Decoding
from harness.data.dataset import load_dataset
from tests.records import record


def test_every_arm_reaches_a_registered_solver_object():
    for arm in ARMS.values():
        assert isinstance(arm.solver, Solver) and type(arm.solver) is SOLVERS[arm.solver.name]
        assert arm.config()["solver"] == arm.solver.name
    assert {a.name for a in ARMS.values() if a.solver.scoring is Scoring.REPLY} == {
        "note-only",
        "note-only-gold",
        "page-no-formula",
        "open-book",
        "note-only-250-nogold",
        "note-only-gold-250",
    }
    assert {a.name for a in ARMS.values() if a.solver.agreement_options} == {"routed-gold", "routed-blind"}


def test_an_unknown_solver_name_fails_when_the_arm_is_registered():
    class Nope(ReplySolver):
        name = "nope"

    with pytest.raises(
        ValueError,
        match="arm 'blind-nope': its solver <solver nope> is not a registered solver kind "
        r"\(known solvers: reply, program",
    ):
        register_arm(dataclasses.replace(ARMS["blind"], name="blind-nope", solver=Nope()))
    assert "blind-nope" not in ARMS
    with pytest.raises(ValueError, match="'blind' is already registered"):
        register_arm(dataclasses.replace(ARMS["blind"], decoding=Decoding(max_tokens=5)))
    with pytest.raises(ValueError, match="cannot be removed"):
        unregister_arm("blind")
    with pytest.raises(ValueError, match="unknown solver 'nope'; known solvers: reply"):
        SOLVERS.lookup("nope")


def test_register_solver_refuses_a_taken_name_and_keeps_the_built_ins():
    class OtherReply(ReplySolver):
        pass

    with pytest.raises(ValueError, match="'reply' is already registered"):
        register_solver(OtherReply)
    with pytest.raises(ValueError, match="cannot be removed"):
        unregister_solver("reply")
    with pytest.raises(TypeError, match="subclass of Solver"):
        register_solver(object)


def test_completion_assumptions_are_capped_by_the_arm():
    # stated assumptions (tokens per request) when no measured results exist, never above the arm's caps
    assert ARMS["note-only"].solver.completion_tokens(ARMS["note-only"]) == 350
    assert ARMS["blind"].solver.completion_tokens(ARMS["blind"]) == 300
    assert ARMS["extract-lib"].solver.completion_tokens(ARMS["extract-lib"]) == 120
    tiny = dataclasses.replace(ARMS["extract-lib"], solver=ExtractLibrarySolver(max_tokens=64))
    assert tiny.solver.completion_tokens(tiny) == 64
    capped = dataclasses.replace(ARMS["formulate-tree"], decoding=Decoding(max_tokens=100))
    assert capped.solver.completion_tokens(capped) == 100


def test_rescoring_follows_the_solver_kind():
    """A reply-scored arm is rescored from its last reply, a value-scored one from its stored value."""
    case = next(c for c in load_dataset("bundled-test").cases if c.output_type == "decimal")
    gold = float(case.gold_answer)
    rec = record(replies=["thinking...", f"Final answer: {gold}"], answer=gold * 3, answer_kind="number")
    assert ARMS["note-only"].solver.rescore(rec, case, "paper") is True
    assert ARMS["blind"].solver.rescore(rec, case, "paper") is False
    assert ARMS["blind"].solver.rescore(dataclasses.replace(rec, answer=gold), case, "paper") is True
    assert ARMS["blind"].solver.rescore(dataclasses.replace(rec, answer=None), case, "paper") is False
