"""Results records for tests: `record(**fields)` is a record of this schema (harness.run.record.Record), read from
its JSON form by the store's reader (`Record.from_dict`), so parts may be given in their JSON form (gold, tokens,
executor as dicts); the fields a test does not care about take their defaults (the required ones: key "k", model
"m", arm "a", seed 42, case 2-1 of calculator 2, answered, correct, scorer "paper"). `record_json(**fields)` is the
same record's JSON form (every field), for tests that write lines themselves."""

from __future__ import annotations

from typing import Any

from harness.run.record import RECORD_SCHEMA, Record

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


def record(**fields: Any) -> Record:
    return Record.from_dict({**REQUIRED_DEFAULTS, "record_schema": RECORD_SCHEMA, **fields})


def record_json(**fields: Any) -> dict[str, Any]:
    return record(**fields).to_dict()
