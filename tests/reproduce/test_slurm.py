"""`make reproduce SLURM=1` against a real SLURM: the one-node cluster of scripts/install-slurm.sh
(`make slurm`, which `make test` runs). Fails in CI when SLURM is missing, skips locally.

CPU shards: Gold-Solve (the library arm, no model server) on the bundled slice at two seeds, so the
array tasks take seconds; the scheduling, the array, the afterok merge job, the resubmission and the
merge are SLURM's and the kit's real ones. The single-box reference is `harness serve reproduce`."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from harness.reproduce.shard import read_shard_manifest
from harness.run.manifest import read_manifests
from tests.conftest import ROOT, require

pytestmark = [pytest.mark.slow]      # and `slurm`, by the slurm_cluster fixture every test uses

HARNESS = ROOT / ".venv" / "bin" / "harness"
SCRIPT = ROOT / "scripts" / "reproduce.sh"
DRAWS = "500"
SHARDS = 5
WAIT_S = 300
RUN = {"LAUNCHER": "llama-cpp", "ARMS": "gold-lib", "SEEDS": "42-43", "DATASET": "bundled-test"}


@pytest.fixture(scope="module")
def single_box(tmp_path_factory):
    out = tmp_path_factory.mktemp("single-box")
    r = subprocess.run([str(HARNESS), "serve", "reproduce", "--launcher", "llama-cpp", "--arms", "gold-lib",
                        "--seeds", "42-43", "--dataset", "bundled-test", "--draws", DRAWS, "--no-progress",
                        "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out


def _reproduce(out: Path, **extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MODELS", "LIMIT", "DRY_RUN", "SLURM", "SHARDS",
                                                           "PARTITION", "GPUS_PER_TASK", "HARNESS_SHARD_FAIL_FOR_TEST")}
    env.update(RUN, SLURM="1", SHARDS=str(SHARDS), OUT=str(out), DRAWS=DRAWS)
    env.update({k: str(v) for k, v in extra.items()})
    return subprocess.run(["make", "-s", "reproduce"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def _submissions(out: Path) -> list[dict]:
    return json.loads((out / "slurm" / "submissions.json").read_text())


def _jobs_listed(*job_ids: str) -> list[str]:
    r = subprocess.run(["squeue", "-h", "-o", "%i %T %r", "-j", ",".join(job_ids)], capture_output=True, text=True,
                       timeout=30)
    return [ln for ln in r.stdout.splitlines() if ln.strip()]


def _logs(out: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted((out / "slurm" / "logs").glob("*")))


def _wait(pred, what: str, out: Path, *, merge_job: str | None = None) -> float:
    """Poll until pred() (bounded by WAIT_S); fail at once when `merge_job` can never run (a task failed)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < WAIT_S:
        if pred():
            return time.monotonic() - t0
        if merge_job and any("DependencyNeverSatisfied" in ln for ln in _jobs_listed(merge_job)):
            pytest.fail(f"{what}: an array task failed, merge job {merge_job} can never run; logs:\n{_logs(out)}")
        time.sleep(2)
    pytest.fail(f"{what} not reached within {WAIT_S} s; logs:\n{_logs(out)}")


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
    assert f"#SBATCH --partition=debug" in r.stdout
    assert "shard run --plan" in r.stdout and "harness merge --plan" in r.stdout
    assert r.stdout.count(f"\ncd {ROOT}\n") == 2           # both jobs run from the kit checkout
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
    _wait(lambda: not _jobs_listed(sub["array_job"], sub["merge_job"]), "array and merge job finished", out,
          merge_job=sub["merge_job"])
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
    r = _reproduce(out, HARNESS_SHARD_FAIL_FOR_TEST="2")       # array task 2 fails on purpose after one slice
    assert r.returncode == 0, r.stdout + r.stderr
    first = _submissions(out)[-1]
    cancel_on_exit += [first["array_job"], first["merge_job"]]
    _wait(lambda: not _jobs_listed(first["array_job"]), "array finished", out)
    shard2 = read_shard_manifest(out / "shards" / "shard-002")
    assert shard2.status == "failed" and "fails on purpose" in shard2.error
    assert shard2.records > 0                                   # its first slice is kept in its store
    # SLURM marks the merge job's afterok dependency as never satisfied at its next scheduling pass
    _wait(lambda: any("PENDING DependencyNeverSatisfied" in ln for ln in _jobs_listed(first["merge_job"])),
          "merge job held by its failed dependency", out)
    assert not (out / "merged").exists()
    before = {i: (out / "shards" / f"shard-{i:03d}" / "shard.json").read_bytes() for i in (0, 1, 3, 4)}

    r = _reproduce(out)                                         # the same command again
    assert r.returncode == 0, r.stdout + r.stderr
    second = _submissions(out)[-1]
    cancel_on_exit += [second["array_job"], second["merge_job"]]
    assert second["array"] == "2" and first["merge_job"] in second["cancelled"]
    _wait(lambda: not _jobs_listed(second["array_job"], second["merge_job"]), "resubmitted array and merge", out,
          merge_job=second["merge_job"])
    for i, text in before.items():                              # complete shards were not run again
        assert (out / "shards" / f"shard-{i:03d}" / "shard.json").read_bytes() == text
    log = next((out / "slurm" / "logs").glob(f"shard-2.{second['array_job']}.out")).read_text()
    assert f"{shard2.records} resumed" in log                   # the failed shard resumed by record key
    (found,) = read_manifests(out / "merged", kind="merge")
    assert found.manifest.records == 220 and found.manifest.duplicates_dropped == 0
    assert _tables(out / "merged" / "tables") == _tables(single_box / "tables")


