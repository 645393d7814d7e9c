"""Benchmark: build the full s5 table (every paired gap: case and cluster bootstrap, McNemar,
sign-flip permutation at case and calculator level, Holm, ICC) for 4 models x 12 arms x 5 seeds x
1,100 cases of SYNTHETIC correctness data, against a straightforward per-draw loop measured in the
same run.

The loop is timed on a subset of the draws (every gap, `--loop-draws` draws) and extrapolated
linearly to the full draw count; the report says so. Writes JSON (`make bench-stats`: runs/bench/stats.json).
Targets: array version <= 10 s and >= 50x faster than the loop.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import numpy as np

from bench.machine import Machine
from bench.targets import Target
from harness.analysis.results_analysis import analyse, audit_comparisons
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from harness.analysis.stats.families import declared_comparisons
from harness.analysis.stats.hypothesis_tests import holm, mcnemar_exact
from harness.analysis.stats.icc import summarize
from harness.analysis.stats.paired import Pair, collect_pairs
from harness.analysis.stats.synthetic_records import synthetic_arrays
from harness.analysis.tables.gaps import table_s5

# The 12 arms of the benchmark's synthetic shape (fixed, so the recorded timings compare across rounds).
BENCH_ARMS = (
    "note-only",
    "note-only-gold",
    "page-no-formula",
    "open-book",
    "extract-lib",
    "gold-lib",
    "extract-lib-recalled",
    "program-solve",
    "program-solve-syntax",
    "blind",
    "blind-vote",
    "blind-repair",
)

TARGETS = (
    Target("array_version_seconds", "<=", 10, label="array_seconds_max"),
    Target("speedup", ">=", 50, label="speedup_min"),
)


def loop_s5(pairs: list[Pair], cluster: np.ndarray, draws: int, seed: int) -> list[dict]:
    """The straightforward version: per gap, per draw, resample and recompute (numpy inside a draw)."""
    rng = np.random.default_rng(seed)
    n_clusters = int(cluster.max()) + 1
    members = [np.flatnonzero(cluster == c) for c in range(n_clusters)]
    rows = []
    for p in pairs:
        n_seeds = len(p.seeds)
        idx = np.flatnonzero(p.cases)
        d = p.diff / n_seeds
        present = p.cases
        cl, cs, perm_case, perm_calc = [], [], 0, 0
        obs = abs(d[idx].sum())
        calc_sums = np.array([d[m].sum() for m in members])
        obs_calc = abs(calc_sums.sum())
        own = [c for c in range(n_clusters) if present[members[c]].any()]  # calculators this pair has
        for _ in range(draws):
            pick = rng.choice(own, len(own))
            cases = np.concatenate([members[c][present[members[c]]] for c in pick])
            cl.append(d[cases].mean())
            boot = rng.choice(idx, idx.size)
            cs.append(d[boot].mean())
            perm_case += abs((rng.choice((-1.0, 1.0), idx.size) * d[idx]).sum()) >= obs - 1e-9
            perm_calc += abs((rng.choice((-1.0, 1.0), n_clusters) * calc_sums).sum()) >= obs_calc - 1e-9
        mc = mcnemar_exact(p.solver_sum[idx] * 2 > n_seeds, p.reference_sum[idx] * 2 > n_seeds)
        s = summarize(d[idx], cluster[idx])
        rows.append(
            {
                "family": (p.model, p.comparison.family),
                "gap": 100 * d[idx].mean(),
                "cluster": np.nanpercentile(cl, [2.5, 97.5]),
                "case": np.percentile(cs, [2.5, 97.5]),
                "p_case": (1 + perm_case) / (1 + draws),
                "p_calc": (1 + perm_calc) / (1 + draws),
                "mcnemar": mc.pvalue,
                "icc": s.icc,
            }
        )
    fams: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        fams.setdefault(r["family"], []).append(i)
    for idxs in fams.values():
        for key in ("p_case", "p_calc", "mcnemar"):
            for i, v in zip(idxs, holm(np.array([rows[i][key] for i in idxs]))):
                rows[i][key + "_holm"] = v
    return rows


def main(out: Path, draws: int = DEFAULT_DRAWS, loop_draws: int = 200, repeats: int = 3) -> int:
    machine = Machine()
    shape = partial(
        synthetic_arrays, n_models=4, arms=BENCH_ARMS, seeds=(42, 43, 44, 45, 46), cases_per_calc=20, n_calculators=55
    )
    times = []
    for _ in range(repeats):
        data = shape(seed=1)
        t0 = time.perf_counter()
        an = analyse(None, draws=draws, seed=DEFAULT_SEED, data=data)
        table = table_s5(an)
        _ = table.to_markdown() + table.to_latex() + table.to_csv()
        times.append(time.perf_counter() - t0)
    fast = float(np.median(times))
    n_gaps = len(an.gaps)

    # Same pairs (hybrids included), the loop on a subset of draws.
    data = shape(seed=1)
    an2 = analyse(None, draws=100, seed=DEFAULT_SEED, data=data)  # adds hybrids to `data`
    comps = list(declared_comparisons(data.arms)) + (list(audit_comparisons()) if an2.audit is not None else [])
    pairs, _ = collect_pairs(data, comps)
    # Time the loop at two draw counts and fit time = fixed + per_draw * draws, so the per-gap work
    # done once (McNemar, ICC, Holm) is not multiplied by the extrapolation.
    timed = {}
    for n_draws in (loop_draws // 2, loop_draws):
        t0 = time.perf_counter()
        loop_rows = loop_s5(pairs, data.cluster, n_draws, seed=DEFAULT_SEED)
        timed[n_draws] = time.perf_counter() - t0
    (d1, t1), (d2, t2) = sorted(timed.items())
    per_draw = max((t2 - t1) / (d2 - d1), 0.0)
    fixed = max(t2 - per_draw * d2, 0.0)
    loop_full = fixed + per_draw * draws
    loop_measured = t2
    gap_diff = max(abs(r["gap"] - g["gap"]) for r, g in zip(loop_rows, an2.gaps))
    speedup = loop_full / fast
    measured = {"array_version_seconds": fast, "speedup": speedup}
    report = {
        "benchmark": "full s5 table (every declared paired gap) on synthetic correctness data",
        "data": {
            "models": 4,
            "arms": 12,
            "seeds": 5,
            "cases": 1100,
            "calculators": 55,
            "synthetic": True,
            "derived_hybrid_arms": len(an.hybrids),
            "paired_gaps": n_gaps,
        },
        "draws": draws,
        "array_version_seconds": round(fast, 3),
        "array_version_repeats": [round(t, 3) for t in times],
        "loop_draws_measured": loop_draws,
        "loop_seconds_measured": round(loop_measured, 3),
        "loop_seconds_extrapolated": round(loop_full, 1),
        "loop_seconds_at": {str(k): round(v, 3) for k, v in timed.items()},
        "loop_note": f"EXTRAPOLATED: the per-draw loop was timed on {d1} and {d2} of {draws} draws for every "
        "gap; time = fixed + per_draw * draws fitted to the two runs and evaluated at the full count",
        "loop_vs_array_max_point_gap_difference_pp": gap_diff,
        "speedup": round(speedup, 1),
        "targets": {t.key: t.bound for t in TARGETS},
        "meets_targets": all(t.met(measured[t.name]) for t in TARGETS),
        "machine": {
            "cpus": machine.cores,
            "python": machine.python,
            "numpy": np.__version__,
            "platform": machine.platform,
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if report["meets_targets"] else 1
