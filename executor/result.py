"""The executor's result schema: one definition used by the supervisor, both pools and the API.

A result is one JSON object with exactly ``FIELDS`` (docs/ARCHITECTURE.md): the outcome (the
closed enum of ``outcomes.py``), the answer checked by kind, the captured output with truncation
flags, timings, how the child ended and the message a repair turn may show the model.
``make_result`` builds the dict form (what crosses the supervisor protocol), ``ExecResult`` is
the typed form the harness receives.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from executor.outcomes import Outcome, parse_outcome

BACKENDS = ("process", "container")


@dataclass
class ExecResult:
    """One program's result (also the JSON printed by ``executor run``)."""

    outcome: str
    answer: object = None
    kind: str | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_ms: float | None = None
    cpu_ms: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    error: str | None = None
    backend: str | None = None

    @classmethod
    def from_dict(cls, data: dict) -> "ExecResult":
        if not isinstance(data, dict):
            raise ValueError(f"executor result must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - set(FIELDS)
        if unknown:
            raise ValueError(f"executor result has unknown field(s): {sorted(unknown)}")
        if "outcome" not in data:
            raise ValueError("executor result has no 'outcome'")
        parse_outcome(data["outcome"])
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.OK.value


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ExecResult))


def make_result(outcome: Outcome, backend: str | None, **values) -> dict:
    """A complete result dict: every field of ``FIELDS``, defaults for those not given."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown executor result field(s): {sorted(unknown)}")
    res = ExecResult(outcome=Outcome(outcome).value, backend=backend).to_dict()
    res.update(values)
    return res


def infra_result(error: str, backend: str | None) -> dict:
    """INFRA_ERROR: the sandbox failed, not the program (retried by the pool, never scored)."""
    return make_result(Outcome.INFRA_ERROR, backend, error=error)
