"""Correctness arrays built from per-case result records.

Every statistic in the kit works on one `CorrectnessArrays` object: a float array
`correct[model, arm, seed, case]` (1.0 right, 0.0 wrong, NaN no record) and an int8 array
`outcome[model, arm, seed, case]` (index into `OUTCOMES`, -1 no record). Cases are ordered by
calculator, then row, so each calculator is one contiguous block and `cluster[case]` names it; this
is the ragged form of `[model, arm, seed, calculator, case]` (calculators may have unequal sizes),
and `as_5d()` returns the padded five-dimensional view.

The same one read of each results file also gives what the paper comparison reads of its records
(harness.analysis.comparison), so no stage parses a record twice: per record its model calls, those cut at the
output-token cap and the route a recall or router record names (`calls`, `cut`, `routes`), and per file its
sha256 and the settings its records state (`files`: `ResultFile`).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from harness.arms.registry import arm_sort_key, model_free_arms
from harness.core.hashing import file_sha256
from harness.core.outcomes import ROW_OUTCOMES
from harness.core.parallel import ordered_map
from harness.core.paths import REPO_ROOT
from harness.run.recompute import CaseIndex, RescoreError, SplitMissing, recompute_record
from harness.run.record import RECORD_FIELDS, LibraryReference, Record
from harness.run.store import StoreError, TornLineWarning, iter_result_files, read_result_file

OUTCOMES = ROW_OUTCOMES
OUTCOME_CODE = {name: i for i, name in enumerate(OUTCOMES)}

# The paper's arm order (Table 1 first, then the levers and ablations); unknown arms sort after these.

# Arms that use no model (harness.arms.registry.model_free_arms): their results are the same for every model and
# seed, so a run stored under one model directory (or one seed) stands for all of them.


class StatRecord(NamedTuple):
    """The fields of one record (harness.run.record.Record) statistics read; everything else (requests, replies,
    programs) is dropped on reading, so a full result set (hundreds of thousands of records) fits in memory. A
    NamedTuple: a full-size set holds 183,700 of them, built and read back from the cache as plain tuples."""

    model: str
    arm: str
    seed: int
    case_id: str
    row_number: int | None
    calculator_id: int
    calculator_name: str | None
    output_type: str | None
    outcome: str
    correct: bool
    dataset: str | None
    dataset_sha256: str | None
    reference: LibraryReference | None

    @classmethod
    def of(cls, rec: Record) -> StatRecord:
        return cls._make(_STAT_FIELDS_OF(rec))


FIELDS: tuple[str, ...] = StatRecord._fields
_STAT_FIELDS_OF = attrgetter(*FIELDS)  # one C call reads a Record's StatRecord fields
assert set(FIELDS) <= set(RECORD_FIELDS), "StatRecord has a field harness.run.record.Record does not have"
# Where the analysis keeps these fields per results file, named by the file's sha256 (so a cached view is used
# only for the very bytes it was read from): a full-size result set is about 1 GB of JSON, parsed once instead
# of once per stage. HARNESS_ANALYSIS_CACHE=<dir> moves it, =off turns it off.
CACHE_ENV = "HARNESS_ANALYSIS_CACHE"
CACHE_VERSION = 5  # 2: views are cached only for files whose every line the store checked as a Record; 3: facts
# and settings beside the fields; 4: each record recomputed (harness.run.recompute) and each setting's first line;
# 5: a StatRecord's values as a list
# The settings each results file's records state (the comparison sets them against the run manifests): these record
# fields, and the decoding every request carried (`request.<field>`) and its field names (`request fields`).
RECORD_SETTINGS: tuple[str, ...] = (
    "model",
    "seed",
    "arm_config_hash",
    "model_revision",
    "server_profile",
    "scorer",
    "dataset_sha256",
    "synthetic",
    "server_model",
)
_SETTINGS_OF = attrgetter(*RECORD_SETTINGS)  # a Record's settings, in RECORD_SETTINGS order, in one C call
REQUEST_SETTINGS = ("temperature", "max_tokens")
REQUEST_FIELDS = "request fields"
assert set(RECORD_SETTINGS) <= set(RECORD_FIELDS), "arrays.RECORD_SETTINGS names a field Record does not have"


def record_facts(rec: Record) -> tuple[int, int, str | None]:
    """(model calls made, calls cut at the output-token cap, the route its recall or router detail names) of one
    record: what the comparison's truncation and routing numbers count."""
    route = rec.detail.get("route") if rec.detail is not None else None
    return len(rec.truncated), sum(bool(t) for t in rec.truncated), route if isinstance(route, str) else None


