#!/usr/bin/env python3
"""Review report for the executor container image (``make executor-image-report``).

Prints one JSON document: the image (tag, id, layer digest = sha256 of the reproducible rootfs tar,
labels, user, command), the Debian packages inside with versions, a hash over the full file list
(type, mode, owner, size, content sha256 and path of every file), the seccomp profile (path,
sha256, default action, allowed system calls), the exact ``docker run`` flags the pool uses, and
the host runtime (dockerd version, runsc version and runtime arguments).

Usage: scripts/executor_image_report.py [--image TAG] [--out FILE] [--files] [--sbom FILE]...
  --files  also list every file (path, mode, size, sha256)
  --sbom   an SBOM of the kit's images to summarise in the report (sha256, size, components by kind, with licences
           and hashes): scripts/executor-image-report.sh passes the executor's and, where built, the vLLM image's
Needs dockerd (no runtime is started: the image is read with docker create/cp/export).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from executor import pool

# Created by docker in every container filesystem, not part of the image.
DOCKER_ADDED = {".dockerenv", "dev", "proc", "sys", "etc/hostname", "etc/hosts", "etc/resolv.conf", "etc/mtab"}


def docker(*args: str, binary: bool = False, timeout: float = 120):
    res = subprocess.run(["docker", *args], capture_output=True, timeout=timeout)
    if res.returncode != 0:
        raise SystemExit(
            f"executor-image-report: docker {' '.join(args[:2])} failed: "
            f"{res.stderr.decode(errors='replace').strip()[:400]}"
        )
    return res.stdout if binary else res.stdout.decode()


def file_manifest(container: str) -> list[dict]:
    """Every file of the container's filesystem minus what docker itself adds."""
    data = docker("export", container, binary=True, timeout=300)
    entries = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar:
            path = m.name.removeprefix("./").removeprefix("/")
            if not path or path.split("/")[0] in DOCKER_ADDED or path in DOCKER_ADDED:
                continue
            kind = "f" if m.isfile() else "d" if m.isdir() else "l" if m.issym() else "h" if m.islnk() else "o"
            digest = ""
            if m.isfile():
                digest = hashlib.sha256(tar.extractfile(m).read()).hexdigest()
            elif m.issym() or m.islnk():
                digest = "-> " + m.linkname
            entries.append(
                {
                    "path": path,
                    "type": kind,
                    "mode": oct(m.mode),
                    "uid": m.uid,
                    "gid": m.gid,
                    "size": m.size if m.isfile() else 0,
                    "sha256": digest,
                }
            )
    entries.sort(key=lambda e: e["path"])
    return entries


def read_meta(container: str, name: str) -> str:
    data = docker("cp", f"{container}:/usr/share/mathsolver-executor/{name}", "-", binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = tar.next()
        return tar.extractfile(member).read().decode()


def report(image: str, with_files: bool) -> dict:
    inspect = json.loads(docker("image", "inspect", "--format", "{{json .}}", image))
    config = inspect.get("Config") or {}
    labels = config.get("Labels") or {}
    name = f"mathsolver-report-{uuid.uuid4().hex[:8]}"
    docker("create", "--name", name, image, "python3")
    try:
        packages = [
            dict(zip(("package", "version", "arch"), line.split("\t")))
            for line in read_meta(name, "packages.tsv").splitlines()
            if line.strip()
        ]
        files = file_manifest(name)
    finally:
        docker("rm", "-f", name)
    listing = "".join(
        f"{e['type']} {e['mode']} {e['uid']}:{e['gid']} {e['size']} {e['sha256']} {e['path']}\n" for e in files
    )
    profile_text = pool.SECCOMP_PROFILE.read_text()
    profile = json.loads(profile_text)
    info = json.loads(docker("info", "--format", "{{json .}}"))
    runtime = (info.get("Runtimes") or {}).get("runsc") or {}
    runsc_path = runtime.get("path") or "runsc"
    runsc_version = subprocess.run([runsc_path, "--version"], capture_output=True, text=True).stdout.splitlines()
    flags = pool.default_run_flags()
    lock = json.loads(pool.IMAGE_LOCK.read_text()) if pool.IMAGE_LOCK.exists() else None
    out = {
        "image": {
            "tag": image,
            "id": inspect.get("Id"),
            "layers": (inspect.get("RootFS") or {}).get("Layers"),
            "rootfs_sha256": labels.get(pool.LABEL_ROOTFS),
            "size_bytes": inspect.get("Size"),
            "created": inspect.get("Created"),
            "user": config.get("User"),
            "cmd": config.get("Cmd"),
            "env": config.get("Env"),
            "workdir": config.get("WorkingDir"),
            "labels": labels,
            "executor_src_sha256": labels.get(pool.LABEL_SRC),
            "checkout_executor_src_sha256": pool.executor_source_digest(),
            "stale": labels.get(pool.LABEL_SRC) != pool.executor_source_digest(),
            "lock": lock,
        },
        "packages": packages,
        "files": {
            "count": len(files),
            "list_sha256": hashlib.sha256(listing.encode()).hexdigest(),
            "total_bytes": sum(e["size"] for e in files),
            "executables": [e["path"] for e in files if e["type"] == "f" and int(e["mode"], 8) & 0o111],
            "setuid_or_setgid": [e["path"] for e in files if int(e["mode"], 8) & 0o6000],
        },
        "seccomp_profile": {
            "path": str(pool.SECCOMP_PROFILE.relative_to(pool.REPO_ROOT)),
            "sha256": hashlib.sha256(profile_text.encode()).hexdigest(),
            "defaultAction": profile.get("defaultAction"),
            "allowed": sorted(
                {
                    n
                    for r in profile.get("syscalls", [])
                    if r.get("action") == "SCMP_ACT_ALLOW"
                    for n in r.get("names", [])
                }
            ),
        },
        "run": {
            "flags": flags,
            "command": [
                "docker",
                "run",
                "-i",
                "--rm",
                *flags,
                image,
                *pool.SUPERVISOR_COMMAND,
                "--backend-label",
                "container",
            ],
        },
        "host": {
            "dockerd": info.get("ServerVersion"),
            "runsc_runtime": runtime,
            "runsc_version": runsc_version[0] if runsc_version else None,
            "kernel": info.get("KernelVersion"),
            "cgroup_version": info.get("CgroupVersion"),
        },
    }
    if with_files:
        out["files"]["list"] = files
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", default=None, help="image tag (default: containers/executor/image.lock)")
    ap.add_argument("--out", default=None, help="write the JSON here instead of stdout")
    ap.add_argument("--files", action="store_true", help="include the full file list")
    ap.add_argument("--sbom", action="append", default=[], type=Path, help="an SBOM file to summarise (repeatable)")
    args = ap.parse_args(argv)
    rep = report(args.image or pool.default_image(), args.files)
    if args.sbom:
        sys.path.insert(0, str(pool.REPO_ROOT / "scripts"))
        import sbom_writer

        rep["sboms"] = [sbom_writer.summary(p) for p in args.sbom]
    text = json.dumps(rep, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    img = rep["image"]
    print(
        f"executor image {img['tag']} {img['id']}: {len(rep['packages'])} packages, {rep['files']['count']} files "
        f"(list sha256 {rep['files']['list_sha256'][:16]}), rootfs {img['rootfs_sha256']}, "
        f"{'STALE' if img['stale'] else 'current'} vs this checkout",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
