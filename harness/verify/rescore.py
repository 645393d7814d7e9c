"""Rescore stored records from what they hold (the reply text, or the value a solver returned) and
compare with the stored score. Used by `harness score` and `harness verify`.

Each record is rescored by its arm's solver (`harness.arms.solvers.base.Solver.rescore`): a reply-scored
solver from the last reply with `score_reply`, every other from the stored answer and kind with `score_value`;
a record with neither scores wrong. Cases come from the record's dataset, which must still have the sha256 the record
names. The rescoring itself (`CaseIndex`, `rescore_record`) is harness.run.recompute's, shared with `harness compare`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.arms.registry import ARMS
from harness.arms.solvers import uses_convention
from harness.core.parallel import ordered_map
from harness.data.conventions import default_convention
from harness.model.rehearsal.labels import RecordLabel, record_kind
from harness.run.manifest import read_manifests
from harness.run.recompute import CaseIndex, RescoreError, rescore_record
from harness.run.record import Record
from harness.run.store import StoreError, TornLineWarning, iter_located_records, iter_result_files, read_result_file


@dataclass
class Rescored:
    path: Path
    line: int
    record: Record | None  # None: rescore_tree(keep=False)
    correct: bool

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def rescore_tree(
    results_root: str | os.PathLike,
    scorer: str | None = None,
    arms: tuple[str, ...] = (),
    *,
    located: Iterable[tuple[Path, int, Record]] | None = None,
    keep: bool = True,
    index: CaseIndex | None = None,
) -> tuple[list[Rescored], list[str]]:
    """Rescore every record under a results root (or of `located`, (file, line, record) triples read by the
    store's reader, when the caller reads them for other checks too). Returns (rescored rows, mismatch
    messages naming file:line) where a mismatch is a stored score that differs from the rescored one under
    the record's own scorer (and, for every scorer in its `scores`, the stored per-scorer verdict). With
    keep=False the rows do not hold the records (a full-size set does not stay in memory). `index` lets
    several calls share the loaded datasets and parsed gold."""
    index = index if index is not None else CaseIndex()
    rows: list[Rescored] = []
    mismatches: list[str] = []
    for path, line, rec in iter_located_records(results_root) if located is None else located:
        if arms and rec.arm not in arms:
            continue
        where = f"{path}:{line}"
        case = index.gold(rec, where)
        use = scorer or rec.scorer
        verdict = rescore_record(rec, case, use)
        if use == rec.scorer and verdict != rec.correct:
            mismatches.append(
                f"{where}: {rec.arm} seed {rec.seed} case {rec.case_id}: stored correct="
                f"{rec.correct}, rescored {verdict} ({use})"
            )
        if scorer is None:
            for name, stored in sorted((rec.scores or {}).items()):
                if name != rec.scorer and rescore_record(rec, case, name) != bool(stored):
                    mismatches.append(
                        f"{where}: {rec.arm} case {rec.case_id}: stored {name}={stored}, rescored {not stored}"
                    )
        rows.append(Rescored(path, line, rec if keep else None, verdict))
    return rows, mismatches


@dataclass
class FileCheck:
    """What verifying one results file found: records rescored, mismatch messages, the first record of each
    kind (real / synthetic / model-free, for the mixing check), whether its last line is torn, or the error
    that stopped it."""

    path: Path
    records: int = 0
    mismatches: list[str] = field(default_factory=list)
    firsts: dict[str | None, tuple[str, int, RecordLabel]] = field(default_factory=dict)
    torn: bool = False
    conventions: dict = field(default_factory=dict)  # record_conventions of this file
    error: str | None = None


# One per check_files call and process: each worker loads a dataset and parses a case's gold once, however many
# files it checks.
_WORKER_INDEX = CaseIndex()
_WORKER_CONVENTIONS: dict[tuple[str, str], str] = {}  # the run manifests' conventions (record_conventions)


def check_file(path: Path) -> FileCheck:
    """Read one results file (the store's reader) and rescore every record (runs in a worker process)."""
    out = FileCheck(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TornLineWarning)
            records = read_result_file(path)
        out.torn = any(issubclass(w.category, TornLineWarning) for w in caught)
        located = [(path, line, rec) for line, rec in enumerate(records, 1)]
        for item in located:
            kind = record_kind(item[2])
            if kind not in out.firsts:  # what record_kind reads, so the parent's mixing check sees the same kind
                out.firsts[kind] = (str(path), item[1], RecordLabel.of(item[2]))
        out.conventions = record_conventions(path.parent, located=located, by_run=_WORKER_CONVENTIONS)
        rows, out.mismatches = rescore_tree(path.parent, located=located, keep=False, index=_WORKER_INDEX)
        out.records = len(rows)
    except (RescoreError, StoreError) as exc:
        out.error = str(exc)
    return out


def check_files(results_root: str | os.PathLike) -> list[FileCheck]:
    """`check_file` for every results file under a root, spread over worker processes (harness.core.parallel),
    in file order (so messages come in the same order whatever the number of workers)."""
    global _WORKER_INDEX, _WORKER_CONVENTIONS
    _WORKER_INDEX = CaseIndex()  # fresh per call (workers fork from here): datasets are read and hash-checked anew
    _WORKER_CONVENTIONS = _manifest_conventions(Path(results_root))
    return ordered_map(check_file, list(iter_result_files(results_root)))


def merged_conventions(checks: list[FileCheck]) -> dict[tuple[str, str], dict[str, int]]:
    """The per-file `record_conventions` counts of `check_files`, summed."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for c in checks:
        for key, counts in c.conventions.items():
            mine = out.setdefault(key, {})
            for name, n in counts.items():
                mine[name] = mine.get(name, 0) + n
    return out


# ----- unit conventions ------------------------------------------------------------------------------


def _manifest_conventions(results_root: Path) -> dict[tuple[str, str], str]:
    """(dataset sha256, arm_config_hash) -> the convention its run used, for the convention-dependent arms of
    every run manifest under ``results_root``."""
    out: dict[tuple[str, str], str] = {}
    for found in read_manifests(results_root, kind="run"):
        m = found.manifest
        for arm, cfg in m.arms.items():
            if uses_convention(cfg.solver) and arm in m.arm_config_hashes:
                out[(m.dataset.sha256, m.arm_config_hashes[arm])] = cfg.convention or m.convention.name
    return out


def record_conventions(
    results_root: str | os.PathLike,
    *,
    located: Iterable[tuple[Path, int, Record]] | None = None,
    by_run: dict[tuple[str, str], str] | None = None,
) -> dict[tuple[str, str], dict[str, int]]:
    """(dataset name, arm) -> {convention name: record count} over the records of the arms whose answer depends
    on the unit convention (from the run manifests; a record with no manifest entry: its dataset's own). `located`
    and `by_run`: records already read and the manifests' conventions already found (verify's one pass)."""
    by_run = _manifest_conventions(Path(results_root)) if by_run is None else by_run
    out: dict[tuple[str, str], dict[str, int]] = {}
    for _path, _line, rec in iter_located_records(results_root) if located is None else located:
        arm = ARMS.get(rec.arm)
        key = (rec.dataset_sha256, rec.arm_config_hash)
        if key not in by_run and (arm is None or not arm.solver.uses_convention):
            continue
        name = by_run.get(key) or default_convention(rec.dataset_sha256).name
        counts = out.setdefault((str(rec.dataset), rec.arm), {})
        counts[name] = counts.get(name, 0) + 1
    return out


def convention_problems(
    results_root: str | os.PathLike,
    expected: str | None = None,
    counted: dict[tuple[str, str], dict[str, int]] | None = None,
) -> tuple[list[str], list[str]]:
    """(lines saying which convention each convention-dependent arm's records were made under, problems): a
    (dataset, arm) whose records mix conventions, or, with ``expected``, records made under another one.
    `counted`: `record_conventions` already computed."""
    lines, problems = [], []
    counted = record_conventions(results_root) if counted is None else counted
    for (dataset, arm), counts in sorted(counted.items()):
        said = ", ".join(f"{n} ({c} records)" for n, c in sorted(counts.items()))
        lines.append(f"unit convention of {arm} on {dataset}: {said}")
        if len(counts) > 1:
            problems.append(f"{results_root}: {arm} on {dataset} mixes unit conventions: {said}")
        elif expected is not None and expected not in counts:
            problems.append(
                f"{results_root}: {arm} on {dataset} was made under unit convention {said}, not --convention {expected}"
            )
    return lines, problems
