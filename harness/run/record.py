"""The per-case results record: one typed value, built by the runner, written as one JSON line by the store.

A record is one (model, arm, seed, case) row: who answered (model, revision, server profile, arm and the hash
of its config), which case (dataset name, path and sha256, case id, row, calculator), what was asked and
answered (the requests, replies, program and executor results), the row's outcome and its scores under every
scorer (``correct`` under the run's own), the gold answer and limits, timings, token counts and transport
facts, and, for arms that use formulas or the library, the formula version in force and, off the benchmark's
version, the "library-derived reference" (never scored as gold). docs/ARCHITECTURE.md describes each field.

``RECORD_SCHEMA`` is written into every record (``record_schema``) and bumps whenever a field is added,
removed or changes meaning; the committed result sets are regenerated rather than read through shims.
Schema 2 (this one): every record carries every field (``formula_version`` and ``reference`` are None for
arms that use no formulas; ``synthetic`` is False for real rows), and the schema number itself.

``Record.from_dict`` is the one reader of the record shape (the store checks every line it reads or appends
through it: required fields and their types, no unknown field, this schema);
``Record.to_dict`` the one writer (field order is the dataclass order).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["RECORD_FIELDS", "RECORD_SCHEMA", "REQUIRED_FIELDS", "Record", "RecordError"]

RECORD_SCHEMA = 2


class RecordError(ValueError):
    """A line that is not a record of this schema (the message says which fields are wrong)."""


@dataclass(frozen=True)
class Record:
    """One results record (module docstring)."""

    key: str
    model: str
    arm: str
    seed: int
    case_id: str
    calculator_id: int
    outcome: str
    correct: bool
    scorer: str
    model_revision: str | None = None
    server_profile: str | None = None
    arm_config_hash: str | None = None
    dataset: str | None = None
    dataset_path: str | None = None
    dataset_sha256: str | None = None
    row_number: int | None = None
    calculator_name: str | None = None
    output_type: str | None = None
    prompt_hash: str | None = None
    request: list[Any] = None  # type: ignore[assignment]  # one entry per model request (list; [] when none)
    replies: list[Any] = None  # type: ignore[assignment]
    program: str | None = None
    executor: Any = None
    answer: Any = None
    answer_kind: str | None = None
    reason: str | None = None
    detail: Any = None
    scores: dict[str, Any] | None = None
    gold: dict[str, Any] | None = None
    latency_ms: float | None = None
    tokens: dict[str, Any] | None = None
    retries: int = 0
    finish_reasons: list[Any] = None  # type: ignore[assignment]
    truncated: list[Any] = None  # type: ignore[assignment]
    cached: list[Any] = None  # type: ignore[assignment]
    server_model: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    formula_version: str | None = None
    reference: dict[str, Any] | None = None
    synthetic: bool = False
    record_schema: int = RECORD_SCHEMA

    def __post_init__(self) -> None:
        for name in ("request", "replies", "finish_reasons", "truncated", "cached"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, [])

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (one store line), every field in dataclass order."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Record:
        """A record from its JSON form; RecordError naming missing required fields, unknown fields or another
        schema. Records written without ``record_schema`` are not of this schema."""
        if not isinstance(data, dict):
            raise RecordError("not a JSON object")
        missing = [f for f in REQUIRED_FIELDS if f not in data]
        if missing:
            raise RecordError(f"record lacks required field(s) {', '.join(missing)}")
        schema = data.get("record_schema")
        if schema != RECORD_SCHEMA:
            raise RecordError(
                f"record schema {schema!r}, this kit reads schema {RECORD_SCHEMA}; regenerate the "
                "result set with this kit"
            )
        unknown = sorted(set(data) - set(RECORD_FIELDS))
        if unknown:
            raise RecordError(f"unknown record field(s) {', '.join(unknown)}")
        wrong = [
            f"{name} ({type(data[name]).__name__}, not {kind.__name__})"
            for name, kind in REQUIRED_TYPES.items()
            if type(data[name]) is not kind
        ]
        if wrong:
            raise RecordError(f"record field(s) of the wrong type: {', '.join(wrong)}")
        return cls(**data)


RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Record))
# The fields without a default: a line without one of them is not a record (the store refuses it).
REQUIRED_FIELDS: tuple[str, ...] = RECORD_FIELDS[:9]
REQUIRED_TYPES: dict[str, type] = {
    "key": str,
    "model": str,
    "arm": str,
    "seed": int,
    "case_id": str,
    "calculator_id": int,
    "outcome": str,
    "correct": bool,
    "scorer": str,
}
