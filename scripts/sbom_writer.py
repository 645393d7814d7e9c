"""The one CycloneDX writer of the kit's image SBOMs (scripts/executor_sbom.py, scripts/vllm_sbom.py).

Shared here: reading a file of an image without running it (docker create + cp), dpkg status stanzas as Debian
components (package URL ``pkg:deb/debian/<name>@<version>?arch=..&distro=debian-12``, source package, and the
.deb's sha256 from the image's debs.lock), Python distributions as PyPI components (version, the lock's hashes,
licences from the distribution's METADATA), the container as the metadata component, and the CycloneDX 1.6 JSON
output, validated against the schema (cyclonedx-python-lib's strict validator) before anything is written.
"""

from __future__ import annotations

import hashlib
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
from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import deb_lock  # noqa: E402  (scripts/deb_lock.py: the debs.lock reader)

DPKG_STATUS = "/var/lib/dpkg/status"
DEBIAN_DISTRO = "debian-12"
SCHEMA = SchemaVersion.V1_6


class SbomError(SystemExit):
    """A one-line refusal naming the image or file."""


def docker(prog: str, *args: str, timeout: float = 120) -> bytes:
    res = subprocess.run(["docker", *args], capture_output=True, timeout=timeout)
    if res.returncode != 0:
        raise SbomError(
            f"{prog}: docker {' '.join(args[:2])} failed: {res.stderr.decode(errors='replace').strip()[:400]}"
        )
    return res.stdout


def inspect(prog: str, image: str) -> dict:
    return json.loads(docker(prog, "image", "inspect", "--format", "{{json .}}", image))


def read_image_tar(image: str, path: str, prog: str = "sbom") -> bytes:
    """A file or directory of the image as docker cp's tar (docker create + cp; nothing is run)."""
    name = f"mathsolver-sbom-{uuid.uuid4().hex[:8]}"
    docker(prog, "create", "--name", name, image, "true")
    try:
        return docker(prog, "cp", f"{name}:{path}", "-", timeout=300)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)


def read_image_file(image: str, path: str, prog: str = "sbom") -> str:
    """One file of the image (docker create + cp; nothing is run)."""
    with tarfile.open(fileobj=io.BytesIO(read_image_tar(image, path, prog))) as tar:
        return tar.extractfile(tar.next()).read().decode()


# --- Debian ----------------------------------------------------------------------------------------------------------
def parse_dpkg_status(text: str) -> list[dict[str, str]]:
    """Stanzas of a dpkg status file (``Field: value``; continuation lines are dropped), installed ones only."""
    packages, current = [], {}
    for line in text.splitlines() + [""]:
        if not line.strip():
            if current:
                packages.append(current)
                current = {}
            continue
        if line[0] in " \t":
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"dpkg status: line without a field name: {line!r}")
        current[name.strip()] = value.strip()
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


NOT_DEP5 = "not machine-readable"
NO_COPYRIGHT = "no copyright file"


def dep5_licenses(text: str) -> list[str] | None:
    """The licence names of a machine-readable (DEP-5) debian/copyright file, in order; None if it is not one."""
    if not text.startswith("Format:"):
        return None
    names = [m.group(1).strip() for m in re.finditer(r"^License:[ \t]*(\S[^\n]*)$", text, re.M)]
    return list(dict.fromkeys(names))


def debian_licenses(doc_tar: bytes) -> dict[str, list[str] | str]:
    """package -> the licence names of /usr/share/doc/<package>/copyright (following a package's doc directory
    that is a symlink to another's), or NOT_DEP5 when that file is not machine-readable; from docker cp's tar of
    /usr/share/doc."""
    out: dict[str, list[str] | str] = {}
    with tarfile.open(fileobj=io.BytesIO(doc_tar)) as tar:
        members = {m.name: m for m in tar.getmembers()}
        for name, m in members.items():
            parts = name.split("/")
            if len(parts) != 2 or not (m.isdir() or m.issym()):
                continue
            top, pkg = parts
            target = m.linkname.rstrip("/").rsplit("/", 1)[-1] if m.issym() else pkg
            f = members.get(f"{top}/{target}/copyright")
            if f is None or not f.isfile():
                continue
            lic = dep5_licenses(tar.extractfile(f).read().decode("utf-8", "replace"))
            out[pkg] = NOT_DEP5 if lic is None else lic
    return out


