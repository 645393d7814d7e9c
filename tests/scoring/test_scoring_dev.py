"""Scoring over every row of the MedCalc-Bench v1.0 dev slice: the gold answer, written as a model
would write it, scores correct under both scorers; a value just outside the benchmark interval (or
the next day, or one more day of gestation) scores wrong; typed gold values score correct."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from harness.data.dataset import load_dataset
from harness.scoring.scorers import SCORERS, score_reply, score_value


@pytest.fixture(scope="module")
def dev_cases(shared_data_dir):
    cases = load_dataset(shared_data_dir / "test_dev_v1.0.csv").cases
    assert len(cases) == 625
    return cases


def _json_reply(answer: str) -> str:
    return json.dumps({"step_by_step_thinking": "Worked through the calculator.", "answer": answer})


def _kind(case) -> str:
    return {"decimal": "number", "integer": "number"}.get(case.output_type, case.output_type)


def _outside(case) -> list[str]:
    """Answers just outside the case's interval / not the gold day / not the gold age."""
    if case.output_type == "date":
        nxt = case.gold_value + dt.timedelta(days=1)
        return [f"{nxt.month:02}/{nxt.day:02}/{nxt.year}"]
    if case.output_type == "weeks_days":
        w, d = case.gold_value
        return [f"({w}, {d + 1})" if d < 6 else f"({w + 1}, 0)"]
    if case.output_type == "integer":
        return [str(int(case.gold_value) + 1), str(int(case.gold_value) - 1)]
    lo, hi = float(case.lower_limit), float(case.upper_limit)
    step = max(abs(case.gold_value) * 0.001, 0.001)
    return [repr(round(hi + step, 6)), repr(round(lo - step, 6))]


def test_every_output_type_present(dev_cases):
    assert {c.output_type for c in dev_cases} == {"decimal", "integer", "date", "weeks_days"}


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_gold_reply_scores_correct(dev_cases, scorer):
    failures = []
    for case in dev_cases:
        replies = [_json_reply(case.gold_answer)]
        if scorer != "medcalc":  # the official extraction reads only the JSON answer field
            replies.append(f"Working.\nFinal answer: {case.gold_answer}")
        for reply in replies:
            s = score_reply(reply, case, scorer)
            if not s.correct or s.scorer != scorer:
                failures.append((case.case_id, reply, s.reason))
    assert failures == []


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_perturbed_reply_scores_wrong(dev_cases, scorer):
    failures = []
    for case in dev_cases:
        for answer in _outside(case):
            replies = [_json_reply(answer)] + ([f"Final answer: {answer}"] if scorer != "medcalc" else [])
            for reply in replies:
                s = score_reply(reply, case, scorer)
                if s.correct:
                    failures.append((case.case_id, case.gold_answer, reply, s.reason))
    assert failures == []


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_typed_gold_value_scores_correct(dev_cases, scorer):
    failures = []
    for case in dev_cases:
        value = case.gold_value
        if case.output_type == "date":
            candidates = [value, value.isoformat()]
        elif case.output_type == "weeks_days":
            candidates = [tuple(value), list(value)]
        else:
            candidates = [value] + ([int(value)] if case.output_type == "integer" else [])
        for v in candidates:
            s = score_value(v, _kind(case), case, scorer)
            if not s.correct or s.scorer != scorer:
                failures.append((case.case_id, v, s.reason))
    assert failures == []


def test_paper_integers_are_exact(dev_cases):
    for case in dev_cases:
        if case.output_type == "integer":
            near = case.gold_value + 0.25
            assert not score_reply(f"Final answer: {near}", case).correct, case.case_id
            assert score_reply(_json_reply(str(near)), case, "medcalc").correct, case.case_id  # official rounds


def test_paper_parsed_equals_gold_value(dev_cases):
    for case in dev_cases:
        s = score_reply(f"Final answer: {case.gold_answer}", case)
        assert s.parsed == (tuple(case.gold_value) if case.output_type == "weeks_days" else case.gold_value), (
            case.case_id
        )


@pytest.mark.parametrize("scorer", sorted(SCORERS))
def test_verified_one_shot_gold_replies_score_correct(shared_data_dir, scorer):
    """The Verified one-shot split relabels some output types (Wells' PE "integer" with gold 1.5,
    steroid conversion "integer" with a +-5% interval, gestational age "date"); gold replies and
    typed gold values still score correct under every scorer."""
    cases = load_dataset(shared_data_dir / "one_shot_verified.csv").cases
    assert len(cases) == 55
    failures = []
    for case in cases:
        for reply in (_json_reply(case.gold_answer), f"Final answer: {case.gold_answer}"):
            if scorer == "medcalc" and not reply.startswith("{"):
                continue
            s = score_reply(reply, case, scorer)
            if not s.correct:
                failures.append((case.case_id, case.raw_output_type, reply, s.reason))
        s = score_value(case.gold_value, _kind(case), case, scorer)
        if not s.correct:
            failures.append((case.case_id, case.raw_output_type, case.gold_value, s.reason))
    assert failures == []
