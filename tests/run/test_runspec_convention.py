"""A RunSpec without a convention (a library caller's) solves under the dataset's own, as `harness run` does:
on the bundled v1.0 slice Gold-Solve is right on every library row; forced to `exact`, the v1.0 rows whose gold
was computed with v1.0's stepwise conversions (calculators 13 and 44 here) come out wrong."""

from __future__ import annotations

import asyncio
import json

from harness.arms.registry import ARMS
from harness.core.units import EXACT
from harness.data.dataset import load_dataset
from harness.run.runner import RunSpec, run_arms


def _gold_solve(tmp_path, convention):
    ds = load_dataset("bundled-test")
    spec = RunSpec(out_dir=tmp_path, progress=False, convention=convention)
    (summary,) = asyncio.run(run_arms([ARMS["gold-lib"]], ds, [42], spec))
    recs = [json.loads(line) for line in open(summary.path)]
    return [r for r in recs if r["outcome"] != "abstained"]


def test_default_is_the_datasets_own_convention(tmp_path):
    solved = _gold_solve(tmp_path / "default", None)
    assert len(solved) == 44 and all(r["correct"] for r in solved)
    exact = _gold_solve(tmp_path / "exact", EXACT)
    wrong = sorted(r["case_id"] for r in exact if not r["correct"])
    assert wrong and {c.split("-")[0] for c in wrong} <= {"13", "44"}
