"""Append-only per-case results store.

One JSONL file per (model, arm, seed): `<out>/<model_slug>/<arm>/seed<seed>.jsonl`, one complete
record per line (fields: docs/ARCHITECTURE.md). Every append is one `write` of the whole line to a file
opened O_APPEND, so a killed process (SIGKILL, OOM) never loses a written record: the kernel holds it.
fsync makes it durable against a machine crash: by default after every record (`sync_every=1`); the
runner batches it (after `sync_every` records or `sync_interval_s` seconds, and on close), which loses at
most the last unsynced records on a power cut, and those are simply redone on resume (their keys are
absent). A torn last line (no trailing newline, or not valid JSON) is
detected when the file is opened again, reported with a warning and cut off; complete records are
never rewritten. A record's `key` hashes everything that determines its output, so resuming skips
done keys and running the same command twice never duplicates a row.

The store enforces the record type: every line it reads is checked through `Record.from_dict` (required fields
and their types, no unknown field, this record schema), and a line that is not a record of this schema is a
StoreError naming the file and line. Readers get `Record` values (typed end to end); the writer takes them and
writes `Record.to_dict`. The store's reader and writer are the only places that see a record's JSON form.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.canonical_json import canonical_json, record_line
from harness.model.rehearsal.labels import record_kind
from harness.run.record import Record, RecordError


class StoreError(Exception):
    """A results file that cannot be trusted: names the file and line."""


class TornLineWarning(UserWarning):
    """The last line of a results file was incomplete (a crash mid-write) and was dropped."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_key(**parts: Any) -> str:
    """Key of a record: sha256 of the canonical JSON of everything that determines its output
    (model and its revision/server profile, arm name and config hash, seed, dataset sha256, case id)."""
    return sha256_text(canonical_json(parts))


def model_slug(model: str) -> str:
    """A path-safe name for a model id such as `Qwen/Qwen2.5-7B-Instruct`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip()).strip("_")
    if not slug:
        raise ValueError(f"model id {model!r} gives an empty path name")
    return slug


def results_path(out_dir: str | os.PathLike[str], model: str, arm: str, seed: int) -> Path:
    return Path(out_dir) / model_slug(model) / arm / f"seed{int(seed)}.jsonl"


_RESULT_FILE_NAME = re.compile(r"seed(\d+)\.jsonl")


@dataclass(frozen=True)
class ResultsLocation:
    """What a results file's place in the layout says: `<root>/<model_dir>/<arm>/seed<seed>.jsonl`."""

    root: Path
    model_dir: str  # the model's path name (model_slug of the model id)
    arm: str
    seed: int


def results_location(path: str | os.PathLike[str]) -> ResultsLocation:
    """results_path's inverse: the root, model directory, arm and seed a results file's path says; StoreError
    naming the file for a path results_path does not make."""
    path = Path(path)
    m = _RESULT_FILE_NAME.fullmatch(path.name)
    if m is None or len(path.parts) < 3:
        raise StoreError(f"{path}: not a results file name (<model>/<arm>/seed<N>.jsonl)")
    return ResultsLocation(path.parent.parent.parent, path.parent.parent.name, path.parent.name, int(m.group(1)))


def scan_result_file(path: Path) -> tuple[list[Record], int, str | None]:
    """One results file's complete records; return (records, byte length of the good prefix, torn-line text or None).

    Only the LAST line may be torn; a bad line anywhere else is corruption and raises StoreError."""
    data = path.read_bytes()
    records: list[Record] = []
    good_end = 0
    pos = 0
    lineno = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        lineno += 1
        if nl == -1:  # no newline: the writer died mid-line
            return records, good_end, data[pos:].decode("utf-8", "replace")
        raw = data[pos:nl]
        try:
            rec = json.loads(raw)
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            if nl + 1 >= len(data):  # last line, newline written but content bad: still torn
                return records, good_end, raw.decode("utf-8", "replace")
            raise StoreError(f"{path}:{lineno}: corrupt record in the middle of the file ({exc})") from None
        try:
            records.append(Record.from_dict(rec))
        except RecordError as exc:
            raise StoreError(f"{path}:{lineno}: {exc}") from None
        pos = nl + 1
        good_end = pos
    return records, good_end, None


