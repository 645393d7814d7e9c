"""The per-case results record: one typed value, built by the runner, written as one JSON line by the store.

A record is one (model, arm, seed, case) row: who answered (model, revision, server profile, arm and the hash
of its config), which case (dataset name, path and sha256, case id, row, calculator), what was asked and
answered (the requests, replies, program and executor results), the row's outcome and its scores under every
scorer (``correct`` under the run's own), the gold answer and limits, timings, token counts and transport
facts, and, for arms that use formulas or the library, the formula version in force and, off the benchmark's
version, the "library-derived reference" (never scored as gold). docs/ARCHITECTURE.md describes each field.

The record is typed end to end: its parts are typed values, not dicts. The fixed-shape parts are dataclasses
(``StoredGold``, ``TokenCounts``, the executor's own ``executor.result.ExecResult``); the provenance parts whose
keys depend on the solver or the server (``harness.arms.detail.Detail``, ``LibraryReference``, ``RequestBody``)
are TypedDicts or JSON, so mypy checks every key read of them and a read costs nothing at run time. Outside the
store's reader and writer, nothing reads a record by a string key.

``RECORD_SCHEMA`` is written into every record (``record_schema``) and bumps whenever a field is added,
removed or changes meaning; the committed result sets are regenerated rather than read through shims.
Schema 2 (this one): every record carries every field (``formula_version`` and ``reference`` are None for
arms that use no formulas; ``synthetic`` is False for real rows), and the schema number itself. The typed parts
changed no byte of the JSON form: a schema-2 line reads into a Record and writes back as the same JSON
(tests/run/test_record.py, over every committed set).

``Record.from_dict`` is the one reader of the record shape (the store checks every line it reads or appends
through it: required fields and their types, no unknown field, this schema, the parts' shapes);
``Record.to_dict`` the one writer.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypedDict

from executor.result import ExecResult
from harness.arms.detail import Detail, JSONValue

if TYPE_CHECKING:
    from harness.scoring.scorers import Gold

__all__ = [
    "RECORD_FIELDS",
    "RECORD_SCHEMA",
    "REQUIRED_FIELDS",
    "AnswerValue",
    "Detail",
    "ExecResult",
    "JSONValue",
    "LibraryReference",
    "Record",
    "RecordError",
    "RequestBody",
    "StoredGold",
    "TokenCounts",
]

RECORD_SCHEMA = 2

# A solver's answer as stored: a number, a date string, a (weeks, days) pair, or None.
AnswerValue = None | bool | int | float | str | list[Any]
# One chat-completion request body, as sent (its keys depend on the server: model, messages, temperature,
# max_tokens, seed, and the server's own sampling fields).
RequestBody = dict[str, JSONValue]


class RecordError(ValueError):
    """A line that is not a record of this schema (the message says which fields are wrong)."""


@dataclass(frozen=True, slots=True)
class StoredGold:
    """The case's gold answer and limits as the split states them (text; None where the split has none)."""

    answer: str | None
    lower: str | None
    upper: str | None

    @classmethod
    def from_json(cls, data: object) -> StoredGold:
        if not isinstance(data, dict) or set(data) != _GOLD_KEYS:
            raise RecordError(f"gold is not an object with exactly {', '.join(sorted(_GOLD_KEYS))}")
        return cls(data["answer"], data["lower"], data["upper"])

    def to_json(self) -> dict[str, str | None]:
        return {"answer": self.answer, "lower": self.lower, "upper": self.upper}


_GOLD_KEYS = frozenset(("answer", "lower", "upper"))


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Prompt and completion tokens over the record's requests, as the server counted them (None: no request)."""

    prompt: int | None
    completion: int | None

    @classmethod
    def from_json(cls, data: object) -> TokenCounts:
        if not isinstance(data, dict) or set(data) != _TOKEN_KEYS:
            raise RecordError("tokens is not an object with exactly completion, prompt")
        return cls(data["prompt"], data["completion"])

    def to_json(self) -> dict[str, int | None]:
        return {"prompt": self.prompt, "completion": self.completion}


_TOKEN_KEYS = frozenset(("prompt", "completion"))


