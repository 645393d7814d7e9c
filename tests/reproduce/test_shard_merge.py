"""`harness shard plan` / `shard run` / `harness merge` without SLURM: the plan's split, running shards
in any order, merging them into the single-box result set, and every refusal of `merge`.

Real components throughout: the bundled dataset, the Gold-Solve library arm (no model needed), the
same `harness reproduce` pipeline for the single-box reference. Shard manifests are edited on
copies to make shards that disagree, as a node with another checkout or dataset would."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.arms.coverage import arm_cases
from harness.arms.registry import get_arm
from harness.cli.shard import merge as merge_cmd
from harness.cli.shard import shard as shard_cmd
from harness.data.dataset import load_dataset
from harness.reproduce.config import ReproduceConfig, select_cases
from harness.reproduce.merge import MergeError, merge_shards
from harness.reproduce.reproduction import run_pipeline
from harness.reproduce.shard import ShardError, build_shard_plan, load_plan, run_shard, shard_dir, write_plan
from harness.run.manifest import manifest_path, read_manifests

DRAWS = 200
SEEDS = [42, 43]


def _cfg(out: Path, **kw) -> ReproduceConfig:
    base = dict(
        launcher="llama-cpp",
        arms=["gold-lib"],
        seeds=SEEDS,
        dataset="bundled-test",
        out=out,
        draws=DRAWS,
        progress=False,
    )
    return ReproduceConfig(**{**base, **kw})


def _sharded(root: Path, **kw) -> dict:
    """A 5-shard run of the config, shards run in a scrambled order, plus the single-box run of the same config."""
    plan = build_shard_plan(_cfg(root / "run", **kw), 5)
    write_plan(plan, root / "plan.json")
    for i in (3, 0, 4, 2, 1):
        m = run_shard(plan, i, root / "run", echo=lambda _: None)
        assert m.status == "complete" and m.order == plan.config.order
    single = root / "single"
    run_pipeline(_cfg(single, **kw), echo=lambda _: None)
    return {
        "root": root,
        "plan": plan,
        "single": single,
        "dirs": [shard_dir(root / "run", i) for i in range(plan.n_shards)],
    }


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """A 5-shard Gold-Solve run in the default request order (case-major) and its single-box run."""
    return _sharded(tmp_path_factory.mktemp("shards"))


def _tree_bytes(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _content(path: Path) -> list[dict]:
    """Records without their wall-clock timestamps (the only fields that differ between two runs)."""
    return [
        {k: v for k, v in json.loads(ln).items() if k not in ("started_at", "finished_at")}
        for ln in path.read_text().splitlines()
    ]


def test_plan_covers_every_unit_once_and_is_stable(tmp_path):
    cfg = _cfg(tmp_path, arms=["gold-lib"], seeds=[42, 43, 44])
    plan = build_shard_plan(cfg, 7)
    ds = load_dataset("bundled-test")
    expected = Counter(
        (a, s, c.case_id)
        for a in ["gold-lib"]
        for s in [42, 43, 44]
        for c in arm_cases(get_arm(a), select_cases(ds, None, False))
    )
    got = Counter(
        (a, s, c) for sh in plan.shards for sl in sh.slices for a in sl.arms for s in sl.seeds for c in sl.case_ids
    )
    assert got == expected  # every (arm, seed, case) exactly once: no unit split or lost
    assert plan.n_units == sum(expected.values()) == sum(sh.units for sh in plan.shards)
    sizes = [sh.units for sh in plan.shards]
    assert max(sizes) - min(sizes) <= 3  # equal weights, whole cases of 3 seeds each: even split
    assert build_shard_plan(_cfg(tmp_path / "elsewhere", arms=["gold-lib"], seeds=[42, 43, 44]), 7) == plan
    assert build_shard_plan(cfg, 6).plan_sha256 != plan.plan_sha256


def test_plan_keeps_vote_and_repair_cases_whole_and_balances_requests(tmp_path):
    """A vote arm's case costs several requests; it stays one unit, and shards balance request counts."""
    cfg = _cfg(tmp_path, arms=["program-solve", "blind-repair-vote"], seeds=[42])
    plan = build_shard_plan(cfg, 4)
    cases = [c for sh in plan.shards for sl in sh.slices for c in sl.case_ids]
    assert len(cases) == len(set(cases))  # case-major: a case (all its arms) is never split across shards
    assert sum(sh.units for sh in plan.shards) == plan.n_units
    weights = [sh.weight for sh in plan.shards]
    covered = [
        c
        for c in select_cases(load_dataset("bundled-test"), None, False)
        if arm_cases(get_arm("blind-repair-vote"), [c], False)
    ]
    heaviest_case = 1 + get_arm("blind-repair-vote").solver.request_bounds(get_arm("blind-repair-vote"), covered[0])[1]
    assert heaviest_case > 2
    assert max(weights) - min(weights) <= 2 * heaviest_case
    assert sum(weights) == plan.estimated_requests