class ResultStore:
    """One append-only JSONL results file.

    >>> store = ResultStore(results_path(out, model, arm, seed))
    >>> if key not in store.done_keys: store.append(record)
    """

    def __init__(self, path: str | os.PathLike[str], *, sync_every: int = 1, sync_interval_s: float | None = None):
        if sync_every < 1:
            raise ValueError(f"sync_every must be >= 1, got {sync_every}")
        self.sync_every, self.sync_interval_s = sync_every, sync_interval_s
        self._fd: int | None = None
        self._unsynced = 0
        self._last_sync = time.monotonic()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[Record] = []
        self.dropped_torn_line = False
        if self.path.exists():
            self.records, good_end, torn = scan_result_file(self.path)
            if torn is not None:
                warnings.warn(
                    f"{self.path}: dropped an incomplete last line ({len(torn)} chars) left by an interrupted "
                    f"write; {len(self.records)} complete records kept",
                    TornLineWarning,
                    stacklevel=2,
                )
                with open(self.path, "r+b") as fh:
                    fh.truncate(good_end)
                    fh.flush()
                    os.fsync(fh.fileno())
                self.dropped_torn_line = True
        self._kinds: set[Any] | None = None
        self.done_keys: set[str] = {r.key for r in self.records}
        if len(self.done_keys) != len(self.records):
            raise StoreError(f"{self.path}: duplicate record keys found; the file was edited by hand")

    def __contains__(self, key: str) -> bool:
        return key in self.done_keys

    def _refuse_mixing(self, record: Record) -> None:
        """Real and synthetic (rehearsal) records never share a results file (harness.model.rehearsal.labels)."""
        if self._kinds is None:
            self._kinds = _kinds(self.records)
        new = _kinds([record])
        if new and self._kinds and new != self._kinds:
            raise StoreError(
                f"refusing to append a {next(iter(new))} record to {self.path}, which holds "
                f"{next(iter(self._kinds))} records: rehearsal output is never mixed with real results"
            )
        self._kinds |= new

    def append(self, record: Record) -> bool:
        """Write one complete record durably. Returns False (and writes nothing) if its key is done. The line is
        checked by the store's reader first (`checked_line`)."""
        line = checked_line(record, self.path)
        if record.key in self.done_keys:
            return False
        self._refuse_mixing(record)
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            # backslashreplace turns a lone surrogate (model or program text) into its JSON escape
            # \udXXX, which reads back as the same string: lossless, and the line stays UTF-8
            raw = line.encode("utf-8", "backslashreplace")
            written = os.write(self._fd, raw)
            while written < len(raw):  # a short write: finish the line (a crash here leaves a torn line)
                written += os.write(self._fd, raw[written:])
            self._unsynced += 1
            if self._unsynced >= self.sync_every or (
                self.sync_interval_s is not None and time.monotonic() - self._last_sync >= self.sync_interval_s
            ):
                self.sync()
        except OSError as exc:  # e.g. a full disk: a write on a descriptor names no file, so name it
            if exc.filename is None:
                raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
            raise
        self.done_keys.add(record.key)
        self.records.append(record)
        return True

    def sync(self) -> None:
        """fsync what was appended since the last sync."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
        self._unsynced = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Sync and close the file (appending again reopens it)."""
        if self._fd is not None:
            self.sync()
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _kinds(records: Iterable[Record]) -> set[Any]:
    return {k for k in map(record_kind, records) if k is not None}


RESULT_FILE_GLOB = "seed*.jsonl"  # results_path's file name; a result set holds <model>/<arm>/seed<N>.jsonl


def result_sets(results_root: str | os.PathLike[str]) -> list[Path]:
    """The result sets under a root: every directory holding <model>/<arm>/seed<N>.jsonl files (the root
    itself counts when it holds them directly), sorted."""
    root = Path(results_root)
    return sorted({p.parents[2] for p in root.glob(f"**/{RESULT_FILE_GLOB}") if len(p.relative_to(root).parts) >= 3})


def iter_result_files(results_root: str | os.PathLike[str], arms: Iterable[str] | None = None) -> Iterator[Path]:
    """Every results file of a result set (only those of `arms` when given), in a stable order."""
    files = sorted(Path(results_root).glob(f"*/*/{RESULT_FILE_GLOB}"))
    if arms is not None:
        wanted = set(arms)
        files = [p for p in files if p.parent.name in wanted]
    yield from files


def read_result_file(path: str | os.PathLike[str]) -> list[Record]:
    """The complete records of one results file (read-only: a torn last line is skipped with a
    TornLineWarning, a bad line elsewhere raises StoreError naming file and line)."""
    recs, _, torn = scan_result_file(Path(path))
    if torn is not None:
        warnings.warn(f"{path}: ignoring an incomplete last line", TornLineWarning, stacklevel=2)
    return recs


