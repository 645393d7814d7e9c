"""The user's statistics behind the paper's numbers and claims, each with the cases and seeds it stands on.

Every function returns a `Stat` (or None when the results have nothing for it): the value, the user's 95%
calculator-cluster interval, the cases and seeds behind it (its own: not the union over the result set), its
per-seed values (the seed spread of harness.analysis.comparison.tolerance) and the case-seed rows it averages; and
in `extra["cells"]` the [seed, case] blocks of the arms behind it over all their cases (how often the seeds of a run
disagree is a property of the run, which the paper's rerun agreement measured over 440 cases, not of a subset).
Gaps come from the analysis's declared paired gaps (harness.analysis.stats.paired: the paired cases and seeds of
the two arms); accuracies, shares and counts from the correctness arrays; truncation and routing from the facts the
same one read of each results file gave (harness.analysis.stats.arrays: no record is parsed twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.analysis.comparison.values import cases_per_calculator, paper_cases
from harness.analysis.results_analysis import Analysis
from harness.analysis.stats import icc as icc_mod
from harness.analysis.stats.arrays import OUTCOME_CODE
from harness.analysis.stats.bootstrap import percentile_interval
from harness.analysis.stats.catalog import audit_calculators
from harness.analysis.tables.ladder import seed_agreement as seed_agreement_of
from harness.arms.registry import ARMS, paper_arms
from harness.core.outcomes import RowOutcome

ANSWERED = OUTCOME_CODE[RowOutcome.ANSWERED.value]


@dataclass
class Stat:
    value: float
    lo: float | None = None
    hi: float | None = None
    n_cases: int = 0
    seeds: tuple[int, ...] = ()
    per_seed: list[float] = field(default_factory=list)
    rows: int = 0
    arms: int = 1
    extra: dict = field(default_factory=dict)

    @property
    def n_text(self) -> str:
        return f"{self.n_cases:,} \u00d7 {len(self.seeds)}" if self.seeds else f"{self.n_cases:,}"


def subset_calculators(an: Analysis, subset: str) -> set[int] | None:
    """Calculator ids of a subset: None for all; the library's; an audit group or 'not_replaced'."""
    if subset in ("full", "all"):
        return None
    if subset == "impl":
        return set(an.library)
    return audit_calculators(subset)


def expected_cases(an: Analysis, subset: str) -> int:
    """The paper's number of cases on a subset: 1,100, or 20 per calculator of the subset."""
    calcs = subset_calculators(an, subset)
    return paper_cases() if calcs is None else cases_per_calculator() * len(calcs)


def _mask(an: Analysis, subset: str) -> np.ndarray:
    return an.data.case_mask(subset_calculators(an, subset))


def _block(an: Analysis, model: str, arm: str, subset: str) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    """[S, N] correctness of the seeds the arm ran, those seeds, and the subset mask."""
    d = an.data
    smask = d.seed_mask(model, arm)
    return d.block(model, arm)[smask], tuple(s for s, ok in zip(d.seeds, smask) if ok), _mask(an, subset)


def calculator_counts(an: Analysis, cases: np.ndarray) -> dict[int, int]:
    """Calculator id -> how many of the cases `cases` (a boolean mask over the analysis's cases) it has: what a
    number's coverage is judged by (by calculator and case, never by count alone)."""
    ids, n = np.unique(an.data.calculator_ids[cases], return_counts=True)
    return {int(i): int(k) for i, k in zip(ids, n)}


def _cluster_ci(an: Analysis, numer: np.ndarray, weight: np.ndarray) -> tuple[float | None, float | None]:
    if not weight.any():
        return None, None
    lo, hi = 100 * percentile_interval(an.resampler.cluster_draws(numer[None, :], weight[None, :]))[:, 0]
    return float(lo), float(hi)


def accuracy(an: Analysis, model: str, arm: str, subset: str) -> Stat | None:
    """Mean over seeds of each seed's accuracy (%) on the subset's cases it has (harness.analysis.stats.paired)."""
    d = an.data
    if not d.has(model, arm):
        return None
    block, seeds, mask = _block(an, model, arm, subset)
    b = block[:, mask]
    have = ~np.isnan(b)
    if not have.any():
        return None
    per_seed = [100 * float(np.nansum(b[s]) / have[s].sum()) for s in range(b.shape[0]) if have[s].any()]
    numer = np.zeros(d.n_cases)
    weight = np.zeros(d.n_cases)
    numer[mask] = np.nansum(b, axis=0)
    weight[mask] = have.sum(axis=0)
    lo, hi = _cluster_ci(an, numer, weight)
    full = np.zeros(d.n_cases, dtype=bool)
    full[np.flatnonzero(mask)[have.all(axis=0)]] = True
    return Stat(
        float(np.mean(per_seed)),
        lo,
        hi,
        int(have.all(axis=0).sum()),
        seeds,
        per_seed,
        int(have.sum()),
        extra={
            "cells": [block],
            "calcs": calculator_counts(an, full),
            "clusters": len(set(d.cluster[weight > 0].tolist())),
        },
    )