def _value(v: object) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def file_settings(
    records: Iterable[Record], lines: dict[str, dict[str, int]] | None = None
) -> dict[str, dict[str, int]]:
    """{setting: {its JSON value: records (or requests) stating it}} over one file's records (RECORD_SETTINGS,
    each request's REQUEST_SETTINGS as `request.<field>`, and the request's field names); `lines`, when given, gets
    {setting: {its JSON value: the first line stating it}}."""
    out: dict[str, dict[str, int]] = {}
    line = 0

    def add(name: str, value: str) -> None:
        counts = out.setdefault(name, {})
        counts[value] = counts.get(value, 0) + 1
        if lines is not None:
            lines.setdefault(name, {}).setdefault(value, line)

    for line, rec in enumerate(records, 1):  # noqa: B007
        for name, stated in zip(RECORD_SETTINGS, _SETTINGS_OF(rec)):
            add(name, _value(stated))
        for req in rec.request:
            if isinstance(req, dict):
                for name in REQUEST_SETTINGS:
                    add(f"request.{name}", _value(req.get(name)))
                add(REQUEST_FIELDS, _value(sorted(k for k in req if k != "messages")))
    return out


MAX_SHOWN = 20  # disagreements kept per field and file (each counted in full)


@dataclass
class Recomputed:
    """What the kit recomputed of one file's records (harness.run.recompute): each record's rescored verdict (1, 0,
    or -1: its case is not in the split, or its split cannot be opened), per field how many records disagree with
    what they state, the first MAX_SHOWN of them as (line, field, stored, recomputed), and the split that could not
    be opened (None: it was)."""

    rescored: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    shown: list[tuple[int, str, str, str]] = field(default_factory=list)
    split_missing: str | None = None
    split_reason: str | None = None

    def to_json(self) -> dict:
        return {
            "rescored": self.rescored,
            "counts": self.counts,
            "shown": self.shown,
            "split_missing": self.split_missing,
            "split_reason": self.split_reason,
        }

    @classmethod
    def from_json(cls, data: dict) -> Recomputed:
        return cls(
            list(data["rescored"]),
            dict(data["counts"]),
            [tuple(x) for x in data["shown"]],
            data.get("split_missing"),
            data.get("split_reason"),
        )


_VIEW_INDEX = CaseIndex()  # per read_views call and process: each split loaded and parsed once


def recompute_file(path: Path, records: list[Record], index: CaseIndex | None = None) -> Recomputed:
    """Every record of one results file recomputed (harness.run.recompute.recompute_record, the rescoring `harness
    verify` uses), against the split each names and the seed the file's name states."""
    index = index if index is not None else _VIEW_INDEX
    out = Recomputed()
    try:
        file_seed = int(path.name.removeprefix("seed").removesuffix(".jsonl"))
    except ValueError:
        file_seed = None
    for line, rec in enumerate(records, 1):
        where = f"{path}:{line}"
        try:
            verdict, problems = recompute_record(rec, index, where, file_seed)
        except SplitMissing as exc:
            out.split_missing, out.split_reason = exc.split, str(exc).split(": ", 1)[-1]
            out.rescored.append(-1)
            continue
        except (RescoreError, KeyError, TypeError, ValueError) as exc:
            verdict, problems = None, []
            out.counts["correct"] = out.counts.get("correct", 0) + 1
            if out.counts["correct"] <= MAX_SHOWN:
                out.shown.append((line, "correct", str(rec.correct).lower(), f"not rescorable ({exc})"))
        out.rescored.append(-1 if verdict is None else int(verdict))
        for p in problems:
            out.counts[p.field] = out.counts.get(p.field, 0) + 1
            if out.counts[p.field] <= MAX_SHOWN:
                out.shown.append((line, p.field, p.stored, p.recomputed))
    return out