def checked_line(record: Record, target: Path) -> str:
    """The record's line as the store writes it (Record.to_dict), once the store's reader accepts it
    (Record.from_dict of that very dict); StoreError naming `target` and what is wrong otherwise."""
    data = record.to_dict()
    try:
        Record.from_dict(data)
    except RecordError as exc:
        raise StoreError(f"refusing to write to {target}: {exc}") from None
    line = record_line(data)
    if "\n" in line[:-1]:
        raise StoreError("a record serialised to more than one line")  # json.dumps escapes newlines
    return line


def write_result_file(path: str | os.PathLike[str], records: Iterable[Record]) -> int:
    """A whole results file written at once (a merge's output): every record's line through the store's writer
    (`checked_line`), into a temporary file fsynced and then renamed over `path`, so a crash or a refused record
    leaves the old file (or none) and no temporary file. The records written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8", errors="backslashreplace") as fh:
            for rec in records:
                fh.write(checked_line(rec, target))
                n += 1
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def load_records(results_root: str | os.PathLike[str]) -> list[Record]:
    """All complete records under a results root (read-only: a torn last line is skipped with a warning,
    the file is not modified)."""
    out: list[Record] = []
    for path in iter_result_files(results_root):
        out.extend(read_result_file(path))
    return out


def iter_located_records(
    results_root: str | os.PathLike[str], arms: Iterable[str] | None = None
) -> Iterator[tuple[Path, int, Record]]:
    """(file, 1-based line number, record) for every complete record under a root (of `arms` when given),
    for error messages."""
    for path in iter_result_files(results_root, arms):
        for lineno, rec in enumerate(read_result_file(path), 1):
            yield path, lineno, rec


# The export's leading columns, in this order; every other field a record holds follows (synthetic,
# model_revision, server_profile, formula_version, reference, detail, reason, truncated, ...), so an exported
# file keeps what the records say, the synthetic label above all.
FLAT_COLUMNS = (
    "key",
    "model",
    "arm",
    "arm_config_hash",
    "seed",
    "dataset",
    "dataset_sha256",
    "case_id",
    "row_number",
    "calculator_id",
    "calculator_name",
    "output_type",
    "prompt_hash",
    "outcome",
    "answer",
    "answer_kind",
    "correct",
    "scorer",
    "latency_ms",
    "retries",
    "started_at",
    "finished_at",
)


def records_frame(records: Iterable[Record]) -> Any:  # a pandas DataFrame (pandas has no types here)
    """Records as a flat pandas DataFrame: every field a column (FLAT_COLUMNS first, the rest in the order they
    first appear), `tokens` split into prompt/completion columns, nested values and `answer` as JSON strings."""
    import pandas as pd  # only the export needs pandas (0.5 s to import): kept out of every CLI start

    rows = []
    columns: dict[str, None] = dict.fromkeys(FLAT_COLUMNS)
    for rec in records:
        row: dict[str, Any] = {}
        for name, value in rec.to_dict().items():
            if name == "tokens":
                tokens = value or {}
                row["prompt_tokens"] = tokens.get("prompt")
                row["completion_tokens"] = tokens.get("completion")
            elif name == "answer":
                row[name] = None if value is None else canonical_json(value)
            elif isinstance(value, (dict, list)):
                row[name] = canonical_json(value)
            else:
                row[name] = value
        columns.update(dict.fromkeys(row))
        rows.append(row)
    for name in columns:  # a field whose values differ in type across records is exported as JSON text
        kinds = {type(r[name]) for r in rows if r.get(name) is not None}
        if len(kinds) > 1:
            for r in rows:
                if r.get(name) is not None and not isinstance(r[name], str):
                    r[name] = canonical_json(r[name])
    return pd.DataFrame(rows, columns=list(columns))


def load_results(results_root: str | os.PathLike[str]) -> Any:  # a pandas DataFrame
    return records_frame(load_records(results_root))


def export_results(results_root: str | os.PathLike[str], out_path: str | os.PathLike[str]) -> Path:
    """Export every record under a root to one Parquet or CSV file (chosen by the suffix)."""
    out_path = Path(out_path)
    frame = load_results(results_root)
    if frame.empty:
        raise StoreError(f"no results under {results_root}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if out_path.suffix == ".parquet":
        frame.to_parquet(out_path, index=False)
    elif out_path.suffix == ".csv":
        frame.to_csv(out_path, index=False)
    else:
        raise StoreError(f"{out_path}: export format must be .parquet or .csv")
    return out_path
