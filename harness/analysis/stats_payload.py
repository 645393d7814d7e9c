"""The `harness stats` payload: accuracies, paired gaps, bootstrap settings and notes of one analysis, JSON-safe."""

from __future__ import annotations

import math

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.paired import MCNEMAR_OUTCOME, accuracy


def _clean(value):
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


def stats_payload(an: Analysis) -> dict:
    """Everything `harness stats` reports: accuracies, paired gaps, bootstrap settings, notes."""
    d = an.data
    acc = [{"model": m, "arm": a, **accuracy(d, m, a)} for m in d.models for a in d.arms if d.has(m, a)]
    return _clean(
        {
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
    )