@dataclass(frozen=True)
class FileView:
    """What one read of a results file keeps: FIELDS of each complete record, their facts (`record_facts`), the
    file's settings (`file_settings`) and the first line stating each, whether its last line is torn, and its
    records recomputed (`recompute_file`)."""

    records: list[StatRecord]
    facts: list[tuple[int, int, str | None]]
    settings: dict[str, dict[str, int]]
    torn: bool
    lines: dict[str, dict[str, int]] = field(default_factory=dict)
    recomputed: Recomputed = field(default_factory=Recomputed)


@dataclass(frozen=True)
class ResultFile:
    """One results file of an analysis: where, its sha256 (None when nobody hashed it), the settings its records
    state (and the first line stating each), what the kit recomputed of its records."""

    path: Path
    sha256: str | None
    settings: dict[str, dict[str, int]]
    lines: dict[str, dict[str, int]] = field(default_factory=dict)
    recomputed: Recomputed = field(default_factory=Recomputed)


class ResultsError(ValueError):
    """Result records that cannot be analysed; the message names the file and line."""


class NoRecordsError(ResultsError):
    """A results root without any result record; the message names the root and, when a folder below it holds
    records (the usual slip: `make rehearse` writes them one level down, under results/), that folder."""


def no_records_message(root: Path) -> str:
    """'no result records found under ROOT', the layout looked for, and any subfolder that does hold records."""
    below = sorted(d for d in root.iterdir() if d.is_dir() and any(d.glob("*/*/seed*.jsonl"))) if root.is_dir() else []
    hint = f"; did you mean --results {below[0]}?" if below else ""
    return f"no result records found under {root} (looked for <model>/<arm>/seed<N>.jsonl files there){hint}"


@dataclass
class SourcedRecord:
    """One record with where it came from (for error messages)."""

    path: Path
    line: int
    record: StatRecord
    facts: tuple[int, int, str | None]  # record_facts of the full record


def cache_dir() -> Path | None:
    """The analysis cache directory (None: off)."""
    value = os.environ.get(CACHE_ENV, "")
    if value.lower() in ("off", "0", "none"):
        return None
    return Path(value) if value else REPO_ROOT / ".cache" / "analysis"


def _cache_path(directory: Path, file_digest: str) -> Path:
    tag = hashlib.sha256(f"{CACHE_VERSION}|{'|'.join(FIELDS)}|{file_digest}".encode()).hexdigest()
    return directory / tag[:2] / f"{tag}.json"


def _parse_view(path: Path) -> FileView:
    """One results file read once by the store's reader (a corrupt line raises StoreError): its FileView."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        full = read_result_file(path)
    lines: dict[str, dict[str, int]] = {}
    settings = file_settings(full, lines)
    return FileView(
        [StatRecord.of(rec) for rec in full],
        [record_facts(r) for r in full],
        settings,
        any(issubclass(w.category, TornLineWarning) for w in caught),
        lines,
        recompute_file(path, full),
    )


def _load_cached(cached: Path, digest: str) -> FileView | None:
    try:
        view = json.loads(cached.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not cached yet (or an unreadable cache file): read the results file
    if view.get("sha256") != digest or not isinstance(view.get("records"), list):
        return None
    return FileView(
        list(map(StatRecord._make, view["records"])),
        [tuple(f) for f in view["facts"]],
        view["settings"],
        bool(view.get("torn")),
        view["lines"],
        Recomputed.from_json(view["recomputed"]),
    )


def _store_cached(cached: Path, digest: str, view: FileView) -> None:
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps(
                {
                    "sha256": digest,
                    "torn": view.torn,
                    "records": view.records,  # each StatRecord a JSON array of its values
                    "facts": view.facts,
                    "settings": view.settings,
                    "lines": view.lines,
                    "recomputed": view.recomputed.to_json(),
                },
                separators=(",", ":"),
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        os.replace(tmp, cached)
    except OSError:
        pass  # a read-only cache directory only costs speed


def read_views(files: list[Path], digests: list[str] | None = None) -> tuple[list[FileView], list[str] | None]:
    """The FileView of each file, in order, and the files' sha256 (None when nobody hashed them): from the cache
    where it holds the file's bytes (by sha256: `digests` when the caller hashed the files already), the others
    parsed by the store's reader in worker processes (harness.core.parallel) and cached."""
    global _VIEW_INDEX
    _VIEW_INDEX = CaseIndex()  # fresh per read (workers fork from here): splits are opened and hash-checked anew
    directory = cache_dir()
    if directory is None:
        return ordered_map(_parse_view, files), digests
    digests = digests if digests is not None else ordered_map(file_sha256, files)
    places = [_cache_path(directory, d) for d in digests]
    cached = [_load_cached(c, d) for c, d in zip(places, digests)]
    missing = [i for i, v in enumerate(cached) if v is None]
    parsed = dict(zip(missing, ordered_map(_parse_view, [files[i] for i in missing])))
    for i, view in parsed.items():
        if view.recomputed.split_missing is None:  # a split fetched later is read then
            _store_cached(places[i], digests[i], view)
    return [v if v is not None else parsed[i] for i, v in enumerate(cached)], digests


