"""The launcher kinds of `make reproduce` (harness.model.launchers): the rehearsal server (a scripted FAKE)
started and stopped by the pipeline like a model server, and an external server the kit only adopts. Real
components otherwise: the bundled rows, the process executor, the store, the analysis and the checksums."""

from __future__ import annotations

import json

import httpx
import pytest

from harness.model.launchers import LAUNCHERS, launcher_kind
from harness.reproduce.config import ReproduceConfig, ReproduceError, preflight
from harness.reproduce.merge import merge_shards
from harness.reproduce.plan import build_plan, format_plan
from harness.reproduce.reproduction import run_pipeline, verify_run
from harness.reproduce.shard import build_shard_plan, run_shard, shard_dir
from harness.run.store import load_records

ARMS = ["note-only", "blind", "gold-lib"]


def _cfg(tmp_path, **kw) -> ReproduceConfig:
    base = dict(
        arms=ARMS,
        seeds=[42],
        dataset="bundled-test",
        limit=4,
        out=tmp_path / "out",
        executor_backend="process",
        draws=200,
        progress=False,
    )
    return ReproduceConfig(**{**base, **kw})


def test_every_launcher_kind_is_registered_by_name():
    assert list(LAUNCHERS) == ["vllm", "vllm-cpu", "llama-cpp", "rehearsal", "external"]
    with pytest.raises(ReproduceError, match="unknown launcher 'tgi'; known launchers: vllm, vllm-cpu, llama-cpp"):
        ReproduceConfig(launcher="tgi")


def test_rehearsal_launcher_plan_names_the_fake_and_its_synthetic_models(tmp_path):
    cfg = _cfg(tmp_path, launcher="rehearsal")
    assert cfg.models == ("rehearsal-alpha", "rehearsal-beta")
    plan = build_plan(cfg, results_root=tmp_path / "none")
    assert plan.problems == ()
    text = format_plan(plan)
    assert "launcher:   rehearsal" in text and "-m harness.cli serve rehearsal" in text
    assert [m.server.model_id for m in plan.models] == ["rehearsal-alpha", "rehearsal-beta"]
    with pytest.raises(ReproduceError, match="--base-url is for the external launcher"):
        _cfg(tmp_path, launcher="rehearsal", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ReproduceError, match="unknown model"):
        _cfg(tmp_path, launcher="rehearsal", models=["qwen2.5-7b"])


def test_pipeline_starts_and_stops_the_rehearsal_server_and_labels_records_synthetic(tmp_path):
    cfg = _cfg(tmp_path, launcher="rehearsal", models=["rehearsal-alpha"])
    assert all(c.ok for c in preflight(cfg))
    manifest = run_pipeline(cfg, echo=lambda _line: None)
    assert manifest.status == "complete"
    (server,) = manifest.servers
    assert server.info.launcher == "rehearsal" and server.info.synthetic is True and server.info.revision is None
    assert server.stopped_at and "--port" not in server.info.args and "--seed" in server.info.args
    with pytest.raises(httpx.HTTPError):  # stopped: nothing listens on its port any more
        httpx.get(f"{server.info.base_url}/models", timeout=2.0)
    records = load_records(cfg.out)
    model_rows = [r for r in records if r.model != "library"]
    assert len(model_rows) == 2 * 4 and {r.model for r in model_rows} == {"rehearsal-alpha"}
    assert all(r.synthetic is True and r.server_profile == "vllm-seeded" for r in model_rows)
    assert len([r for r in records if r.model == "library"]) == 4
    assert (cfg.out / "report.html").exists() and verify_run(cfg.out, tables=False).problems == []
    assert json.loads((cfg.out / "stats.json").read_text())