def test_plan_refuses_more_shards_than_units_and_edited_plans(tmp_path):
    with pytest.raises(ShardError, match="at most"):
        build_shard_plan(_cfg(tmp_path, limit=2, seeds=[42]), 3)
    plan = build_shard_plan(_cfg(tmp_path), 2)
    p = write_plan(plan, tmp_path / "plan.json")
    data = json.loads(p.read_text())
    data["shards"][0]["slices"][0]["case_ids"].pop()  # a case taken out of a slice by hand
    p.write_text(json.dumps(data))
    with pytest.raises(ShardError, match="plan_sha256 does not match"):
        load_plan(p)


def _shard_json(d: Path) -> dict:
    """A shard's manifest as JSON, to edit the way a hand-edited or another kit's shard.json would differ."""
    return json.loads(manifest_path("shard", root=d).read_text())


def _write_shard_json(d: Path, data: dict) -> None:
    manifest_path("shard", root=d).write_text(json.dumps(data))


def test_merged_tables_are_byte_identical_to_the_single_box_run(sharded, tmp_path):
    out = tmp_path / "merged"
    manifest = merge_shards(
        list(reversed(sharded["dirs"])), out, plan=sharded["plan"], draws=DRAWS, echo=lambda _: None
    )
    assert manifest.records == sharded["plan"].n_units and manifest.duplicates_dropped == 0
    assert manifest.agreed.order == "case-major" and manifest.agreed.seeds == tuple(SEEDS)
    single_tables = _tree_bytes(sharded["single"] / "tables")
    assert "s14.md" in single_tables  # the ledger is compared too
    assert single_tables and _tree_bytes(out / "tables") == single_tables
    # every shard's run manifests are carried over, named by shard, so the merged ledger shows the settings
    copied = sorted(f.path.name for f in read_manifests(out, kind="run"))
    assert copied == list(manifest.run_manifests) and len(copied) >= sharded["plan"].n_shards
    for d in sharded["dirs"]:
        index = _shard_json(d)["index"]
        for f in read_manifests(d, kind="run"):
            copy = manifest_path("run", f"shard{index:03d}-{f.manifest.run_id}", root=out)
            assert copy.read_bytes() == f.path.read_bytes()
    for seed in SEEDS:
        rel = Path("library") / "gold-lib" / f"seed{seed}.jsonl"
        assert _content(out / rel) == _content(sharded["single"] / rel)  # same records, same order
    # the checksums were rewritten and cover the merged directory
    sums = dict(
        reversed(ln.split("  ", 1)) for ln in (out / "SHA256SUMS").read_text().splitlines() if not ln.startswith("#")
    )
    assert sums["manifest-merge.json"] == hashlib.sha256((out / "manifest-merge.json").read_bytes()).hexdigest()
    assert "library/gold-lib/seed42.jsonl" in sums


