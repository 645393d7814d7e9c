"""The typed manifests (harness.run.manifest): four kinds told apart by their `kind`, one file-name rule
(`manifest_path`), one reader (`read_manifests`) that refuses unknown fields, missing ones, wrong types and other
schemas with one error naming the file, and the committed result sets read through it."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace

import pytest

from harness.analysis.table_format import Omit
from harness.analysis.tables.ledger import load_manifests
from harness.core.typed_json import to_json
from harness.model.endpoint import ExternalLauncher
from harness.run.manifest import (
    MANIFEST_SCHEMA,
    MANIFEST_SCHEMAS,
    LaunchSettings,
    ManifestError,
    MergeManifest,
    ReproduceManifest,
    ReproduceSettings,
    ShardManifest,
    ShardsAgreed,
    SliceSummary,
    manifest_path,
    read_manifest,
    read_manifests,
    write_manifest,
)
from harness.verify.rescore import _manifest_conventions
from tests.conftest import ROOT
from tests.manifests import run_manifest


def every_kind() -> list:
    run = run_manifest("run-a", server=ExternalLauncher(base_url="http://127.0.0.1:9/v1", model_id="m").describe())
    settings = LaunchSettings("rehearsal", "auto", False)
    reproduce = ReproduceManifest(
        run_id="20270101T000000Z",
        origin=run.origin,
        dataset=run.dataset,
        settings=settings,
        config=ReproduceSettings(launcher="rehearsal"),
        case_ids=("2-1",),
        arms=("gold-lib",),
        arms_by_model={},
        arm_config_hashes=run.arm_config_hashes,
        convention=run.convention,
        gvisor=None,
        status="running",
    )
    agreed = ShardsAgreed(
        plan_sha256="0" * 64,
        dataset_sha256=run.dataset.sha256,
        prompt_hashes=run.prompts,
        arm_config_hashes=run.arm_config_hashes,
        executor_policy_hash=None,
        launch=settings,
        order="case-major",
        seeds=(42,),
        kit_commit=None,
        server={},
        synthetic=False,
    )
    merge = MergeManifest(
        origin=run.origin,
        n_shards=1,
        plan_n_shards=None,
        records=0,
        results_files=0,
        duplicates_dropped=0,
        agreed=agreed,
        synthetic=False,
        shards=(),
        run_manifests=(),
    )
    shard = ShardManifest(
        origin=run.origin,
        index=0,
        n_shards=1,
        plan_sha256="0" * 64,
        status="running",
        slurm={},
        dataset=run.dataset,
        prompt_hashes=run.prompts,
        arm_config_hashes=run.arm_config_hashes,
        launch=settings,
        order="case-major",
        seeds=(42,),
        units=1,
        slices=(SliceSummary(None, ("gold-lib",), (42,), 1, 1, 1),),
    )
    return [run, reproduce, merge, shard]


def test_each_kind_has_one_file_name_and_reads_back_equal(tmp_path):
    kinds = every_kind()  # once: each carries its creation time (a second call can cross a second boundary)
    written = {m.kind: write_manifest(tmp_path, m) for m in kinds}
    assert {k: p.name for k, p in written.items()} == {
        "run": "manifest-run-a.json",
        "reproduce": "manifest-reproduce-20270101T000000Z.json",
        "merge": "manifest-merge.json",
        "shard": "shard.json",
    }
    assert all(manifest_path(m.kind, m.id, root=tmp_path) == written[m.kind] for m in kinds)
    found = read_manifests(tmp_path)
    assert [f.path.name for f in found] == [
        "manifest-merge.json",
        "manifest-reproduce-20270101T000000Z.json",
        "manifest-run-a.json",
        "shard.json",
    ]
    assert {f.manifest.kind: f.manifest for f in found} == {m.kind: m for m in kinds}  # field for field
    assert [f.manifest.kind for f in read_manifests(tmp_path, kind="run")] == ["run"]
    assert json.loads(written["run"].read_text())["manifest_schema"] == MANIFEST_SCHEMA
    # each kind its own schema number: a change to the shard manifest leaves run manifests readable
    assert {k: json.loads(p.read_text())["manifest_schema"] for k, p in written.items()} == MANIFEST_SCHEMAS


def test_a_kind_of_another_schema_is_refused_naming_its_kind(tmp_path):
    path = write_manifest(tmp_path, every_kind()[3])
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "manifest_schema": 2}))  # a shard.json of the kit before issue 43
    with pytest.raises(
        ManifestError,
        match=rf"manifest schema 2, this kit reads schema {MANIFEST_SCHEMAS['shard']} "
        "for a shard manifest; regenerate",
    ):
        read_manifests(tmp_path)


def test_reads_only_the_manifests_directly_in_the_result_set(tmp_path):
    write_manifest(tmp_path, run_manifest("run-b"))
    write_manifest(tmp_path, run_manifest("run-a"))
    write_manifest(tmp_path / "merged", run_manifest("run-c"))  # a directory of result sets is not a result set
    (tmp_path / "manifest-run-d.json.tmp").write_text("{")  # a write in progress is not a manifest
    assert [f.path.name for f in read_manifests(tmp_path)] == ["manifest-run-a.json", "manifest-run-b.json"]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_an_unreadable_manifest_is_one_error_naming_the_file(tmp_path, text):
    write_manifest(tmp_path, run_manifest("run-a"))
    bad = tmp_path / "manifest-run-b.json"
    bad.write_text(text)
    with pytest.raises(ManifestError, match=rf"^{bad}: unreadable manifest"):
        read_manifests(tmp_path)
    # the ledger tables omit themselves with the same message; the convention check does not skip it
    with pytest.raises(Omit, match=rf"^{bad}: unreadable manifest"):
        load_manifests(tmp_path)
    with pytest.raises(ManifestError, match=str(bad)):
        _manifest_conventions(tmp_path)


def _edited(tmp_path, edit):
    path = write_manifest(
        tmp_path,
        run_manifest("run-a", server=ExternalLauncher(base_url="http://127.0.0.1:9/v1", model_id="m").describe()),
    )
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "edit, says",
    [
        (lambda d: d.update(seeds_run=[42]), r"unknown field\(s\) seeds_run"),
        # a renamed field: a load error naming it, never a silent "not recorded" in a table
        (
            lambda d: d["server"].update(server_flags=d["server"].pop("flags")),
            r"unknown field\(s\) server.server_flags",
        ),
        (lambda d: d["arms"]["gold-lib"].pop("max_tokens"), r"missing field\(s\) arms.gold-lib.max_tokens"),
        (lambda d: d["dataset"].update(n_cases="110"), r"dataset.n_cases: a string, not an integer"),
        (
            lambda d: d.update(manifest_schema=0),
            rf"manifest schema 0, this kit reads schema {MANIFEST_SCHEMA} for a run "
            "manifest; regenerate",
        ),
        (lambda d: d.pop("order"), r"missing field\(s\) order"),  # a run's request order is always recorded
        (lambda d: d.pop("manifest_schema"), r"manifest schema None"),
        (lambda d: d.update(kind="runs"), r"manifest kind 'runs', not one of run, reproduce, merge, shard"),
    ],
)
def test_a_manifest_not_of_this_schema_is_one_error_naming_the_file_and_the_field(tmp_path, edit, says):
    path = _edited(tmp_path, edit)
    with pytest.raises(ManifestError, match=rf"^{re.escape(str(path))}: .*{says}"):
        read_manifests(tmp_path)
    with pytest.raises(ManifestError, match=re.escape(str(path))):
        read_manifest(path)


def test_the_executor_description_is_typed_field_for_field():
    """A field the executor's describe() adds is refused until harness.run.manifest.ExecutorInfo declares it."""
    from executor.api import Executor
    from harness.run.manifest import ExecutorInfo

    with Executor(backend="process", workers=1) as ex:
        described = ex.describe()
    assert to_json(ExecutorInfo.of(described)) == {**to_json(ExecutorInfo.of(described)), **described}
    with pytest.raises(ValueError, match=r"unknown field\(s\) executor.policy_sha"):
        ExecutorInfo.of({**described, "policy_sha": described["policy_hash"]})