def read_root(
    results_root: str | os.PathLike, digests: dict[Path, str] | None = None
) -> tuple[list[SourcedRecord], list[ResultFile]]:
    """Every complete record under `<root>/<model>/<arm>/seed<seed>.jsonl` with its file, line and facts, keeping
    only the fields statistics read (FIELDS), and every results file with its settings; `digests`: the files'
    sha256 by resolved path where the caller hashed them (harness compare checks them against the root's sums).

    The files are read by the store's reader (harness.run.store.read_result_file), so the analysis follows
    the store's layout and its one torn-line rule: an incomplete last line is skipped with a TornLineWarning,
    a bad line elsewhere is an error (raised here as ResultsError naming file and line). What is read is
    cached per file content (`cache_dir`), so later stages over the same bytes skip the JSON parsing."""
    root = Path(results_root)
    if not root.is_dir():
        raise ResultsError(f"results root {root} does not exist or is not a directory")
    files = list(iter_result_files(root))
    hashed = [d for p in files if (d := digests.get(p.resolve())) is not None] if digests is not None else None
    try:
        views, known = read_views(files, hashed if hashed is not None and len(hashed) == len(files) else None)
    except StoreError as exc:
        raise ResultsError(str(exc)) from None
    records: list[SourcedRecord] = []
    for path, view in zip(files, views):
        if view.torn:
            warnings.warn(f"{path}: ignoring an incomplete last line", TornLineWarning, stacklevel=2)
        records += [
            SourcedRecord(path, line, rec, facts) for line, (rec, facts) in enumerate(zip(view.records, view.facts), 1)
        ]
    digest_of = dict(zip(files, known or [])) if known is not None else {}
    return records, [ResultFile(p, digest_of.get(p), v.settings, v.lines, v.recomputed) for p, v in zip(files, views)]


def iter_records(results_root: str | os.PathLike) -> Iterator[SourcedRecord]:
    """Every complete record under a results root with its file and line (`read_root`)."""
    yield from read_root(results_root)[0]


