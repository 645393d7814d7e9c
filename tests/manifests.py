"""Typed run manifests for tests, made as `harness run` makes them (harness.run.manifest): the kit's own arms,
the bundled dataset and its unit convention, this process's origin; the fields a test cares about given."""

from __future__ import annotations

from dataclasses import replace

from harness.arms.prompts import template_hashes
from harness.arms.registry import ARMS
from harness.data.conventions import resolve_convention
from harness.data.dataset import load_dataset
from harness.model.server_info import ServerInfo
from harness.run.manifest import ConventionRef, ModelRef, RunManifest, arm_configs, dataset_ref, origin
from harness.run.schedule import ARM_MAJOR


def run_manifest(run_id: str, arm: str = "gold-lib", server: ServerInfo | None = None, **changes) -> RunManifest:
    ds = load_dataset("bundled-test")
    arms = [ARMS[arm]]
    manifest = RunManifest(
        run_id=run_id,
        origin=origin(),
        dataset=dataset_ref(ds),
        arms=arm_configs(arms),
        arm_config_hashes={a.name: a.config_hash() for a in arms},
        prompts=template_hashes(),
        seeds=(42,),
        scorer="paper",
        case_ids=("2-1",),
        model=ModelRef("library", None, None),
        client=None,
        server=server,
        executor=None,
        convention=ConventionRef.of(resolve_convention(ds, None)),
        order=ARM_MAJOR,
    )
    return replace(manifest, **changes)
