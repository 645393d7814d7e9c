"""Scoring: is a reply (or a typed value) correct for a case? Three scorers, named in every Score.

API (docs/ARCHITECTURE.md)::

    score_reply(reply_text, case, scorer="paper") -> Score(correct, parsed, reason, scorer)
    score_value(value, kind, case, scorer="paper") -> Score   # kind: "number" | "date" | "weeks_days"
    score_all(case, reply_text=... | value=..., kind=...) -> {scorer name: Score}
    SCORERS  # {"paper", "medcalc", "medcalc_line"} -> scorer with .name, .description, .score_reply, .score_value

The parts, one job each:

- harness/scoring/gold.py: the gold model: how a case's gold answer and tolerance are read (`Gold`,
  `gold_of`, `ScoringError`). `case` is a Case, a Case-like object, a mapping or a results-store record.
- harness/scoring/verdict.py: `Score` (reason codes) and the typed values scorers accept.
- harness/scoring/answer_parsing.py: the final-answer line and the number / date / (weeks, days) readers.
- harness/scoring/paper.py: the `paper` scorer (the paper's Scoring paragraph).
- harness/scoring/official.py: the official MedCalc-Bench rules (`medcalc`, `medcalc_line`), quirks
  included, and the evidence for each rule.
- harness/scoring/expression.py: the safe evaluator (no eval) of the official "str(<expr>)" answers.

A case that cannot be scored (unknown output type, unreadable gold or limit) raises `ScoringError`
naming the case and the field; so do an unknown scorer name or value kind. A reply or value that
cannot be read is not an error: it scores wrong, with the reason saying why. No scorer raises on any
reply text.
"""

from __future__ import annotations

from typing import Any

from harness.core.registry import Registry
from harness.scoring.gold import Gold, ScoringError, gold_of
from harness.scoring.official import MedCalcScorer, line_answer_text, official_answer_text
from harness.scoring.paper import PaperScorer
from harness.scoring.verdict import VALUE_KINDS, Score

__all__ = ["SCORERS", "Gold", "Score", "ScoringError", "gold_of", "score_all", "score_reply", "score_value"]

# ----------------------------------------------------------------------------- public API

SCORERS: Registry[PaperScorer | MedCalcScorer] = Registry("scorer", (PaperScorer, MedCalcScorer))
for _scorer_obj in (
    PaperScorer(),
    MedCalcScorer(
        "medcalc", "official MedCalc-Bench extract_answer + check_correctness, quirks included", official_answer_text
    ),
    MedCalcScorer(
        "medcalc_line",
        "official MedCalc-Bench per-type extraction and checks applied to the paper's "
        "final-answer text instead of the JSON answer field",
        line_answer_text,
    ),
):
    SCORERS.register(_scorer_obj)
SCORERS.freeze()


def _scorer(name: str) -> PaperScorer | MedCalcScorer:
    if not isinstance(name, str) or name not in SCORERS:
        raise ScoringError(f"unknown scorer {name!r}; known: {sorted(SCORERS)}")
    return SCORERS[name]


def score_reply(reply_text: str | None, case: Any, scorer: str = "paper") -> Score:
    """Score a model reply for a case with the named scorer ("paper" or "medcalc")."""
    s = _scorer(scorer)
    if reply_text is not None and not isinstance(reply_text, str):
        raise ScoringError(f"reply_text must be a str or None, got {type(reply_text).__name__}")
    return s.score_reply(reply_text, gold_of(case))


def score_value(value: Any, kind: str, case: Any, scorer: str = "paper") -> Score:
    """Score a typed value (executor / library answer) of `kind` "number" | "date" | "weeks_days"."""
    s = _scorer(scorer)
    if kind not in VALUE_KINDS:
        raise ScoringError(f"unknown value kind {kind!r}; expected one of {VALUE_KINDS}")
    return s.score_value(value, kind, gold_of(case))


def score_all(
    case: Any, *, reply_text: str | None = None, value: Any = None, kind: str | None = None
) -> dict[str, Score]:
    """Every scorer's Score for a reply (or, when `kind` is given, a typed value): {scorer name: Score}."""
    if kind is not None:
        return {name: score_value(value, kind, case, name) for name in SCORERS}
    return {name: score_reply(reply_text, case, name) for name in SCORERS}
