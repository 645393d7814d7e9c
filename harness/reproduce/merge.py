"""`harness merge`: shard directories -> one results directory, as if one box had run it all.

    merge_shards([shard_dir, ...], out)

Refuses, naming the shard and the field, to mix shards that differ in what determines their records
but is not in every record key: dataset sha256, prompt template hashes, arm config hashes, executor
policy hash, server settings (launcher, generation config, determinism, image, server flags), the request order,
the kit's commit, or the shard plan; refuses synthetic (rehearsal-server) shards next to real ones and
shards that did not finish. Records are merged per results file (`<model>/<arm>/seed<N>.jsonl`) by
record key: each key is kept exactly once (the copy from the lowest shard index, whatever order the
directories are given in) and written in the order the run sends a file's cases in (harness.run.schedule.file_order:
its seed's case order under arm-major, the run's first seed's under case-major), so the merged files, and the tables
derived from them, equal the one-box run's whatever the split or the order the shards ended in.
The merged directory gets `manifest-merge.json` (which shard gave how many records, the fields every
shard agreed on, the duplicates dropped), a copy of each shard's `shard.json` under `shards/` and of each
shard's run manifests as `manifest-shard<NNN>-<run id>.json` (what the ledger tables s14/s14b read), then
statistics, tables, figures and the report, and last a fresh SHA256SUMS (also when a step fails).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.sums import SumsOnExit
from harness.core.typed_json import to_json
from harness.model.rehearsal.labels import record_kind
from harness.reproduce.reproduction import outputs as derive_outputs
from harness.reproduce.shard import ShardError, ShardPlan, read_shard_manifest
from harness.run.manifest import (
    MergedShard,
    MergeManifest,
    ShardManifest,
    ShardsAgreed,
    manifest_path,
    origin,
    read_manifests,
    updated,
    write_manifest,
)
from harness.run.record import Record
from harness.run.schedule import file_order
from harness.run.store import StoreError, iter_result_files, scan_result_file, write_result_file

Echo = Callable[[str], None]

# (field of ShardsAgreed, how an error names it, what a shard says of it); each must be equal across the shards.
COMPARED = (
    ("plan_sha256", "shard plan", lambda m: m.plan_sha256),
    ("dataset_sha256", "dataset sha256", lambda m: m.dataset.sha256),
    ("prompt_hashes", "prompt hashes", lambda m: m.prompt_hashes),
    ("arm_config_hashes", "arm configs", lambda m: m.arm_config_hashes),
    ("executor_policy_hash", "executor policy hash", lambda m: m.executor_policy_hash),
    ("launch", "server settings", lambda m: m.launch),
    ("order", "request order", lambda m: m.order),
    ("seeds", "seeds", lambda m: m.seeds),
    ("kit_commit", "kit commit", lambda m: m.origin.git.commit),
)
# Fields a shard may lack (None): it ran no program-executing arm.
OPTIONAL = {"executor_policy_hash"}


class MergeError(ShardError):
    """Shards that cannot be merged; the message names the shard and the field."""


def merge_shards(
    shard_dirs: list[Path],
    out: Path,
    *,
    plan: ShardPlan | None = None,
    draws: int | None = None,
    outputs: bool = True,
    echo: Echo = print,
) -> MergeManifest:
    """Merge shard directories into `out` (module docstring); returns the merge manifest (also written there)."""
    out = Path(out)
    loaded = load_shards(shard_dirs)
    agreed = check_compatible(loaded)
    if plan is not None:
        check_plan(loaded, agreed, plan)
    merged, per_shard, duplicates = collect_records(loaded, agreed)
    check_empty_target(out, merged)
    out.mkdir(parents=True, exist_ok=True)
    with SumsOnExit(out):
        total = write_merged(merged, out, file_order(agreed.order, agreed.seeds))
        run_manifests = copy_manifests(loaded, out)
        manifest = MergeManifest(
            origin=origin(),
            n_shards=len(loaded),
            plan_n_shards=plan.n_shards if plan else None,
            records=total,
            results_files=len(merged),
            duplicates_dropped=duplicates,
            agreed=agreed,
            synthetic=agreed.synthetic,
            shards=tuple(per_shard),
            run_manifests=tuple(run_manifests),
        )
        path = write_manifest(out, manifest)
        echo(
            f"merge: {total} records in {len(merged)} results file(s) from {len(loaded)} shard(s) "
            f"({duplicates} duplicate(s) dropped) -> {out}"
        )
        if outputs:
            manifest = updated(manifest, outputs=derive_outputs(out, draws, echo=echo))
            path = write_manifest(out, manifest)
    echo(f"checksums: {out / 'SHA256SUMS'} beside {path.name}")
    return manifest


def load_shards(shard_dirs: list[Path]) -> list[tuple[Path, ShardManifest]]:
    """Each directory's shard manifest, by shard index; MergeError for a shard not complete or given twice."""
    loaded: list[tuple[Path, ShardManifest]] = []
    for d in map(Path, shard_dirs):
        m = read_shard_manifest(d)
        if m.status != "complete":
            raise MergeError(
                f"shard {m.index} ({d}) is {m.status!r}, not complete"
                + (f" ({m.error})" if m.error else "")
                + ": rerun it (resubmit) before merging"
            )
        loaded.append((d, m))
    loaded.sort(key=lambda dm: (dm[1].index, str(dm[0])))
    seen: dict[int, Path] = {}
    for d, m in loaded:
        if m.index in seen:
            raise MergeError(f"shard {m.index} given twice: {seen[m.index]} and {d}")
        seen[m.index] = d
    return loaded


