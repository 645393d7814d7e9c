"""Router arms and formula versions in the registry: config hashes, options, request bounds, records
(Gold-Solve at a version: no model needed, real bundled rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.arms.options import with_convention, with_options
from harness.arms.registry import ARMS, extension_arms
from harness.cli import main as cli
from harness.data.dataset import load_dataset
from harness.reproduce.config import resolve_arms
from harness.reproduce.plan import request_bounds
from harness.run.manifest import read_manifests

ROOT = Path(__file__).resolve().parents[2]


def test_existing_hashes_and_defaults_unchanged():
    # every committed record under results/ carries its arm's current arm_config_hash, configured for the
    # convention its result set's manifests record
    seen = {}
    for result_set in sorted(p for p in (ROOT / "results").iterdir() if p.is_dir()):
        (convention,) = {f.manifest.convention.name for f in read_manifests(result_set)}
        for path in sorted(result_set.glob("*/*/seed*.jsonl")):
            for line in path.read_text().splitlines():
                rec = json.loads(line)
                seen[rec["arm"]] = rec["arm_config_hash"]
                arm = with_convention(ARMS[rec["arm"]], convention)
                assert rec["arm_config_hash"] == arm.config_hash(), path
                assert arm.config()["convention"] == (convention if arm.solver.uses_convention else None)
    assert {"gold-lib", "program-solve", "blind", "open-book"} <= set(seen)
    for name in seen:  # the config records every field plainly, empty where unset
        cfg = ARMS[name].config()
        assert cfg["formula_versions"] == {} and "agree_min" not in cfg["solver_options"]
    # an explicit benchmark version is the default
    from harness.calculators.versions import parse_formula_versions

    same = with_options(ARMS["program-solve"], formula_versions=parse_formula_versions(["9=mdrd-2006"]))
    assert same.config_hash() == ARMS["program-solve"].config_hash()
    assert not set(extension_arms()) & {a.name for a in resolve_arms([])}


def test_router_config_covers_k_m_temperature_and_versions():
    base = ARMS["routed-gold"]
    assert (base.samples, base.solver.m, base.temperature, base.solver.library) == (5, 3, 0.7, "gold")
    assert (with_options(base, k=7, m=4).samples, with_options(base, k=7, m=4).solver.m) == (7, 4)
    hashes = {
        base.config_hash(),
        with_options(base, k=7).config_hash(),
        with_options(base, m=2).config_hash(),
        with_options(base, temperature=0.9).config_hash(),
        with_options(base, formula_versions={9: "ckd-epi-2021"}).config_hash(),
    }
    assert len(hashes) == 5
    with pytest.raises(ValueError, match="between 1 and k=5"):
        with_options(base, m=6)
    with pytest.raises(ValueError, match="router arms only"):
        with_options(ARMS["blind"], k=3)
    # versions apply to arms that use formulas or the library only
    assert with_options(ARMS["blind"], formula_versions={9: "ckd-epi-2021"}) is ARMS["blind"]
    v = with_options(ARMS["program-solve"], formula_versions={9: "ckd-epi-2021"})
    assert v.config()["formula_versions"] == {"9": "ckd-epi-2021"} and v.version_for(9) == "ckd-epi-2021"
    assert v.version_for(3) == "ckd-epi-2021" and v.version_for(2) is None  # 3's benchmark is 2021 too


def test_versioned_prompt_text():
    ds = load_dataset("bundled-test")
    case = next(c for c in ds.cases if c.calculator_id == 9)
    from harness.arms.solvers import Context

    default = ARMS["program-solve"].build(Context(case=case, arm=ARMS["program-solve"], seed=42)).messages
    versioned_arm = with_options(ARMS["program-solve"], formula_versions={9: "ckd-epi-2021"})
    versioned = versioned_arm.build(Context(case=case, arm=versioned_arm, seed=42)).messages
    text_d, text_v = json.dumps(default), json.dumps(versioned)
    assert "175 * Scr^(-1.154)" in text_d and "175 * Scr" not in text_v and "142 * min(Scr/K, 1)^a" in text_v


def test_request_bounds_in_the_plan():
    ds = load_dataset("bundled-test")
    lib = next(c for c in ds.cases if c.calculator_id == 9)
    other = next(c for c in ds.cases if c.calculator_id == 24)
    assert request_bounds(ARMS["routed-gold"], lib) == (0, 5)
    assert request_bounds(ARMS["routed-gold"], other) == (5, 5)
    assert request_bounds(ARMS["routed-blind"], lib) == (1, 6)
    assert request_bounds(with_options(ARMS["routed-blind"], k=3), other) == (3, 3)


def test_gold_lib_at_a_version_records_reference(tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(
        cli,
        [
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            "bundled-test",
            "--calculator",
            "9",
            "--calculator",
            "24",
            "--formula-version",
            "9=ckd-epi-2021",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in open(out / "library" / "gold-lib" / "seed42.jsonl")]
    nine = [r for r in recs if r["calculator_id"] == 9]
    assert len(nine) == 2 and all(r["formula_version"] == "ckd-epi-2021" for r in nine)
    for r in nine:
        ref = r["reference"]
        assert ref["label"] == "library-derived reference" and ref["value"] == r["answer"] and ref["correct"] is True
        assert r["gold"]["answer"] != str(ref["value"])  # benchmark gold kept as it is
        assert r["detail"]["library"]["function"] == "harness.calculators.versions.ckd_epi"
    assert all(r["formula_version"] is None and r["reference"] is None for r in recs if r["calculator_id"] == 24)
    # same root, other configuration: refused, nothing written
    before = (out / "library" / "gold-lib" / "seed42.jsonl").read_bytes()
    res = CliRunner().invoke(
        cli,
        [
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            "bundled-test",
            "--calculator",
            "9",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert res.exit_code != 0 and "another configuration" in res.output
    assert (out / "library" / "gold-lib" / "seed42.jsonl").read_bytes() == before


def test_cli_option_errors(tmp_path):
    r = CliRunner().invoke(
        cli, ["run", "--arm", "gold-lib", "--formula-version", "9=nope", "--out", str(tmp_path / "out")]
    )
    assert r.exit_code == 2 and "no version 'nope'" in r.output
    r = CliRunner().invoke(
        cli, ["run", "--arm", "blind", "--formula-version", "9=ckd-epi-2021", "--out", str(tmp_path / "out")]
    )
    assert r.exit_code == 2 and "supplies formula text" in r.output
    r = CliRunner().invoke(cli, ["run", "--arm", "gold-lib", "--router-k", "3", "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "no router arm" in r.output