def test_each_request_order_shards_records_and_merges_to_its_own_single_box_run(sharded, tmp_path):
    """Case-major shards run each case's arms and seeds together (one slice per model and case range) and arm-major
    ones one arm at one seed; each slice's run manifest records the order it ran in, and the merge writes every file
    in that order, so each merged run equals the single-box run of its own order record for record."""
    runs = {"case-major": sharded, "arm-major": _sharded(tmp_path / "arm", order="arm-major")}
    files = {}
    for order, run in runs.items():
        plan = run["plan"]
        assert plan.config.order == order
        for sh in plan.shards:
            for sl in sh.slices:
                assert (sl.seeds == tuple(SEEDS)) if order == "case-major" else (len(sl.arms), len(sl.seeds)) == (1, 1)
        for d in run["dirs"]:
            assert {f.manifest.order for f in read_manifests(d, kind="run")} == {order}
        out = merge_shards(run["dirs"], tmp_path / f"merged-{order}", plan=plan, outputs=False, echo=lambda _: None)
        assert out.agreed.order == order
        for seed in SEEDS:
            rel = Path("library") / "gold-lib" / f"seed{seed}.jsonl"
            assert _content(tmp_path / f"merged-{order}" / rel) == _content(run["single"] / rel)
        files[order] = [
            r["case_id"]
            for r in _content(tmp_path / f"merged-{order}" / "library" / "gold-lib" / f"seed{SEEDS[1]}.jsonl")
        ]
    # the orders differ for the second seed's file (its own case order against the first seed's): the check can fail
    assert files["case-major"] != files["arm-major"] and sorted(files["case-major"]) == sorted(files["arm-major"])


