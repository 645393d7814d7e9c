"""`make gpu-acceptance` (harness serve acceptance): its whole logic against the REAL vLLM 0.32.0 CPU twin (the
session's server, attached through MATHSOLVER_VLLM_CPU_SERVER), the GPU-only phases reported as not run; the plan
reading a GPU run's measured rates; the box facts from a FAKE nvidia-smi (named so)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from harness.cli.serve import serve
from harness.model.launchers import LAUNCHERS
from harness.model.serving import LaunchOptions
from harness.model.vllm.cpu import ATTACH_ENV
from harness.reproduce import acceptance
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.plan import build_plan, format_plan


@pytest.mark.vllm
def test_gpu_acceptance_runs_end_to_end_against_the_cpu_twin(vllm_cpu_server, tmp_path, monkeypatch):
    monkeypatch.setenv(ATTACH_ENV, str(vllm_cpu_server.record))
    out = tmp_path / "acceptance"
    r = CliRunner().invoke(serve, ["acceptance", "--launcher", "vllm-cpu", "--out", str(out)])
    assert r.exit_code == 0, r.output
    report = json.loads((out / "gpu-acceptance.json").read_text())
    assert report["kind"] == "gpu-acceptance" and report["launcher"] == "vllm-cpu" and report["gpu"] is False
    phases = {p["name"]: p for p in report["phases"]}
    default = phases["default"]
    assert default["ran"] and default["error"] is None and default["server"]["attached"] is True
    assert default["server"]["version"] == "0.32.0"
    assert default["server"]["env"]["VLLM_USE_FLASHINFER_SAMPLER"] == "0"  # explicit on every server
    det = default["determinism"]  # the check's logic, on CPU kernels
    assert det["greedy_prompts"] == 2 and len(det["prompts"]) == 2 and det["long_prompts"] == 1
    assert det["long_prompt_tokens"][0] > 200  # a real prefill joined the batch
    assert all(p["tokens"] == acceptance.CPU_SIZES.greedy_tokens for p in det["prompts"])
    assert all(isinstance(p["identical_tokens"], bool) for p in det["prompts"])
    t = default["throughput"]
    plan_concurrency = (
        LAUNCHERS["vllm-cpu"].for_model("qwen2.5-coder-0.5b-instruct", LaunchOptions(log_dir=tmp_path)).concurrency
    )
    assert t["concurrency"] == plan_concurrency  # what a run sends at once
    assert t["prefill"]["tokens_per_s"] > 0 and t["decode"]["tokens_per_s"] > 0
    assert t["decode"]["completion_tokens"] == plan_concurrency * acceptance.CPU_SIZES.decode_tokens  # ignore_eos
    for name in ("box", "fa2", "fa3", "tp2"):  # GPU-only, each saying why
        assert not phases[name]["ran"] and "GPU-only" in phases[name]["why"]
    assert report["rates"] is None and acceptance.measured_rates(out / "gpu-acceptance.json") == {}
    assert "gpu-acceptance (vllm-cpu" in r.output and "fa3: not run: GPU-only" in r.output
    assert httpx_models(vllm_cpu_server.base_url)  # the shared twin still serves


def httpx_models(base_url: str) -> bool:
    import httpx

    return httpx.get(f"{base_url}/models", timeout=10).status_code == 200


def _gpu_report(path, *, slowdown=1.6):
    path.write_text(
        json.dumps(
            {
                "kind": "gpu-acceptance",
                "launcher": "vllm",
                "gpu": True,
                "when": "2026-12-01T10:00:00Z",
                "box": {"gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
                "rates": {
                    "qwen2.5-7b": {
                        "prefill_tokens_per_s": 31000.0,
                        "decode_tokens_per_s": 3100.0,
                        "concurrency": 64,
                        "deterministic_slowdown": slowdown,
                    }
                },
            }
        )
    )
    return path


def test_the_plan_takes_the_measured_rates_of_a_gpu_run_and_ignores_the_twins(tmp_path, monkeypatch):
    report = _gpu_report(tmp_path / "gpu-acceptance.json")
    monkeypatch.setenv(acceptance.REPORT_ENV, str(report))
    cfg = ReproduceConfig(
        launcher="vllm",
        models=["qwen2.5-7b", "qwen2.5-32b-awq"],
        arms=["open-book"],
        seeds=[42],
        dataset="bundled-test",
        out=tmp_path / "out",
    )
    plan = build_plan(cfg)
    by = {m.key: m for m in plan.models}
    tp7 = by["qwen2.5-7b"].throughput
    assert tp7.measured and tp7.prefill_tokens_per_s == 31000.0 and tp7.decode_tokens_per_s == 3100.0
    assert "H100" in tp7.source and "concurrency 64" in tp7.source
    assert not by["qwen2.5-32b-awq"].throughput.measured  # not measured: still assumed
    text = format_plan(plan)
    assert "(measured 31000.0 prompt tok/s, 3100.0 completion tok/s" in text
    det = build_plan(
        ReproduceConfig(
            launcher="vllm",
            models=["qwen2.5-7b"],
            arms=["open-book"],
            seeds=[42],
            dataset="bundled-test",
            out=tmp_path / "o2",
            deterministic=True,
        )
    )
    assert det.models[0].throughput.deterministic_slowdown == 1.6  # measured, not the 2.0 assumed
    report.write_text(json.dumps({**json.loads(report.read_text()), "launcher": "vllm-cpu", "gpu": False}))
    assert acceptance.measured_rates(report) == {}
    assert not build_plan(cfg).models[0].throughput.measured


def test_the_box_facts_read_the_driver_and_its_cuda_against_the_image(tmp_path, monkeypatch):
    """A FAKE nvidia-smi: two H100s on driver 575 (CUDA 12.9), below the image's CUDA 13.0 (>= 580.65.06)."""
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(
        '#!/bin/sh\nif [ "$1" = "" ]; then echo \'| NVIDIA-SMI 575.51.03  Driver Version: 575.51.03  '
        "CUDA Version: 12.9 |'; else for i in 0 1; do echo 'NVIDIA H100 80GB HBM3, 81559 MiB, 575.51.03, "
        "9.0'; done; fi\n"
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}:{os.environ['PATH']}")
    facts = acceptance.box_facts()
    assert facts["gpu"] and len(facts["gpus"]) == 2 and facts["driver_cuda"] == "12.9" and not facts["driver_ok"]
    assert facts["gpus"][0]["compute_capability"] == "9.0"
    smi.write_text(smi.read_text().replace("575.51.03", "580.95.05").replace("12.9", "13.0"))
    assert acceptance.box_facts()["driver_ok"]