@dataclass
class CorrectnessArrays:
    """Correctness and outcome arrays over [model, arm, seed, case], cases grouped by calculator."""

    models: list[str]
    arms: list[str]
    seeds: list[int]
    case_ids: list[str]
    calculator_ids: np.ndarray  # [N] calculator id of each case
    cluster: np.ndarray  # [N] index into `calculators`
    calculators: list[int]  # sorted calculator ids
    calculator_names: dict[int, str]
    output_types: list[str]  # [N]
    correct: np.ndarray  # [M, A, S, N] float64: 1, 0, NaN
    outcome: np.ndarray  # [M, A, S, N] int8: OUTCOMES index, -1 missing
    notes: list[str] = field(default_factory=list)
    dataset: str | None = None  # the analysed dataset (`dataset_of`) when the records name one or several
    versioned: list[StatRecord] = field(default_factory=list)  # records run at a formula version (s22)
    calls: np.ndarray | None = None  # [M, A, S, N] int32: model calls of each record (record_facts), -1 no record
    cut: np.ndarray | None = None  # [M, A, S, N] int32: those cut at the output-token cap, -1 no record
    routes: dict[tuple[str, str, int], dict[str, int]] = field(
        default_factory=dict
    )  # (model, arm, seed) -> route: rows
    files: list[ResultFile] = field(default_factory=list)  # the results files read, with their settings

    # ---- shape helpers -------------------------------------------------------------------------
    @property
    def n_cases(self) -> int:
        return len(self.case_ids)

    @property
    def cluster_sizes(self) -> np.ndarray:
        return np.bincount(self.cluster, minlength=len(self.calculators))

    def m(self, model: str) -> int:
        return self.models.index(model)

    def a(self, arm: str) -> int:
        return self.arms.index(arm)

    def has(self, model: str, arm: str) -> bool:
        return model in self.models and arm in self.arms and bool(self.seed_mask(model, arm).any())

    def seed_mask(self, model: str, arm: str) -> np.ndarray:
        """[S] bool: seeds with at least one record for (model, arm)."""
        block = self.correct[self.m(model), self.a(arm)]
        return ~np.all(np.isnan(block), axis=1)

    def seeds_of(self, model: str, arm: str) -> list[int]:
        if not (model in self.models and arm in self.arms):
            return []
        return [s for s, ok in zip(self.seeds, self.seed_mask(model, arm)) if ok]

    def block(self, model: str, arm: str) -> np.ndarray:
        """[S, N] correctness of one (model, arm)."""
        return self.correct[self.m(model), self.a(arm)]

    def outcome_block(self, model: str, arm: str) -> np.ndarray:
        return self.outcome[self.m(model), self.a(arm)]

    def arms_of(self, model: str) -> list[str]:
        return [a for a in self.arms if self.has(model, a)]

    def case_mask(self, calculators: Iterable[int] | None) -> np.ndarray:
        """[N] bool: cases whose calculator id is in `calculators` (all cases for None)."""
        if calculators is None:
            return np.ones(self.n_cases, dtype=bool)
        return np.isin(self.calculator_ids, np.asarray(sorted({int(c) for c in calculators}), dtype=np.int64))

    def as_5d(self) -> np.ndarray:
        """Padded [model, arm, seed, calculator, case-within-calculator] correctness (NaN padding)."""
        sizes = self.cluster_sizes
        out = np.full(self.correct.shape[:3] + (len(self.calculators), int(sizes.max(initial=0))), np.nan)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        pos = np.arange(self.n_cases) - starts[self.cluster]
        out[..., self.cluster, pos] = self.correct
        return out

    def add_arm(self, name: str, correct: np.ndarray, outcome: np.ndarray) -> None:
        """Append a derived arm (e.g. a hybrid) given [M, S, N] correctness and outcome arrays."""
        if name in self.arms:
            raise ValueError(f"arm {name!r} already exists")
        self.arms.append(name)
        self.correct = np.concatenate([self.correct, correct[:, None]], axis=1)
        self.outcome = np.concatenate([self.outcome, outcome[:, None].astype(np.int8)], axis=1)
        if self.calls is not None:  # a derived arm made no calls of its own
            none = np.full(self.calls.shape[:1] + self.calls.shape[2:], -1, dtype=self.calls.dtype)[:, None]
            self.calls = np.concatenate([self.calls, none], axis=1)
            self.cut = np.concatenate([self.cut, none], axis=1)


def _check_record(src: SourcedRecord) -> tuple:
    """(model, arm, seed, case id, calculator id) of a record whose outcome the statistics can use. The store's
    reader has checked the record's shape (Record.from_dict: required fields and their types)."""
    rec, where = src.record, f"{src.path}:{src.line}"
    if rec.outcome not in OUTCOME_CODE:
        raise ResultsError(f"{where}: unknown outcome {rec.outcome!r} (expected one of {', '.join(OUTCOMES)})")
    if rec.correct and rec.outcome != "answered":
        raise ResultsError(f"{where}: record is marked correct but its outcome is {rec.outcome!r}")
    return rec.model, rec.arm, rec.seed, rec.case_id, rec.calculator_id


