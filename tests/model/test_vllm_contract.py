"""Every vLLM server command the plan can emit passes the pinned release's own contract
(containers/vllm/contract-<version>.json, extracted from the vllm wheel by scripts/extract_vllm_contract.py).

The contract is read from vLLM's source, not written by hand: when the wheel is on this machine
($MATHSOLVER_VLLM_WHEEL, or /tmp/vllm-wheel/ after `pip download --no-deps --only-binary :all: vllm==0.12.0
-d /tmp/vllm-wheel`), the committed file is regenerated from it and must be identical."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT
from harness.model import vllm
from harness.model.vllm import DeterminismRefused, VllmLauncher
from harness.model.vllm_contract import check_server_command

CONTRACT = vllm.contract()
GENERATION_CONFIGS = sorted(vllm.serving_config()["generation_config_choices"])


def _wheel() -> Path | None:
    env = os.environ.get("MATHSOLVER_VLLM_WHEEL")
    cands = [Path(env)] if env else sorted(Path("/tmp/vllm-wheel").glob(f"vllm-{CONTRACT['vllm_version']}-*.whl"))
    return next((p for p in cands if p.is_file()), None)


def test_contract_is_the_pinned_release_and_names_its_wheel():
    lock = vllm.image_lock()
    assert CONTRACT["vllm_version"] == lock["vllm_version"] == lock["tag"].lstrip("v")
    assert len(CONTRACT["wheel_sha256"]) == 64
    bi = CONTRACT["batch_invariant"]
    assert bi["attention_backends"] == ["FLASH_ATTN", "FLASHINFER", "FLASH_ATTN_MLA"]
    assert bi["attention_backends_source"].startswith("vllm/model_executor/layers/batch_invariant.py:")
    assert bi["enforced_at"].startswith("vllm/v1/worker/gpu_worker.py:")
    assert "awq_marlin" not in bi["quantization_modules_aware"]


@pytest.mark.skipif(_wheel() is None, reason="the vllm wheel is not on this machine (see the module docstring)")
def test_committed_contract_is_what_the_extractor_reads_from_the_wheel(tmp_path):
    wheel = _wheel()
    out = tmp_path / "contract.json"
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "extract_vllm_contract.py"), "--version",
                    CONTRACT["vllm_version"], "--wheel", str(wheel), "-o", str(out)], check=True, capture_output=True)
    assert json.loads(out.read_text()) == CONTRACT


@pytest.mark.parametrize("key,deterministic,generation_config",
                         list(itertools.product(vllm.all_model_keys(), [False, True], GENERATION_CONFIGS)))
def test_every_server_command_of_the_plan_passes_the_release_contract(key, deterministic, generation_config):
    if deterministic and vllm.deterministic_refusal(key):
        with pytest.raises(DeterminismRefused, match=key):
            VllmLauncher(key, generation_config=generation_config, deterministic=True)
        return
    launcher = VllmLauncher(key, generation_config=generation_config, deterministic=deterministic)
    assert launcher.contract_problems() == []
    assert launcher.describe()["determinism"]["batch_invariant"] is deterministic


def test_refused_models_are_exactly_those_the_release_cannot_serve_batch_invariantly(monkeypatch):
    """The refusal list in serving.json agrees with the contract's rule: with the refusal lifted, a model's
    deterministic command fails the contract iff the model is refused."""
    refused = set(vllm.serving_config()["deterministic"]["refused"])
    assert refused == {"qwen2.5-32b-awq"}
    monkeypatch.setattr(vllm, "deterministic_refusal", lambda key: None)
    for key in vllm.all_model_keys():
        problems = VllmLauncher(key, deterministic=True).contract_problems()
        assert bool(problems) == (key in refused), (key, problems)


def test_the_contract_catches_the_batch_invariance_start_failure_and_unknown_flags():
    launcher = VllmLauncher("qwen2.5-7b", deterministic=True)
    env = {"VLLM_BATCH_INVARIANT": "1"}              # what the kit set before: the worker raises RuntimeError
    problems = check_server_command(CONTRACT, launcher.server_args(), env)
    assert any("VLLM_ATTENTION_BACKEND" in p and "RuntimeError" in p for p in problems)
    assert check_server_command(CONTRACT, ["--max-model-lenn", "8192"], {})[0].startswith("--max-model-lenn: not a flag")
    assert "not one of" in check_server_command(CONTRACT, ["--dtype", "bf16"], {})[0]
    assert "not a int" in check_server_command(CONTRACT, ["--max-num-seqs", "many"], {})[0]
    assert check_server_command(CONTRACT, ["--max-model-len", "8k", "--no-enable-prefix-caching"], {}) == []
    assert "not read by vLLM" in check_server_command(CONTRACT, [], {"VLLM_BATCH_INVARIENT": "1"})[0]


def test_the_launcher_refuses_to_start_a_command_the_release_would_refuse(monkeypatch, tmp_path):
    launcher = VllmLauncher("qwen2.5-7b", deterministic=True, log_path=tmp_path / "log")
    monkeypatch.setattr(VllmLauncher, "env", lambda self: {"VLLM_BATCH_INVARIANT": "1"})
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/docker")
    with pytest.raises(vllm.LaunchError, match="contract"):
        launcher.start()
