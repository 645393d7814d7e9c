"""Hypothesis tests for paired arms: exact McNemar, sign-flip permutation, Holm within a family.

* `mcnemar_exact(x, y)`: two-sided exact McNemar on a declared per-case binary outcome; with b and c
  the discordant counts, p = min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)]).
* `sign_flip_p(d, ...)`: two-sided sign-flip permutation test of mean(d) = 0 for per-unit
  differences d (seed-averaged per-case differences, or their per-calculator sums for the
  calculator-level test). Exact enumeration of all 2^n sign patterns of the non-zero differences
  when n is small, else Monte Carlo over a shared sign matrix with p = (1 + #{|T*| >= |T|}) / (1 + B).
* `holm(p)`: Holm's step-down adjustment (not Holm-Sidak).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.analysis.stats.bootstrap import exact_matmul

EXACT_MAX_NONZERO = 16  # enumerate 2^n sign patterns up to this many non-zero differences


@dataclass(frozen=True)
class McNemar:
    b: int  # x right, y wrong
    c: int  # x wrong, y right
    pvalue: float


def mcnemar_exact(x: np.ndarray, y: np.ndarray) -> McNemar:
    """Exact two-sided McNemar test on paired binary outcomes x, y (bool arrays of one length)."""
    x = np.asarray(x, dtype=bool)
    y = np.asarray(y, dtype=bool)
    if x.shape != y.shape:
        raise ValueError(f"McNemar needs paired outcomes of one length, got {x.shape} and {y.shape}")
    b = int(np.sum(x & ~y))
    c = int(np.sum(~x & y))
    n = b + c
    from scipy.stats import binom  # here, not at import: scipy.stats costs about 0.7 CPU-s to import

    p = 1.0 if n == 0 else min(1.0, 2.0 * float(binom.cdf(min(b, c), n, 0.5)))
    return McNemar(b, c, p)


def _exact_sign_flip(d: np.ndarray) -> float:
    """Exact two-sided p over all 2^n sign patterns of the non-zero entries of d (integer-valued)."""
    nz = d[d != 0]
    n = nz.size
    if n == 0:
        return 1.0
    observed = abs(nz.sum())
    # Sum over patterns: sum_i s_i |d_i|; enumerate by bits, in chunks to bound memory.
    absd = np.abs(nz)
    total = absd.sum()
    count = 0
    patterns = 1 << n
    chunk = 1 << min(n, 16)
    bit = 1 << np.arange(n, dtype=np.int64)
    for start in range(0, patterns, chunk):
        codes = np.arange(start, min(start + chunk, patterns), dtype=np.int64)
        neg = ((codes[:, None] & bit) != 0).astype(np.float64) @ absd  # sum of |d| flipped negative
        stat = np.abs(total - 2.0 * neg)
        count += int(np.sum(stat >= observed - 1e-9 * max(1.0, observed)))
    return count / patterns


def sign_flip_p(d: np.ndarray, signs: np.ndarray | None = None, exact_max: int = EXACT_MAX_NONZERO) -> np.ndarray:
    """Two-sided sign-flip p-values for rows of d [K, U] (or one vector [U]).

    Rows with at most `exact_max` non-zero entries are enumerated exactly; others use `signs`
    [B, U] (+-1) shared by every row. Use integer-valued d (e.g. seed-summed differences) so ties
    compare exactly; scaling d does not change p."""
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    out = np.empty(d.shape[0])
    mc_rows = []
    for k, row in enumerate(d):
        if np.count_nonzero(row) <= exact_max:
            out[k] = _exact_sign_flip(row)
        else:
            mc_rows.append(k)
    if mc_rows:
        if signs is None:
            raise ValueError("a sign matrix is needed for rows with many non-zero differences")
        if signs.shape[1] != d.shape[1]:
            raise ValueError(f"sign matrix has {signs.shape[1]} units, differences have {d.shape[1]}")
        sub = d[mc_rows]
        observed = np.abs(sub.sum(axis=1))
        perm = np.abs(exact_matmul(signs, sub.T, 1.0))  # [B, K]
        tol = 1e-9 * np.maximum(1.0, observed)
        exceed = np.sum(perm >= observed - tol, axis=0)
        out[mc_rows] = (1.0 + exceed) / (1.0 + signs.shape[0])
    return out


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries are left out of the family and stay NaN)."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out
