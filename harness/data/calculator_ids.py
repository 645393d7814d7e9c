"""The 55 calculator ids of MedCalc-Bench, the only ones a dataset row may name.

Source: ncbi-nlp/MedCalc-Bench evaluation/evaluate.py at commit 5523b77, `check_correctness`, lines 13, 19,
34 and 41: the date ids, the gestational-age id, the integer ids and the decimal ids; any other id reaches
line 49, ``raise ValueError(f"Unknown calculator ID: {calid}")``. The union of those lists is the 55 ids
below; MedCalc-Bench Verified keeps the same 55 calculators (its one-shot split has one row for each).
The kit's formula catalogue and library are keyed by these ids too, so a row naming any other id could be
neither prompted nor scored: the dataset loader refuses it (harness/data/dataset.py).
"""

from __future__ import annotations

__all__ = ["CALCULATOR_IDS"]

CALCULATOR_IDS: frozenset[int] = frozenset(
    {
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        13,
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        22,
        23,
        24,
        25,
        26,
        27,
        28,
        29,
        30,
        31,
        32,
        33,
        36,
        38,
        39,
        40,
        43,
        44,
        45,
        46,
        48,
        49,
        51,
        56,
        57,
        58,
        59,
        60,
        61,
        62,
        63,
        64,
        65,
        66,
        67,
        68,
        69,
    }
)