def test_a_frozen_manifest_changes_only_by_replacement():
    m = run_manifest("run-a")
    with pytest.raises(AttributeError):
        m.scorer = "medcalc"  # type: ignore[misc]
    assert replace(m, scorer="medcalc").scorer == "medcalc" and m.scorer == "paper"


@pytest.mark.parametrize("result_set, runs", [("results/gold-solve", 1), ("results/cpu-demo", 2)])
def test_committed_result_sets_read_through_the_one_reader(result_set, runs):
    got = read_manifests(ROOT / result_set)
    assert [f.manifest.kind for f in got] == ["run"] * runs
    assert all(f.path == manifest_path("run", f.manifest.run_id, root=ROOT / result_set) for f in got)


def test_no_manifest_glob_outside_the_reader():
    """Manifests are found by the one reader, never by a glob of their file names elsewhere in the repository."""
    hits = subprocess.run(
        [
            "git",
            "grep",
            "-n",
            "-I",
            "-e",
            "manifest-\\*",
            "-e",
            "manifest-reproduce-\\*",
            "--",
            ".",
            ":!harness/run/manifest.py",
            ":!tests/run/test_manifest_reader.py",
            ":!docs",
            ":!*.md",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert hits == []


def test_every_arm_config_reads_back_field_for_field():
    """The run manifest's `arms` are typed (harness.arms.spec.ArmConfig): each registered arm's config() is one, and
    a field config() adds without ArmConfig declaring it fails here, not in a table."""
    from harness.arms.registry import ARMS
    from harness.arms.spec import ArmConfig

    for name, arm in ARMS.items():
        assert to_json(ArmConfig.of(arm)) == arm.config(), name
