"""Library-first hybrid baselines, assembled per case and seed from stored arms.

Gold-first answers with the Gold-Solve library where it answers (its own calculators); Extract-first
with the Extract-Solve library whenever it answers. Every other case-seed row takes the fallback
arm's row: Program-Solve or Open-book arithmetic. A hybrid row exists only where the library row and
the fallback row both exist for that (model, seed, case). Hybrids are added to the arrays as
derived arms named `hybrid:<library>-first+<fallback>`.
"""

from __future__ import annotations

import numpy as np

from harness.analysis.stats.arrays import OUTCOME_CODE, CorrectnessArrays
from harness.analysis.stats.labels import FALLBACKS, HYBRIDS, LIBRARIES, hybrid_name  # noqa: F401  (re-exported)
from harness.core.outcomes import RowOutcome


def assemble(
    library: np.ndarray, library_outcome: np.ndarray, fallback: np.ndarray, fallback_outcome: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Combine [S, N] library and fallback rows; returns (correct, outcome, library_used) arrays.

    A row is the library's when the library answered, else the fallback's; it is missing (NaN, -1)
    when either source row is missing."""
    present = ~np.isnan(library) & ~np.isnan(fallback)
    use_lib = present & (library_outcome == OUTCOME_CODE[RowOutcome.ANSWERED.value])
    correct = np.where(use_lib, library, fallback)
    correct = np.where(present, correct, np.nan)
    outcome = np.where(use_lib, library_outcome, fallback_outcome)
    outcome = np.where(present, outcome, -1).astype(np.int8)
    return correct, outcome, use_lib


def add_hybrids(data: CorrectnessArrays) -> list[str]:
    """Add every hybrid whose library and fallback arms exist for at least one model; return their names."""
    added = []
    for name, lib, fb in HYBRIDS:
        if name in data.arms or lib not in data.arms or fb not in data.arms:
            continue
        if not any(data.has(m, lib) and data.has(m, fb) for m in data.models):
            continue
        shape = (len(data.models), len(data.seeds), data.n_cases)
        correct, outcome = np.full(shape, np.nan), np.full(shape, -1, dtype=np.int8)
        for m in data.models:
            mi = data.m(m)
            correct[mi], outcome[mi], _ = assemble(
                data.block(m, lib), data.outcome_block(m, lib), data.block(m, fb), data.outcome_block(m, fb)
            )
        data.add_arm(name, correct, outcome)
        added.append(name)
    return added


def library_share(data: CorrectnessArrays, model: str, name: str) -> float:
    """Fraction of a hybrid's case-seed rows answered by its library."""
    _, lib, fb = next(h for h in HYBRIDS if h[0] == name)
    _, _, used = assemble(
        data.block(model, lib), data.outcome_block(model, lib), data.block(model, fb), data.outcome_block(model, fb)
    )
    rows = ~np.isnan(data.block(model, name))
    return float(used[rows].mean()) if rows.any() else float("nan")
