"""Dataset pins, integrity checks and the Hugging Face download of MedCalc-Bench Verified.

Pins live in checksums/datasets.json (override: $MATHSOLVER_PINS_FILE or an explicit `pins_file`):
one entry per dataset name with its sha256 and where the file lives. The Verified test split is
pinned by full commit revision + sha256 of the downloaded file; `pin()` resolves a revision prefix
(the paper read 5488179) against the hub's commit list and records both, `fetch()` downloads at the
pinned revision and refuses unless the bytes match the pinned sha256. `check()` hashes every dataset
file the kit knows.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.data.dataset import PINNED_NAMES, DatasetError, bundled_dir, load_dataset, sha256_file
from harness.data.dev_split import dev_path
from harness.data.locations import cache_dir
from harness.data.pins import (
    DEFAULT_VERIFIED_FILENAME,
    UNPINNED,
    VERIFIED_REPO_ID,
    DatahubError,
    entry,
    is_pinned,
    load_pins,
    pins_path,
    save_pins,
    verified_file,
)

_TEST_FILE_PATTERNS = (
    re.compile(r"data/test-\d{5}-of-\d{5}(?:-[0-9a-f]{8,64})?\.parquet"),  # datasets push_to_hub shards
    re.compile(r"(?:dataset/|datasets/)?test_data\.csv"),
)

# ---------------------------------------------------------------- pin


def resolve_prefix(commit_ids: list[str], prefix: str) -> str:
    """The one full commit id starting with `prefix`; DatahubError if none or several match."""
    p = prefix.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{4,40}", p):
        raise DatahubError(f"revision prefix {prefix!r} is not 4-40 hex digits")
    matches = sorted({c for c in commit_ids if c.lower().startswith(p)})
    if not matches:
        raise DatahubError(f"no commit matches prefix {p!r} among the {len(commit_ids)} commits listed")
    if len(matches) > 1:
        raise DatahubError(f"prefix {p!r} is ambiguous: it matches {len(matches)} commits: {', '.join(matches)}")
    return matches[0]


def find_test_file(files: list[str]) -> str:
    """Pick the Verified test split among a repo's files (one data/test-*.parquet shard or test_data.csv)."""
    for pattern in _TEST_FILE_PATTERNS:
        hits = sorted(f for f in files if pattern.fullmatch(f))
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise DatahubError(f"several test files in the repo ({', '.join(hits)}); pass --filename to choose")
    raise DatahubError(f"no test split file found among {len(files)} repo files; pass --filename")


def _download(repo_id: str, filename: str, revision: str, endpoint: str | None, into: Path) -> Path:
    """hf_hub_download into a private cache under `into`; returns the local file path."""
    from huggingface_hub import hf_hub_download  # here: ~0.2 s to import, and only fetch and pin use the hub

    try:
        return Path(
            hf_hub_download(
                repo_id=repo_id,
                filename=filename,
                repo_type="dataset",
                revision=revision,
                cache_dir=into / "hf-cache",
                endpoint=endpoint,
            )
        )
    except Exception as exc:  # network, 404, auth: all reported the same way
        raise DatahubError(
            f"download of {repo_id}:{filename} at revision {revision} from {endpoint or 'the hub'} failed: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _place(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def pin(
    prefix: str,
    *,
    endpoint: str | None = None,
    filename: str | None = None,
    pins_file: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
) -> dict:
    """Resolve `prefix` to a full revision on the hub, download the test split there, record its sha256.

    Writes revision, filename, sha256 and rows into the 'verified' entry of the pins file and keeps a
    copy of the file where `fetch` would put it. Returns the new entry.
    """
    from huggingface_hub import HfApi  # here: ~0.2 s to import, and only fetch and pin use the hub

    pins = load_pins(pins_file)
    e = dict(entry("verified", pins))
    repo_id = e.get("repo_id", VERIFIED_REPO_ID)
    api = HfApi(endpoint=endpoint)
    try:
        commits = [c.commit_id for c in api.list_repo_commits(repo_id, repo_type="dataset")]
    except Exception as exc:
        raise DatahubError(f"cannot list commits of {repo_id}: {type(exc).__name__}: {exc}") from None
    revision = resolve_prefix(commits, prefix)
    if filename is None:
        try:
            files = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
        except Exception as exc:
            raise DatahubError(f"cannot list files of {repo_id}@{revision}: {type(exc).__name__}: {exc}") from None
        filename = find_test_file(files)
    root = Path(data_dir) if data_dir is not None else cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".pin-") as tmp:
        local = _download(repo_id, filename, revision, endpoint, Path(tmp))
        digest = sha256_file(local)
        try:
            rows = len(load_dataset(local))
        except DatasetError as exc:
            raise DatahubError(f"downloaded file does not load as a MedCalc-Bench dataset: {exc}") from None
        e.update(
            repo_id=repo_id,
            repo_type="dataset",
            revision_prefix=prefix.strip().lower(),
            revision=revision,
            filename=filename,
            sha256=digest,
            rows=rows,
            pinned_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            status="pinned",
        )
        _place(local, verified_file(e, root))
    pins["datasets"]["verified"] = e
    save_pins(pins, pins_file)
    return e


