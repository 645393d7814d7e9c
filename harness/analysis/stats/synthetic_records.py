"""Synthetic result records and correctness arrays, for tests and the statistics benchmark.

Nothing here is a result: every record is marked `"synthetic": true` and `dataset` "synthetic".
Correctness is drawn with a calculator effect (so cases cluster within calculators) and a
per-case effect shared by all seeds (so seeds agree more than chance).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from harness.analysis.stats.arrays import OUTCOMES, CorrectnessArrays
from harness.arms.registry import arm_order, hybrid_libraries, model_free_arms
from harness.run.record import Record
from harness.run.store import results_path, write_result_file


def _probabilities(
    rng: np.random.Generator, n_arms: int, sizes: np.ndarray, base: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """[A, N] success probabilities with calculator and case effects on the logit scale."""
    n = int(np.sum(sizes))
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    calc_eff = rng.normal(0, 1.2, size=(n_arms, len(sizes)))[:, cluster]
    case_eff = rng.normal(0, 0.8, size=(n_arms, n))
    logit = np.log(base / (1 - base))[:, None] + calc_eff + case_eff
    return 1 / (1 + np.exp(-logit)), cluster


def synthetic_arrays(
    n_models: int = 4,
    arms: Iterable[str] | None = None,
    seeds: Sequence[int] = (42, 43, 44, 45, 46),
    cases_per_calc: int | Sequence[int] = 20,
    n_calculators: int = 55,
    seed: int = 0,
) -> CorrectnessArrays:
    """Correctness arrays of the benchmark's shape (default 4 models x the registry's ordered arms
    (harness.arms.registry.arm_order) x 5 seeds x 1,100 cases), all rows present."""
    rng = np.random.default_rng(seed)
    arms = list(arms or arm_order())
    sizes = np.full(n_calculators, cases_per_calc) if np.isscalar(cases_per_calc) else np.asarray(cases_per_calc)
    n = int(sizes.sum())
    correct = np.empty((n_models, len(arms), len(seeds), n))
    for m in range(n_models):
        base = rng.uniform(0.2, 0.9, size=len(arms))
        p, cluster = _probabilities(rng, len(arms), sizes, base)
        correct[m] = (rng.random((len(seeds), len(arms), n)) < p[None]).transpose(1, 0, 2)
    outcome = np.where(correct == 1, 0, rng.integers(0, len(OUTCOMES), size=correct.shape)).astype(np.int8)
    calculators = list(range(1, n_calculators + 1))
    calc_ids = np.repeat(np.array(calculators), sizes)
    case_ids = [f"{c}-{i}" for c, k in zip(calculators, sizes) for i in range(int(k))]
    return CorrectnessArrays(
        [f"synthetic-model-{m}" for m in range(n_models)],
        arms,
        list(seeds),
        case_ids,
        calc_ids,
        np.repeat(np.arange(n_calculators), sizes),
        calculators,
        {c: f"Synthetic calculator {c}" for c in calculators},
        ["decimal"] * n,
        correct,
        outcome,
    )


def synthetic_records(
    models: Iterable[str] = ("synthetic/model-a",),
    *,
    arms: Sequence[str],
    seeds: Sequence[int] = (42,),
    sizes: Sequence[int] = (3, 2, 4),
    accuracy: Mapping[str, float] | None = None,
    seed: int = 0,
    library: Collection[int] = (),
    date_calcs: Collection[int] = (),
) -> list[Record]:
    """Per-case records (harness.run.record.Record) of the named `arms`. The
    library arms of the hybrids (harness.arms.registry.hybrid_libraries: Gold-Solve, Extract-Solve) abstain outside
    the `library` calculators; on them a model-free one (Gold-Solve) is always right, the others are drawn like any
    arm; `date_calcs` get output_type 'date'."""
    rng = np.random.default_rng(seed)
    accuracy = accuracy or {}
    libraries = set(hybrid_libraries().values())
    model_free = set(model_free_arms())
    out = []
    for model in models:
        for arm in arms:
            for s in seeds:
                for c, size in enumerate(sizes, start=1):
                    for row in range(1, size + 1):
                        if arm in libraries and arm in model_free:
                            ok = c in library
                            outcome = "answered" if ok else "abstained"
                        elif arm in libraries and c not in library:
                            ok, outcome = False, "abstained"
                        else:
                            ok = bool(rng.random() < accuracy.get(arm, 0.6))
                            outcome = "answered" if ok else str(rng.choice(OUTCOMES))
                        out.append(
                            Record(
                                key=f"{model}|{arm}|{s}|{c}-{row}",
                                model=model,
                                arm=arm,
                                seed=int(s),
                                dataset="synthetic",
                                case_id=f"{c}-{row}",
                                row_number=100 * c + row,
                                calculator_id=c,
                                calculator_name=f"Synthetic calculator {c}",
                                output_type="date" if c in date_calcs else "decimal",
                                outcome=outcome,
                                correct=ok,
                                scorer="paper",
                                synthetic=True,
                            )
                        )
    return out


def write_records(root: str | Path, records: Iterable[Record]) -> Path:
    """Write records to `<root>/<model_slug>/<arm>/seed<seed>.jsonl` (the store's layout) through the store's writer
    (harness.run.store.write_result_file), each file's records in the order given."""
    root = Path(root)
    files: dict[Path, list[Record]] = {}
    for rec in records:
        files.setdefault(results_path(root, rec.model, rec.arm, rec.seed), []).append(rec)
    for path, recs in files.items():
        write_result_file(path, recs)
    return root
