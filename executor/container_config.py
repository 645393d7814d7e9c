"""Where the container backend's configuration lives: the image (tag from ``image.lock``, labels,
the executor source digest the image must carry), the ``docker run`` flags of
``containers/executor/run-flags.txt`` (layer 5) and the seccomp profile path. Read by the pool,
the image report and the benchmark. Standard library only: the docker CLI is run as a
subprocess (see ``docker_cli``).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any, TypedDict

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
CONTAINER_DIR = REPO_ROOT / "containers" / "executor"
RUN_FLAGS_FILE = CONTAINER_DIR / "run-flags.txt"
SECCOMP_PROFILE = CONTAINER_DIR / "seccomp.json"
IMAGE_LOCK = CONTAINER_DIR / "image.lock"
IMAGE_NAME = "mathsolver-executor"
SUPERVISOR_COMMAND = ("python3", "-I", "-S", "-m", "executor.supervisor")
LABEL_SRC = "org.mathsolver.executor-src-sha256"
LABEL_ROOTFS = "org.mathsolver.rootfs-sha256"


class RunValues(TypedDict):
    """The run-flags.txt placeholders a pool fills (besides seccomp_profile)."""

    runtime: str
    memory: str
    pids_limit: int


# Values for the run-flags.txt placeholders (besides seccomp_profile). pids: an idle runsc sandbox
# already holds ~63 host tasks (Sentry threads, ptrace stubs) and ~90 while working; 64 kills it.
DEFAULT_RUN_VALUES: RunValues = {"runtime": "runsc", "memory": "512m", "pids_limit": 256}


class ContainerBackendUnavailable(RuntimeError):
    """docker, dockerd, the runsc runtime, the image or the run configuration is missing."""


def default_image() -> str:
    """The tag recorded by scripts/build-executor-image.sh in image.lock, else ``:latest``."""
    try:
        tag = json.loads(IMAGE_LOCK.read_text()).get("image")
        if isinstance(tag, str) and tag:
            return tag
    except (OSError, ValueError):
        pass
    return f"{IMAGE_NAME}:latest"


DEFAULT_IMAGE = default_image()


def executor_source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """Digest of the executor sources, computed exactly like the build script does:
    sha256 over ``sha256sum``-style lines "<hex>  executor/<file>.py" in C-sorted path order."""
    root = package_dir.parent
    files = sorted(p.relative_to(root).as_posix() for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)
    lines = "".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def read_run_flags(path: Path = RUN_FLAGS_FILE, **values: object) -> list[str]:
    """The docker run flags of run-flags.txt with ``{placeholders}`` filled from ``values``."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ContainerBackendUnavailable(f"run flags file {path} unreadable: {exc}") from None
    flags = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            flags.append(line.format(**values))
        except KeyError as exc:
            raise ContainerBackendUnavailable(f"{path}:{n}: unknown placeholder {exc} in {line!r}") from None
    return flags


def default_run_flags(runtime: str | None = None) -> list[str]:
    """The flags a default ContainerPool uses (for reports, benchmarks and tests); ``runtime``
    replaces the docker runtime name (DEFAULT_RUN_VALUES["runtime"])."""
    values = dict(DEFAULT_RUN_VALUES, **({"runtime": runtime} if runtime else {}))
    return read_run_flags(RUN_FLAGS_FILE, **values, seccomp_profile=str(SECCOMP_PROFILE.resolve()))


def docker_cli(docker: str, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """One docker CLI call, text output captured."""
    return subprocess.run([docker, *args], capture_output=True, text=True, timeout=timeout)


def docker_json(docker: str, *args: str, timeout: float = 30.0) -> dict[str, Any] | None:
    """A docker CLI call that prints ``{{json .}}``: the parsed object, or None if it failed."""
    res = docker_cli(docker, *args, "--format", "{{json .}}", timeout=timeout)
    if res.returncode != 0:
        return None
    parsed: dict[str, Any] = json.loads(res.stdout)  # docker's JSON object (inspect output)
    return parsed


def runsc_version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.splitlines()[0].strip() if out else None
