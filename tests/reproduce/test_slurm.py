"""`make reproduce SLURM=1` against a real SLURM: the one-node cluster of scripts/install-slurm.sh
(`make slurm`, which `make test` runs). Fails in CI when SLURM is missing, skips locally.

CPU shards: Gold-Solve (the library arm, no model server) on the bundled slice at two seeds, so the
array tasks take seconds; the scheduling, the array, the afterok merge job, the resubmission and the
merge are SLURM's and the kit's real ones. The single-box reference is `harness reproduce`."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from harness.reproduce.shard import read_shard_manifest
from harness.run.manifest import read_manifests
from tests.conftest import ROOT, require
from tests.fixtures_data import bundled_cases_csv

pytestmark = [pytest.mark.slow]  # and `slurm`, by the slurm_cluster fixture every test uses

HARNESS = ROOT / ".venv" / "bin" / "harness"
SCRIPT = ROOT / "scripts" / "reproduce.sh"
DRAWS = "500"
SHARDS = 5
WAIT_S = 300
RUN = {"LAUNCHER": "llama-cpp", "ARMS": "gold-lib", "SEEDS": "42-43", "DATASET": "bundled-test"}


@pytest.fixture(scope="module")
def single_box(tmp_path_factory):
    out = tmp_path_factory.mktemp("single-box")
    r = subprocess.run(
        [
            str(HARNESS),
            "reproduce",
            "--launcher",
            "llama-cpp",
            "--arms",
            "gold-lib",
            "--seeds",
            "42-43",
            "--dataset",
            "bundled-test",
            "--draws",
            DRAWS,
            "--no-progress",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out


def _reproduce(out: Path, **extra) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "MODELS",
            "LIMIT",
            "DRY_RUN",
            "SLURM",
            "SHARDS",
            "PARTITION",
            "GPUS_PER_TASK",
            "HARNESS_SHARD_FAIL_FOR_TEST",
        )
    }
    env.update(RUN, SLURM="1", SHARDS=str(SHARDS), OUT=str(out), DRAWS=DRAWS)
    env.update({k: str(v) for k, v in extra.items()})
    return subprocess.run(["make", "-s", "reproduce"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def _submissions(out: Path) -> list[dict]:
    return json.loads((out / "slurm" / "submissions.json").read_text())


def _jobs_listed(*job_ids: str) -> list[str]:
    r = subprocess.run(
        ["squeue", "-h", "-o", "%i %T %r", "-j", ",".join(job_ids)], capture_output=True, text=True, timeout=30
    )
    return [ln for ln in r.stdout.splitlines() if ln.strip()]


def _logs(out: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted((out / "slurm" / "logs").glob("*")))


def _wait(pred, what: str, out: Path, *, merge_job: str | None = None, wait_s: float = WAIT_S) -> float:
    """Poll until pred() (bounded by `wait_s`); fail at once when `merge_job` can never run (a task failed)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait_s:
        if pred():
            return time.monotonic() - t0
        if merge_job and any("DependencyNeverSatisfied" in ln for ln in _jobs_listed(merge_job)):
            pytest.fail(f"{what}: an array task failed, merge job {merge_job} can never run; logs:\n{_logs(out)}")
        time.sleep(2)
    pytest.fail(f"{what} not reached within {wait_s} s; logs:\n{_logs(out)}")