def test_the_verdict_names_what_did_not_hold():
    det = {"greedy_prompts": 8, "identical_tokens": 7, "identical_logprobs": 6}
    phases = [
        acceptance.Phase("fa2", True, determinism=det),
        acceptance.Phase("fa3", True, determinism={**det, "identical_tokens": 3}),
        acceptance.Phase("tp2", False, "1 GPU(s): tensor parallel 2 needs 2"),
    ]
    v = acceptance.verdict(phases, True)
    assert "deterministic mode (FA2) does NOT hold" in v and "FA3: 3/8 identical" in v and "not run: tp2" in v
    phases[0].determinism = {**det, "identical_tokens": 8}
    assert "deterministic mode (FA2) holds under mixed batches" in acceptance.verdict(phases, True)


def test_the_acceptance_refuses_other_launchers_and_unknown_phases(tmp_path):
    r = CliRunner().invoke(
        serve, ["acceptance", "--launcher", "vllm-cpu", "--phases", "box,warp", "--out", str(tmp_path)]
    )
    assert r.exit_code == 2 and "unknown phase(s) warp" in r.output
    with pytest.raises(acceptance.ReproduceError, match="runs the vllm or vllm-cpu launcher, not llama-cpp"):
        acceptance.run_acceptance("llama-cpp", out=tmp_path)
