"""What `make reproduce` on the H100 path needs before anything starts, each with how to fix it: the interpreter,
the GPU and its driver against the image's CUDA, GPU memory and count for each model, docker with the NVIDIA runtime
(and runsc, the image of the executor), disk for the weights and the image, the server's port, and the pins.

The checks shared with other launchers come from harness.model.prerequisites; the launcher
(harness.model.vllm.launcher.VllmLauncher.preflight) adds the dataset's.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from harness.model.prerequisites import (
    Check,
    docker_runtimes,
    executor_host_checks,
    free_disk_gb,
    port_check,
    python_check,
    run_quietly,
    runtime_check,
)
from harness.model.vllm.image import ImageError, build_inputs, compare_with_recorded, label_problems, local_image
from harness.model.vllm.locks import (
    PinError,
    contract,
    image_choice,
    image_lock,
    image_reference,
    model_lock,
    own_image,
    serving_config,
    serving_flags,
)

# Approximate download sizes (GB) of the pinned checkpoints, for the disk check; the image is ~9 GB.
WEIGHTS_GB = {"qwen2.5-7b": 16, "qwen2.5-32b-awq": 20, "mistral-7b": 15, "phi-3.5-mini": 8}
IMAGE_GB = 9
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # what build-vllm-image.sh needs


def hf_home() -> Path:
    """The Hugging Face cache the vLLM container mounts (its weights download there)."""
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))


def prerequisites(
    model_keys: list[str], *, deterministic: bool = False, weights_gb_free_needed: float | None = None
) -> list[Check]:
    """Every prerequisite of the vLLM path but the dataset's, in the order a person fixes them."""
    checks: list[Check] = [python_check()]
    smi = run_quietly(
        ["nvidia-smi", "--query-gpu=name,memory.total,driver_version,compute_cap", "--format=csv,noheader"]
    )
    gpus = [ln.strip() for ln in (smi.stdout.splitlines() if smi and smi.returncode == 0 else []) if ln.strip()]
    checks.append(
        Check(
            "NVIDIA GPU and driver",
            bool(gpus),
            "; ".join(gpus)
            or ("nvidia-smi not found" if shutil.which("nvidia-smi") is None else "nvidia-smi lists no GPU"),
            "install the NVIDIA driver (H100: driver >= 535) so `nvidia-smi` lists the GPU",
        )
    )
    if gpus:
        checks.append(driver_check(gpus))
        checks += gpu_memory_checks(model_keys, gpus)
    try:
        need_tp = max([serving_flags(k)["tensor_parallel_size"] for k in model_keys] or [1])
    except PinError:
        need_tp = 1
    if need_tp > 1:
        checks.append(
            Check(
                f"{need_tp} GPUs for tensor parallel {need_tp}",
                len(gpus) >= need_tp,
                f"{len(gpus)} GPU(s)",
                "Mistral-7B runs under tensor parallel 2 as in the paper: use a 2-GPU box or leave it out with MODELS=",
            )
        )
    if deterministic:
        caps = []
        for g in gpus:
            try:
                caps.append(float(g.split(",")[-1]))
            except ValueError:
                pass
        checks.append(
            Check(
                "compute capability >= 9.0 for batch invariance",
                bool(caps) and min(caps) >= 9.0,
                f"compute capability {caps or 'unknown'}",
                "VLLM_BATCH_INVARIANT=1 needs an H100/H200-class GPU; drop DETERMINISTIC=1 otherwise",
            )
        )
    docker, runtimes = docker_runtimes()
    checks.append(docker)
    checks.append(
        runtime_check(
            "nvidia",
            runtimes,
            "NVIDIA container runtime",
            "install nvidia-container-toolkit, then `nvidia-ctk runtime configure --runtime=docker` "
            "and restart dockerd",
        )
    )
    checks += executor_host_checks(runtimes, docker.ok)
    free_gb, probe = free_disk_gb(hf_home())
    need = (
        weights_gb_free_needed
        if weights_gb_free_needed is not None
        else sum(WEIGHTS_GB.get(k, 20) for k in model_keys) + 5
    )
    checks.append(
        Check(
            "disk space for the weights at HF_HOME",
            free_gb >= need,
            f"{free_gb:.0f} GB free at {probe}, {need:.0f} GB needed",
            "free disk space or point HF_HOME at a larger disk",
        )
    )
    root = run_quietly(["docker", "info", "--format", "{{.DockerRootDir}}"]) if docker.ok else None
    if root is not None and root.returncode == 0 and root.stdout.strip():
        droot = Path(root.stdout.strip())
        dfree, _ = free_disk_gb(droot)
        checks.append(
            Check(
                "disk space for the vLLM image at Docker's data root",
                dfree >= IMAGE_GB + 2,
                f"{dfree:.0f} GB free at {droot}, {IMAGE_GB + 2} GB needed",
                "free disk space or move Docker's data-root (daemon.json) to a larger disk",
            )
        )
    try:
        checks.append(port_check(int(serving_config()["defaults"]["port"])))
    except (PinError, KeyError, ValueError):
        pass
    checks += pin_checks(model_keys)
    return checks


