"""The kit's own vLLM serving image on this box: what docker holds under its name, whether that is the build of this
checkout's recipe, and the checks that need no GPU.

The image is built by scripts/build-vllm-image.sh (`make vllm-image`) and named by requirements-vllm-gpu.lock's
sha256 (`mathsolver-vllm:<first 16 hex>`); its labels carry the lock's sha256, the build inputs' sha256 (lock,
containers/vllm/packages.txt, the script, the Debian mirrors, SOURCE_DATE_EPOCH: `build_inputs()` asks the script
itself) and the vllm wheel's sha256. Its one layer's diff_id is the sha256 of the deterministic rootfs tar: the
image's content, comparable with the kit's recorded build (image.lock.json `own.build`).

The no-GPU checks (`image_checks`) run harness/model/vllm/probe.py inside the image with `docker run --network
none`: the versions (vllm 0.32.0, torch 2.13.0, CUDA 13.0), every server command the kit can emit through the
release's own parser (VLLM_TARGET_DEVICE=cpu: with no GPU, vLLM's platform detection finds none and the parser's
platform-dependent defaults need one), and ldd over every shared object of vllm, torch and flashinfer: the only
library allowed to be missing is the driver's, which the NVIDIA container runtime mounts at run time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.core.paths import REPO_ROOT

BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-vllm-image.sh"
PROBE = Path(__file__).with_name("probe.py")
PROBE_MARK = "MATHSOLVER-PROBE "
# What the NVIDIA container runtime provides at run time (the driver's user-space libraries): the only libraries
# the image may lack.
DRIVER_LIBRARIES = ("libcuda.so.1", "libnvidia-ml.so.1")
LDD_PACKAGES = ("vllm", "torch", "flashinfer")


class ImageError(RuntimeError):
    """The image cannot be inspected or checked (docker missing, the probe printed nothing); the message says why."""


@lru_cache(maxsize=1)
def build_inputs() -> dict:
    """What names the image and decides its bytes, as the build script computes them (`--inputs`; no root)."""
    # the system's tools whatever PATH the caller has (a preflight may run with a bare one)
    env = {**os.environ, "PATH": f"{os.environ.get('PATH', '')}:/usr/bin:/bin"}
    proc = subprocess.run(
        ["/bin/bash", str(BUILD_SCRIPT), "--inputs"], capture_output=True, text=True, timeout=60, env=env
    )
    if proc.returncode != 0:
        raise ImageError(f"{BUILD_SCRIPT.name} --inputs failed: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)


@dataclass(frozen=True)
class LocalImage:
    """An image docker holds: its reference, docker's image id, its one layer (the rootfs tar's sha256), size,
    labels."""

    reference: str
    id: str
    layers: tuple[str, ...]
    size: int
    labels: dict

    @property
    def rootfs_sha256(self) -> str | None:
        return self.layers[0].removeprefix("sha256:") if len(self.layers) == 1 else None


def local_image(reference: str) -> LocalImage | None:
    """What docker holds under `reference` (None: nothing, or no docker)."""
    if shutil.which("docker") is None:
        return None
    proc = subprocess.run(["docker", "image", "inspect", reference], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return None
    data = json.loads(proc.stdout)[0]
    return LocalImage(
        reference,
        data["Id"],
        tuple((data.get("RootFS") or {}).get("Layers") or ()),
        int(data.get("Size") or 0),
        dict((data.get("Config") or {}).get("Labels") or {}),
    )


def label_problems(image: LocalImage, inputs: dict) -> list[str]:
    """Why `image` is not the build of this checkout's recipe (empty: it is)."""
    want = {
        "org.mathsolver.lock-sha256": inputs["lock_sha256"],
        "org.mathsolver.inputs-sha256": inputs["inputs_sha256"],
    }
    return [
        f"label {k} is {image.labels.get(k)!r}, this checkout's build has {v!r}"
        for k, v in want.items()
        if image.labels.get(k) != v
    ]