def _tables(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def cancel_on_exit():
    jobs: list[str] = []
    yield jobs
    if jobs:
        subprocess.run(["scancel", *jobs], capture_output=True, timeout=30)


def test_dry_run_prints_both_scripts_and_submits_nothing(slurm_cluster, tmp_path):
    r = _reproduce(tmp_path / "run", DRY_RUN="1", PARTITION="debug")
    assert r.returncode == 0, r.stderr
    assert "#SBATCH --partition=debug" in r.stdout
    assert "shard run --plan" in r.stdout and "harness merge --plan" in r.stdout
    assert r.stdout.count(f"\ncd {ROOT}\n") == 2  # both jobs run from the kit checkout
    assert f"--array=0-{SHARDS - 1}" in r.stdout and "--dependency=afterok:$ARRAY_JOB_ID" in r.stdout
    assert not (tmp_path / "run" / "slurm" / "submissions.json").exists()


def test_array_and_merge_job_give_the_single_box_tables(slurm_cluster, single_box, tmp_path, cancel_on_exit):
    out = tmp_path / "run"
    t0 = time.monotonic()
    r = _reproduce(out)
    assert r.returncode == 0, r.stdout + r.stderr
    sub = _submissions(out)[-1]
    cancel_on_exit += [sub["array_job"], sub["merge_job"]]
    assert sub["array"] == f"0-{SHARDS - 1}"
    _wait(
        lambda: not _jobs_listed(sub["array_job"], sub["merge_job"]),
        "array and merge job finished",
        out,
        merge_job=sub["merge_job"],
    )
    elapsed = time.monotonic() - t0
    merged = out / "merged"
    (found,) = read_manifests(merged, kind="merge")
    manifest = found.manifest
    assert manifest.n_shards == SHARDS and manifest.records == 220 and manifest.duplicates_dropped == 0
    assert sorted(s.slurm["SLURM_ARRAY_TASK_ID"] for s in manifest.shards) == [str(i) for i in range(SHARDS)]
    assert {s.slurm["SLURM_ARRAY_JOB_ID"] for s in manifest.shards} == {sub["array_job"]}
    single = _tables(single_box / "tables")
    assert single and _tables(merged / "tables") == single
    print(f"\nSLURM array of {SHARDS} + merge: {elapsed:.1f} s from submission to merged tables")


def test_a_failed_task_is_redone_by_resubmission(slurm_cluster, single_box, tmp_path, cancel_on_exit):
    out = tmp_path / "run"
    r = _reproduce(out, HARNESS_SHARD_FAIL_FOR_TEST="2")  # array task 2 fails on purpose after one slice
    assert r.returncode == 0, r.stdout + r.stderr
    first = _submissions(out)[-1]
    cancel_on_exit += [first["array_job"], first["merge_job"]]
    _wait(lambda: not _jobs_listed(first["array_job"]), "array finished", out)
    shard2 = read_shard_manifest(out / "shards" / "shard-002")
    assert shard2.status == "failed" and "fails on purpose" in shard2.error
    assert shard2.records > 0  # its first slice is kept in its store
    # SLURM marks the merge job's afterok dependency as never satisfied at its next scheduling pass
    _wait(
        lambda: any("PENDING DependencyNeverSatisfied" in ln for ln in _jobs_listed(first["merge_job"])),
        "merge job held by its failed dependency",
        out,
    )
    assert not (out / "merged").exists()
    before = {i: (out / "shards" / f"shard-{i:03d}" / "shard.json").read_bytes() for i in (0, 1, 3, 4)}

    r = _reproduce(out)  # the same command again
    assert r.returncode == 0, r.stdout + r.stderr
    second = _submissions(out)[-1]
    cancel_on_exit += [second["array_job"], second["merge_job"]]
    assert second["array"] == "2" and first["merge_job"] in second["cancelled"]
    _wait(
        lambda: not _jobs_listed(second["array_job"], second["merge_job"]),
        "resubmitted array and merge",
        out,
        merge_job=second["merge_job"],
    )
    for i, text in before.items():  # complete shards were not run again
        assert (out / "shards" / f"shard-{i:03d}" / "shard.json").read_bytes() == text
    log = next((out / "slurm" / "logs").glob(f"shard-2.{second['array_job']}.out")).read_text()
    resumed = sum(int(n) for n in re.findall(r", (\d+) resumed", log))  # one line per (arm, seed) of its slice
    assert resumed == shard2.records  # the failed shard resumed by record key
    (found,) = read_manifests(out / "merged", kind="merge")
    assert found.manifest.records == 220 and found.manifest.duplicates_dropped == 0
    assert _tables(out / "merged" / "tables") == _tables(single_box / "tables")


MODEL_RUN = {"LAUNCHER": "llama-cpp", "ARMS": "open-book", "SEEDS": "42"}
# two bundled rows with short notes (46 and 83 characters; the slice's first two have 3,796 and 5,093, about 2,300
# prompt tokens at ~50 tokens/s on 2 cores, prefilled by each of the three servers)
MODEL_CASES = ["24-951", "13-929"]


@pytest.mark.model
def test_each_array_task_starts_and_stops_its_own_model_server(slurm_cluster, tmp_path, cancel_on_exit):
    """A model arm: every array task starts the CPU model server (llama.cpp, the launcher that stands in for
    vLLM here), waits until it lists the model, runs its shard and stops it; the merge equals one box."""
    require(
        (ROOT / "models" / "qwen2.5-coder-0.5b-instruct.gguf").exists()
        and (ROOT / ".venv-server" / "bin" / "python").exists(),
        "CPU model server not built (make model)",
    )
    single = tmp_path / "single-box"
    cases = bundled_cases_csv(tmp_path / "two-short-cases.csv", MODEL_CASES)
    r = subprocess.run(
        [
            str(HARNESS),
            "reproduce",
            "--launcher",
            "llama-cpp",
            "--arms",
            "open-book",
            "--seeds",
            "42",
            "--dataset",
            str(cases),
            "--draws",
            DRAWS,
            "--no-progress",
            "--out",
            str(single),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = tmp_path / "run"
    r = _reproduce(out, **{**MODEL_RUN, "DATASET": str(cases), "SHARDS": "2"})
    assert r.returncode == 0, r.stdout + r.stderr
    sub = _submissions(out)[-1]
    cancel_on_exit += [sub["array_job"], sub["merge_job"]]
    assert sub["array"] == "0-1"
    _wait(
        lambda: not _jobs_listed(sub["array_job"], sub["merge_job"]),
        "model shards and merge finished",
        out,
        merge_job=sub["merge_job"],
    )
    for i in (0, 1):
        log = next((out / "slurm" / "logs").glob(f"shard-{i}.{sub['array_job']}.out")).read_text()
        assert "starting llama-cpp server" in log and "stopping the" in log, log[-2000:]
        shard = read_shard_manifest(out / "shards" / f"shard-{i:03d}")
        assert shard.status == "complete" and shard.records == 1, shard
        (server,) = shard.servers.values()  # the server that answered, as it described itself
        url = server.base_url
        port = int(url.rsplit(":", 1)[1].split("/")[0]) if ":" in url else None
        if port:  # stopped with its task: nothing listens there
            with socket.socket() as sock:
                assert sock.connect_ex(("127.0.0.1", port)) != 0, f"shard {i}'s server still answers on {port}"
    merged = out / "merged"
    (found,) = read_manifests(merged, kind="merge")
    assert found.manifest.records == 2 and found.manifest.duplicates_dropped == 0
    assert _tables(merged / "tables") == _tables(single / "tables")


REHEARSAL_SLICE = {
    "LAUNCHER": "rehearsal",
    "MODELS": "rehearsal-alpha",
    "SEEDS": "42-43",
    "SHARDS": "3",
    "ARMS": "note-only,program-solve,blind-repair-vote,extract-lib,gold-lib",
}


def _in_file_order(root: Path) -> dict[str, list[str]]:
    """Each results file's records, canonical (bench.compare: timing and transport fields left out), in file order."""
    from bench.compare import canonical_record
    from harness.run.store import iter_result_files, read_result_file

    return {
        str(p.relative_to(root)): [canonical_record(r.to_dict()) for r in read_result_file(p)]
        for p in iter_result_files(root)
    }


def test_the_rehearsal_slice_keeps_its_request_order_over_slurm(slurm_cluster, tmp_path, cancel_on_exit):
    """The rehearsal's case set (one dev row per calculator) against the rehearsal launcher, sharded over the
    cluster: the plan, every shard and every slice's run manifest record the request order (case-major by default),
    a case-major slice runs each case's arms and seeds together, and the merged run equals the one-box run record
    for record in each file's order, its tables byte for byte."""
    from harness.data.rehearsal_set import build_rehearsal_set, dev_rows_csv
    from harness.reproduce.shard import load_plan

    try:
        source = dev_rows_csv()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    cases = tmp_path / "rehearsal-cases.csv"
    build_rehearsal_set(source, cases, 1)
    run = {**REHEARSAL_SLICE, "DATASET": str(cases)}
    single = tmp_path / "single-box"
    t0 = time.monotonic()
    r = subprocess.run(
        [
            str(HARNESS),
            "reproduce",
            "--launcher",
            "rehearsal",
            "--models",
            run["MODELS"],
            "--arms",
            run["ARMS"],
            "--seeds",
            run["SEEDS"],
            "--dataset",
            str(cases),
            "--draws",
            DRAWS,
            "--no-progress",
            "--out",
            str(single),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    one_box_s = time.monotonic() - t0
    out = tmp_path / "run"
    t0 = time.monotonic()
    r = _reproduce(out, **run)
    assert r.returncode == 0, r.stdout + r.stderr
    sub = _submissions(out)[-1]
    cancel_on_exit += [sub["array_job"], sub["merge_job"]]
    _wait(
        lambda: not _jobs_listed(sub["array_job"], sub["merge_job"]),
        "rehearsal shards and merge",
        out,
        merge_job=sub["merge_job"],
        wait_s=1800,
    )
    cluster_s = time.monotonic() - t0
    plan = load_plan(out / "slurm" / "plan.json")
    assert plan.config.order == "case-major"
    for shard in plan.shards:
        assert all(sl.seeds == (42, 43) for sl in shard.slices)  # each case's seeds together
        manifest = read_shard_manifest(out / "shards" / f"shard-{shard.index:03d}")
        assert manifest.status == "complete" and manifest.order == "case-major" and manifest.seeds == (42, 43)
        runs = read_manifests(out / "shards" / f"shard-{shard.index:03d}", kind="run")
        assert runs and {f.manifest.order for f in runs} == {"case-major"}  # what each slice's run recorded
    model_cases = [c for sh in plan.shards for sl in sh.slices if sl.model_key for c in sl.case_ids]
    assert len(model_cases) == len(set(model_cases))  # no case split across shards
    merged = out / "merged"
    (found,) = read_manifests(merged, kind="merge")
    assert found.manifest.agreed.order == "case-major" and found.manifest.synthetic is True
    ours, theirs = _in_file_order(merged), _in_file_order(single)
    assert sorted(ours) == sorted(theirs) and all(ours[f] == theirs[f] for f in theirs)
    assert _tables(merged / "tables") == _tables(single / "tables")
    n = sum(len(v) for v in ours.values())
    print(
        f"\nrehearsal slice over SLURM ({plan.n_shards} shards, order {plan.config.order}): {n} records in "
        f"{len(ours)} files equal the one-box run's in file order; tables byte-identical; one box {one_box_s:.0f} s, "
        f"cluster {cluster_s:.0f} s (load {open('/proc/loadavg').read().split()[:3]})"
    )
