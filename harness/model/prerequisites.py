"""What must be in place before a model server starts: the `Check` every launcher's prerequisites are made of, and
the checks several launchers share (the interpreter, docker and its runtimes, runsc, the executor image, disk, a
port, the dataset).

Each launcher owns its own list, as inspect_ai's sandbox providers own theirs: each launcher class's
`prerequisites` (the H100 path's through harness.model.vllm.prerequisites); `Launcher.preflight` adds the dataset's
(`harness serve preflight`).
"""

from __future__ import annotations

import json
import platform
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.core.host import runsc_record

EXECUTOR_IMAGE = "mathsolver-executor:latest"  # tagged by scripts/build-executor-image.sh


@dataclass
class Check:
    """One prerequisite: whether it holds, what was seen, and how to fix it when it does not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"[{mark}] {self.name}: {self.detail}"
        return text + (f"\n       fix: {self.fix}" if not self.ok and self.fix else "")


def run_quietly(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess[str] | None:
    """The command's completed process, or None when it cannot be run at all."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def python_check() -> Check:
    return Check(
        "Python for the kit's hash locks",
        sys.version_info >= (3, 11),
        f"{platform.python_version()} ({sys.executable})",
        "the locks need Python >= 3.11: on Ubuntu 22.04 apt-get install python3.11 python3.11-venv, "
        "then make setup PYTHON=python3.11",
    )


def docker_runtimes() -> tuple[Check, dict]:
    """(the docker check, docker's runtimes as `docker info` lists them; {} when docker does not answer)."""
    info = run_quietly(["docker", "info", "--format", "{{json .Runtimes}}"])
    ok = info is not None and info.returncode == 0
    runtimes: dict = {}
    if ok and info is not None:
        try:
            runtimes = json.loads(info.stdout or "{}") or {}
        except json.JSONDecodeError:
            runtimes = {}
    check = Check(
        "docker",
        ok,
        "docker info answered"
        if ok
        else ("docker not installed" if shutil.which("docker") is None else "docker daemon not reachable"),
        "install docker.io and start dockerd (scripts/install-host.sh does both)",
    )
    return check, runtimes


def runtime_check(name: str, runtimes: dict, why: str, fix: str) -> Check:
    return Check(why, name in runtimes, f"docker runtimes: {', '.join(sorted(runtimes)) or 'none'}", fix)


def executor_image_check() -> Check:
    img = run_quietly(["docker", "image", "inspect", "--format", "{{.Id}}", EXECUTOR_IMAGE])
    have = img is not None and img.returncode == 0
    return Check(
        "executor image",
        have,
        f"{EXECUTOR_IMAGE} " + (img.stdout.strip()[:19] if have and img is not None else "not built"),
        "make executor-image (offline image for the runsc executor)",
    )


def runsc_check() -> Check:
    """The runsc runtime's release and platform, as docker runs it (daemon's runtimeArgs) and install-host chose it."""
    info = run_quietly(["docker", "info", "--format", "{{json .Runtimes.runsc}}"])
    rt: dict = {}
    if info is not None and info.returncode == 0:
        try:
            rt = json.loads(info.stdout or "{}") or {}
        except json.JSONDecodeError:
            rt = {}
    args = rt.get("runtimeArgs") or rt.get("args") or []
    chosen = next((a.split("=", 1)[1] for a in args if str(a).startswith("--platform=")), None)
    path = rt.get("path") or "runsc"
    ver = run_quietly([path, "--version"])
    version = ver.stdout.splitlines()[0].strip() if ver is not None and ver.returncode == 0 and ver.stdout else None
    rec = runsc_record()
    detail = f"{version or 'runsc version unknown'}; platform {chosen or 'runsc default'}" + (
        f" ({rec.get('chosen_by')}, self-test {rec.get('self_test_s')})" if rec else ""
    )
    return Check("runsc release and platform", bool(version), detail, "run scripts/install-host.sh")


def executor_host_checks(runtimes: dict, docker_ok: bool) -> list[Check]:
    """The container executor's host: runsc registered with docker, its release and platform, the image."""
    checks = [
        runtime_check(
            "runsc",
            runtimes,
            "runsc runtime for the executor",
            "run scripts/install-host.sh (installs runsc, registers it with --network=none --oci-seccomp)",
        )
    ]
    if docker_ok:
        checks += [executor_image_check(), runsc_check()]
    return checks


def free_disk_gb(path: Path) -> tuple[float, Path]:
    """(GB free, the existing directory measured) at `path` or its nearest existing parent."""
    probe = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    return shutil.disk_usage(probe).free / 1e9, probe


def port_check(port: int, what: str = "the vLLM server") -> Check:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            free = True
        except OSError:
            free = False
    return Check(
        f"port {port} free for {what}",
        free,
        f"127.0.0.1:{port} " + ("free" if free else "in use"),
        f"stop whatever listens on {port} (ss -ltnp 'sport = :{port}')",
    )


def path_check(name: str, path: Path, fix: str, *, kind: str = "exists") -> Check:
    """A file (or, with kind="file", a regular file) the launcher needs, and the make target that provides it."""
    ok = Path(path).is_file() if kind == "file" else Path(path).exists()
    return Check(name, ok, str(path), fix)


def dataset_check(name: str = "verified") -> Check:
    """The dataset loads and matches its pinned sha256 (the Verified split raises until it is pinned)."""
    try:
        from harness.data.dataset import load_dataset

        ds = load_dataset(name)
        return Check(f"pinned dataset ({name})", True, f"{ds.path} ({len(ds.cases)} rows, sha256 {ds.sha256[:12]}...)")
    except Exception as exc:  # noqa: BLE001 - any failure is reported as the check's detail
        fix = (
            "`harness data pin` then `harness data fetch` (on a machine that reaches the Hugging Face hub)"
            if name == "verified"
            else "see `harness data --help`"
        )
        return Check(f"pinned dataset ({name})", False, str(exc).splitlines()[0], fix)