def compare_with_recorded(image: LocalImage, recorded: dict | None) -> str:
    """One line: this box's build against the kit's recorded one (image.lock.json `own.build`)."""
    if not recorded:
        return "no build of the kit recorded in image.lock.json `own.build` to compare with"
    if image.rootfs_sha256 == recorded.get("rootfs_sha256"):
        return (
            f"the same content as the kit's recorded build (rootfs sha256 {recorded['rootfs_sha256'][:16]}...); "
            f"docker's image id differs by the import time ({image.id[:19]} here, {recorded.get('image_id', '?')[:19]} "
            "recorded)"
            if image.id != recorded.get("image_id")
            else f"the kit's recorded build itself ({image.id})"
        )
    here_debs = image.labels.get("org.mathsolver.debs-lock-sha256") or ""
    recorded_debs = (recorded.get("debs_lock") or {}).get("sha256") or ""
    why = (
        "the Python packages are the same hash-locked wheels and the Debian packages the same locked .debs "
        "(containers/vllm/debs.lock), so the build itself differs: compare both boxes' make vllm-image-report"
        if here_debs and here_debs == recorded_debs
        else f"the Python packages are the same hash-locked wheels; the Debian packages are another deb lock's "
        f"({here_debs[:16] or 'none'} here, {recorded_debs[:16] or 'none'} recorded; scripts/deb_lock.py diff "
        "names the changed packages)"
    )
    return (
        f"content differs from the kit's recorded build (rootfs sha256 {str(image.rootfs_sha256)[:16]}... here, "
        f"{str(recorded.get('rootfs_sha256'))[:16]}... recorded): {why}"
    )


def run_probe(python: list[str], request: dict, *, timeout: float = 900.0) -> dict:
    """probe.py's answer from the interpreter `python` (a `docker run ... python` or a virtualenv's python)."""
    proc = subprocess.run(
        [*python, "-c", PROBE.read_text() + "\nmain(sys.argv)\n", json.dumps(request)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith(PROBE_MARK)), None)
    if proc.returncode != 0 or line is None:
        raise ImageError(f"the probe failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-1500:]}")
    return json.loads(line[len(PROBE_MARK) :])


def image_probe_command(reference: str) -> list[str]:
    """`docker run` of the image's interpreter for the probe: no network, no GPU, the CPU platform for the parser."""
    return [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "-e",
        "VLLM_TARGET_DEVICE=cpu",
        "--entrypoint",
        "/opt/vllm/bin/python",
        reference,
    ]


def image_checks(reference: str, commands: list[dict], *, expect: dict) -> dict:
    """The no-GPU checks of the image (module docstring), each with its verdict; `expect`: {"vllm", "torch",
    "cuda"}, the pinned versions."""
    out = run_probe(
        image_probe_command(reference),
        {"checks": ["versions", "parse", "ldd"], "commands": commands, "ldd_packages": list(LDD_PACKAGES)},
    )
    v = out["versions"]
    verdicts = {
        "vllm": v["vllm"] == expect["vllm"],
        "torch": v["torch"].split("+")[0] == expect["torch"],
        "cuda": v["torch_cuda"] == expect["cuda"],
        "parse": bool(out["parse"]) and all(c["ok"] for c in out["parse"]),
        "ldd": sorted(out["ldd"]["missing"]) == [] or set(out["ldd"]["missing"]) <= set(DRIVER_LIBRARIES),
    }
    return {**out, "expect": expect, "verdicts": verdicts, "ok": all(verdicts.values())}


def format_checks(report: dict) -> list[str]:
    """The checks as a person reads them."""
    v, ldd, ok = report["versions"], report["ldd"], report["verdicts"]
    mark = {True: "ok  ", False: "FAIL"}
    lines = [
        f"{mark[ok['vllm']]} import vllm: {v['vllm']} (distribution {v['vllm_dist']}), first import "
        f"{v['import_vllm_s']} s, Python {v['python']}",
        f"{mark[ok['torch'] and ok['cuda']]} torch {v['torch']}, torch.version.cuda {v['torch_cuda']}",
    ]
    for c in report["parse"]:
        p = c.get("parsed") or {}
        lines.append(
            f"{mark[c['ok']]} parse {c['name']}: "
            + (
                f"attention {p.get('attention_backend')}, flash_attn_version {p.get('flash_attn_version')}, prefix "
                f"caching {p.get('enable_prefix_caching')}, quantization {p.get('quantization')}, tp "
                f"{p.get('tensor_parallel_size')}"
                if c["ok"]
                else c["error"]
            )
        )
    missing = ", ".join(f"{lib} (needed by {m['needed_by']})" for lib, m in ldd["missing"].items()) or "nothing"
    lines.append(
        f"{mark[ok['ldd']]} ldd over {ldd['shared_objects']} shared objects of {', '.join(ldd['packages'])}: "
        f"missing {missing} (allowed: the driver's {', '.join(DRIVER_LIBRARIES)})"
    )
    return lines
