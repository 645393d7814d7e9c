"""The analysis step: results on disk -> one `Analysis` every table, figure and the report read.

`analyse(results_dir)` loads the correctness arrays once (one dataset), adds the hybrids and computes every
declared paired gap on one shared set of bootstrap draws (fixed seed). The stored records the record-reading
tables need (s8, s15, the router and formula-version tables) are read through the store's reader
(harness.run.store) once per analysis and cached on it. Nothing here formats a table
(harness.analysis.tables does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from harness.analysis.stats import catalog
from harness.analysis.stats.arrays import CorrectnessArrays, dataset_of, load_arrays
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Resampler
from harness.analysis.stats.families import Comparison, declared_comparisons, headline
from harness.analysis.stats.hybrids import add_hybrids
from harness.analysis.stats.labels import model_label
from harness.analysis.stats.paired import paired_gaps
from harness.run.record import Record
from harness.run.store import iter_result_files, read_result_file

T = TypeVar("T")


@dataclass
class Analysis:
    """What one analysis of a results root holds: arrays, the shared resampler, every declared gap, notes,
    the library's calculators, the catalogue's audit groups, the hybrid arms added, and (when read from a
    results root) the root whose manifests and records the record-reading tables use."""

    data: CorrectnessArrays
    resampler: Resampler
    gaps: list[dict]
    notes: list[str]
    library: set[int]
    audit: dict[int, str]
    hybrids: list[str]
    results_dir: Path | None = None  # the results root (manifests and records for s8, s14, s15, s20-s22)
    _records: dict[str, list[Record]] = field(default_factory=dict, repr=False, compare=False)  # by results file
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """A value derived from this analysis, computed the first time it is asked for (the router curves that
        tables s20, s21 and the risk-coverage figure share)."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    def gap(self, model: str, solver: str, reference: str, subset: str = "all") -> dict | None:
        for row in self.gaps:
            if (row["model"], row["solver"], row["reference"], row["subset"]) == (model, solver, reference, subset):
                return row
        return None

    def impl_mask(self) -> np.ndarray:
        return self.data.case_mask(self.library)

    def seeds_note(self) -> str:
        parts = []
        for m in self.data.models:
            seeds = sorted({s for a in self.data.arms_of(m) for s in self.data.seeds_of(m, a)})
            parts.append(f"{model_label(m)}: seeds {', '.join(map(str, seeds))}")
        return "; ".join(parts)

    def records(self, *arms: str) -> list[Record]:
        """The stored records (every field) of `arms` for the analysed cases and dataset, in file order (model,
        arm, seed); [] when the analysis was not read from a results root. Only those arms' files are read
        (through the store's reader), each once per analysis."""
        if self.results_dir is None:
            return []
        cases, chosen = set(self.data.case_ids), self.data.dataset
        out: list[Record] = []
        for path in iter_result_files(self.results_dir, arms):
            key = str(path)
            if key not in self._records:
                self._records[key] = [
                    r
                    for r in read_result_file(path)
                    if r.case_id in cases and (chosen is None or dataset_of(r) == chosen)
                ]
            out.extend(self._records[key])
        return out


def audit_comparisons() -> tuple[Comparison, ...]:
    return tuple(
        Comparison(c.solver, c.reference, f"audit-{s}", c.access, s)
        for s in ("not_replaced", "no_issue")
        for c in headline()
    )


def analyse(
    results_dir: str | Path | None,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    data: CorrectnessArrays | None = None,
    dataset: str | None = None,
    digests: dict[Path, str] | None = None,
) -> Analysis:
    """Load results (one dataset; `digests`: the results files' sha256 by resolved path, where the caller hashed
    them), add hybrids, compute every declared gap on one shared Resampler. The library's calculator list and the
    catalogue's audit groups are part of the kit: a malformed one raises (LookupError naming the entry), it is not
    turned into omitted columns."""
    if data is None:
        if results_dir is None:
            raise ValueError("analyse: give the results directory or the arrays (data=)")
        data = load_arrays(results_dir, dataset, digests)
    notes = list(data.notes)
    hybrids = add_hybrids(data)
    library = catalog.library_calculators()
    audit = catalog.audit_groups()
    comps = list(declared_comparisons(data.arms)) + list(audit_comparisons())
    resampler = Resampler(data.cluster, draws=draws, seed=seed)
    result = paired_gaps(data, comps, resampler)
    notes += [n for n in result.notes if "has no results" not in n]
    return Analysis(
        data,
        resampler,
        result.rows,
        notes,
        library,
        audit,
        hybrids,
        Path(results_dir) if results_dir is not None else None,
    )
