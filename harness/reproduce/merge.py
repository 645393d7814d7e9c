"""`harness merge`: shard directories -> one results directory, as if one box had run it all.

    merge_shards([shard_dir, ...], out)

Refuses, naming the shard and the field, to mix shards that differ in what determines their records
but is not in every record key: dataset sha256, prompt template hashes, arm config hashes, executor
policy hash, server settings (launcher, generation config, determinism, image, server flags), the
kit's commit, or the shard plan; refuses synthetic (rehearsal-server) shards next to real ones and
shards that did not finish. Records are merged per results file (`<model>/<arm>/seed<N>.jsonl`) by
record key: each key is kept exactly once (the copy from the lowest shard index, whatever order the
directories are given in) and written in the runner's seeded case order, so the merged files, and
the tables derived from them, do not depend on how the run was split or in which order shards ended.
The merged directory gets `manifest-merge.json` (which shard gave how many records, the fields every
shard agreed on, the duplicates dropped), a copy of each shard's `shard.json` under `shards/` and of each
shard's run manifests as `manifest-shard<NNN>-<run id>.json` (what the ledger tables s14/s14b read), then
statistics, tables, figures and the report, and last a fresh SHA256SUMS.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from harness.core.canonical_json import record_line
from harness.core.typed_json import to_json
from harness.reproduce.reproduction import outputs as derive_outputs, write_checksums
from harness.reproduce.shard import ShardError, read_shard_manifest
from harness.run.manifest import (MergedShard, MergeManifest, ShardManifest, manifest_path, origin, read_manifests,
                                  updated, write_manifest)
from harness.run.store import StoreError, iter_result_files, scan_result_file

# (what is compared, how an error names it); each must be equal across the merged shards.
COMPARED = (
    ("plan_sha256", "shard plan", lambda m: m.plan_sha256),
    ("dataset.sha256", "dataset sha256", lambda m: m.dataset.sha256),
    ("prompt_hashes", "prompt hashes", lambda m: m.prompt_hashes),
    ("arm_config_hashes", "arm configs", lambda m: m.arm_config_hashes),
    ("executor_policy_hash", "executor policy hash", lambda m: m.executor_policy_hash),
    ("launch", "server settings", lambda m: to_json(m.launch)),
    ("origin.git.commit", "kit commit", lambda m: m.origin.git.commit),
)
# Fields a shard may lack (None): it ran no program-executing arm.
OPTIONAL = {"executor_policy_hash"}


class MergeError(ShardError):
    """Shards that cannot be merged; the message names the shard and the field."""


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


SYNTHETIC_MODEL_PREFIX = "rehearsal-"   # model ids of the rehearsal server (a scripted fake, never a model)


def _is_synthetic_record(rec: dict) -> bool:
    """A record fed by the rehearsal server: marked `synthetic`, or served under a rehearsal model id."""
    return bool(rec.get("synthetic")) or any(str(rec.get(f) or "").startswith(SYNTHETIC_MODEL_PREFIX)
                                             for f in ("model", "server_model"))


def check_compatible(shards: list[tuple[Path, ShardManifest]]) -> dict:
    """The fields every shard agrees on; MergeError naming the first shard and field that differ."""
    if not shards:
        raise MergeError("no shard directories given")
    fields = list(COMPARED)
    model_keys = sorted({k for _, m in shards for k in (m.server or {})})
    fields += [(f"server.{k}", f"server settings of {k} (image, flags, profile)",
                lambda m, k=k: to_json((m.server or {}).get(k))) for k in model_keys]
    agreed: dict = {}
    for name, label, get in fields:
        ref = None  # (directory, index, value) of the first shard that has the field
        for directory, m in shards:
            value = get(m)
            if value is None and (name.startswith("server.") or name in OPTIONAL):
                continue  # this shard did not serve that model, or ran no program-executing arm
            if ref is None:
                ref = (directory, m.index, value)
            elif value != ref[2]:
                raise MergeError(f"shard {m.index} ({directory}) differs in {label} from shard {ref[1]} "
                                 f"({ref[0]}): {_short(value)} vs {_short(ref[2])}")
        agreed[name] = None if ref is None else ref[2]
    # a shard of model-free slices alone (Gold-Solve) served no model: its records are neither, whatever the run's
    served = [(d, m) for d, m in shards if m.servers or m.synthetic]
    kinds = {m.synthetic for _, m in served}
    if len(kinds) > 1:
        syn = next((d, m) for d, m in served if m.synthetic)
        real = next((d, m) for d, m in served if not m.synthetic)
        raise MergeError(f"shard {syn[1].index} ({syn[0]}) holds synthetic rehearsal-server output and shard "
                         f"{real[1].index} ({real[0]}) real results: they are never merged")
    agreed["synthetic"] = kinds.pop() if kinds else False
    return agreed


def copy_run_manifests(shard: Path, out: Path, index: int) -> list[str]:
    """Copy a shard's run manifests (one per `harness run` slice) into `out`, named by the shard index and the run id
    (`manifest-shard<NNN>-<run id>.json`), so the merged directory's ledger tables (s14/s14b) and report show the
    settings the shards ran with. Merging again rewrites the same files."""
    names = []
    for found in read_manifests(shard, kind="run"):
        path = write_manifest(out, found.manifest, id=f"shard{index:03d}-{found.manifest.run_id}")
        names.append(path.name)
    return names


def _case_order_key(rec: dict) -> tuple:
    # the runner's order for one seed (harness.run.runner.case_order), then the key as a tie-break
    return hashlib.sha256(f"{rec['seed']}:{rec['case_id']}".encode()).hexdigest(), rec["key"]


def merge_shards(shard_dirs: list[Path], out: Path, *, plan: dict | None = None, draws: int | None = None,
                 outputs: bool = True, echo: Callable[[str], None] = print) -> dict:
    """Merge shard directories into `out`; returns the merge manifest (also written there)."""

    out = Path(out)
    loaded: list[tuple[Path, ShardManifest]] = []
    for d in shard_dirs:
        d = Path(d)
        m = read_shard_manifest(d)
        if m.status != "complete":
            raise MergeError(f"shard {m.index} ({d}) is {m.status!r}, not complete"
                             + (f" ({m.error})" if m.error else "") + ": rerun it (resubmit) before merging")
        loaded.append((d, m))
    loaded.sort(key=lambda dm: (dm[1].index, str(dm[0])))
    seen_index: dict = {}
    for d, m in loaded:
        if m.index in seen_index:
            raise MergeError(f"shard {m.index} given twice: {seen_index[m.index]} and {d}")
        seen_index[m.index] = d
    agreed = check_compatible(loaded)
    if plan is not None:
        if agreed.get("plan_sha256") != plan["plan_sha256"]:
            raise MergeError(f"the shards were made from plan {agreed.get('plan_sha256')}, not the given plan "
                             f"{plan['plan_sha256']}")
        missing = sorted(set(range(plan["n_shards"])) - set(seen_index))
        if missing:
            raise MergeError(f"shard(s) {', '.join(map(str, missing))} of the plan's {plan['n_shards']} are missing")
    dataset_sha = agreed.get("dataset.sha256")
    merged: dict[Path, dict[str, dict]] = {}
    per_shard = []
    duplicates = 0
    for d, m in loaded:
        n = 0
        for path in iter_result_files(d):
            try:
                records, _, torn = scan_result_file(path)
            except StoreError as exc:
                raise MergeError(f"shard {m.index}: {exc}") from None
            if torn is not None:
                raise MergeError(f"shard {m.index}: {path} ends in an incomplete line; rerun the shard")
            rel = path.relative_to(d)
            bucket = merged.setdefault(rel, {})
            for lineno, rec in enumerate(records, 1):
                if rec.get("dataset_sha256") not in (None, dataset_sha):
                    raise MergeError(f"shard {m.index}: {path}:{lineno} has dataset sha256 "
                                     f"{rec.get('dataset_sha256')}, the shards' is {dataset_sha}")
                if _is_synthetic_record(rec) != agreed["synthetic"] and rec.get("model") != "library":
                    raise MergeError(f"shard {m.index}: {path}:{lineno} is "
                                     f"{'synthetic' if _is_synthetic_record(rec) else 'real'} in a "
                                     f"{'synthetic' if agreed['synthetic'] else 'real'} result set")
                if rec["key"] in bucket:
                    duplicates += 1
                    continue
                bucket[rec["key"]] = rec
                n += 1
        per_shard.append(MergedShard(m.index, str(d), n, m.records, m.slurm,
                                     hashlib.sha256(manifest_path("shard", root=d).read_bytes()).hexdigest()))
    existing = {p.relative_to(out) for p in iter_result_files(out)} if out.exists() else set()
    stale = sorted(existing - set(merged))
    if stale:
        raise MergeError(f"{out} already holds results no shard has ({stale[0]}, ...): merge into an empty directory")
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for rel in sorted(merged):
        records = sorted(merged[rel].values(), key=_case_order_key)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(record_line(rec))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        total += len(records)
    copies = out / "shards"
    copies.mkdir(exist_ok=True)
    run_manifests = []
    for d, m in loaded:
        (copies / f"shard-{m.index:03d}.json").write_bytes(manifest_path("shard", root=d).read_bytes())
        run_manifests += copy_run_manifests(d, out, m.index)
    manifest = MergeManifest(origin=origin(), n_shards=len(loaded), plan_n_shards=plan["n_shards"] if plan else None,
                             records=total, results_files=len(merged), duplicates_dropped=duplicates, agreed=agreed,
                             synthetic=agreed["synthetic"], shards=tuple(per_shard), run_manifests=tuple(run_manifests))
    path = write_manifest(out, manifest)
    echo(f"merge: {total} records in {len(merged)} results file(s) from {len(loaded)} shard(s) "
         f"({duplicates} duplicate(s) dropped) -> {out}")
    if outputs:
        manifest = updated(manifest, outputs=derive_outputs(out, draws, echo=echo))
        path = write_manifest(out, manifest)
    checksums = write_checksums(out)
    echo(f"checksums: {checksums['path']} ({checksums['files']} files) beside {path.name}")
    return updated(manifest, checksums=checksums)