def deb_component(
    stanza: dict[str, str], locked: deb_lock.Deb | None = None, licenses: list[str] | str | None = None
) -> Component:
    """A Debian package; with its debs.lock entry, the .deb's sha256 (the version must be the locked one); with its
    copyright file's licence names (debian_licenses), those."""
    src, src_version = source_package(stanza)
    qualifiers = {"arch": stanza["Architecture"], "distro": DEBIAN_DISTRO}
    if src != stanza["Package"]:
        qualifiers["upstream"] = f"{src}@{src_version}" if src_version != stanza["Version"] else src
    purl = PackageURL(
        type="deb", namespace="debian", name=stanza["Package"], version=stanza["Version"], qualifiers=qualifiers
    )
    props = [Property(name="debian:source", value=src), Property(name="debian:source_version", value=src_version)]
    hashes = []
    if locked is not None:
        if locked.version != stanza["Version"]:
            raise ValueError(
                f"{stanza['Package']}:{stanza['Architecture']} {stanza['Version']} is installed, the "
                f"deb lock has {locked.version}"
            )
        hashes = [HashType(alg=HashAlgorithm.SHA_256, content=locked.sha256)]
        props.append(Property(name="mathsolver:deb", value=f"{locked.archive}/{locked.filename}"))
    lic = []
    if isinstance(licenses, list):
        lic = [DisjunctiveLicense(name=n if len(n) <= 100 else n[:97] + "...") for n in licenses]
    elif licenses in (NOT_DEP5, NO_COPYRIGHT):
        props.append(
            Property(
                name="mathsolver:license",
                value=f"/usr/share/doc/{stanza['Package']}/copyright is not machine-readable"
                if licenses == NOT_DEP5
                else f"the image has no /usr/share/doc/{stanza['Package']}/copyright",
            )
        )
    return Component(
        type=ComponentType.LIBRARY if stanza["Package"].startswith("lib") else ComponentType.APPLICATION,
        name=stanza["Package"],
        version=stanza["Version"],
        purl=purl,
        bom_ref=purl.to_string(),
        publisher=stanza.get("Maintainer"),
        hashes=hashes,
        licenses=lic,
        properties=props,
    )


def deb_components(
    status_text: str, lock: deb_lock.Lock | None, what: str, licenses: dict[str, list[str] | str] | None = None
) -> list[Component]:
    """Every installed package of a dpkg status file; with the image's deb lock, exactly its packages with hashes;
    with `licenses` (debian_licenses), each package's."""
    stanzas = parse_dpkg_status(status_text)
    if licenses is not None:  # every package's entry, the absent ones named as such
        licenses = {s["Package"]: licenses.get(s["Package"], NO_COPYRIGHT) for s in stanzas}
    licenses = licenses or {}
    if not stanzas:
        raise SbomError(f"{what}: {DPKG_STATUS} lists no installed package")
    if lock is None:
        return [deb_component(s, None, licenses.get(s["Package"])) for s in stanzas]
    have = {(s["Package"], s["Architecture"]) for s in stanzas}
    missing = sorted(set(lock.debs) - have)
    extra = sorted(have - set(lock.debs))
    if missing or extra:
        raise SbomError(
            f"{what}: the image's packages are not {lock.path}'s: "
            + "; ".join(
                [f"{p}:{a} locked, not installed" for p, a in missing]
                + [f"{p}:{a} installed, not locked" for p, a in extra]
            )
        )
    try:
        return [
            deb_component(s, lock.debs[(s["Package"], s["Architecture"])], licenses.get(s["Package"])) for s in stanzas
        ]
    except ValueError as exc:
        raise SbomError(f"{what}: {exc}") from None


# --- Python distributions --------------------------------------------------------------------------------------------
def lock_pins(text: str) -> dict[str, tuple[str, list[str]]]:
    """normalized name -> (version, sha256 hashes) of a pip-compile lock with --hash lines."""
    pins = {}
    for m in re.finditer(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:[ \t]*\\\n[ \t]*--hash=sha256:[0-9a-f]{64})+)", text, re.M
    ):
        pins[normalize(m.group(1))] = (m.group(2), re.findall(r"sha256:([0-9a-f]{64})", m.group(3)))
    return pins


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def licenses(meta: dict) -> list:
    """The distribution's declared licence: License-Expression (SPDX), else its licence classifiers, else a short
    License field; [] when it declares none."""
    expr = (meta.get("license_expression") or "").strip()
    if expr:
        return [LicenseExpression(expr)]
    classifiers = [c.split("::")[-1].strip() for c in meta.get("classifiers") or [] if c.startswith("License ::")]
    classifiers = [c for c in classifiers if c and c != "OSI Approved"]
    if classifiers:
        return [DisjunctiveLicense(name=c) for c in dict.fromkeys(classifiers)]
    text = (meta.get("license") or "").strip()
    if text and text.upper() != "UNKNOWN":
        first = text.splitlines()[0].strip()
        return [DisjunctiveLicense(name=first if len(first) <= 100 else first[:97] + "...")]
    return []


