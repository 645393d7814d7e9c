"""The executor's result schema: one definition used by the supervisor, both pools and the API.

A result is one JSON object with exactly ``FIELDS`` (docs/ARCHITECTURE.md): the outcome (the
closed enum of ``outcomes.py``), the answer checked by kind, the captured output with truncation
flags, timings, how the child ended, the message a repair turn may show the model, and what the
result may depend on beyond the program text and the policy (``address_layout``; policy.py,
"Determinism"). ``DETERMINISTIC_FIELDS`` are the fields that are a function of the program text
and the policy: the same on every worker, backend and day.
``make_result`` builds the dict form (what crosses the supervisor protocol), ``ExecResult`` is
the typed form the harness receives.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass, fields

from executor.outcomes import Outcome, parse_outcome

# names for the type checker only: the supervisor and the zygote import this module, and typing stays
# out of them (child.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    text_escaped: bool = False
    # memory addresses of default reprs replaced by policy.ADDRESS_MASK in stdout/stderr/error
    addresses_masked: int = 0
    # "fixed" when the child ran with a fixed address layout (ADDR_NO_RANDOMIZE honoured), else
    # "randomised": a value a program computed from an address can then differ between runs
    address_layout: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecResult:
        if not isinstance(data, dict):
            raise ValueError(f"executor result must be a JSON object, got {type(data).__name__}")
        if not data.keys() <= _FIELD_SET:
            raise ValueError(f"executor result has unknown field(s): {sorted(data.keys() - _FIELD_SET)}")
        if "outcome" not in data:
            raise ValueError("executor result has no 'outcome'")
        parse_outcome(data["outcome"])
        return cls(**make_storable(dict(data)))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.OK.value


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ExecResult))
_FIELD_SET = frozenset(FIELDS)
# Timing (load and machine speed) and provenance (which backend, which layout): recorded, not
# part of what a program computes. Every other field is a function of the program and the policy.
TIMING_FIELDS: tuple[str, ...] = ("wall_ms", "cpu_ms")
PROVENANCE_FIELDS: tuple[str, ...] = ("backend", "address_layout")
DETERMINISTIC_FIELDS: tuple[str, ...] = tuple(f for f in FIELDS if f not in TIMING_FIELDS + PROVENANCE_FIELDS)


TEXT_FIELDS: tuple[str, ...] = ("stdout", "stderr", "error")


def storable_text(value: str) -> tuple[str, bool]:
    """``value`` as text that encodes to UTF-8 (what the CLI prints and the results store
    writes): code points UTF-8 cannot hold (lone surrogates such as U+D800) become the escape
    ``\\udXXX``. Returns (text, whether anything was escaped)."""
    try:
        value.encode("utf-8")
        return value, False
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8"), True


def make_storable(res: dict[str, Any]) -> dict[str, Any]:
    """Escape the text fields of a result dict in place (``storable_text``); ``text_escaped``
    says whether any was changed. A text field that is not a string is turned into its repr
    (escaped too): only a forged result can carry one, and the caller rejects those."""
    escaped = bool(res.get("text_escaped"))
    for name in TEXT_FIELDS:
        value = res.get(name)
        if value is None and name == "error":
            continue
        if not isinstance(value, str):
            value = "" if value is None else repr(value)
        res[name], changed = storable_text(value)
        escaped = escaped or changed
    res["text_escaped"] = escaped
    return res


def make_result(outcome: Outcome, backend: str | None, **values: object) -> dict[str, Any]:
    """A complete result dict: every field of ``FIELDS``, defaults for those not given; its
    text is storable (``make_storable``)."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown executor result field(s): {sorted(unknown)}")
    res = ExecResult(outcome=Outcome(outcome).value, backend=backend).to_dict()
    res.update(values)
    return make_storable(res)


def infra_result(error: str, backend: str | None) -> dict[str, Any]:
    """INFRA_ERROR: the sandbox failed, not the program (retried by the pool, never scored)."""
    return make_result(Outcome.INFRA_ERROR, backend, error=error)


def reply_mac(key: str, rid: str, result: dict[str, Any]) -> str:
    """HMAC-SHA256 under the request's one-time key over the id and the canonical result JSON.
    The key is made by the pool for each request and sent only to the supervisor, after the
    previous program ended: no program ever holds the key of a reply it could forge."""
    body = rid.encode() + b"\n" + json.dumps(result, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(bytes.fromhex(key), body, hashlib.sha256).hexdigest()