def dataset_of(rec: Record | StatRecord) -> str:
    """A record's dataset identity: its name plus the first 12 hex digits of its sha256 when stored."""
    name = rec.dataset or "unnamed"
    sha = rec.dataset_sha256
    return f"{name}@{sha[:12]}" if sha else name


def choose_dataset(
    sources: list[SourcedRecord], dataset: str | None
) -> tuple[list[SourcedRecord], list[str], str | None]:
    """Keep the records of one dataset. With `dataset` None and several present, the dataset with the
    most model-arm-seed files wins and the others are excluded with a note (e.g. a Gold-Solve check
    on another split stored in the same root)."""
    by: dict[str, list[SourcedRecord]] = {}
    for src in sources:
        by.setdefault(dataset_of(src.record), []).append(src)
    if dataset is not None:
        picked = [k for k in by if k == dataset or k.split("@")[0] == dataset]
        if len(picked) != 1:
            raise ResultsError(
                f"dataset {dataset!r} {'is ambiguous' if picked else 'not found'} in the results; "
                f"present: {', '.join(sorted(by))}"
            )
        keep = picked[0]
    elif len(by) <= 1:
        return sources, [], next(iter(by), None)
    else:

        def weight(k: str) -> tuple[int, int, str]:
            files = {
                (s.record.model, s.record.arm, s.record.seed) for s in by[k] if s.record.arm not in model_free_arms()
            }
            return (len(files), len(by[k]), k)

        keep = max(by, key=weight)
    notes = [
        f"dataset {k} excluded ({len(v)} records; choose it with --dataset)" for k, v in sorted(by.items()) if k != keep
    ]
    return by[keep], ([f"dataset analysed: {keep}"] + notes if notes else []), keep


def build_arrays(records: Iterable[SourcedRecord], dataset: str | None = None) -> CorrectnessArrays:
    """Build the arrays from sourced records of one dataset, checking types, duplicates and case consistency."""
    rows = []
    case_info: dict[str, tuple[int, int, str, str, str]] = {}
    seen: dict[tuple, str] = {}
    versioned: list[StatRecord] = []
    route_rows: dict[tuple[str, str, int], dict[str, int]] = {}
    sources, notes, chosen = choose_dataset(list(records), dataset)
    for src in sources:
        model, arm, seed, case_id, calc = _check_record(src)
        rec, where = src.record, f"{src.path}:{src.line}"
        key = (model, arm, seed, case_id)
        if key in seen:
            raise ResultsError(
                f"{where}: duplicate record for model {model}, arm {arm}, seed {seed}, case {case_id} "
                f"(first at {seen[key]})"
            )
        seen[key] = where
        info = (
            calc,
            rec.row_number if rec.row_number is not None else 0,
            rec.calculator_name or str(calc),
            rec.output_type or "",
            where,
        )
        old = case_info.get(case_id)
        if old is None:
            case_info[case_id] = info
        elif old[0] != calc:
            raise ResultsError(f"{where}: case {case_id} has calculator {calc} here but {old[0]} at {old[4]}")
        facts = src.facts
        rows.append(
            (
                model,
                arm,
                seed,
                case_id,
                1.0 if rec.correct else 0.0,
                OUTCOME_CODE[rec.outcome],
                facts[0],
                facts[1],
            )
        )
        if facts[2] is not None:
            routes = route_rows.setdefault((model, arm, seed), {})
            routes[facts[2]] = routes.get(facts[2], 0) + 1
        if rec.reference is not None:
            versioned.append(rec)
    if not rows:
        raise NoRecordsError("no result records found")

    case_ids = sorted(case_info, key=lambda c: (case_info[c][0], case_info[c][1], c))
    case_index = {c: i for i, c in enumerate(case_ids)}
    calc_ids = np.array([case_info[c][0] for c in case_ids], dtype=np.int64)
    calculators = sorted(set(calc_ids.tolist()))
    cluster = np.searchsorted(np.array(calculators), calc_ids)
    names = {case_info[c][0]: case_info[c][2] for c in case_ids}
    models = sorted({r[0] for r in rows})
    arms = sorted({r[1] for r in rows}, key=arm_sort_key)
    seeds = sorted({r[2] for r in rows})
    mi, ai, si = ({v: i for i, v in enumerate(x)} for x in (models, arms, seeds))
    shape = (len(models), len(arms), len(seeds), len(case_ids))
    correct = np.full(shape, np.nan)
    outcome = np.full(shape, -1, dtype=np.int8)
    idx = tuple(np.array(col) for col in zip(*[(mi[r[0]], ai[r[1]], si[r[2]], case_index[r[3]]) for r in rows]))
    correct[idx] = [r[4] for r in rows]
    outcome[idx] = [r[5] for r in rows]
    calls = np.full(shape, -1, dtype=np.int32)
    cut = np.full(shape, -1, dtype=np.int32)
    calls[idx] = [r[6] for r in rows]
    cut[idx] = [r[7] for r in rows]
    data = CorrectnessArrays(
        models,
        arms,
        seeds,
        case_ids,
        calc_ids,
        cluster,
        calculators,
        names,
        [case_info[c][3] for c in case_ids],
        correct,
        outcome,
        list(notes),
        chosen,
        versioned,
        calls,
        cut,
        route_rows,
    )
    _share_model_free_arms(data)
    return data


