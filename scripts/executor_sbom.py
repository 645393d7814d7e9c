#!/usr/bin/env python3
"""CycloneDX SBOM of the executor image (part of ``make executor-image-report``).

Components:

* every Debian package of the image, read from the image's ``/var/lib/dpkg/status`` (written at
  build time from the extracted .debs), with its version, architecture and source package, and
  a package URL ``pkg:deb/debian/<name>@<version>?arch=<arch>&distro=debian-12``;
* the executor package (``executor/`` in the interpreter's stdlib directory), version and SHA-256
  = the executor source digest the image carries in its label (``pool.executor_source_digest``);
* pyseccomp, from the wheel pinned with hashes in requirements.lock
  (``pkg:pypi/pyseccomp@<version>``).

The image itself is the metadata component (type container, SHA-256 = the reproducible rootfs
tar). The document is validated against the CycloneDX 1.6 JSON schema (cyclonedx-python-lib's
strict validator) before it is written; an invalid SBOM is an error.

Usage: scripts/executor_sbom.py [--image TAG] [--out FILE]
"""
from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

from cyclonedx.model import HashAlgorithm, HashType, Property
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from executor import pool  # noqa: E402

DPKG_STATUS = "/var/lib/dpkg/status"
DEBIAN_DISTRO = "debian-12"
SCHEMA = SchemaVersion.V1_6


def _docker(*args: str) -> bytes:
    res = subprocess.run(["docker", *args], capture_output=True, timeout=120)
    if res.returncode != 0:
        raise SystemExit(f"executor-sbom: docker {' '.join(args[:2])} failed: "
                         f"{res.stderr.decode(errors='replace').strip()[:400]}")
    return res.stdout


def read_image_file(image: str, path: str) -> str:
    """One file of the image (docker create + cp; nothing is run)."""
    name = f"mathsolver-sbom-{uuid.uuid4().hex[:8]}"
    _docker("create", "--name", name, image, "python3")
    try:
        data = _docker("cp", f"{name}:{path}", "-")
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.extractfile(tar.next()).read().decode()


def parse_dpkg_status(text: str) -> list[dict[str, str]]:
    """Stanzas of a dpkg status file (``Field: value``; continuation lines are dropped)."""
    packages, current = [], {}
    for line in text.splitlines() + [""]:
        if not line.strip():
            if current:
                packages.append(current)
                current = {}
            continue
        if line[0] in " \t":
            continue
        field, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"dpkg status: line without a field name: {line!r}")
        current[field.strip()] = value.strip()
    for p in packages:
        for need in ("Package", "Version", "Architecture", "Status"):
            if need not in p:
                raise ValueError(f"dpkg status: stanza {p.get('Package', '?')!r} has no {need} field")
    return [p for p in packages if p["Status"].endswith(" installed")]


def source_package(stanza: dict[str, str]) -> tuple[str, str]:
    """(source name, source version): Debian's tracker is keyed by the source package."""
    src = stanza.get("Source")
    if not src:
        return stanza["Package"], stanza["Version"]
    m = re.fullmatch(r"(\S+)(?:\s+\((\S+)\))?", src)
    if not m:
        raise ValueError(f"dpkg status: cannot read Source {src!r} of {stanza['Package']}")
    return m.group(1), m.group(2) or stanza["Version"]


def deb_component(stanza: dict[str, str]) -> Component:
    src, src_version = source_package(stanza)
    qualifiers = {"arch": stanza["Architecture"], "distro": DEBIAN_DISTRO}
    if src != stanza["Package"]:
        qualifiers["upstream"] = f"{src}@{src_version}" if src_version != stanza["Version"] else src
    purl = PackageURL(type="deb", namespace="debian", name=stanza["Package"], version=stanza["Version"],
                      qualifiers=qualifiers)
    return Component(
        type=ComponentType.LIBRARY if stanza["Package"].startswith("lib") else ComponentType.APPLICATION,
        name=stanza["Package"], version=stanza["Version"], purl=purl, bom_ref=purl.to_string(),
        publisher=stanza.get("Maintainer"),
        properties=[Property(name="debian:source", value=src),
                    Property(name="debian:source_version", value=src_version)])


