"""The dataset pins file (checksums/datasets.json): reading and writing pins, the pinned sha256 of a named
dataset, and where the pinned Verified split is once fetched."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from harness.core.canonical_json import json_file_text
from harness.core.paths import REPO_ROOT
from harness.data.errors import DatasetError
from harness.data.locations import cache_dir

DEFAULT_PINS_FILE = REPO_ROOT / "checksums" / "datasets.json"
VERIFIED_REPO_ID = "nsk7153/MedCalc-Bench-Verified"
# Default location of the Verified test split inside the hub repo (the dataset card declares
# `data/test-*` parquet shards). Not confirmed from here: `pin` lists the repo tree at the resolved
# revision, picks the single test file it finds, and records it in the pin's "filename".
DEFAULT_VERIFIED_FILENAME = "data/test-00000-of-00001.parquet"
UNPINNED = "unpinned: run `harness data pin` on a networked machine"
_HEX40 = re.compile(r"[0-9a-f]{40}")


class DatahubError(RuntimeError):
    """Pinning, fetching or checking a dataset failed; the message says what to do."""


# ---------------------------------------------------------------- pins file


def pins_path(pins_file: str | os.PathLike | None = None) -> Path:
    if pins_file is not None:
        return Path(pins_file)
    env = os.environ.get("MATHSOLVER_PINS_FILE")
    return Path(env) if env else DEFAULT_PINS_FILE


def load_pins(pins_file: str | os.PathLike | None = None) -> dict[str, Any]:
    """Read the pins JSON ({"datasets": {name: entry}}); DatahubError naming the file if malformed."""
    path = pins_path(pins_file)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatahubError(f"{path}: pins file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatahubError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict):
        raise DatahubError(f"{path}: expected an object with a 'datasets' object")
    return data


def save_pins(data: dict[str, Any], pins_file: str | os.PathLike | None = None) -> Path:
    """Write the pins JSON atomically (temp file + rename)."""
    path = pins_path(pins_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".datasets-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json_file_text(data, indent=2, sort_keys=False))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def entry(name: str, pins: dict[str, Any] | None = None, pins_file: str | os.PathLike | None = None) -> dict:
    pins = pins if pins is not None else load_pins(pins_file)
    try:
        return pins["datasets"][name]
    except KeyError:
        raise DatahubError(f"{pins_path(pins_file)}: no entry for dataset {name!r}") from None


def is_pinned(e: dict) -> bool:
    """True when an entry has a full 40-hex revision (Verified) and a 64-hex sha256."""
    sha_ok = bool(re.fullmatch(r"[0-9a-f]{64}", str(e.get("sha256") or "")))
    if "repo_id" in e:
        return sha_ok and bool(_HEX40.fullmatch(str(e.get("revision") or "")))
    return sha_ok


def pinned_sha256(name: str, pins_file: str | os.PathLike | None = None) -> str | None:
    """The pinned sha256 of a named dataset, or None if the pins file or a pinned hash is absent."""
    try:
        e = entry(name, pins_file=pins_file)
    except DatahubError:
        return None
    return e["sha256"] if is_pinned(e) else None


def verified_file(e: dict, data_dir: str | os.PathLike | None = None) -> Path:
    """Where `fetch` puts the Verified split: <data_dir>/verified/<revision>/<file name>."""
    root = Path(data_dir) if data_dir is not None else cache_dir()
    return root / "verified" / e["revision"] / Path(e.get("filename") or DEFAULT_VERIFIED_FILENAME).name


def verified_path(pins_file: str | os.PathLike | None = None, data_dir: str | os.PathLike | None = None) -> Path:
    """Path of the downloaded Verified split; DatasetError saying what to run when it is not there."""
    try:
        e = entry("verified", pins_file=pins_file)
    except DatahubError as exc:
        raise DatasetError(str(exc)) from None
    if not is_pinned(e):
        raise DatasetError(
            f"dataset 'verified' is not pinned yet (recorded revision prefix {e.get('revision_prefix')}): "
            f"run `harness data pin --prefix {e.get('revision_prefix')}` on a machine that reaches the "
            "Hugging Face hub, then `harness data fetch`"
        )
    path = verified_file(e, data_dir)
    if not path.exists():
        raise DatasetError(
            f"dataset 'verified' has not been downloaded: run `harness data fetch` (revision {e['revision']})",
            file=path,
        )
    return path