class LibraryReference(TypedDict, total=False):
    """The "library-derived reference" of a case at a formula version other than the benchmark's
    (harness.calculators.versions.library_reference, harness.arms.coverage): never scored as gold."""

    label: str
    calculator_id: int
    version: str
    value: JSONValue
    reason: str | None
    function: str
    missing: list[str]
    correct: bool | None
    scorer: str


# executor: one ExecResult for single-program arms, one per sample (None where none ran) for multi-program arms.
ExecutorResults = ExecResult | list[ExecResult | None] | None


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
    request: list[RequestBody] = None  # type: ignore[assignment]  # one entry per model request ([] when none)
    replies: list[str] = None  # type: ignore[assignment]
    program: str | list[str | None] | None = None  # multi-program arms: one per sample
    executor: ExecutorResults = None
    answer: AnswerValue = None
    answer_kind: str | None = None
    reason: str | None = None
    detail: Detail | None = None
    scores: dict[str, bool] | None = None
    gold: StoredGold | None = None
    latency_ms: float | None = None
    tokens: TokenCounts | None = None
    retries: int = 0
    finish_reasons: list[str | None] = None  # type: ignore[assignment]
    truncated: list[bool] = None  # type: ignore[assignment]
    cached: list[bool] = None  # type: ignore[assignment]
    server_model: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    formula_version: str | None = None
    reference: LibraryReference | None = None
    synthetic: bool = False
    record_schema: int = RECORD_SCHEMA

    def __post_init__(self) -> None:
        for name in ("request", "replies", "finish_reasons", "truncated", "cached"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, [])

    @property
    def executor_results(self) -> list[ExecResult]:
        """The executor results the record holds, in order (none for arms that ran no program)."""
        if self.executor is None:
            return []
        if isinstance(self.executor, ExecResult):
            return [self.executor]
        return [r for r in self.executor if r is not None]

    def stated_gold(self) -> Gold:
        """The gold this record states (its `gold` part, output type, calculator and case) as the scorers read it
        (harness.scoring.scorers.Gold); ScoringError when the record states no gold answer."""
        from harness.scoring.scorers import Gold

        stored = self.gold if self.gold is not None else StoredGold(None, None, None)
        return Gold(
            output_type=self.output_type or "",
            gold_answer=stored.answer,  # type: ignore[arg-type]  # None: Gold raises ScoringError naming the case
            lower_limit=stored.lower,
            upper_limit=stored.upper,
            calculator_id=self.calculator_id,
            case_id=self.case_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (one store line): every field, the parts in their JSON form."""
        out = {name: getattr(self, name) for name in RECORD_FIELDS}
        out["gold"] = None if self.gold is None else self.gold.to_json()
        out["tokens"] = None if self.tokens is None else self.tokens.to_json()
        out["executor"] = _executor_json(self.executor)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Record:
        """A record from its JSON form; RecordError naming missing required fields, unknown fields, another
        schema, or a part of the wrong shape. Records written without ``record_schema`` are not of this schema."""
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
        if not data.keys() <= _FIELD_SET:
            raise RecordError(f"unknown record field(s) {', '.join(sorted(data.keys() - _FIELD_SET))}")
        wrong = [
            f"{name} ({type(data[name]).__name__}, not {kind.__name__})"
            for name, kind in REQUIRED_TYPES.items()
            if type(data[name]) is not kind
        ]
        if wrong:
            raise RecordError(f"record field(s) of the wrong type: {', '.join(wrong)}")
        gold, tokens, executor = data.get("gold"), data.get("tokens"), data.get("executor")
        if executor is not None:
            try:
                executor = (
                    [None if r is None else ExecResult.from_dict(r) for r in executor]
                    if isinstance(executor, list)
                    else ExecResult.from_dict(executor)
                )
            except ValueError as exc:
                raise RecordError(f"executor: {exc}") from None
        return cls(
            **{
                **data,
                "gold": None if gold is None else StoredGold.from_json(gold),
                "tokens": None if tokens is None else TokenCounts.from_json(tokens),
                "executor": executor,
            }
        )


def _executor_json(executor: ExecutorResults) -> dict[str, Any] | list[dict[str, Any] | None] | None:
    if isinstance(executor, list):
        return [None if r is None else r.to_dict() for r in executor]
    return None if executor is None else executor.to_dict()


RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Record))
_FIELD_SET = frozenset(RECORD_FIELDS)
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