def gap(an: Analysis, model: str, solver: str, reference: str, subset: str) -> Stat | None:
    """A declared paired gap (pp): the paired cases and seeds of the two arms."""
    row = an.gap(model, solver, reference, "all" if subset == "full" else subset)
    if row is None:
        return None
    d = an.data
    smask = np.isin(d.seeds, row["seeds"])
    a, r = d.block(model, solver)[smask], d.block(model, reference)[smask]
    cases = ~np.isnan(a).any(axis=0) & ~np.isnan(r).any(axis=0) & _mask(an, "all" if subset == "full" else subset)
    per_seed = [100 * float(np.mean(a[s, cases] - r[s, cases])) for s in range(a.shape[0])]
    return Stat(
        float(row["gap"]),
        float(row["cluster_lo"]),
        float(row["cluster_hi"]),
        int(row["n_cases"]),
        tuple(row["seeds"]),
        per_seed,
        int(row["n_cases"]) * len(row["seeds"]),
        2,
        {
            "calcs": calculator_counts(an, cases),
            "icc": row["icc"],
            "effective_n": row["effective_n"],
            "perm_p": row["perm_p_case_holm"],
            "perm_p_raw": row["perm_p_case"],
            "cases_mask": cases,
            "seed_mask": smask,
            "cells": [a, r],
        },
    )


def difference(an: Analysis, model: str, solver: str, reference: str, subset: str) -> Stat | None:
    """Accuracy of `solver` minus accuracy of `reference` on a subset (each on its own cases): the audit-group
    comparison of table s11."""
    a, r = accuracy(an, model, solver, subset), accuracy(an, model, reference, subset)
    if a is None or r is None:
        return None
    seeds = tuple(s for s in a.seeds if s in r.seeds)
    per = [a.per_seed[a.seeds.index(s)] - r.per_seed[r.seeds.index(s)] for s in seeds]
    return Stat(a.value - r.value, None, None, min(a.n_cases, r.n_cases), seeds, per, min(a.rows, r.rows), 2)


def share(an: Analysis, model: str, arm: str, kind: str) -> Stat | None:
    """Share (%) of the arm's case-seed rows with no valid answer ('none') or answered wrong ('wrong')."""
    d = an.data
    if not d.has(model, arm):
        return None
    smask = d.seed_mask(model, arm)
    out = d.outcome_block(model, arm)[smask]
    cor = d.block(model, arm)[smask]
    have = out >= 0
    hit = have & (out != ANSWERED) if kind == "none" else have & (out == ANSWERED) & (cor == 0)
    per_seed = [100 * float(hit[s].sum() / have[s].sum()) for s in range(out.shape[0]) if have[s].any()]
    lo, hi = _cluster_ci(an, hit.sum(axis=0).astype(float), have.sum(axis=0).astype(float))
    seeds = tuple(s for s, ok in zip(d.seeds, smask) if ok)
    return Stat(
        100 * float(hit.sum() / max(have.sum(), 1)),
        lo,
        hi,
        int(have.all(axis=0).sum()),
        seeds,
        per_seed,
        int(have.sum()),
        extra={
            "count": int(hit.sum()),
            "cells": [np.where(have, hit, np.nan)],
            "calcs": calculator_counts(an, have.all(axis=0)),
            "clusters": len(set(d.cluster[have.any(axis=0)].tolist())),
        },
    )


