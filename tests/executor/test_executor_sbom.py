"""The CycloneDX SBOM of the executor image (scripts/executor_sbom.py): schema-valid, and it lists
exactly the Debian packages in the image, plus the executor package with its source digest."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from executor import pool
from tests.conftest import ROOT


def _sbom_module():
    spec = importlib.util.spec_from_file_location("executor_sbom", ROOT / "scripts" / "executor_sbom.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["executor_sbom"] = mod
    spec.loader.exec_module(mod)
    return mod


STATUS = """\
Package: libc6
Status: install ok installed
Architecture: amd64
Source: glibc
Version: 2.36-9+deb12u10

Package: python3.11-minimal
Status: install ok installed
Architecture: amd64
Source: python3.11 (3.11.2-6+deb12u6)
Version: 3.11.2-6+deb12u6
Description: first line
 continuation line

Package: removed-one
Status: deinstall ok config-files
Architecture: amd64
Version: 1
"""


def test_dpkg_status_parsing_and_purls():
    sbom = _sbom_module()
    stanzas = sbom.parse_dpkg_status(STATUS)
    assert [s["Package"] for s in stanzas] == ["libc6", "python3.11-minimal"]
    assert sbom.source_package(stanzas[0]) == ("glibc", "2.36-9+deb12u10")
    assert sbom.source_package(stanzas[1]) == ("python3.11", "3.11.2-6+deb12u6")
    purl = sbom.deb_component(stanzas[0]).purl.to_string()
    assert purl == "pkg:deb/debian/libc6@2.36-9%2Bdeb12u10?arch=amd64&distro=debian-12&upstream=glibc"
    with pytest.raises(ValueError, match="'x' has no Version"):
        sbom.parse_dpkg_status("Package: x\nStatus: install ok installed\nArchitecture: all\n")


@pytest.mark.docker
def test_sbom_is_schema_valid_and_lists_exactly_the_image_packages(container_backend):
    sbom = _sbom_module()
    image = container_backend["image"]
    doc = json.loads(sbom.sbom_json(sbom.build_sbom(image)))
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    debs = {(c["name"], c["version"]) for c in doc["components"] if c.get("purl", "").startswith("pkg:deb/debian/")}
    # two lists written independently at build time: dpkg's status file and packages.tsv
    status = {
        (s["Package"], s["Version"]) for s in sbom.parse_dpkg_status(sbom.read_image_file(image, sbom.DPKG_STATUS))
    }
    tsv = {
        tuple(line.split("\t")[:2])
        for line in sbom.read_image_file(image, "/usr/share/mathsolver-executor/packages.tsv").splitlines()
        if line
    }
    assert debs == status == tsv
    assert {"python3.11-minimal", "libpython3.11-stdlib", "libseccomp2", "libc6"} <= {n for n, _ in debs}
    by_name = {c["name"]: c for c in doc["components"]}
    assert by_name["mathsolver-executor"]["hashes"] == [{"alg": "SHA-256", "content": pool.executor_source_digest()}]
    assert by_name["pyseccomp"]["purl"].startswith("pkg:pypi/pyseccomp@")
    lock = json.loads(pool.IMAGE_LOCK.read_text()) if pool.IMAGE_LOCK.exists() else None
    if lock and lock["image"] == image:
        assert doc["metadata"]["component"]["hashes"][0]["content"] == lock["rootfs_sha256"]
    assert len(doc["components"]) == len(debs) + 2
    assert len(doc["dependencies"][0]["dependsOn"]) == len(doc["components"])


def test_schema_validation_rejects_a_broken_sbom():
    """The validator is real: a component without a name is refused."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    doc = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "version": 1,
        "components": [{"type": "library", "version": "1"}],
    }
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(doc)) is not None
    doc["components"][0]["name"] = "x"
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(doc)) is None
