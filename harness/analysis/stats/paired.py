"""Paired gaps of declared comparisons, all computed on one shared `Resampler`.

For a (model, solver, reference) pair the paired seeds are the seeds both arms ran and the paired
cases those both arms have at every paired seed (restricted to a calculator subset if declared).
Each case contributes its seed-summed difference D_i and weight w_i = number of paired seeds; the
gap is sum(D) / sum(w), i.e. the mean seed-averaged per-case difference, in percentage points.
Every pair of every model is stacked into [K, N] matrices, so all intervals and permutation tests
come from a handful of matrix products over the same draws.

Secondary tests (case level): exact McNemar on the declared binary outcome "correct on a strict
majority of the paired seeds"; sign-flip permutation on the seed-averaged per-case differences; and
beside it the same sign-flip with whole calculators as units. Holm within (model, family).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from harness.analysis.stats import catalog
from harness.analysis.stats import icc as icc_mod
from harness.analysis.stats.arrays import CorrectnessArrays
from harness.analysis.stats.bootstrap import Resampler, percentile_interval, ratio
from harness.analysis.stats.families import Comparison
from harness.analysis.stats.hypothesis_tests import holm, mcnemar_exact, sign_flip_p

MCNEMAR_OUTCOME = "correct on a strict majority of the paired seeds"


@dataclass
class Pair:
    model: str
    comparison: Comparison
    seeds: list[int]
    cases: np.ndarray  # [N] bool
    diff: np.ndarray  # [N] seed-summed solver - reference (0 outside cases)
    weight: np.ndarray  # [N] number of paired seeds (0 outside cases)
    solver_sum: np.ndarray  # [N] seed-summed solver correctness
    reference_sum: np.ndarray


@dataclass
class GapResult:
    rows: list[dict]
    notes: list[str] = field(default_factory=list)
    resampler: dict = field(default_factory=dict)


def subset_calculators(subset: str) -> set[int] | None:
    """Calculator ids of a declared subset, None for all. Raises LookupError naming what is missing."""
    if subset == "all":
        return None
    if subset == "impl":
        return catalog.library_calculators()
    return catalog.audit_calculators(subset)


def make_pair(data: CorrectnessArrays, model: str, comp: Comparison, calculators: set[int] | None = None) -> Pair | str:
    """Build one pair, or return a string saying why it cannot be built."""
    for arm in (comp.solver, comp.reference):
        if not data.has(model, arm):
            return f"{comp.label} ({model}): arm {arm} has no results"
    s_mask = data.seed_mask(model, comp.solver) & data.seed_mask(model, comp.reference)
    if not s_mask.any():
        return f"{comp.label} ({model}): the two arms share no seed"
    a = data.block(model, comp.solver)[s_mask]
    r = data.block(model, comp.reference)[s_mask]
    cases = ~np.isnan(a).any(axis=0) & ~np.isnan(r).any(axis=0) & data.case_mask(calculators)
    if not cases.any():
        return f"{comp.label} ({model}): the two arms share no case"
    a0, r0 = np.where(cases, a, 0.0), np.where(cases, r, 0.0)
    n_seeds = int(s_mask.sum())
    seeds = [s for s, ok in zip(data.seeds, s_mask) if ok]
    return Pair(
        model, comp, seeds, cases, (a0 - r0).sum(axis=0), cases * float(n_seeds), a0.sum(axis=0), r0.sum(axis=0)
    )


def collect_pairs(
    data: CorrectnessArrays, comparisons: Iterable[Comparison], models: Iterable[str] | None = None
) -> tuple[list[Pair], list[str]]:
    pairs, notes = [], []
    for model in models or data.models:
        for comp in comparisons:
            try:
                calcs = subset_calculators(comp.subset)
            except LookupError as exc:
                notes.append(f"{comp.label} on {comp.subset}: {exc}")
                continue
            got = make_pair(data, model, comp, calcs)
            (pairs.append(got) if isinstance(got, Pair) else notes.append(got))
    return pairs, notes


def analyse_pairs(pairs: list[Pair], resampler: Resampler, cluster: np.ndarray) -> list[dict]:
    """Gaps, case and cluster intervals, McNemar, permutation p (case, calculator), ICC, DE, ESS."""
    if not pairs:
        return []
    diff = np.stack([p.diff for p in pairs])
    weight = np.stack([p.weight for p in pairs])
    gap = 100 * ratio(diff, weight)
    cl = 100 * percentile_interval(resampler.cluster_draws(diff, weight))
    cs = 100 * percentile_interval(resampler.case_draws(diff, weight))
    p_case = sign_flip_p(diff, resampler.signs("case"))
    p_calc = sign_flip_p(resampler.to_clusters(diff), resampler.signs("cluster"))
    rows = []
    for k, p in enumerate(pairs):
        n_seeds = len(p.seeds)
        idx = np.flatnonzero(p.cases)
        mc = mcnemar_exact(p.solver_sum[idx] * 2 > n_seeds, p.reference_sum[idx] * 2 > n_seeds)
        summ = icc_mod.summarize(p.diff[idx] / n_seeds, cluster[idx])
        rows.append(
            {
                "model": p.model,
                "family": p.comparison.family,
                "solver": p.comparison.solver,
                "reference": p.comparison.reference,
                "comparison": p.comparison.label,
                "access": p.comparison.access,
                "subset": p.comparison.subset,
                "n_cases": int(idx.size),
                "n_calculators": summ.clusters,
                "seeds": p.seeds,
                "solver_acc": 100 * p.solver_sum[idx].sum() / (idx.size * n_seeds),
                "reference_acc": 100 * p.reference_sum[idx].sum() / (idx.size * n_seeds),
                "gap": gap[k],
                "case_lo": cs[0, k],
                "case_hi": cs[1, k],
                "cluster_lo": cl[0, k],
                "cluster_hi": cl[1, k],
                "mcnemar_b": mc.b,
                "mcnemar_c": mc.c,
                "mcnemar_p": mc.pvalue,
                "perm_p_case": p_case[k],
                "perm_p_calc": p_calc[k],
                "icc": summ.icc,
                "design_effect": summ.design_effect,
                "effective_n": summ.effective_n,
            }
        )
    _holm_within_family(rows)
    return rows


def _holm_within_family(rows: list[dict]) -> None:
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((row["model"], row["family"]), []).append(i)
    for idx in groups.values():
        for col in ("mcnemar_p", "perm_p_case", "perm_p_calc"):
            adj = holm(np.array([rows[i][col] for i in idx]))
            for i, v in zip(idx, adj):
                rows[i][col + "_holm"] = float(v)


def paired_gaps(
    data: CorrectnessArrays,
    comparisons: Iterable[Comparison],
    resampler: Resampler,
    models: Iterable[str] | None = None,
) -> GapResult:
    """Analyse every declared comparison that the results support; notes say what was skipped."""
    pairs, notes = collect_pairs(data, comparisons, models)
    return GapResult(analyse_pairs(pairs, resampler, data.cluster), notes, resampler.describe())


def accuracy(data: CorrectnessArrays, model: str, arm: str, cases: np.ndarray | None = None) -> dict | None:
    """Mean over seeds of per-seed accuracy (%), seed SD, seeds used and cases covered, or None if absent.

    Each seed's accuracy is over the cases that seed has (restricted to `cases` if given)."""
    if not data.has(model, arm):
        return None
    block = data.block(model, arm)[data.seed_mask(model, arm)]
    if cases is not None:
        block = block[:, cases]
    have = ~np.isnan(block)
    if not have.any():
        return None
    per_seed = 100 * np.nansum(block, axis=1) / np.maximum(have.sum(axis=1), 1)
    per_seed = per_seed[have.any(axis=1)]
    return {
        "mean": float(per_seed.mean()),
        "sd": float(per_seed.std(ddof=1)) if per_seed.size > 1 else float("nan"),
        "seeds": int(per_seed.size),
        "cases": int(have.any(axis=0).sum()),
    }