def _share_model_free_arms(data: CorrectnessArrays) -> None:
    """Give every model the model-free arms (Gold-Solve) at every seed it ran.

    A model-free arm stored under one model directory or one seed stands for all: each model gets
    its own run when it has one, else the first model's that does; a missing seed is filled from a
    seed that ran (the arm is deterministic). A model directory holding nothing but model-free arms
    is then dropped from the model list."""
    free = [a for a in model_free_arms() if a in data.arms]
    other = [data.a(a) for a in data.arms if a not in model_free_arms()]
    for arm in free:
        ai = data.a(arm)
        donors = [m for m in data.models if data.has(m, arm)]
        if not donors:
            continue
        for m in data.models:
            mi = data.m(m)
            src = m if data.has(m, arm) else donors[0]
            if src != m:
                data.notes.append(f"{arm} for {m} is the model-free run stored under {src}")
            si = data.m(src)
            have = data.seed_mask(src, arm)
            ran = ~np.all(np.isnan(data.correct[mi][other]), axis=(0, 2)) if other else have
            filled = []
            for s in np.flatnonzero(ran):
                if src == m and have[s]:
                    continue
                base = s if have[s] else int(np.argmax(have))
                data.correct[mi, ai, s] = data.correct[si, ai, base]
                data.outcome[mi, ai, s] = data.outcome[si, ai, base]
                filled.append(data.seeds[s])
            if filled and src == m:
                data.notes.append(
                    f"{arm} for {m}: seeds {', '.join(map(str, filled))} reuse seed "
                    f"{data.seeds[int(np.argmax(have))]} (the arm is deterministic)"
                )
    keep = [m for m in data.models if set(data.arms_of(m)) - set(model_free_arms())]
    if keep and len(keep) < len(data.models):
        dropped = [m for m in data.models if m not in keep]
        data.notes.append(f"model directories holding only model-free arms dropped: {', '.join(dropped)}")
        idx = [data.m(m) for m in keep]
        data.models = keep
        data.correct = data.correct[idx]
        data.outcome = data.outcome[idx]
        if data.calls is not None and data.cut is not None:  # both set by build_arrays
            data.calls, data.cut = data.calls[idx], data.cut[idx]


def load_arrays(
    results_root: str | os.PathLike, dataset: str | None = None, digests: dict[Path, str] | None = None
) -> CorrectnessArrays:
    """Read every result file under `results_root` once (one dataset: see `choose_dataset`) into
    `CorrectnessArrays`, with the files' settings (`digests`: their sha256 where the caller has them)."""
    records, files = read_root(results_root, digests)
    try:
        data = build_arrays(records, dataset)
    except NoRecordsError:
        raise NoRecordsError(no_records_message(Path(results_root))) from None
    data.files = files
    return data
