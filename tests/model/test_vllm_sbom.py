"""The CycloneDX SBOM of the kit's vLLM serving image (scripts/vllm_sbom.py, written by scripts/sbom_writer.py, the
writer the executor's SBOM shares): Debian packages with the deb lock's hashes, every Python distribution with the
wheel lock's hashes and its METADATA licence, the vLLM/torch/CUDA versions; refused when the image is not the locks'."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile

import pytest

from tests.conftest import ROOT


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


vs = _load("vllm_sbom")
dl = sys.modules["deb_lock"]
writer = sys.modules["sbom_writer"]

H = {c: c * 64 for c in "abcdef"}
STATUS = """\
Package: libc6
Status: install ok installed
Architecture: amd64
Source: glibc
Version: 2.36-9+deb12u14

Package: python3.11
Status: install ok installed
Architecture: amd64
Version: 3.11.2-6+deb12u9
"""
WHEEL_LOCK = f"""\
foo-bar==1.0 \\
    --hash=sha256:{H["a"]}
torch==2.13.0 \\
    --hash=sha256:{H["b"]} \\
    --hash=sha256:{H["c"]}
    # via vllm
vllm==0.32.0 \\
    --hash=sha256:{H["d"]}
"""
META = {
    "python": "3.11.2",
    "torch_version_py": "__version__ = '2.13.0+cu130'\ncuda: Optional[str] = '13.0'\ngit_version = 'x'\n",
    "distributions": [
        {"name": "vllm", "version": "0.32.0", "license_expression": "Apache-2.0", "classifiers": []},
        {
            "name": "torch",
            "version": "2.13.0",
            "classifiers": ["License :: OSI Approved :: BSD License"],
            "license": "BSD-3-Clause",
        },
        {"name": "Foo_Bar", "version": "1.0", "license": None, "classifiers": []},
        {"name": "pip", "version": "23.0.1", "license": "MIT", "classifiers": []},
    ],
}
INFO = {
    "Id": "sha256:" + "1" * 64,
    "RootFS": {"Layers": ["sha256:" + "2" * 64]},
    "Config": {"Labels": {"org.mathsolver.lock-sha256": "3" * 64, "org.mathsolver.debs-lock-sha256": "4" * 64}},
}


def _debs_lock():
    debs = {
        ("libc6", "amd64"): dl.Deb(
            "libc6",
            "2.36-9+deb12u14",
            "amd64",
            H["e"],
            1,
            "optional",
            "debian",
            "pool/main/g/glibc/libc6_2.36-9+deb12u14_amd64.deb",
        ),
        ("python3.11", "amd64"): dl.Deb(
            "python3.11",
            "3.11.2-6+deb12u9",
            "amd64",
            H["f"],
            1,
            "optional",
            "debian-security",
            "pool/updates/main/p/python3.11/x.deb",
        ),
    }
    return dl.Lock("vllm", "20261129T000000Z", [], debs, "containers/vllm/debs.lock")


def _doc(meta=META, status=STATUS, lock=WHEEL_LOCK, debs="default"):
    bom = vs.build_sbom(
        "mathsolver-vllm:7c09373516b2709c", INFO, status, meta, _debs_lock() if debs == "default" else debs, lock
    )
    return json.loads(writer.sbom_json(bom))


def test_the_sbom_is_schema_valid_with_debs_wheels_licences_hashes_and_the_cuda_versions():
    doc = _doc()
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    by_name = {c["name"]: c for c in doc["components"]}
    assert len(doc["components"]) == 2 + 4
    assert by_name["libc6"]["hashes"] == [{"alg": "SHA-256", "content": H["e"]}]
    assert by_name["libc6"]["purl"].startswith("pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64")
    assert by_name["vllm"]["licenses"] == [{"expression": "Apache-2.0"}]
    assert by_name["torch"]["licenses"] == [{"license": {"name": "BSD License"}}]
    assert [h["content"] for h in by_name["torch"]["hashes"]] == [H["b"], H["c"]]
    assert by_name["Foo_Bar"]["purl"] == "pkg:pypi/foo-bar@1.0" and by_name["Foo_Bar"]["hashes"][0]["content"] == H["a"]
    props = lambda c: {p["name"]: p["value"] for p in c.get("properties", [])}  # noqa: E731
    assert props(by_name["Foo_Bar"])["mathsolver:license"] == "none declared in METADATA"
    assert (
        "hashes" not in by_name["pip"]
        and "not in requirements-vllm-gpu.lock" in props(by_name["pip"])["mathsolver:source"]
    )
    meta = doc["metadata"]["component"]
    assert meta["type"] == "container" and meta["hashes"] == [{"alg": "SHA-256", "content": "2" * 64}]
    m = props(meta)
    assert (m["mathsolver:vllm"], m["mathsolver:torch"], m["mathsolver:cuda"], m["mathsolver:python"]) == (
        "0.32.0",
        "2.13.0+cu130",
        "13.0",
        "3.11.2",
    )
    assert len(doc["dependencies"][0]["dependsOn"]) == len(doc["components"])


def test_without_this_checkouts_deb_lock_the_debs_carry_no_hashes_and_the_sbom_says_so():
    doc = _doc(debs=None)
    assert all("hashes" not in c for c in doc["components"] if c["purl"].startswith("pkg:deb/"))
    props = {p["name"]: p["value"] for p in doc["metadata"]["component"]["properties"]}
    assert "not built from this checkout's containers/vllm/debs.lock" in props["mathsolver:debs_lock"]


def test_an_image_that_is_not_the_locks_is_refused_naming_the_package():
    with pytest.raises(SystemExit, match=r"lacks 1 distributions requirements-vllm-gpu.lock pins: foo-bar"):
        _doc(meta={**META, "distributions": [d for d in META["distributions"] if d["name"] != "Foo_Bar"]})
    other = [dict(d, version="2.12.0") if d["name"] == "torch" else d for d in META["distributions"]]
    with pytest.raises(SystemExit, match=r"torch 2.12.0 is installed, requirements-vllm-gpu.lock pins 2.13.0"):
        _doc(meta={**META, "distributions": other})
    with pytest.raises(SystemExit, match=r"python3.11:amd64 locked, not installed"):
        _doc(status=STATUS.split("\n\n")[0] + "\n")
    with pytest.raises(
        SystemExit, match=r"libc6:amd64 2.36-9\+deb12u13 is installed, the deb lock has 2.36-9\+deb12u14"
    ):
        _doc(status=STATUS.replace("deb12u14", "deb12u13"))


def _doc_tar(files: dict[str, str], links: dict[str, str]) -> bytes:
    """docker cp's tar of /usr/share/doc: copyright files and package doc directories that are symlinks."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in sorted({f.rsplit("/", 1)[0] for f in files}):
            tar.addfile(_dir(d))
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()


