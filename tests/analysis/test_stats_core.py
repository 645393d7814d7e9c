"""Statistics core against reference implementations (scipy, statsmodels, exhaustive enumeration,
an independent slow-loop bootstrap, data simulated with a known ICC)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from harness.analysis.stats.bootstrap import Resampler, percentile_interval, ratio
from harness.analysis.stats.hypothesis_tests import holm, mcnemar_exact, sign_flip_p
from harness.analysis.stats.icc import design_effect, effective_sample_size, icc1, summarize


# ---- McNemar --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_mcnemar_matches_scipy_and_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 200))
    x = rng.random(n) < rng.uniform(0.2, 0.9)
    y = rng.random(n) < rng.uniform(0.2, 0.9)
    got = mcnemar_exact(x, y)
    b, c = int(np.sum(x & ~y)), int(np.sum(~x & y))
    assert (got.b, got.c) == (b, c)
    table = [[int(np.sum(x & y)), b], [c, int(np.sum(~x & ~y))]]
    assert got.pvalue == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-12, abs=1e-15)
    if b + c:
        assert got.pvalue == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12, abs=1e-15)


def test_mcnemar_no_discordant_pairs_is_one_and_rejects_unpaired():
    assert mcnemar_exact([True, False], [True, False]).pvalue == 1.0
    with pytest.raises(ValueError, match="paired"):
        mcnemar_exact([True], [True, False])


# ---- Holm ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_holm_matches_statsmodels_holm(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, size=int(rng.integers(1, 12))) ** rng.uniform(0.5, 3)
    p[rng.random(p.size) < 0.2] = p[0]  # ties
    ref = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), ref, rtol=1e-12)


def test_holm_is_not_holm_sidak_and_skips_nan():
    p = np.array([0.01, 0.02, 0.03, np.nan])
    got = holm(p)
    assert np.isnan(got[3])
    np.testing.assert_allclose(got[:3], multipletests(p[:3], method="holm")[1])
    assert not np.allclose(got[:3], multipletests(p[:3])[1])  # statsmodels' default is Holm-Sidak


# ---- sign-flip permutation ----------------------------------------------------------------------
def _brute_sign_flip(d):
    d = np.asarray(d, dtype=float)
    obs = abs(d.sum())
    stats = [abs(np.dot(s, d)) for s in itertools.product((-1, 1), repeat=d.size)]
    return np.mean([s >= obs - 1e-12 for s in stats])


@pytest.mark.parametrize("seed", range(10))
def test_sign_flip_exact_equals_exhaustive_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 11))
    d = rng.integers(-5, 6, size=n).astype(float)  # includes zeros and ties
    assert sign_flip_p(d)[0] == pytest.approx(_brute_sign_flip(d), abs=1e-12)


def test_sign_flip_monte_carlo_agrees_with_exact_within_error():
    rng = np.random.default_rng(3)
    d = rng.integers(-3, 4, size=16).astype(float) + 0.5 * (rng.random(16) < 0.5)
    d = np.round(d * 2)  # integer-valued, some ties
    exact = sign_flip_p(d)[0]
    signs = 2.0 * rng.integers(0, 2, size=(20000, d.size)) - 1
    mc = sign_flip_p(d, signs, exact_max=0)[0]
    se = np.sqrt(exact * (1 - exact) / 20000)
    assert abs(mc - exact) < 4 * se + 1e-4


def test_sign_flip_rows_share_signs_and_zero_diff_is_one():
    d = np.zeros((2, 30))
    d[1, :20] = 1
    signs = 2.0 * np.random.default_rng(1).integers(0, 2, size=(999, 30)) - 1
    p = sign_flip_p(d, signs)
    assert p[0] == 1.0
    assert p[1] == pytest.approx(1 / 1000)  # all 20 positive: no permutation of 999 reaches it


# ---- bootstrap ----------------------------------------------------------------------------------
def _slow_cluster_bootstrap(d_case, cluster, draws, seed):
    """Independent per-draw loop: resample calculators, concatenate their cases, average."""
    rng = np.random.default_rng(seed)
    groups = [d_case[cluster == c] for c in range(cluster.max() + 1)]
    out = np.empty(draws)
    for b in range(draws):
        pick = rng.integers(0, len(groups), len(groups))
        out[b] = np.concatenate([groups[c] for c in pick]).mean()
    return np.percentile(out, [2.5, 97.5])


def test_cluster_bootstrap_agrees_with_slow_loop_on_unequal_clusters():
    rng = np.random.default_rng(7)
    sizes = rng.integers(3, 25, size=30)  # unbalanced, like the v1.0 slice
    cluster = np.repeat(np.arange(30), sizes)
    n_seeds = 5
    eff = rng.normal(0, 0.3, size=30)[cluster]
    a = (rng.random((n_seeds, cluster.size)) < 0.6 + eff.clip(-0.3, 0.3)).astype(float)
    r = (rng.random((n_seeds, cluster.size)) < 0.5).astype(float)
    diff, weight = (a - r).sum(0), np.full(cluster.size, float(n_seeds))
    res = Resampler(cluster, draws=6000, seed=11)
    fast = percentile_interval(res.cluster_draws(diff, weight))[:, 0]
    slow = _slow_cluster_bootstrap(diff / n_seeds, cluster, 6000, 12)
    # Monte Carlo error of a 2.5% quantile with 6000 draws: compare against the draws' spread.
    spread = fast[1] - fast[0]
    np.testing.assert_allclose(fast, slow, atol=0.06 * spread)
    assert ratio(diff, weight)[0] == pytest.approx((a - r).mean())


def test_case_bootstrap_matches_normal_theory_width():
    rng = np.random.default_rng(2)
    cluster = np.repeat(np.arange(50), 20)
    d = rng.normal(0.1, 1.0, size=cluster.size)
    res = Resampler(cluster, draws=8000, seed=5)
    lo, hi = percentile_interval(res.case_draws(d, np.ones_like(d)))[:, 0]
    se = d.std(ddof=0) / np.sqrt(d.size)
    assert (hi - lo) == pytest.approx(2 * 1.959964 * se, rel=0.05)
    assert lo < d.mean() < hi


def test_resampler_is_deterministic_and_shared_across_rows():
    cluster = np.repeat(np.arange(10), 4)
    r1, r2 = Resampler(cluster, draws=500, seed=3), Resampler(cluster, draws=500, seed=3)
    _ = r2.case_counts  # building another matrix first must not change the cluster draws
    np.testing.assert_array_equal(r1.cluster_counts, r2.cluster_counts)
    assert r1.cluster_counts.sum(axis=1).tolist() == [10] * 500
    assert r1.case_counts.sum(axis=1).tolist() == [40] * 500
    x = np.arange(40.0) % 3
    both = r1.cluster_draws(np.stack([x, 2 * x]), np.ones((2, 40)))
    np.testing.assert_array_equal(both[:, 1], 2 * both[:, 0])  # same draws for every row
    assert not np.array_equal(Resampler(cluster, draws=500, seed=4).cluster_counts, r1.cluster_counts)


def test_missing_cases_carry_zero_weight():
    cluster = np.repeat(np.arange(4), 3)
    d = np.array([1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1.0])
    w = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1.0])  # two cases absent
    res = Resampler(cluster, draws=300, seed=1)
    draws = res.cluster_draws(d * w, w)[:, 0]
    manual = []
    for row in res.cluster_counts:
        num = sum(row[c] * (d * w)[cluster == c].sum() for c in range(4))
        den = sum(row[c] * w[cluster == c].sum() for c in range(4))
        manual.append(num / den)
    np.testing.assert_allclose(draws, manual)


# ---- ICC ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("true_icc", [0.1, 0.5, 0.8])
def test_icc1_recovers_known_icc_with_unequal_clusters(true_icc):
    rng = np.random.default_rng(int(true_icc * 100))
    sizes = rng.integers(5, 30, size=400)
    cluster = np.repeat(np.arange(400), sizes)
    u = rng.normal(0, np.sqrt(true_icc), size=400)[cluster]
    y = u + rng.normal(0, np.sqrt(1 - true_icc), size=cluster.size)
    assert icc1(y, cluster) == pytest.approx(true_icc, abs=0.05)


def test_icc1_balanced_matches_anova_formula_and_design_effect():
    rng = np.random.default_rng(9)
    k, m = 55, 20
    cluster = np.repeat(np.arange(k), m)
    y = rng.normal(size=k)[cluster] + rng.normal(size=k * m)
    means = y.reshape(k, m).mean(1)
    msb = m * ((means - y.mean()) ** 2).sum() / (k - 1)
    msw = ((y.reshape(k, m) - means[:, None]) ** 2).sum() / (k * (m - 1))
    assert icc1(y, cluster) == pytest.approx((msb - msw) / (msb + (m - 1) * msw))
    # the paper: ICC 0.68 and 0.81 on 55 x 20 give effective sizes 79 and 67
    assert round(effective_sample_size(1100, design_effect(0.68, 20))) == 79
    assert round(effective_sample_size(1100, design_effect(0.81, 20))) == 67
    s = summarize(y, cluster)
    assert s.clusters == 55 and s.mean_cluster_size == 20 and s.effective_n == pytest.approx(1100 / s.design_effect)


def test_icc_undefined_cases_are_nan():
    assert np.isnan(icc1([1.0, 2.0], [0, 1]))
    assert np.isnan(icc1(np.zeros(10), np.repeat([0, 1], 5)))
    assert design_effect(-0.2, 20) == 1.0


def test_subset_rows_resample_exactly_their_own_units():
    """A gap on a subset of calculators (e.g. the covered 440) resamples |S| calculators from S in
    every draw, like a slow loop over that subset alone; other rows keep the full-set draws."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(4, 12, size=40)
    cluster = np.repeat(np.arange(40), sizes)
    subset = np.isin(cluster, np.arange(0, 40, 3))  # 14 calculators
    d = rng.integers(-1, 2, size=cluster.size).astype(float) + (cluster % 3 == 0) * (cluster % 5 == 0)
    full_w = np.ones(cluster.size)
    res = Resampler(cluster, draws=6000, seed=21)
    draws = res.cluster_draws(np.stack([d * subset, d]), np.stack([full_w * subset, full_w]))
    assert not np.isnan(draws).any()
    counts = res.subset_counts("cluster", np.flatnonzero(np.bincount(cluster, weights=subset) > 0))
    assert counts.shape == (6000, 14) and set(counts.sum(axis=1).tolist()) == {14.0}
    fast = percentile_interval(draws[:, 0])[:, 0]
    sub_cluster = np.unique(cluster[subset], return_inverse=True)[1]
    slow = _slow_cluster_bootstrap(d[subset], sub_cluster, 6000, 3)
    np.testing.assert_allclose(fast, slow, atol=0.06 * (fast[1] - fast[0]))
    full_only = Resampler(cluster, draws=6000, seed=21).cluster_draws(d, full_w)[:, 0]
    np.testing.assert_array_equal(draws[:, 1], full_only)  # the subset row does not disturb the others
    case = res.case_draws(d * subset, full_w * subset)
    assert res.subset_counts("case", np.flatnonzero(subset)).sum(axis=1).tolist() == [subset.sum()] * 6000
    assert not np.isnan(case).any()