def test_external_launcher_adopts_a_running_server_and_never_stops_it(rehearsal_server, tmp_path):
    url = rehearsal_server.base_url
    with pytest.raises(ReproduceError, match="needs --base-url"):
        _cfg(tmp_path, launcher="external", models=["rehearsal-alpha"])
    with pytest.raises(ReproduceError, match="name the served model id"):
        _cfg(tmp_path, launcher="external", base_url=url)
    missing = preflight(_cfg(tmp_path, launcher="external", base_url=url, models=["not-served"]))
    assert not missing[0].ok and "missing ['not-served']" in missing[0].line()
    cfg = _cfg(tmp_path, launcher="external", base_url=url, models=["rehearsal-alpha"], arms=["note-only"])
    assert all(c.ok for c in preflight(cfg))
    assert build_plan(cfg, results_root=tmp_path / "none").estimate_s is None  # unknown, not "0 min"
    manifest = run_pipeline(cfg, echo=lambda _line: None)
    assert manifest.status == "complete" and manifest.servers[0].info.launcher == "external"
    rows = load_records(cfg.out)
    assert len(rows) == 4 and {r.server_profile for r in rows} == {"plain"}
    assert httpx.get(f"{url}/models", timeout=5.0).status_code == 200  # still running: not the kit's to stop


def test_launcher_kinds_answer_what_the_pipeline_used_to_branch_on():
    vllm, cpu, fake = launcher_kind("vllm"), launcher_kind("llama-cpp"), launcher_kind("rehearsal")
    assert (vllm.ready_timeout, cpu.ready_timeout, fake.ready_timeout) == (1800.0, 300.0, 300.0)
    assert vllm.logs_sampling_defaults and not cpu.logs_sampling_defaults
    assert cpu.describe_plan(["qwen2.5-coder-0.5b-instruct"]).gpus_per_task == 0
    assert vllm.describe_plan(["qwen2.5-7b"]).gpus_per_task >= 1
    assert launcher_kind("external").describe_plan(["anything"]).models["anything"].throughput is None


def test_slurm_shards_start_their_own_rehearsal_servers_and_merge_to_the_single_box_records(tmp_path):
    """Each array task (here: two shards run in turn) starts the launcher for its models on its own port, runs its
    slice and stops it; the merge holds the same records as one box's run of the same configuration."""
    cfg = _cfg(
        tmp_path, launcher="rehearsal", models=["rehearsal-alpha"], arms=["note-only"], limit=6, out=tmp_path / "run"
    )
    plan = build_shard_plan(cfg, 2)
    manifests = [run_shard(plan, i, tmp_path / "run", echo=lambda _line: None) for i in (1, 0)]
    assert [m.status for m in manifests] == ["complete", "complete"]
    assert all(m.synthetic is True for m in manifests)
    ports = {m.servers["rehearsal-alpha"].base_url for m in manifests}
    assert len(ports) == 2  # one server per task, each on its own free port
    merged = merge_shards(
        [shard_dir(tmp_path / "run", i) for i in range(2)],
        tmp_path / "merged",
        plan=plan,
        draws=200,
        echo=lambda _line: None,
    )
    assert merged.synthetic is True and merged.records == 6
    single = _cfg(
        tmp_path, launcher="rehearsal", models=["rehearsal-alpha"], arms=["note-only"], limit=6, out=tmp_path / "single"
    )
    run_pipeline(single, echo=lambda _line: None)

    def canon(root):
        return sorted((r.key, r.replies[-1], r.correct) for r in load_records(root))

    assert canon(tmp_path / "merged") == canon(tmp_path / "single")


def test_deterministic_is_refused_for_launchers_without_it_before_anything_runs(tmp_path):
    for kind in ("llama-cpp", "rehearsal", "external"):
        with pytest.raises(ReproduceError, match="--deterministic is a vLLM"):
            _cfg(
                tmp_path,
                launcher=kind,
                deterministic=True,
                base_url="http://127.0.0.1:1/v1" if kind == "external" else None,
                models=["m"] if kind == "external" else [],
            )
    # vLLM 0.32.0 serves all four models batch-invariantly (serving.json deterministic.paths)
    assert _cfg(tmp_path, launcher="vllm", deterministic=True, models=["all"]).deterministic
    with pytest.raises(ReproduceError, match="vllm-cpu launcher refuses batch invariance before anything starts"):
        _cfg(tmp_path, launcher="vllm-cpu", deterministic=True)