def _dir(name):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


DEP5 = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: glibc

Files: *
Copyright: 1991-2023 Free Software Foundation, Inc.
License: LGPL-2.1+

Files: debian/*
License: GPL-2+

License: LGPL-2.1+
 The GNU C Library is free software...
"""


def test_debian_licences_come_from_the_machine_readable_copyright_files():
    doc = _doc_tar(
        {"doc/libc6/copyright": DEP5, "doc/python3.11/copyright": "This is Debian's prepackaged Python.\n"},
        {"doc/libc-bin": "libc6"},
    )
    assert writer.debian_licenses(doc) == {
        "libc6": ["LGPL-2.1+", "GPL-2+"],
        "python3.11": writer.NOT_DEP5,
        "libc-bin": ["LGPL-2.1+", "GPL-2+"],
    }
    bom = vs.build_sbom("mathsolver-vllm:7c09373516b2709c", INFO, STATUS, META, _debs_lock(), WHEEL_LOCK, doc)
    by_name = {c["name"]: c for c in json.loads(writer.sbom_json(bom))["components"]}
    assert sorted(x["license"]["name"] for x in by_name["libc6"]["licenses"]) == ["GPL-2+", "LGPL-2.1+"]
    assert "licenses" not in by_name["python3.11"]
    assert {
        "name": "mathsolver:license",
        "value": "/usr/share/doc/python3.11/copyright is not machine-readable",
    } in by_name["python3.11"]["properties"]
    bom = vs.build_sbom(
        "mathsolver-vllm:x", INFO, STATUS, META, _debs_lock(), WHEEL_LOCK, _doc_tar({"doc/libc6/copyright": DEP5}, {})
    )
    by_name = {c["name"]: c for c in json.loads(writer.sbom_json(bom))["components"]}
    assert {"name": "mathsolver:license", "value": "the image has no /usr/share/doc/python3.11/copyright"} in by_name[
        "python3.11"
    ]["properties"]


def test_the_licence_comes_from_the_expression_then_the_classifiers_then_a_short_license_field():
    assert (
        writer.licenses({"license_expression": "MIT OR Apache-2.0", "classifiers": ["License :: X"]})[0].value
        == "MIT OR Apache-2.0"
    )
    assert [
        x.name
        for x in writer.licenses({"classifiers": ["License :: OSI Approved :: MIT License", "License :: OSI Approved"]})
    ] == ["MIT License"]
    long = writer.licenses({"license": "Copyright (c) someone\n\nPermission is hereby granted..." + "x" * 300})
    assert long[0].name == "Copyright (c) someone"
    assert writer.licenses({"license": "UNKNOWN"}) == [] and writer.licenses({}) == []


def test_both_sboms_are_written_by_the_one_writer():
    for script in ("executor_sbom.py", "vllm_sbom.py"):
        text = (ROOT / "scripts" / script).read_text()
        assert (
            "sbom_writer.write(" in text and "JsonStrictValidator" not in text and "def parse_dpkg_status" not in text
        )


@pytest.mark.docker
def test_the_built_images_sbom_lists_every_locked_wheel_and_deb():
    image = vs.default_image()
    try:
        info = writer.inspect(vs.PROG, image)
    except SystemExit:
        pytest.skip(f"{image} is not built on this machine (make vllm-image)")
    debs = vs.image_debs_lock(info)
    doc = json.loads(
        writer.sbom_json(
            vs.build_sbom(
                image,
                info,
                writer.read_image_file(image, writer.DPKG_STATUS),
                vs.image_metadata(image),
                debs,
                vs.WHEEL_LOCK.read_text(),
            )
        )
    )
    pins = writer.lock_pins(vs.WHEEL_LOCK.read_text())
    pypi = [c for c in doc["components"] if c["purl"].startswith("pkg:pypi/")]
    assert {c["purl"].split("/")[1].split("@")[0] for c in pypi if c.get("hashes")} == set(pins)
    assert len([c for c in doc["components"] if c["purl"].startswith("pkg:deb/")]) >= 150
    props = {p["name"]: p["value"] for p in doc["metadata"]["component"]["properties"]}
    assert (props["mathsolver:vllm"], props["mathsolver:cuda"]) == ("0.32.0", "13.0")
    licences = writer.debian_licenses(writer.read_image_tar(image, "/usr/share/doc"))
    assert licences["zlib1g"] == ["Zlib"] and licences["libc6"] == writer.NOT_DEP5