def _short(value: object) -> str:
    text = json.dumps(to_json(value), sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _agreed_value(
    shards: list[tuple[Path, ShardManifest]], label: str, get: Callable[[ShardManifest], Any], optional: bool
) -> Any:  # the value of the manifest field `get` reads (COMPARED: each field its own type)
    """The value every shard that has it gives (None when none has it); MergeError naming the first that differs."""
    ref = None  # (directory, index, value) of the first shard that has the field
    for directory, m in shards:
        value = get(m)
        if value is None and optional:
            continue
        if ref is None:
            ref = (directory, m.index, value)
        elif value != ref[2]:
            raise MergeError(
                f"shard {m.index} ({directory}) differs in {label} from shard {ref[1]} "
                f"({ref[0]}): {_short(value)} vs {_short(ref[2])}"
            )
    return None if ref is None else ref[2]


def check_compatible(shards: list[tuple[Path, ShardManifest]]) -> ShardsAgreed:
    """What every shard agrees on; MergeError naming the first shard and field that differ."""
    if not shards:
        raise MergeError("no shard directories given")
    agreed = {name: _agreed_value(shards, label, get, name in OPTIONAL) for name, label, get in COMPARED}
    model_keys = sorted({k for _, m in shards for k in (m.server or {})})
    server = {
        k: _agreed_value(
            shards, f"server settings of {k} (image, flags, profile)", lambda m, k=k: (m.server or {}).get(k), True
        )
        for k in model_keys
    }
    return ShardsAgreed(**agreed, server=server, synthetic=_agreed_synthetic(shards))


def _agreed_synthetic(shards: list[tuple[Path, ShardManifest]]) -> bool:
    """Whether the shards hold synthetic (rehearsal-server) output; MergeError when some do and some hold real
    results. A shard that served no model (Gold-Solve slices alone) is neither."""
    served = [(d, m) for d, m in shards if m.servers or m.synthetic]
    kinds = {m.synthetic for _, m in served}
    if len(kinds) > 1:
        syn = next((d, m) for d, m in served if m.synthetic)
        real = next((d, m) for d, m in served if not m.synthetic)
        raise MergeError(
            f"shard {syn[1].index} ({syn[0]}) holds synthetic rehearsal-server output and shard "
            f"{real[1].index} ({real[0]}) real results: they are never merged"
        )
    return kinds.pop() if kinds else False


def check_plan(shards: list[tuple[Path, ShardManifest]], agreed: ShardsAgreed, plan: ShardPlan) -> None:
    """The shards are the given plan's, every one of them."""
    if agreed.plan_sha256 != plan.plan_sha256:
        raise MergeError(f"the shards were made from plan {agreed.plan_sha256}, not the given plan {plan.plan_sha256}")
    missing = sorted(set(range(plan.n_shards)) - {m.index for _, m in shards})
    if missing:
        raise MergeError(f"shard(s) {', '.join(map(str, missing))} of the plan's {plan.n_shards} are missing")


@dataclass
class _Collected:
    """The records of one shard's results files, by file and key (the first copy of a key kept)."""

    merged: dict[Path, dict[str, Record]]
    duplicates: int = 0


def collect_records(
    shards: list[tuple[Path, ShardManifest]], agreed: ShardsAgreed
) -> tuple[dict[Path, dict[str, Record]], list[MergedShard], int]:
    """Every shard's records by results file (relative path) and key, the lowest shard index's copy of a key kept;
    what each shard gave; the duplicates dropped. MergeError for a torn file, another dataset's record, or a
    synthetic record in a real set (and the reverse)."""
    collected = _Collected({})
    per_shard = []
    for d, m in shards:
        kept = sum(_collect_file(collected, d, m, path, agreed) for path in iter_result_files(d))
        per_shard.append(
            MergedShard(
                m.index,
                str(d),
                kept,
                m.records,
                m.slurm,
                hashlib.sha256(manifest_path("shard", root=d).read_bytes()).hexdigest(),
            )
        )
    return collected.merged, per_shard, collected.duplicates


def _collect_file(collected: _Collected, d: Path, m: ShardManifest, path: Path, agreed: ShardsAgreed) -> int:
    """One shard's results file into the collection; the records it added."""
    try:
        records, _, torn = scan_result_file(path)
    except StoreError as exc:
        raise MergeError(f"shard {m.index}: {exc}") from None
    if torn is not None:
        raise MergeError(f"shard {m.index}: {path} ends in an incomplete line; rerun the shard")
    bucket = collected.merged.setdefault(path.relative_to(d), {})
    n = 0
    for lineno, rec in enumerate(records, 1):
        if rec.dataset_sha256 not in (None, agreed.dataset_sha256):
            raise MergeError(
                f"shard {m.index}: {path}:{lineno} has dataset sha256 {rec.dataset_sha256}, the "
                f"shards' is {agreed.dataset_sha256}"
            )
        kind = record_kind(rec)  # None: a model-free record, in either kind of set
        if kind is not None and (kind == "synthetic") != agreed.synthetic:
            raise MergeError(
                f"shard {m.index}: {path}:{lineno} is {kind} in a "
                f"{'synthetic' if agreed.synthetic else 'real'} result set"
            )
        if rec.key in bucket:
            collected.duplicates += 1
            continue
        bucket[rec.key] = rec
        n += 1
    return n


def check_empty_target(out: Path, merged: dict[Path, dict[str, Record]]) -> None:
    existing = {p.relative_to(out) for p in iter_result_files(out)} if out.exists() else set()
    stale = sorted(existing - set(merged))
    if stale:
        raise MergeError(f"{out} already holds results no shard has ({stale[0]}, ...): merge into an empty directory")


def write_merged(merged: dict[Path, dict[str, Record]], out: Path, order: Callable[[int, str], str]) -> int:
    """Each merged results file, its records in the run's order for the file (then by key), written atomically by
    the store's writer (harness.run.store.write_result_file); the records written."""
    total = 0
    for rel in sorted(merged):
        records = sorted(merged[rel].values(), key=lambda rec: (order(rec.seed, rec.case_id), rec.key))
        total += write_result_file(out / rel, records)
    return total


def copy_manifests(shards: list[tuple[Path, ShardManifest]], out: Path) -> list[str]:
    """Each shard's `shard.json` under `out/shards/`, and its run manifests (one per `harness run` slice) into `out`
    as `manifest-shard<NNN>-<run id>.json`, so the merged directory's ledger tables (s14/s14b) and report show the
    settings the shards ran with; the copied run manifests' names. Merging again rewrites the same files."""
    copies = out / "shards"
    copies.mkdir(exist_ok=True)
    names = []
    for d, m in shards:
        (copies / f"shard-{m.index:03d}.json").write_bytes(manifest_path("shard", root=d).read_bytes())
        for found in read_manifests(d, kind="run"):
            names.append(write_manifest(out, found.manifest, id=f"shard{m.index:03d}-{found.manifest.run_id}").name)
    return names