def icc_and_ess(an: Analysis, model: str, solver: str, reference: str) -> dict | None:
    """ICC(1) and effective sample size of a paired gap (harness.analysis.stats.icc on the seed-averaged per-case
    differences) and their leave-one-seed-out values."""
    g = gap(an, model, solver, reference, "all")
    if g is None:
        return None
    d = an.data
    smask, cases = g.extra["seed_mask"], g.extra["cases_mask"]
    diff = (d.block(model, solver)[smask] - d.block(model, reference)[smask])[:, cases]
    loo = (
        [icc_mod.summarize(np.delete(diff, k, axis=0).mean(axis=0), d.cluster[cases]) for k in range(diff.shape[0])]
        if diff.shape[0] > 2
        else []
    )
    return {
        "icc": float(g.extra["icc"]),
        "effective_n": float(g.extra["effective_n"]),
        "stat": g,
        "loo_icc": [s.icc for s in loo],
        "loo_effective_n": [s.effective_n for s in loo],
    }


def seed_agreement(an: Analysis, model: str, arm: str) -> dict | None:
    """Table s19's agreement of one (model, arm): % of cases all seeds score alike, over the cases present at
    every seed (harness.analysis.tables.ladder.seed_agreement)."""
    if not an.data.has(model, arm):
        return None
    return seed_agreement_of(an.data.block(model, arm))


def pairwise_agreement(an: Analysis, model: str, arm: str, subset: str) -> Stat | None:
    """Mean over seed pairs of the per-case agreement (%) on a subset: how often two repeated runs agree."""
    if not an.data.has(model, arm):
        return None
    block, seeds, mask = _block(an, model, arm, subset)
    b = block[:, mask]
    b = b[:, ~np.isnan(b).any(axis=0)]
    if b.shape[0] < 2 or not b.size:
        return None
    pairs = [100 * float(np.mean(b[i] == b[j])) for i in range(len(b)) for j in range(i + 1, len(b))]
    return Stat(float(np.mean(pairs)), None, None, int(b.shape[1]), seeds, [], int(b.size))


def greedy_arms(kind: str) -> list[str]:
    """The paper's arms table s19 reads: greedy (temperature 0), model-calling; 'moving': the seed picks the
    worked example (the note-only arms), 'greedy': every other one."""
    out = []
    for name in paper_arms():
        a = ARMS[name]
        if not a.needs_model or a.temperature != 0 or a.samples != 1:
            continue
        if (a.example == "seeded") == (kind == "moving"):
            out.append(name)
    return out


def formula_arms() -> list[str]:
    """The formula-reading arms of the paper (the formula text is in the prompt)."""
    return [n for n in paper_arms() if ARMS[n].formula and ARMS[n].needs_model]


def truncation(an: Analysis, model: str, arms: list[str]) -> dict | None:
    """Calls that ended at the output-token limit among the arms' records of `model` (the facts the analysis read
    with the arrays, harness.analysis.stats.arrays.record_facts): share of calls (%), calls, truncated calls,
    truncated rows scored correct, the seeds, rows and (the fewest of any arm's) cases."""
    d = an.data
    ran = [a for a in arms if d.has(model, a)]
    if not ran or d.calls is None or d.cut is None:  # calls and cut are set together (build_arrays)
        return None
    calls = cut = correct = rows = 0
    seeds: set[int] = set()
    cases = []
    for arm in ran:
        c, k = d.calls[d.m(model), d.a(arm)], d.cut[d.m(model), d.a(arm)]
        have = c >= 0
        calls += int(c[have].sum())
        cut += int(k[have].sum())
        correct += int(np.sum(have & (k > 0) & (d.block(model, arm) == 1)))
        rows += int(have.sum())
        seeds |= {s for s, ok in zip(d.seeds, have.any(axis=1)) if ok}
        cases.append(int(have.any(axis=0).sum()))
    return {
        "share": 100 * cut / calls if calls else 0.0,
        "calls": calls,
        "truncated": cut,
        "correct": correct,
        "seeds": tuple(sorted(seeds)),
        "rows": rows,
        "cases": min(cases),
    }


def route_share(an: Analysis, model: str, arm: str, route: str) -> Stat | None:
    """Share (%) of the arm's rows whose router/recall detail names `route` (the recalled library: 'library')."""
    d = an.data
    if not d.has(model, arm):
        return None
    have = d.outcome_block(model, arm) >= 0
    seeds, per_seed, hit = [], [], 0
    for i, s in enumerate(d.seeds):
        if have[i].any():
            k = d.routes.get((model, arm, s), {}).get(route, 0)
            seeds.append(s)
            per_seed.append(100 * k / int(have[i].sum()))
            hit += k
    return Stat(
        100 * hit / int(have.sum()), None, None, int(have.any(axis=0).sum()), tuple(seeds), per_seed, int(have.sum())
    )