def pyseccomp_component() -> Component:
    """pyseccomp as pinned in requirements.lock (the wheel customize.sh extracts)."""
    lock = (ROOT / "requirements.lock").read_text()
    m = re.search(r"^pyseccomp==(\S+)((?:\s*\\\n\s*--hash=sha256:[0-9a-f]{64})+)", lock, re.M)
    if not m:
        raise SystemExit("executor-sbom: pyseccomp pin with hashes not found in requirements.lock")
    hashes = re.findall(r"sha256:([0-9a-f]{64})", m.group(2))
    purl = PackageURL(type="pypi", name="pyseccomp", version=m.group(1))
    return Component(type=ComponentType.LIBRARY, name="pyseccomp", version=m.group(1), purl=purl,
                     bom_ref=purl.to_string(),
                     hashes=[HashType(alg=HashAlgorithm.SHA_256, content=h) for h in hashes],
                     properties=[Property(name="mathsolver:hashes", value="requirements.lock pins (wheel and sdist)")])


def build_sbom(image: str) -> Bom:
    inspect = json.loads(_docker("image", "inspect", "--format", "{{json .}}", image))
    labels = (inspect.get("Config") or {}).get("Labels") or {}
    rootfs = labels.get(pool.LABEL_ROOTFS)
    src_digest = labels.get(pool.LABEL_SRC)
    if not rootfs or not src_digest:
        raise SystemExit(f"executor-sbom: image {image} lacks the build labels (not built by "
                         "scripts/build-executor-image.sh)")
    stanzas = parse_dpkg_status(read_image_file(image, DPKG_STATUS))
    if not stanzas:
        raise SystemExit(f"executor-sbom: {DPKG_STATUS} of {image} lists no installed package")
    bom = Bom()
    bom.metadata.component = Component(
        type=ComponentType.CONTAINER, name=pool.IMAGE_NAME, version=image.rpartition(":")[2],
        bom_ref=f"image:{image}", hashes=[HashType(alg=HashAlgorithm.SHA_256, content=rootfs)],
        properties=[Property(name="mathsolver:image_id", value=inspect.get("Id") or ""),
                    Property(name="mathsolver:hash", value="sha256 of the reproducible rootfs tar")])
    executor = Component(
        type=ComponentType.APPLICATION, name="mathsolver-executor", version=src_digest[:16],
        bom_ref="mathsolver-executor", hashes=[HashType(alg=HashAlgorithm.SHA_256, content=src_digest)],
        description="the restricted executor package (executor/*.py) in /usr/lib/python3.11/executor",
        properties=[Property(name="mathsolver:hash",
                             value="sha256 over sha256sum lines of executor/*.py (pool.executor_source_digest)")])
    components = [deb_component(s) for s in stanzas] + [executor, pyseccomp_component()]
    for c in components:
        bom.components.add(c)
    bom.register_dependency(bom.metadata.component, components)
    return bom


def sbom_json(bom: Bom) -> str:
    """The SBOM as CycloneDX 1.6 JSON, validated against the schema (ValueError if invalid)."""
    text = JsonV1Dot6(bom).output_as_string(indent=2)
    error = JsonStrictValidator(SCHEMA).validate_str(text)
    if error is not None:
        raise ValueError(f"SBOM is not valid CycloneDX {SCHEMA.to_version()}: {error}")
    return text + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", default=None, help="image tag (default: containers/executor/image.lock)")
    ap.add_argument("--out", default=None, help="write here instead of stdout")
    args = ap.parse_args(argv)
    image = args.image or pool.default_image()
    text = sbom_json(build_sbom(image))
    if args.out:
        Path(args.out).write_text(text)
        n = len(json.loads(text)["components"])
        print(f"executor-sbom: {args.out}: {n} components of {image}, valid CycloneDX {SCHEMA.to_version()}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