MODEL_RUN = {"LAUNCHER": "llama-cpp", "ARMS": "open-book", "SEEDS": "42", "DATASET": "bundled-test", "LIMIT": "2"}


@pytest.mark.model
def test_each_array_task_starts_and_stops_its_own_model_server(slurm_cluster, tmp_path, cancel_on_exit):
    """A model arm: every array task starts the CPU model server (llama.cpp, the launcher that stands in for
    vLLM here), waits until it lists the model, runs its shard and stops it; the merge equals one box."""
    require((ROOT / "models" / "qwen2.5-coder-0.5b-instruct.gguf").exists() and
            (ROOT / ".venv-server" / "bin" / "python").exists(), "CPU model server not built (make model)")
    single = tmp_path / "single-box"
    r = subprocess.run([str(HARNESS), "serve", "reproduce", "--launcher", "llama-cpp", "--arms", "open-book",
                        "--seeds", "42", "--dataset", "bundled-test", "--limit", "2", "--draws", DRAWS,
                        "--no-progress", "--out", str(single)], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = tmp_path / "run"
    r = _reproduce(out, **{**MODEL_RUN, "SHARDS": "2"})
    assert r.returncode == 0, r.stdout + r.stderr
    sub = _submissions(out)[-1]
    cancel_on_exit += [sub["array_job"], sub["merge_job"]]
    assert sub["array"] == "0-1"
    _wait(lambda: not _jobs_listed(sub["array_job"], sub["merge_job"]), "model shards and merge finished", out,
          merge_job=sub["merge_job"])
    for i in (0, 1):
        log = next((out / "slurm" / "logs").glob(f"shard-{i}.{sub['array_job']}.out")).read_text()
        assert "starting llama-cpp server" in log and "stopping the" in log, log[-2000:]
        shard = read_shard_manifest(out / "shards" / f"shard-{i:03d}")
        assert shard.status == "complete" and shard.records == 1, shard
        (server,) = shard.servers.values()                     # the server that answered, as it described itself
        url = server.base_url
        port = int(url.rsplit(":", 1)[1].split("/")[0]) if ":" in url else None
        if port:                                               # stopped with its task: nothing listens there
            with socket.socket() as sock:
                assert sock.connect_ex(("127.0.0.1", port)) != 0, f"shard {i}'s server still answers on {port}"
    merged = out / "merged"
    (found,) = read_manifests(merged, kind="merge")
    assert found.manifest.records == 2 and found.manifest.duplicates_dropped == 0
    assert _tables(merged / "tables") == _tables(single / "tables")
