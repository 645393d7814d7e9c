"""Statistics on per-case results: correctness arrays, shared-draw bootstrap, exact McNemar,
sign-flip permutation, Holm, ICC, and library-first hybrids.

    from harness.analysis.stats import load_arrays, Resampler, paired_gaps, declared_comparisons
    data = load_arrays("results")
    add_hybrids(data)
    res = paired_gaps(data, declared_comparisons(data.arms), Resampler(data.cluster, draws=10_000, seed=...))
"""

from harness.analysis.stats.arrays import CorrectnessArrays, ResultsError, build_arrays, iter_records, load_arrays
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Resampler, percentile_interval
from harness.analysis.stats.families import Comparison, declared_comparisons
from harness.analysis.stats.hybrids import add_hybrids
from harness.analysis.stats.hypothesis_tests import holm, mcnemar_exact, sign_flip_p
from harness.analysis.stats.icc import design_effect, effective_sample_size, icc1
from harness.analysis.stats.paired import accuracy, paired_gaps

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "Comparison",
    "CorrectnessArrays",
    "Resampler",
    "ResultsError",
    "accuracy",
    "add_hybrids",
    "build_arrays",
    "declared_comparisons",
    "design_effect",
    "effective_sample_size",
    "holm",
    "icc1",
    "iter_records",
    "load_arrays",
    "mcnemar_exact",
    "paired_gaps",
    "percentile_interval",
    "sign_flip_p",
]
