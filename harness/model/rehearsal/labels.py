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

SYNTHETIC_PREFIX = "rehearsal-"
SYNTHETIC_FINGERPRINT = "rehearsal-fake"
MODEL_FREE = "library"


def is_synthetic_model(model_id: str | None) -> bool:
    return bool(model_id) and str(model_id).startswith(SYNTHETIC_PREFIX)


def record_kind(record: dict) -> str | None:
    """'synthetic', 'real', or None for a model-free record (it belongs to neither)."""
    if (
        record.get("synthetic")
        or is_synthetic_model(record.get("model"))
        or is_synthetic_model(record.get("server_model"))
    ):
        return "synthetic"
    if record.get("model") == MODEL_FREE:
        return None
    return "real"


def mixing_problem(located: Iterable[tuple[object, int, dict]]) -> str | None:
    """For (file, line, record) triples: a one-line message when real and synthetic records are mixed."""
    first: dict[str, str] = {}
    for path, line, rec in located:
        kind = record_kind(rec)
        if kind is None or kind in first:
            continue
        first[kind] = f"{path}:{line} ({rec.get('model')})"
        if len(first) == 2:
            return (
                f"real and synthetic (rehearsal) records are mixed: real {first['real']}, synthetic "
                f"{first['synthetic']}; rehearsal output can never be part of a real result set"
            )
    return None
