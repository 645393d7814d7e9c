"""Rescore stored records from what they hold (the reply text, or the value a solver returned) and
compare with the stored score. Used by `harness score` and `harness verify`.

Each record is rescored by its arm's solver (`harness.arms.solvers.base.Solver.rescore`): a reply-scored
solver from the last reply with `score_reply`, every other from the stored answer and kind with `score_value`;
a record with neither scores wrong. Cases come from the record's dataset, which must still have the sha256 the record names.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import json

from harness.arms.registry import ARMS
from harness.arms.solvers import rescore_value, uses_convention
from harness.data.conventions import default_convention
from harness.data.dataset import DatasetError, load_dataset
from harness.run.store import iter_located_records


class RescoreError(Exception):
    """A record that cannot be rescored; the message names the file and line."""


@dataclass
class Rescored:
    path: Path
    line: int
    record: dict
    correct: bool

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


class CaseIndex:
    """Cases by (dataset name, sha256, case id), loading each dataset once and checking its hash."""

    def __init__(self) -> None:
        self._by_dataset: dict[tuple[str, str], dict] = {}

    def case(self, record: dict, where: str):
        name, sha = record.get("dataset"), record.get("dataset_sha256")
        if (name, sha) not in self._by_dataset:
            ds = None
            for candidate in (name, record.get("dataset_path")):
                if not candidate:
                    continue
                try:
                    ds = load_dataset(candidate)
                    break
                except DatasetError:
                    continue
            if ds is None:
                raise RescoreError(f"{where}: cannot load dataset {name!r} (path {record.get('dataset_path')!r})")
            if ds.sha256 != sha:
                raise RescoreError(f"{where}: dataset {name!r} has sha256 {ds.sha256[:12]}..., the record was "
                                   f"scored against {str(sha)[:12]}...")
            self._by_dataset[(name, sha)] = ds.by_case_id()
        cases = self._by_dataset[(name, sha)]
        if record["case_id"] not in cases:
            raise RescoreError(f"{where}: case {record['case_id']!r} is not in dataset {name!r}")
        return cases[record["case_id"]]


def rescore_record(record: dict, case, scorer: str) -> bool:
    """The record's verdict under `scorer`, as its arm's solver scores it (`Solver.rescore`); a record of an arm
    no longer registered is value-scored."""
    arm = ARMS.get(record["arm"])
    if arm is None:
        return rescore_value(record, case, scorer)
    return arm.solver_kind.rescore(record, case, scorer)


def rescore_tree(results_root: str | os.PathLike, scorer: str | None = None,
                 arms: tuple[str, ...] = ()) -> tuple[list[Rescored], list[str]]:
    """Rescore every record under a results root. Returns (rescored rows, mismatch messages naming
    file:line) where a mismatch is a stored score that differs from the rescored one under the
    record's own scorer (and, for every scorer in its `scores`, the stored per-scorer verdict)."""
    index = CaseIndex()
    rows: list[Rescored] = []
    mismatches: list[str] = []
    for path, line, rec in iter_located_records(results_root):
        if arms and rec["arm"] not in arms:
            continue
        where = f"{path}:{line}"
        case = index.case(rec, where)
        use = scorer or rec["scorer"]
        verdict = rescore_record(rec, case, use)
        if use == rec["scorer"] and verdict != bool(rec["correct"]):
            mismatches.append(f"{where}: {rec['arm']} seed {rec['seed']} case {rec['case_id']}: stored correct="
                              f"{rec['correct']}, rescored {verdict} ({use})")
        if scorer is None:
            for name, stored in sorted((rec.get("scores") or {}).items()):
                if name != rec["scorer"] and rescore_record(rec, case, name) != bool(stored):
                    mismatches.append(f"{where}: {rec['arm']} case {rec['case_id']}: stored {name}={stored}, "
                                      f"rescored {not stored}")
        rows.append(Rescored(path, line, rec, verdict))
    return rows, mismatches


# ----- unit conventions ------------------------------------------------------------------------------

def _manifest_conventions(results_root: Path) -> dict[tuple[str, str], str]:
    """(dataset sha256, arm_config_hash) -> the convention its run used, for the convention-dependent arms of
    every run manifest under ``results_root`` (a manifest without a ``convention`` entry: the dataset's own)."""
    out: dict[tuple[str, str], str] = {}
    for path in sorted(Path(results_root).glob("**/manifest-*.json")):
        try:
            m = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        sha = (m.get("dataset") or {}).get("sha256")
        if not sha:
            continue
        name = (m.get("convention") or {}).get("name") or default_convention(sha).name
        hashes = m.get("arm_config_hashes") or {}
        arms = m.get("arms")
        if not isinstance(arms, dict):
            continue  # a reproduce manifest lists arm names; the run manifests it wrote hold the configs
        for arm, cfg in arms.items():
            if isinstance(cfg, dict) and uses_convention(cfg.get("solver")) and arm in hashes:
                out[(sha, hashes[arm])] = cfg.get("convention") or name
    return out


def record_conventions(results_root: str | os.PathLike) -> dict[tuple[str, str], dict[str, int]]:
    """(dataset name, arm) -> {convention name: record count} over the records of the arms whose answer depends
    on the unit convention (from the run manifests; a record with no manifest entry: its dataset's own)."""
    by_run = _manifest_conventions(Path(results_root))
    out: dict[tuple[str, str], dict[str, int]] = {}
    for _path, _line, rec in iter_located_records(results_root):
        arm = ARMS.get(rec.get("arm"))
        key = (rec.get("dataset_sha256"), rec.get("arm_config_hash"))
        if key not in by_run and (arm is None or not arm.solver_kind.uses_convention):
            continue
        name = by_run.get(key) or default_convention(rec.get("dataset_sha256")).name
        counts = out.setdefault((str(rec.get("dataset")), str(rec.get("arm"))), {})
        counts[name] = counts.get(name, 0) + 1
    return out


def convention_problems(results_root: str | os.PathLike, expected: str | None = None) -> tuple[list[str], list[str]]:
    """(lines saying which convention each convention-dependent arm's records were made under, problems): a
    (dataset, arm) whose records mix conventions, or, with ``expected``, records made under another one."""
    lines, problems = [], []
    for (dataset, arm), counts in sorted(record_conventions(results_root).items()):
        said = ", ".join(f"{n} ({c} records)" for n, c in sorted(counts.items()))
        lines.append(f"unit convention of {arm} on {dataset}: {said}")
        if len(counts) > 1:
            problems.append(f"{results_root}: {arm} on {dataset} mixes unit conventions: {said}")
        elif expected is not None and expected not in counts:
            problems.append(f"{results_root}: {arm} on {dataset} was made under unit convention {said}, "
                            f"not --convention {expected}")
    return lines, problems
