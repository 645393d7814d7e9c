#!/usr/bin/env python3
"""CycloneDX SBOM of the kit's vLLM serving image (part of ``make vllm-image-report``).

Components:

* every Debian package of the image, from its ``/var/lib/dpkg/status`` (read with docker create + cp), with version,
  architecture, source package, package URL and the licence names of its machine-readable
  /usr/share/doc/<package>/copyright (one that is not says so); when the image was built from this checkout's
  containers/vllm/debs.lock (its ``org.mathsolver.debs-lock-sha256`` label), the installed set must be exactly the
  lock's and each package carries its .deb's sha256 and pool path;
* every Python distribution in /opt/vllm, from its METADATA (name, version, licence: License-Expression, else the
  licence classifiers, else the License field; a distribution that declares none says so), with the sha256 hashes
  requirements-vllm-gpu.lock pins for it (the one pip installed is among them); the venv's own pip is marked as not
  from the lock.

The METADATA is read by the image's own interpreter, run with no network and a read-only root
(``importlib.metadata``, nothing of the packages imported). The image is the metadata component (type container,
SHA-256 = its rootfs tar = its one layer), with the vLLM, torch and CUDA versions (torch/version.py) and the Python
version as properties. Written by scripts/sbom_writer.py (shared with scripts/executor_sbom.py), schema-validated.

Usage: scripts/vllm_sbom.py [--image TAG] [--out FILE] [--report FILE]
  --report  also write the image's review report (`make vllm-image-report`): the image (tag, id, rootfs sha256 =
            its layer, size, labels), the locks it was built from (wheel lock, debs.lock with its snapshot, the
            recorded build of containers/vllm/image.lock.json and whether this image is it) and the SBOM's summary
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import deb_lock  # noqa: E402
import sbom_writer  # noqa: E402
from sbom_writer import SbomError  # noqa: E402

PROG = "vllm-sbom"
DEBS_LOCK = ROOT / "containers" / "vllm" / "debs.lock"
WHEEL_LOCK = ROOT / "requirements-vllm-gpu.lock"
IMAGE_LOCK = ROOT / "containers" / "vllm" / "image.lock.json"
VENV_PYTHON = "/opt/vllm/bin/python"

# run inside the image: every distribution's METADATA fields and torch/version.py's text (nothing imported)
PROBE = r"""
import importlib.metadata as m, json, pathlib, sys, sysconfig
out = []
for d in m.distributions():
    md = d.metadata
    out.append({"name": md["Name"], "version": md["Version"], "license": md.get("License"),
                "license_expression": md.get("License-Expression"), "summary": md.get("Summary"),
                "classifiers": [c for c in (md.get_all("Classifier") or []) if c.startswith("License ::")]})
tv = pathlib.Path(sysconfig.get_paths()["purelib"], "torch", "version.py")
print(json.dumps({"distributions": out, "python": sys.version.split()[0],
                  "torch_version_py": tv.read_text() if tv.exists() else None}))