def pypi_component(meta: dict, pin: tuple[str, list[str]] | None, lock_name: str) -> Component:
    """A Python distribution as the image has it (its METADATA), with the lock's hashes when it is locked."""
    name, version = meta["name"], meta["version"]
    purl = PackageURL(type="pypi", name=normalize(name), version=version)
    props = []
    hashes = []
    if pin is not None:
        if pin[0] != version:
            raise ValueError(f"{name} {version} is installed, {lock_name} pins {pin[0]}")
        hashes = [HashType(alg=HashAlgorithm.SHA_256, content=h) for h in pin[1]]
        props.append(Property(name="mathsolver:hashes", value=f"{lock_name} pins (the wheel pip installed is one)"))
    else:
        props.append(
            Property(
                name="mathsolver:source",
                value=f"not in {lock_name}: the venv's own (python3 -m venv, Debian's python3-venv)",
            )
        )
    lic = licenses(meta)
    if not lic:
        props.append(Property(name="mathsolver:license", value="none declared in METADATA"))
    return Component(
        type=ComponentType.LIBRARY,
        name=name,
        version=version,
        purl=purl,
        bom_ref=purl.to_string(),
        hashes=hashes,
        licenses=lic,
        description=meta.get("summary") or None,
        properties=props,
    )


# --- the document ----------------------------------------------------------------------------------------------------
def container_component(name: str, image: str, rootfs_sha256: str, properties: dict[str, str]) -> Component:
    return Component(
        type=ComponentType.CONTAINER,
        name=name,
        version=image.rpartition(":")[2],
        bom_ref=f"image:{image}",
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=rootfs_sha256)],
        properties=[Property(name="mathsolver:hash", value="sha256 of the reproducible rootfs tar")]
        + [Property(name=f"mathsolver:{k}", value=str(v)) for k, v in properties.items()],
    )


def make_bom(metadata: Component, components: list[Component]) -> Bom:
    bom = Bom()
    bom.metadata.component = metadata
    for c in components:
        bom.components.add(c)
    bom.register_dependency(metadata, components)
    return bom


def sbom_json(bom: Bom) -> str:
    """The SBOM as CycloneDX 1.6 JSON, validated against the schema (ValueError if invalid)."""
    text = JsonV1Dot6(bom).output_as_string(indent=2)
    error = JsonStrictValidator(SCHEMA).validate_str(text)
    if error is not None:
        raise ValueError(f"SBOM is not valid CycloneDX {SCHEMA.to_version()}: {error}")
    return text + "\n"


def write(prog: str, bom: Bom, image: str, out: str | None) -> None:
    text = sbom_json(bom)
    if out:
        Path(out).write_text(text)
        n = len(json.loads(text)["components"])
        print(f"{prog}: {out}: {n} components of {image}, valid CycloneDX {SCHEMA.to_version()}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def summary(path: Path) -> dict:
    """What a review report says about an SBOM file: its sha256, size and component counts by kind."""
    data = path.read_bytes()
    doc = json.loads(data)
    kinds: dict[str, int] = {}
    for c in doc.get("components", []):
        kind = (c.get("purl") or "").split("/", 1)[0].removeprefix("pkg:") or c.get("type", "?")
        kinds[kind] = kinds.get(kind, 0) + 1
    with_lic = sum(1 for c in doc.get("components", []) if c.get("licenses"))
    with_hash = sum(1 for c in doc.get("components", []) if c.get("hashes"))
    return {
        "path": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "spec": f"CycloneDX {doc.get('specVersion')}",
        "subject": (doc.get("metadata") or {}).get("component", {}).get("bom-ref"),
        "components": len(doc.get("components", [])),
        "by_kind": kinds,
        "with_licenses": with_lic,
        "with_hashes": with_hash,
    }
