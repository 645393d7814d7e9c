"""The `harness stats` payload: accuracies, paired gaps, bootstrap settings and notes of one analysis, JSON-safe."""

from __future__ import annotations

import math

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.paired import MCNEMAR_OUTCOME, accuracy


def _clean(value: object) -> object:
    """JSON-safe copy: NaN -> null, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def stats_payload(an: Analysis) -> dict[str, object]:
    """Everything `harness stats` reports: accuracies, paired gaps, bootstrap settings, notes."""
    d = an.data
    # accuracy is None exactly where the analysis has no record of (model, arm)
    acc = [{"model": m, "arm": a, **ac} for m in d.models for a in d.arms if (ac := accuracy(d, m, a)) is not None]
    payload: dict[str, object] = {
        "bootstrap": an.resampler.describe(),
        "mcnemar_outcome": MCNEMAR_OUTCOME,
        "holm": "within (model, family), case-level tests only",
        "n_cases": d.n_cases,
        "calculators": len(d.calculators),
        "models": d.models,
        "accuracy": acc,
        "gaps": an.gaps,
        "notes": an.notes,
    }
    return {k: _clean(v) for k, v in payload.items()}