# ---------------------------------------------------------------- fetch


def fetch(
    *,
    revision: str | None = None,
    out: str | os.PathLike | None = None,
    endpoint: str | None = None,
    pins_file: str | os.PathLike | None = None,
) -> Path:
    """Download the Verified test split at its pinned revision into `out` and verify its sha256.

    Refuses (DatahubError) when the split is unpinned, when `revision` is not the pinned one, or when
    the downloaded bytes do not match the pinned sha256 (the file is then not kept).
    """
    e = entry("verified", pins_file=pins_file)
    if not is_pinned(e):
        raise DatahubError(
            f"refusing to fetch: the Verified split is {e.get('status') or UNPINNED} "
            f"(only the revision prefix {e.get('revision_prefix')!r} is recorded in {pins_path(pins_file)}). "
            f"Run `harness data pin --prefix {e.get('revision_prefix')}` where the Hugging Face hub is reachable."
        )
    if revision is not None and not e["revision"].startswith(revision.strip().lower()):
        raise DatahubError(
            f"refusing to fetch revision {revision}: the pinned revision is {e['revision']} and no sha256 is "
            f"pinned for any other; run `harness data pin --prefix {revision}` to pin it"
        )
    root = Path(out) if out is not None else cache_dir()
    dest = verified_file(e, root)
    if dest.exists() and sha256_file(dest) == e["sha256"]:
        return dest
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".fetch-") as tmp:
        filename = e.get("filename") or DEFAULT_VERIFIED_FILENAME
        local = _download(e.get("repo_id", VERIFIED_REPO_ID), filename, e["revision"], endpoint, Path(tmp))
        digest = sha256_file(local)
        if digest != e["sha256"]:
            raise DatahubError(
                f"refusing downloaded file {filename} at revision {e['revision']}: sha256 {digest} does not "
                f"match the pinned {e['sha256']} ({pins_path(pins_file)}); the file was not kept"
            )
        _place(local, dest)
    return dest


# ---------------------------------------------------------------- check


@dataclass
class CheckResult:
    """Outcome of hashing one known dataset file."""

    name: str
    path: Path | None
    status: str  # "ok" | "mismatch" | "absent" | "missing" | "unpinned"
    expected: str | None = None
    actual: str | None = None
    required: bool = False

    @property
    def failed(self) -> bool:
        return self.status in ("mismatch", "missing")

    def line(self) -> str:
        where = str(self.path) if self.path else "-"
        if self.status == "ok":
            return f"ok        {self.name:<13} {where}"
        if self.status == "mismatch":
            return f"MISMATCH  {self.name:<13} {where}: expected sha256 {self.expected}, got {self.actual}"
        if self.status == "missing":
            return f"MISSING   {self.name:<13} {where}: required file not found"
        if self.status == "unpinned":
            return f"unpinned  {self.name:<13} {UNPINNED}"
        return f"absent    {self.name:<13} {where} (optional, not checked)"


def known_file(
    name: str,
    e: dict,
    *,
    bundled: str | os.PathLike | None = None,
    shared: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
) -> Path | None:
    """Where a pinned entry's file lives (None for an unpinned Verified split)."""
    where = e.get("location") or PINNED_NAMES.get(name, ("bundled", ""))[0]
    if where == "bundled":
        return (Path(bundled) if bundled else bundled_dir()) / e["file"]
    if where == "shared":
        return Path(shared) / e["file"] if shared else dev_path()
    if where == "cache":
        return verified_file(e, data_dir) if is_pinned(e) else None
    raise DatahubError(f"dataset {name!r}: unknown location {where!r}")


def check(
    *,
    pins_file: str | os.PathLike | None = None,
    bundled: str | os.PathLike | None = None,
    shared: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
) -> list[CheckResult]:
    """Hash every dataset file listed in the pins file: bundled (required), dev and verified (if present)."""
    pins = load_pins(pins_file)
    results = []
    for name, e in pins["datasets"].items():
        path = known_file(name, e, bundled=bundled, shared=shared, data_dir=data_dir)
        required = bool(e.get("required", False))
        if path is None:
            results.append(CheckResult(name, None, "unpinned", required=required))
            continue
        if not path.exists():
            results.append(
                CheckResult(name, path, "missing" if required else "absent", e.get("sha256"), None, required)
            )
            continue
        actual = sha256_file(path)
        status = "ok" if actual == e.get("sha256") else "mismatch"
        results.append(CheckResult(name, path, status, e.get("sha256"), actual, required))
    return results
