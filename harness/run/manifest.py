"""Run manifests: one JSON file per run recording everything needed to redo it.

Fields every manifest carries: run id, creation time, command line, git commit and dirty flag, the
locked package versions (from requirements.lock) and the installed ones, Python and platform, dataset
name/path/revision/sha256. Callers add arm configs, prompt template hashes, model, server and executor
fields as keyword arguments.

Reading: ``read_manifests(result_set)`` is the one reader. A result set's manifests are the
``manifest-*.json`` files directly in its directory (``manifest_paths``; never deeper: a directory of result
sets is not a result set); a file that cannot be read or is not a JSON object raises ``ManifestError`` naming
it. ``ManifestFile.is_run`` tells the run manifests (one per `harness run`, arms as a name -> config mapping)
from the reproduce pipeline's and the merge's own.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from harness.core.canonical_json import json_file_text
from harness.core.paths import REPO_ROOT
from harness.data.dataset import Dataset

ROOT = REPO_ROOT
LOCK_FILE = ROOT / "requirements.lock"
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\;]+)")
MANIFEST_GLOB = "manifest-*.json"


class ManifestError(ValueError):
    """A manifest file that cannot be read or is not a JSON object (the message names the file)."""


@dataclass(frozen=True)
class ManifestFile:
    """One manifest as read from disk: where it is and what it says."""

    path: Path
    data: dict

    @property
    def is_run(self) -> bool:
        """A run manifest (written by `harness run`: its arms as a name -> config mapping), not the reproduce
        pipeline's or the merge's own manifest."""
        return isinstance(self.data.get("arms"), dict)


def manifest_paths(result_set: str | os.PathLike) -> list[Path]:
    """The manifest files of a result set, sorted: ``manifest-*.json`` directly in its directory."""
    return sorted(Path(result_set).glob(MANIFEST_GLOB))


def read_manifests(result_set: str | os.PathLike) -> list[ManifestFile]:
    """Every manifest of a result set (``manifest_paths`` order); ManifestError naming the first file that cannot
    be read or is not a JSON object."""
    out = []
    for path in manifest_paths(result_set):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ManifestError(f"{path}: unreadable manifest ({exc})") from None
        if not isinstance(data, dict):
            raise ManifestError(f"{path}: unreadable manifest (not a JSON object)")
        out.append(ManifestFile(path, data))
    return out


def git_state(root: Path = ROOT) -> dict:
    """Commit and dirty flag of the kit's checkout (None when not a git checkout)."""
    def run(*args: str) -> str | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                  check=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def locked_packages(lock_file: Path = LOCK_FILE) -> dict[str, str]:
    """name -> version pinned in the hash-locked requirements file."""
    pins: dict[str, str] = {}
    if lock_file.exists():
        for line in lock_file.read_text().splitlines():
            m = _PIN.match(line.strip())
            if m:
                pins[m.group(1).lower()] = m.group(2)
    return pins


def installed_versions(names: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def base_manifest(run_id: str, dataset: Dataset | None = None) -> dict:
    locked = locked_packages()
    installed = installed_versions(sorted(locked))
    drift = sorted(n for n, v in locked.items() if installed.get(n) not in (None, v))
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": [Path(sys.argv[0]).name, *sys.argv[1:]],
        "git": git_state(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {"lock_file": LOCK_FILE.name, "locked": locked, "not_matching_lock": drift},
    }
    if dataset is not None:
        manifest["dataset"] = {
            "name": dataset.name,
            "path": str(dataset.path),
            "sha256": dataset.sha256,
            "revision": None,   # a Dataset is pinned by its sha256 (checksums/datasets.json holds the revision)
            "n_cases": len(dataset.cases),
        }
    return manifest


def write_run_manifest(out_dir: str | os.PathLike, run_id: str, dataset: Dataset | None = None, **fields: Any) -> Path:
    """Write `<out_dir>/manifest-<run_id>.json` (atomically) and return its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = base_manifest(run_id, dataset)
    manifest.update(fields)
    path = out_dir / f"manifest-{run_id}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json_file_text(manifest))
    os.replace(tmp, path)
    return path