def test_merge_does_not_depend_on_shard_order_and_keeps_each_record_once(sharded, tmp_path):
    dirs = list(sharded["dirs"])
    a = merge_shards(dirs, tmp_path / "a", outputs=False, echo=lambda _: None)
    b = merge_shards([dirs[2], dirs[0], dirs[4], dirs[3], dirs[1]], tmp_path / "b", outputs=False, echo=lambda _: None)
    assert a.records == b.records == sharded["plan"].n_units
    for f in ("library/gold-lib/seed42.jsonl", "library/gold-lib/seed43.jsonl"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    # shard 1's records also inside shard 2 (a task that ran another shard's cases): kept once, counted
    copies = []
    for d in dirs:
        shutil.copytree(d, tmp_path / "c" / d.name)
        copies.append(tmp_path / "c" / d.name)
    extra = sorted(copies[1].glob("library/gold-lib/seed*.jsonl"))[0]
    target = copies[2] / extra.relative_to(copies[1])
    n_extra = len(extra.read_text().splitlines())
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a") as fh:
        fh.write(extra.read_text())
    c = merge_shards(copies, tmp_path / "c-merged", outputs=False, echo=lambda _: None)
    assert c.records == a.records and c.duplicates_dropped == n_extra
    for f in ("library/gold-lib/seed42.jsonl", "library/gold-lib/seed43.jsonl"):
        assert (tmp_path / "c-merged" / f).read_bytes() == (tmp_path / "a" / f).read_bytes()
    with pytest.raises(MergeError, match="shard 1 given twice"):
        merge_shards(dirs + [copies[1]], tmp_path / "d", outputs=False, echo=lambda _: None)


@pytest.mark.parametrize(
    "field, edit, label",
    [
        ("dataset", lambda m: m["dataset"].update(sha256="0" * 64), "dataset sha256"),
        ("prompts", lambda m: m["prompt_hashes"].update(program="1" * 64), "prompt hashes"),
        ("arms", lambda m: m["arm_config_hashes"].update({"gold-lib": "2" * 64}), "arm configs"),
        ("policy", lambda m: m.update(executor_policy_hash="3" * 64), "executor policy hash"),
        ("server", lambda m: m["launch"].update(generation_config="vllm"), "server settings"),
        ("commit", lambda m: m["origin"]["git"].update(commit="4" * 40), "kit commit"),
    ],
)
def test_merge_refuses_shards_that_differ_naming_shard_and_field(sharded, tmp_path, field, edit, label):
    dirs = []
    for d in sharded["dirs"][:3]:
        shutil.copytree(d, tmp_path / d.name)
        dirs.append(tmp_path / d.name)
    if field == "policy":  # only shards that used an executor carry a policy hash: two that disagree
        for d, h in ((dirs[0], "5" * 64), (dirs[2], None)):
            _write_shard_json(d, {**_shard_json(d), "executor_policy_hash": h})
    m = _shard_json(dirs[2])
    edit(m)
    _write_shard_json(dirs[2], m)
    with pytest.raises(MergeError) as err:
        merge_shards(dirs, tmp_path / "merged", outputs=False, echo=lambda _: None)
    assert f"shard 2 ({dirs[2]}) differs in {label}" in str(err.value)
    assert not (tmp_path / "merged").exists()  # nothing written


def test_merge_refuses_synthetic_next_to_real_incomplete_and_missing_shards(sharded, tmp_path):
    dirs = []
    for d in sharded["dirs"]:
        shutil.copytree(d, tmp_path / d.name)
        dirs.append(tmp_path / d.name)
    m = _shard_json(dirs[3])
    _write_shard_json(dirs[3], {**m, "synthetic": True})
    # Gold-Solve shards served no model: a synthetic shard beside them is no mix
    merge_shards(dirs, tmp_path / "synthetic-and-model-free", outputs=False, echo=lambda _: None)
    real = {"launcher": "llama-cpp", "base_url": "http://127.0.0.1:1/v1", "model_id": "m", "server_profile": "plain"}
    _write_shard_json(dirs[0], {**_shard_json(dirs[0]), "servers": {"m": real}})  # shard 0 served a real model
    with pytest.raises(MergeError, match=r"shard 3 .* synthetic rehearsal-server output and shard 0 .* real"):
        merge_shards(dirs, tmp_path / "merged", outputs=False, echo=lambda _: None)
    _write_shard_json(dirs[0], {**_shard_json(dirs[0]), "servers": {}})
    _write_shard_json(dirs[3], {**m, "status": "failed", "error": "ShardError: boom"})
    with pytest.raises(MergeError, match=r"shard 3 .* is 'failed', not complete \(ShardError: boom\)"):
        merge_shards(dirs, tmp_path / "merged", outputs=False, echo=lambda _: None)
    with pytest.raises(MergeError, match=r"shard\(s\) 4 of the plan's 5 are missing"):
        merge_shards(
            dirs[:3] + [sharded["dirs"][3]],
            tmp_path / "merged",
            plan=sharded["plan"],
            outputs=False,
            echo=lambda _: None,
        )
    with pytest.raises(ShardError, match="is not a shard directory"):
        merge_shards([tmp_path], tmp_path / "merged", outputs=False, echo=lambda _: None)


def test_a_shard_resumes_by_record_key_after_failing_on_purpose(sharded, tmp_path, monkeypatch):
    cfg = _cfg(tmp_path / "run", seeds=[42, 43, 44], order="arm-major")  # one slice per (arm, seed)
    plan = build_shard_plan(cfg, 2)
    assert len(plan.shards[1].slices) >= 2
    monkeypatch.setenv("HARNESS_SHARD_FAIL_FOR_TEST", "1")
    with pytest.raises(ShardError, match="fails on purpose after 1 slice"):
        run_shard(plan, 1, tmp_path / "run", echo=lambda _: None)
    failed = _shard_json(shard_dir(tmp_path / "run", 1))
    first = plan.shards[1].slices[0]
    assert failed["status"] == "failed" and failed["records"] == len(first.case_ids)
    monkeypatch.delenv("HARNESS_SHARD_FAIL_FOR_TEST")
    lines: list[str] = []
    done = run_shard(plan, 1, tmp_path / "run", echo=lines.append)
    assert done.status == "complete" and done.records == plan.shards[1].units
    assert f"{len(first.case_ids)} cases, 0 new, {len(first.case_ids)} resumed" in lines[0]


def test_cli_plan_and_merge(sharded, tmp_path):
    r = CliRunner().invoke(
        shard_cmd,
        [
            "plan",
            "--launcher",
            "llama-cpp",
            "--arms",
            "gold-lib",
            "--seeds",
            "42-43",
            "--dataset",
            "bundled-test",
            "--shards",
            "5",
            "--draws",
            str(DRAWS),
            "--json",
            str(tmp_path / "plan.json"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert load_plan(tmp_path / "plan.json").plan_sha256 == sharded["plan"].plan_sha256
    r = CliRunner().invoke(
        merge_cmd, [*map(str, sharded["dirs"][:2]), "--out", str(tmp_path / "m"), "--plan", str(tmp_path / "plan.json")]
    )
    assert r.exit_code == 1 and "shard(s) 2, 3, 4 of the plan's 5 are missing" in r.output
