"""Correctness arrays, paired gaps and hybrids on SYNTHETIC record sets written to tmp_path, checked
against straightforward pandas / dict computations from the same records."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from harness.analysis.stats import catalog
from harness.analysis.stats.arrays import OUTCOMES, ResultsError, load_arrays
from harness.analysis.stats.bootstrap import Resampler
from harness.analysis.stats.families import Comparison, declared
from harness.analysis.stats.hybrids import add_hybrids, hybrid_name, library_share
from harness.analysis.stats.paired import paired_gaps
from harness.analysis.stats.synthetic_records import synthetic_records, write_records
from tests.records import record_json as record

ARMS = ("open-book", "program-solve", "program-solve-syntax", "gold-lib", "extract-lib", "blind")


@pytest.fixture
def fake_catalog(monkeypatch):
    """Library = calculators 1 and 2; audit groups for calculators 1..6 (synthetic)."""
    monkeypatch.setattr(catalog, "library_calculators", lambda: {1, 2})
    groups = {1: "no_issue", 2: "replaced", 3: "other_concern", 4: "no_issue", 5: "no_issue", 6: "other_concern"}
    monkeypatch.setattr(catalog, "audit_groups", lambda: groups)


@pytest.fixture
def synthetic_set(tmp_path):
    recs = synthetic_records(
        models=("synthetic/m1",), arms=ARMS, seeds=(42, 43, 44), sizes=(6, 3, 8, 5, 4, 7), library={1, 2}, seed=5
    )
    write_records(tmp_path / "synthetic-results", recs)
    return tmp_path / "synthetic-results", recs


def test_arrays_match_records(synthetic_set):
    root, recs = synthetic_set
    data = load_arrays(root)
    assert data.models == ["synthetic/m1"]
    assert data.arms == ["open-book", "extract-lib", "gold-lib", "program-solve", "program-solve-syntax", "blind"]
    assert data.seeds == [42, 43, 44] and data.n_cases == 33
    assert data.cluster_sizes.tolist() == [6, 3, 8, 5, 4, 7]
    assert np.all(np.diff(data.calculator_ids) >= 0)  # grouped by calculator
    for r in recs[::7]:
        i = data.case_ids.index(r.case_id)
        assert data.block(r.model, r.arm)[data.seeds.index(r.seed), i] == float(r.correct)
        assert OUTCOMES[data.outcome_block(r.model, r.arm)[data.seeds.index(r.seed), i]] == r.outcome
    five = data.as_5d()
    assert five.shape == (1, len(ARMS), 3, 6, 8)
    assert np.isnan(five[0, 0, 0, 1, 3:]).all()  # calculator 2 has 3 cases, padded
    assert np.nansum(five) == np.nansum(data.correct)


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _rec(**kw):
    return {**record(model="synthetic/m", arm="open-book", case_id="1-1", calculator_id=1), **kw}


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"correct": "yes"}, r"wrong type: correct \(str, not bool\)"),  # the store's Record check
        ({"outcome": "exploded"}, "unknown outcome 'exploded'"),
        ({"outcome": "abstained", "correct": True}, "marked correct but its outcome is 'abstained'"),
        ({"calculator_id": "x"}, r"wrong type: calculator_id \(str, not int\)"),
    ],
)
def test_bad_records_name_file_and_line(tmp_path, bad, message):
    path = tmp_path / "r" / "synthetic_m" / "open-book" / "seed42.jsonl"
    _write(path, [_rec(case_id="1-1"), _rec(case_id="1-2", **bad)])
    with pytest.raises(ResultsError, match=message) as exc:
        load_arrays(tmp_path / "r")
    assert f"{path}:2" in str(exc.value)


def test_duplicates_conflicts_and_empty_roots(tmp_path):
    path = tmp_path / "r" / "synthetic_m" / "open-book" / "seed42.jsonl"
    _write(path, [_rec(), _rec()])
    with pytest.raises(ResultsError, match=r"seed42.jsonl:2: duplicate record.*first at .*seed42.jsonl:1"):
        load_arrays(tmp_path / "r")
    _write(path, [_rec(), _rec(arm="open-book", case_id="1-1", seed=42, model="synthetic/other")])
    other = tmp_path / "r" / "synthetic_m" / "blind" / "seed42.jsonl"
    _write(other, [_rec(arm="blind", calculator_id=2)])
    with pytest.raises(ResultsError, match=r"case 1-1 has calculator [12] here but [12] at .*seed42.jsonl:1"):
        load_arrays(tmp_path / "r")
    with pytest.raises(ResultsError, match="no result records"):
        (tmp_path / "empty").mkdir()
        load_arrays(tmp_path / "empty")
    with pytest.raises(ResultsError, match="does not exist"):
        load_arrays(tmp_path / "nowhere")


def test_torn_last_line_is_skipped_with_warning(tmp_path):
    path = tmp_path / "r" / "synthetic_m" / "open-book" / "seed42.jsonl"
    _write(path, [_rec(case_id="1-1"), _rec(case_id="1-2")])
    with open(path, "a") as fh:
        fh.write('{"key": "torn", "mod')
    with pytest.warns(UserWarning, match="incomplete last line"):
        data = load_arrays(tmp_path / "r")
    assert data.n_cases == 2


def test_model_free_gold_lib_is_shared_across_models_and_seeds(tmp_path):
    recs = synthetic_records(
        models=("synthetic/m1", "synthetic/m2"), arms=("program-solve",), seeds=(42, 43), sizes=(2, 2), seed=1
    )
    recs += synthetic_records(models=("none",), arms=("gold-lib",), seeds=(42,), sizes=(2, 2), library={1})
    write_records(tmp_path / "r", recs)
    data = load_arrays(tmp_path / "r")
    assert data.models == ["synthetic/m1", "synthetic/m2"]
    for m in data.models:
        assert data.seeds_of(m, "gold-lib") == [42, 43]
        assert data.block(m, "gold-lib").tolist() == [[1, 1, 0, 0]] * 2
    assert any("model-free run stored under none" in n for n in data.notes)


def _manual_gap(recs, model, solver, ref, calcs=None):
    """Straightforward pandas: seed-averaged per-case differences on common seeds and cases."""
    df = pd.DataFrame([r.to_dict() for r in recs])
    df = df[df.model == model]
    if calcs is not None:
        df = df[df.calculator_id.isin(calcs)]
    a = df[df.arm == solver].pivot(index="case_id", columns="seed", values="correct").astype(float)
    r = df[df.arm == ref].pivot(index="case_id", columns="seed", values="correct").astype(float)
    seeds = sorted(set(a.columns) & set(r.columns))
    cases = sorted(set(a.dropna(subset=seeds).index) & set(r.dropna(subset=seeds).index))
    d = (a.loc[cases, seeds] - r.loc[cases, seeds]).mean(axis=1)
    maj_a = a.loc[cases, seeds].mean(axis=1) > 0.5
    maj_r = r.loc[cases, seeds].mean(axis=1) > 0.5
    return 100 * d.mean(), int((maj_a & ~maj_r).sum()), int((~maj_a & maj_r).sum()), len(cases)


def test_paired_gaps_match_manual_computation_and_holm(synthetic_set, fake_catalog):
    root, recs = synthetic_set
    data = load_arrays(root)
    comps = (
        declared("primary")
        + declared("syntax")
        + (Comparison("program-solve", "open-book", "impl-only", subset="impl"),)
    )
    res = paired_gaps(data, comps, Resampler(data.cluster, draws=2000, seed=1))
    rows = {(r["solver"], r["reference"], r["subset"]): r for r in res.rows}
    assert len(rows) == len(comps)
    for (s, r, subset), row in rows.items():
        gap, b, c, n = _manual_gap(recs, "synthetic/m1", s, r, {1, 2} if subset == "impl" else None)
        assert row["gap"] == pytest.approx(gap, abs=1e-9)
        assert (row["mcnemar_b"], row["mcnemar_c"], row["n_cases"]) == (b, c, n)
        assert row["cluster_lo"] <= row["gap"] + 1e-9 and row["gap"] <= row["cluster_hi"] + 1e-9
        assert row["case_lo"] <= row["case_hi"]
    for fam in ("primary", "syntax"):
        fam_rows = [r for r in res.rows if r["family"] == fam]
        for col in ("mcnemar_p", "perm_p_case", "perm_p_calc"):
            ref = multipletests([r[col] for r in fam_rows], method="holm")[1]
            np.testing.assert_allclose([r[col + "_holm"] for r in fam_rows], ref)
    assert res.resampler["draws"] == 2000 and res.resampler["seed"] == 1


def test_pairs_use_common_seeds_and_skip_missing_arms(tmp_path):
    recs = synthetic_records(models=("synthetic/m",), arms=("program-solve",), seeds=(42, 43), sizes=(4, 4), seed=2)
    recs += synthetic_records(models=("synthetic/m",), arms=("open-book",), seeds=(43,), sizes=(4, 4), seed=3)
    write_records(tmp_path / "r", recs)
    data = load_arrays(tmp_path / "r")
    res = paired_gaps(data, declared("primary"), Resampler(data.cluster, draws=200, seed=1))
    assert len(res.rows) == 1 and res.rows[0]["seeds"] == [43]
    gap, *_ = _manual_gap(recs, "synthetic/m", "program-solve", "open-book")
    assert res.rows[0]["gap"] == pytest.approx(gap)
    assert any("gold-lib has no results" in n for n in res.notes)


def test_hybrids_assembled_per_case_and_seed(synthetic_set):
    root, recs = synthetic_set
    data = load_arrays(root)
    added = add_hybrids(data)
    assert set(added) == {hybrid_name(lib, fb) for lib in ("gold", "extract") for fb in ("program-solve", "open-book")}
    by = {(r.arm, r.seed, r.case_id): r for r in recs}
    for name, lib in (
        (hybrid_name("gold", "program-solve"), "gold-lib"),
        (hybrid_name("extract", "open-book"), "extract-lib"),
    ):
        fb = name.split("+")[1]
        block = data.block("synthetic/m1", name)
        used = 0
        for si, s in enumerate(data.seeds):
            for ci, case in enumerate(data.case_ids):
                lib_rec = by[(lib, s, case)]
                src = lib_rec if lib_rec.outcome == "answered" else by[(fb, s, case)]
                used += src is lib_rec
                assert block[si, ci] == float(src.correct)
        assert library_share(data, "synthetic/m1", name) == pytest.approx(used / block.size)


def test_one_dataset_is_analysed_when_a_root_holds_several(tmp_path):
    recs = synthetic_records(models=("synthetic/m",), arms=("open-book", "program-solve"), seeds=(42,), sizes=(2, 2))
    other = synthetic_records(models=("none",), arms=("gold-lib",), seeds=(42,), sizes=(5, 5, 5), library={1})
    other = [dataclasses.replace(r, dataset="synthetic-dev") for r in other]
    write_records(tmp_path / "r", recs + other)
    data = load_arrays(tmp_path / "r")
    assert data.n_cases == 4 and "gold-lib" not in data.arms_of("synthetic/m")
    assert any("dataset synthetic-dev excluded" in n for n in data.notes)
    dev = load_arrays(tmp_path / "r", dataset="synthetic-dev")
    assert dev.n_cases == 15 and dev.arms == ["gold-lib"]
    with pytest.raises(
        ResultsError, match="dataset 'nope' not found in the results; present: synthetic, synthetic-dev"
    ):
        load_arrays(tmp_path / "r", dataset="nope")


def test_gap_permutation_p_is_exhaustive_for_few_discordant_cases(tmp_path):
    """With few non-zero seed-averaged differences the case-level p is the exact enumeration."""
    import itertools

    recs = synthetic_records(
        models=("synthetic/m",),
        arms=("open-book", "program-solve"),
        seeds=(42, 43),
        sizes=(3, 3, 3),
        accuracy={"open-book": 0.5, "program-solve": 0.5},
        seed=8,
    )
    write_records(tmp_path / "r", recs)
    data = load_arrays(tmp_path / "r")
    row = paired_gaps(data, declared("primary")[:1], Resampler(data.cluster, draws=500, seed=2)).rows[0]
    d = (data.block("synthetic/m", "program-solve") - data.block("synthetic/m", "open-book")).mean(axis=0)
    nz = d[d != 0]
    brute = (
        np.mean([abs(np.dot(s, nz)) >= abs(nz.sum()) - 1e-12 for s in itertools.product((-1, 1), repeat=nz.size)])
        if nz.size
        else 1.0
    )
    assert row["perm_p_case"] == pytest.approx(brute)
    calc = np.bincount(data.cluster, weights=d)
    calc = calc[calc != 0]
    brute_calc = (
        np.mean([abs(np.dot(s, calc)) >= abs(calc.sum()) - 1e-12 for s in itertools.product((-1, 1), repeat=calc.size)])
        if calc.size
        else 1.0
    )
    assert row["perm_p_calc"] == pytest.approx(brute_calc)
