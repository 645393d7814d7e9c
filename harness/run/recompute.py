"""What a stored record states that the kit can recompute, recomputed: the one rescoring path.

`harness verify` (harness.verify.rescore) and `harness compare` (harness.analysis.comparison, through the analysis's
one read of each results file, harness.analysis.stats.arrays) both rescore through `CaseIndex` and `rescore_record`
here, so the two can never disagree on a record's verdict. Each record is rescored by its arm's solver
(`harness.arms.solvers.base.Solver.rescore`): a reply-scored solver from the last reply, every other from the stored
answer and kind, against the gold of the case in the dataset the record names, which must still have the sha256 the
record names (the pinned split: a file with other bytes is not the split the record was scored against).

`recompute_record` is what compare checks of every record before it judges a number: its key (harness.run.store.
record_key over the record's own fields, as harness.run.runner.make_key writes it), its correctness (the rescoring
above, under the record's scorer), its case, row, calculator and gold against the split, the seed its file name and
its requests' seeds say (harness.model.client.derive_seed), and whether its server is a rehearsal one
(harness.model.rehearsal.labels.record_kind). Each disagreement is a `Disagreement` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.arms.registry import ARMS
from harness.arms.solvers import rescore_value
from harness.data.dataset import DatasetError, load_dataset
from harness.model.client import derive_seed
from harness.model.rehearsal.labels import is_synthetic_model, record_kind
from harness.run.record import Record, StoredGold
from harness.run.store import record_key
from harness.scoring.scorers import Gold, gold_of


class RescoreError(Exception):
    """A record that cannot be rescored; the message names the file and line."""


class SplitMissing(RescoreError):
    """The dataset a record names cannot be opened (or is not the bytes the record names): `split` says which."""

    def __init__(self, message: str, split: str):
        super().__init__(message)
        self.split = split


class CaseIndex:
    """Cases by (dataset name, sha256, case id), loading each dataset once and checking its hash; `gold`
    gives each case's parsed gold once (a full-size set scores every case about 170 times)."""

    def __init__(self) -> None:
        self._by_dataset: dict[tuple[Any, Any], dict[str, Any]] = {}
        self._missing: dict[tuple[Any, Any], SplitMissing] = {}
        self._gold: dict[int, Gold] = {}

    def gold(self, record: Record, where: str) -> Gold:
        """The parsed gold (harness.scoring.scorers.Gold) of the record's case, parsed once per case."""
        case = self.case(record, where)
        found = self._gold.get(id(case))
        if found is None:
            found = self._gold[id(case)] = gold_of(case)
        return found

    def cases_of(self, record: Record, where: str) -> dict[str, Any]:
        """The cases by id of the dataset the record names (SplitMissing: it cannot be opened as those bytes)."""
        name, sha = record.dataset, record.dataset_sha256
        if (name, sha) in self._missing:
            raise SplitMissing(f"{where}: {self._missing[(name, sha)]}", self._missing[(name, sha)].split)
        if (name, sha) not in self._by_dataset:
            ds = None
            for candidate in (name, record.dataset_path):
                if not candidate:
                    continue
                try:
                    ds = load_dataset(candidate)
                    break
                except DatasetError:
                    continue
            split = f"{name!r} (sha256 {str(sha)[:12]}...)"
            if ds is None:
                self._missing[(name, sha)] = SplitMissing(
                    f"cannot load dataset {name!r} (path {record.dataset_path!r})", split
                )
                raise SplitMissing(f"{where}: {self._missing[(name, sha)]}", split)
            if ds.sha256 != sha:
                self._missing[(name, sha)] = SplitMissing(
                    f"dataset {name!r} has sha256 {ds.sha256[:12]}..., the record was scored against "
                    f"{str(sha)[:12]}...",
                    split,
                )
                raise SplitMissing(f"{where}: {self._missing[(name, sha)]}", split)
            self._by_dataset[(name, sha)] = ds.by_case_id()
        return self._by_dataset[(name, sha)]

    def case(self, record: Record, where: str) -> Any:
        cases = self.cases_of(record, where)
        if record.case_id not in cases:
            raise RescoreError(f"{where}: case {record.case_id!r} is not in dataset {record.dataset!r}")
        return cases[record.case_id]


