#!/usr/bin/env python3
"""CycloneDX SBOM of the executor image (part of ``make executor-image-report``).

Components:

* every Debian package of the image, read from the image's ``/var/lib/dpkg/status`` (written at
  build time from the extracted .debs), with its version, architecture and source package, and
  a package URL ``pkg:deb/debian/<name>@<version>?arch=<arch>&distro=debian-12``, and the .deb's
  sha256 from containers/executor/debs.lock when the image was built from this checkout's lock;
* the executor package (``executor/`` in the interpreter's stdlib directory), version and SHA-256
  = the executor source digest the image carries in its label (``pool.executor_source_digest``);
* pyseccomp, from the wheel pinned with hashes in requirements.lock
  (``pkg:pypi/pyseccomp@<version>``).

The image itself is the metadata component (type container, SHA-256 = the reproducible rootfs
tar). The document is written by scripts/sbom_writer.py (shared with scripts/vllm_sbom.py) and
validated against the CycloneDX 1.6 JSON schema before it is written; an invalid SBOM is an error.

Usage: scripts/executor_sbom.py [--image TAG] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from cyclonedx.model import HashAlgorithm, HashType, Property
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from packageurl import PackageURL

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import deb_lock  # noqa: E402
import sbom_writer  # noqa: E402
from sbom_writer import (  # noqa: E402,F401
    DPKG_STATUS,
    SCHEMA,
    deb_component,
    deb_components,
    inspect,
    parse_dpkg_status,
    read_image_file,
    sbom_json,
    source_package,
)

from executor import pool  # noqa: E402

PROG = "executor-sbom"
DEBS_LOCK = ROOT / "containers" / "executor" / "debs.lock"


def image_debs_lock(lock_entry: dict | None, image: str) -> deb_lock.Lock | None:
    """This checkout's debs.lock when the image lock says the image was built from it (else no .deb hashes)."""
    if not DEBS_LOCK.exists() or not lock_entry or lock_entry.get("image") != image:
        return None
    lock = deb_lock.read_lock(DEBS_LOCK)
    recorded = (lock_entry.get("debs_lock") or {}).get("sha256")
    return lock if recorded == hashlib.sha256(DEBS_LOCK.read_bytes()).hexdigest() else None


def pyseccomp_component() -> Component:
    """pyseccomp as pinned in requirements.lock (the wheel customize.sh extracts)."""
    lock = (ROOT / "requirements.lock").read_text()
    m = re.search(r"^pyseccomp==(\S+)((?:\s*\\\n\s*--hash=sha256:[0-9a-f]{64})+)", lock, re.M)
    if not m:
        raise SystemExit("executor-sbom: pyseccomp pin with hashes not found in requirements.lock")
    hashes = re.findall(r"sha256:([0-9a-f]{64})", m.group(2))
    purl = PackageURL(type="pypi", name="pyseccomp", version=m.group(1))
    return Component(
        type=ComponentType.LIBRARY,
        name="pyseccomp",
        version=m.group(1),
        purl=purl,
        bom_ref=purl.to_string(),
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=h) for h in hashes],
        properties=[Property(name="mathsolver:hashes", value="requirements.lock pins (wheel and sdist)")],
    )


def build_sbom(image: str) -> Bom:
    info = inspect(PROG, image)
    labels = (info.get("Config") or {}).get("Labels") or {}
    rootfs = labels.get(pool.LABEL_ROOTFS)
    src_digest = labels.get(pool.LABEL_SRC)
    if not rootfs or not src_digest:
        raise SystemExit(
            f"executor-sbom: image {image} lacks the build labels (not built by scripts/build-executor-image.sh)"
        )
    lock_entry = json.loads(pool.IMAGE_LOCK.read_text()) if pool.IMAGE_LOCK.exists() else None
    debs = deb_components(
        read_image_file(image, DPKG_STATUS, PROG), image_debs_lock(lock_entry, image), f"executor image {image}"
    )
    metadata = sbom_writer.container_component(pool.IMAGE_NAME, image, rootfs, {"image_id": info.get("Id") or ""})
    executor = Component(
        type=ComponentType.APPLICATION,
        name="mathsolver-executor",
        version=src_digest[:16],
        bom_ref="mathsolver-executor",
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=src_digest)],
        description="the restricted executor package (executor/*.py) in /usr/lib/python3.11/executor",
        properties=[
            Property(
                name="mathsolver:hash",
                value="sha256 over sha256sum lines of executor/*.py (pool.executor_source_digest)",
            )
        ],
    )
    return sbom_writer.make_bom(metadata, debs + [executor, pyseccomp_component()])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", default=None, help="image tag (default: containers/executor/image.lock)")
    ap.add_argument("--out", default=None, help="write here instead of stdout")
    args = ap.parse_args(argv)
    image = args.image or pool.default_image()
    sbom_writer.write(PROG, build_sbom(image), image, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
