"""Synthetic (rehearsal) output: how it is labelled and how mixing it with real results is refused.

The rehearsal server (harness.model.rehearsal.server) is a scripted fake. Everything it feeds is marked:
its model ids start with SYNTHETIC_PREFIX, its completions carry SYNTHETIC_FINGERPRINT, records written
from it carry `"synthetic": true`, and the run manifest says `synthetic: true`. A result set is synthetic
when any of its records is; records of model-free arms (Gold-Solve, model `library`) are neither, and may
sit in either kind of set. `mixing_problem` names the first real and the first synthetic record of a set
that holds both: the store refuses to append across the line and `harness verify` fails such a set.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

SYNTHETIC_PREFIX = "rehearsal-"
SYNTHETIC_FINGERPRINT = "rehearsal-fake"
MODEL_FREE = "library"


def is_synthetic_model(model_id: str | None) -> bool:
    return bool(model_id) and str(model_id).startswith(SYNTHETIC_PREFIX)


class Labelled(Protocol):
    """What the label reads of a record (harness.run.record.Record has these; this layer sits below it)."""

    @property
    def model(self) -> str: ...
    @property
    def server_model(self) -> str | None: ...
    @property
    def synthetic(self) -> bool: ...


def record_kind(record: Labelled) -> str | None:
    """'synthetic', 'real', or None for a model-free record (it belongs to neither)."""
    if record.synthetic or is_synthetic_model(record.model) or is_synthetic_model(record.server_model):
        return "synthetic"
    if record.model == MODEL_FREE:
        return None
    return "real"


@dataclass(frozen=True)
class RecordLabel:
    """What `record_kind` reads of a record, kept apart from it (verify's workers send the first record of each
    kind to the parent, not the record)."""

    model: str
    server_model: str | None
    synthetic: bool

    @classmethod
    def of(cls, record: Labelled) -> RecordLabel:
        return cls(record.model, record.server_model, record.synthetic)


def mixing_problem(located: Iterable[tuple[object, int, Labelled]]) -> str | None:
    """For (file, line, record) triples: a one-line message when real and synthetic records are mixed."""
    first: dict[str, str] = {}
    for path, line, rec in located:
        kind = record_kind(rec)
        if kind is None or kind in first:
            continue
        first[kind] = f"{path}:{line} ({rec.model})"
        if len(first) == 2:
            return (
                f"real and synthetic (rehearsal) records are mixed: real {first['real']}, synthetic "
                f"{first['synthetic']}; rehearsal output can never be part of a real result set"
            )
    return None