def pin_checks(model_keys: list[str]) -> list[Check]:
    """Each model pinned to a full commit (and HF_TOKEN for gated ones), the image pinned by digest."""
    checks, gated = [], []
    for key in model_keys:
        try:
            entry = model_lock(key)
            how = (
                "re-resolved on a networked box by make pin-models"
                if entry.get("revision_confidence") == "re-resolved"
                else "pinned from a public record, never re-resolved: make pin-models checks it"
            )
            checks.append(Check(f"model pinned: {key}", True, f"{entry['repo']}@{entry['revision']} ({how})"))
            if entry.get("gated"):
                gated.append(entry["repo"])
        except PinError as exc:
            checks.append(Check(f"model pinned: {key}", False, str(exc), "make pin-models (on a networked machine)"))
    if gated:
        checks.append(
            Check(
                "Hugging Face token for gated repositories",
                bool(os.environ.get("HF_TOKEN")),
                f"gated: {', '.join(gated)}; HF_TOKEN {'set' if os.environ.get('HF_TOKEN') else 'not set'}",
                "accept the licence on the model page, then export HF_TOKEN=hf_...",
            )
        )
    try:
        if image_choice() == "own":
            checks.append(own_image_check())
            contract()
            return checks
        ref = image_reference()
        how = image_lock().get("digest_confidence", "public-record")
        pinned = (
            "re-resolved on a networked box by make pin-images"
            if how == "re-resolved"
            else "pinned from a public record, never re-resolved: make pin-images checks it"
        )
        checks.append(Check("vLLM image pinned by digest", True, f"{ref} ({pinned})"))
        contract()
    except PinError as exc:
        checks.append(Check("vLLM image pinned by digest", False, str(exc), "make pin-images (on a networked machine)"))
    return checks


def own_image_check() -> Check:
    """The kit's own image: pinned by the lock's sha256 (nothing to resolve), built here from this checkout's recipe,
    or buildable here (`make reproduce` builds it first); a box that can do neither is told what to install."""
    name = "vLLM image: the kit's own"
    try:
        ref = image_reference(choice="own")
        recorded = own_image().get("build")
        inputs = build_inputs()
    except (PinError, ImageError) as exc:
        return Check(name, False, str(exc), "make vllm-image WRITE=1 (the kit's maintainers), or VLLM_IMAGE=upstream")
    pin = f"{ref} (named by {inputs['lock']} sha256 {inputs['lock_sha256'][:16]}...)"
    image = local_image(ref)
    if image is not None:
        problems = label_problems(image, inputs)
        if problems:
            return Check(
                name,
                False,
                f"{pin}: the image here is another recipe's build: {'; '.join(problems)}",
                "make vllm-image (rebuilds it from this checkout's recipe)",
            )
        return Check(name, True, f"{pin}: built here, {image.id[:19]}; {compare_with_recorded(image, recorded)}")
    missing = [
        what
        for what, ok in (
            ("docker", shutil.which("docker")),
            ("mmdebstrap", shutil.which("mmdebstrap")),
            (str(DEBIAN_KEYRING), DEBIAN_KEYRING.is_file()),
        )
        if not ok
    ]
    if missing:
        return Check(
            name,
            False,
            f"{pin}: not built here, and this box lacks {', '.join(missing)} to build it",
            "make host (docker.io, mmdebstrap, debian-archive-keyring), then make vllm-image; or "
            "VLLM_IMAGE=upstream with make pin-images",
        )
    return Check(
        name,
        True,
        f"{pin}: not built here yet; `make reproduce` builds it first (make vllm-image: ~4 GB of "
        "wheels from PyPI, ~9 GB of image, 15-30 min; once per lock)",
    )


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def driver_check(gpus: list[str]) -> Check:
    """The driver against the pinned image's CUDA requirement (image.lock.json `cuda_requirement`)."""
    req = image_lock().get("cuda_requirement") or {}
    need = req.get("min_driver")
    drivers = sorted({g.split(",")[2].strip() for g in gpus if g.count(",") >= 2})
    if not need:
        return Check(
            "driver for the image's CUDA",
            False,
            "image.lock.json has no cuda_requirement",
            "record the image's CUDA runtime and minimum driver in containers/vllm/image.lock.json",
        )
    ok = bool(drivers) and all(_version_tuple(d) >= _version_tuple(need) for d in drivers)
    own = image_choice() == "own"
    return Check(
        f"driver for the image's CUDA {req.get('cuda_runtime')}",
        ok,
        f"driver {', '.join(drivers) or 'unknown'}, needs >= {need}"
        + (" (the kit's image carries no CUDA forward-compatibility libraries)" if own else ""),
        f"install NVIDIA driver >= {need}"
        + (
            "; or serve upstream's image, which carries CUDA's forward-compatibility libraries for older "
            "data-center drivers: VLLM_IMAGE=upstream (make pin-images)"
            if own
            else ", or the CUDA forward-compatibility package (cuda-compat) on a data-center GPU"
        ),
    )


def gpu_memory_checks(model_keys: list[str], gpus: list[str]) -> list[Check]:
    """Each model's weights (per GPU under tensor parallelism) plus 4 GB of KV cache within the memory vLLM may
    take (--gpu-memory-utilization x the smallest GPU's memory)."""
    mems = []
    for g in gpus:
        m = re.search(r"(\d+)\s*MiB", g)
        if m:
            mems.append(int(m.group(1)) / 1024)
    if not mems:
        return []
    out = []
    for key in model_keys:
        try:
            f = serving_flags(key)
        except PinError:
            continue
        need = WEIGHTS_GB.get(key, 20) / int(f["tensor_parallel_size"]) + 4
        have = min(mems) * float(f["gpu_memory_utilization"])
        out.append(
            Check(
                f"GPU memory for {key}",
                have >= need,
                f"{have:.0f} GiB usable per GPU ({min(mems):.0f} GiB x {f['gpu_memory_utilization']}), "
                f"~{need:.0f} GiB needed (weights / tensor parallel {f['tensor_parallel_size']} + 4 GiB KV)",
                "use an 80 GB H100, or leave the model out with MODELS=",
            )
        )
    return out
