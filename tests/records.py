"""Results records for tests: `record(**fields)` is a record of this schema (harness.run.record.Record) in the
dict form the store writes and reads, every field present; the fields a test does not care about take their
defaults (the required ones: key "k", model "m", arm "a", seed 42, case 2-1 of calculator 2, answered, correct,
scorer "paper")."""

from __future__ import annotations

from harness.run.record import Record

REQUIRED_DEFAULTS = {
    "key": "k",
    "model": "m",
    "arm": "a",
    "seed": 42,
    "case_id": "2-1",
    "calculator_id": 2,
    "outcome": "answered",
    "correct": True,
    "scorer": "paper",
}


def record(**fields) -> dict:
    return Record(**{**REQUIRED_DEFAULTS, **fields}).to_dict()