def rescore_record(record: Record, case: Gold, scorer: str) -> bool:
    """The record's verdict under `scorer`, as its arm's solver scores it (`Solver.rescore`); a record of an arm
    no longer registered is value-scored."""
    arm = ARMS.get(record.arm)
    if arm is None:
        return rescore_value(record, case, scorer)
    return bool(arm.solver.rescore(record, case, scorer))


def recomputed_key(record: Record) -> str:
    """The key the runner gives a record with these fields (harness.run.runner.make_key)."""
    return record_key(
        model=record.model,
        model_revision=record.model_revision,
        server_profile=record.server_profile,
        arm=record.arm,
        arm_config_hash=record.arm_config_hash,
        seed=int(record.seed),
        dataset_sha256=record.dataset_sha256,
        case_id=record.case_id,
    )


@dataclass(frozen=True)
class Disagreement:
    """One field a record states otherwise than the kit recomputes it."""

    field: str
    stored: str
    recomputed: str

    def text(self) -> str:
        return f"{self.field} stored {self.stored}, recomputed {self.recomputed}"


def _split_gold(case: Any) -> StoredGold:
    return StoredGold(case.gold_answer, case.lower_limit, case.upper_limit)


def recompute_record(
    record: Record, index: CaseIndex, where: str, file_seed: int | None = None
) -> tuple[bool | None, list[Disagreement]]:
    """(the record's rescored verdict under its own scorer, or None when its case is not in the split; every field
    it states otherwise than the kit recomputes). SplitMissing when its dataset cannot be opened."""
    out: list[Disagreement] = []
    if record.key != recomputed_key(record):
        out.append(
            Disagreement(
                "key",
                record.key[:12] + "...",
                recomputed_key(record)[:12] + "... (from model, revision, profile, arm, config, seed, dataset, case)",
            )
        )
    if file_seed is not None and record.seed != file_seed:
        out.append(Disagreement("seed", str(record.seed), f"{file_seed} (its file's name)"))
    requests = record.request
    sent = [(i, r["seed"]) for i, r in enumerate(requests) if isinstance(r, dict) and r.get("seed") is not None]
    if sent:
        allowed = {
            derive_seed(int(record.seed), record.case_id, record.arm, i) for i in range(max(len(requests), 1) * 4)
        }
        bad = [s for _, s in sent if s not in allowed]
        if bad:
            out.append(
                Disagreement("seed", str(record.seed), f"not the run seed its requests' seed {bad[0]} was derived from")
            )
    if record_kind(record) == "synthetic" and not record.synthetic:
        who = record.server_model if is_synthetic_model(record.server_model) else record.model
        out.append(Disagreement("synthetic", "false", f"true (a rehearsal server or model: {who})"))
    cases = index.cases_of(record, where)
    case = cases.get(record.case_id)
    if case is None:
        out.append(Disagreement("case_id", record.case_id, f"none: not a case of the split {record.dataset!r}"))
        return None, out
    for name, stated, want in (
        ("calculator_id", record.calculator_id, case.calculator_id),
        ("row_number", record.row_number, case.row_number),
        ("output_type", record.output_type, case.output_type),
    ):
        if stated is not None and stated != want:
            out.append(Disagreement(name, str(stated), f"{want} (the split's case {case.case_id})"))
    if record.gold is not None and record.gold != _split_gold(case):
        out.append(Disagreement("gold", str(record.gold.answer), f"{case.gold_answer} (the split's)"))
    verdict = rescore_record(record, index.gold(record, where), record.scorer)
    if verdict != record.correct:
        out.append(
            Disagreement(
                "correct",
                str(record.correct).lower(),
                f"{str(verdict).lower()} (its answer rescored against the split's gold, scorer {record.scorer})",
            )
        )
    return verdict, out