"""


def image_metadata(image: str) -> dict:
    res = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--entrypoint",
            VENV_PYTHON,
            image,
            "-I",
            "-c",
            PROBE,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if res.returncode != 0:
        raise SbomError(f"{PROG}: reading the distributions' METADATA in {image} failed: {res.stderr.strip()[-400:]}")
    return json.loads(res.stdout)


def torch_cuda(version_py: str | None) -> tuple[str, str]:
    """(torch's version, its CUDA version) from torch/version.py's text."""

    def field(name: str) -> str:
        m = re.search(rf"^{name}\s*(?::\s*\S+\s*)?=\s*['\"]([^'\"]*)['\"]", version_py or "", re.M)
        return m.group(1) if m else "?"

    return field("__version__"), field("cuda")


def build_sbom(
    image: str,
    info: dict,
    status_text: str,
    meta: dict,
    debs: deb_lock.Lock | None,
    wheel_lock_text: str,
    doc_tar: bytes | None = None,
) -> sbom_writer.Bom:
    """The SBOM from what was read of the image (pure: the tests feed it)."""
    labels = (info.get("Config") or {}).get("Labels") or {}
    layers = (info.get("RootFS") or {}).get("Layers") or []
    if len(layers) != 1:
        raise SbomError(f"{PROG}: {image} has {len(layers)} layers, not the one of scripts/build-vllm-image.sh")
    rootfs = layers[0].removeprefix("sha256:")
    deb_comps = sbom_writer.deb_components(
        status_text, debs, f"vLLM image {image}", sbom_writer.debian_licenses(doc_tar) if doc_tar else None
    )
    pins = sbom_writer.lock_pins(wheel_lock_text)
    dists = sorted(meta["distributions"], key=lambda d: sbom_writer.normalize(d["name"]))
    names = [sbom_writer.normalize(d["name"]) for d in dists]
    missing = sorted(set(pins) - set(names))
    if missing:
        raise SbomError(
            f"{PROG}: {image} lacks {len(missing)} distributions {WHEEL_LOCK.name} pins: " + ", ".join(missing[:10])
        )
    try:
        py_comps = [sbom_writer.pypi_component(d, pins.get(n), WHEEL_LOCK.name) for d, n in zip(dists, names)]
    except ValueError as exc:
        raise SbomError(f"{PROG}: {image}: {exc}") from None
    torch_version, cuda = torch_cuda(meta.get("torch_version_py"))
    vllm_version = next((d["version"] for d in dists if sbom_writer.normalize(d["name"]) == "vllm"), "?")
    props = {
        "image_id": info.get("Id") or "",
        "vllm": vllm_version,
        "torch": torch_version,
        "cuda": cuda,
        "python": meta.get("python", "?"),
        "wheel_lock": f"{WHEEL_LOCK.name} sha256 {labels.get('org.mathsolver.lock-sha256', '?')}",
        "debs_lock": (
            f"containers/vllm/debs.lock sha256 {labels['org.mathsolver.debs-lock-sha256']}"
            if debs is not None
            else "the image was not built from this checkout's containers/vllm/debs.lock: no .deb hashes"
        ),
    }
    metadata = sbom_writer.container_component("mathsolver-vllm", image, rootfs, props)
    return sbom_writer.make_bom(metadata, deb_comps + py_comps)


def image_debs_lock(info: dict) -> deb_lock.Lock | None:
    label = ((info.get("Config") or {}).get("Labels") or {}).get("org.mathsolver.debs-lock-sha256")
    if not DEBS_LOCK.exists() or label != hashlib.sha256(DEBS_LOCK.read_bytes()).hexdigest():
        return None
    return deb_lock.read_lock(DEBS_LOCK)


def default_image() -> str:
    own = json.loads(IMAGE_LOCK.read_text())["own"]
    return f"{own['image']}:{own['tag']}"


def review_report(image: str, info: dict, sbom_path: Path) -> dict:
    labels = (info.get("Config") or {}).get("Labels") or {}
    rootfs = ((info.get("RootFS") or {}).get("Layers") or ["?"])[0].removeprefix("sha256:")
    own = json.loads(IMAGE_LOCK.read_text())["own"]
    recorded = own.get("build") or {}
    debs = deb_lock.read_lock(DEBS_LOCK) if DEBS_LOCK.exists() else None
    return {
        "image": {
            "tag": image,
            "id": info.get("Id"),
            "rootfs_sha256": rootfs,
            "size_bytes": info.get("Size"),
            "created": info.get("Created"),
            "entrypoint": (info.get("Config") or {}).get("Entrypoint"),
            "env": (info.get("Config") or {}).get("Env"),
            "labels": labels,
        },
        "wheel_lock": {
            "path": WHEEL_LOCK.name,
            "sha256": hashlib.sha256(WHEEL_LOCK.read_bytes()).hexdigest(),
            "image_label": labels.get("org.mathsolver.lock-sha256"),
        },
        "debs_lock": {
            "path": "containers/vllm/debs.lock",
            "sha256": hashlib.sha256(DEBS_LOCK.read_bytes()).hexdigest() if debs else None,
            "snapshot": debs.snapshot if debs else None,
            "releases": debs.releases if debs else None,
            "packages": len(debs.debs) if debs else 0,
            "image_label": labels.get("org.mathsolver.debs-lock-sha256"),
        },
        "recorded_build": {
            "rootfs_sha256": recorded.get("rootfs_sha256"),
            "debs_lock": recorded.get("debs_lock"),
            "this_image": recorded.get("rootfs_sha256") == rootfs,
        },
        "sbom": sbom_writer.summary(sbom_path),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", default=None, help="image tag (default: containers/vllm/image.lock.json own)")
    ap.add_argument("--out", default=None, help="write here instead of stdout")
    ap.add_argument("--report", default=None, help="also write the review report (JSON) here; needs --out")
    args = ap.parse_args(argv)
    if args.report and not args.out:
        ap.error("--report needs --out (the report summarises the SBOM file)")
    image = args.image or default_image()
    info = sbom_writer.inspect(PROG, image)
    bom = build_sbom(
        image,
        info,
        sbom_writer.read_image_file(image, sbom_writer.DPKG_STATUS, PROG),
        image_metadata(image),
        image_debs_lock(info),
        WHEEL_LOCK.read_text(),
        sbom_writer.read_image_tar(image, "/usr/share/doc", PROG),
    )
    sbom_writer.write(PROG, bom, image, args.out)
    if args.report:
        Path(args.report).write_text(json.dumps(review_report(image, info, Path(args.out)), indent=2) + "\n")
        print(f"{PROG}: {args.report}: review report of {image}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
