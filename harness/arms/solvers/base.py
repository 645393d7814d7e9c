"""The solver protocol: one `Solver` object per solver kind, and what every solver shares.

A solver kind (in the spirit of inspect_ai's Solver) says, in one place, everything the harness needs to know
about it:

    name                      the solver kind's name (stays in the arm's config and its hash)
    config()                  the instance's own parameters (router m, repair cap, ...), as stored in the arm's config
    templates(arm)            template names its follow-up requests use (repair turn, extraction)
    async solve(ctx)          one (arm, seed, case) -> Solution; it never scores
    request_bounds(arm, case) (min, max) chat requests the case costs (the reproduce plan, shard sizes)
    completion_tokens(arm)    completion tokens per request assumed when no measured results exist
    scoring                   Scoring.REPLY (the last reply's text is scored) or Scoring.VALUE (the value
                              the solver returned is scored); `rescore(record, case, scorer)` follows it
    uses_library              whether a formula version applies (the solver calls the library)
    uses_convention           whether its answer depends on the unit convention (it converts gold variables
                              or a model's extraction through harness.core.units); reads_gold_variables(arm)
    agreement_options         whether --router-k/-m/-temperature apply (`option_changes`)

An arm holds a configured instance (`Arm.solver`), as inspect_ai's `@solver def prompt_cot(template)` holds its
template; the kinds are registered by name in `harness.arms.solvers.SOLVERS`. No code outside the solver modules
switches on a solver name.

Outcomes: harness.core.outcomes.RowOutcome. Reply-scored solvers leave `Solution.outcome` None: the runner
sets answered / unreadable_value from the paper parser. An executor INFRA_ERROR (after the executor's own
retries) raises InfraError: the case is not recorded, so a resumed run retries it.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import enum
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from executor.api import ExecResult
from executor.outcomes import Outcome, taxonomy
from harness.arms.detail import Detail
from harness.core.outcomes import ROW_OUTCOMES, RowOutcome
from harness.core.units import EXACT, Convention
from harness.data.dataset import Case, Dataset
from harness.model.client import ChatResult, derive_seed, prompt_headers
from harness.scoring.gold import ScoringError
from harness.scoring.scorers import Gold, score_reply, score_value

if TYPE_CHECKING:
    from harness.arms.spec import Arm, Prompt

ANSWERED, ABSTAINED, NO_PROGRAM = RowOutcome.ANSWERED.value, RowOutcome.ABSTAINED.value, RowOutcome.NO_PROGRAM.value
UNREADABLE_VALUE = RowOutcome.UNREADABLE_VALUE.value
TAXONOMY = ROW_OUTCOMES

Answer = int | float | str | list[int]  # JSON form of an answer: number, "YYYY-MM-DD", [weeks, days]
DEFAULT_COMPLETION_TOKENS = 300  # a program's typical length; the reply and extraction solvers state their own


class InfraError(RuntimeError):
    """The executor failed as infrastructure (not the program): retry the case later, never score it."""


class ChatClient(Protocol):
    """What a solver needs of the model client (harness.model.client.ModelClient, or a test's client)."""

    async def chat(
        self,
        messages: list[dict],
        *,
        temperature: float,
        max_tokens: int,
        sample_index: int = 0,
        seed: int | None = None,
        run_seed: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> ChatResult: ...


class ProgramExecutor(Protocol):
    """What a solver needs of the executor (executor.api.Executor): run one program, never raise for its faults."""

    def run(self, source: str) -> ExecResult: ...


@dataclass
class Solution:
    outcome: str | None = None  # a RowOutcome value; None: decided by the scorer (reply-scored)
    text: str | None = None  # the reply to score with score_reply, for reply-scored solvers
    answer: Answer | None = None  # JSON value: number, "YYYY-MM-DD", [weeks, days]
    answer_kind: str | None = None  # "number" | "date" | "weeks_days"
    program: str | list[str | None] | None = None  # a list for multi-program arms
    executor: ExecResult | list[ExecResult | None] | None = None  # a list for multi-program arms
    reason: str | None = None  # why it abstained / failed, for reading
    detail: Detail = field(default_factory=lambda: Detail())  # harness.arms.detail: what each solver kind adds


@dataclass
class Context:
    """Everything a solver may use for one (arm, seed, case)."""

    case: Case
    arm: Arm
    seed: int
    client: ChatClient | None = None
    executor: ProgramExecutor | None = None
    one_shot: list[Case] = field(default_factory=list)
    dataset: Dataset | None = None
    chats: list[ChatResult] = field(default_factory=list)
    convention: Convention = EXACT  # the unit convention in force (harness.data.conventions.resolve_convention)
    _prompt: Prompt | None = field(default=None, init=False, repr=False)

    def prompt(self) -> Prompt:
        """The arm's first request for this case, built once (the solver sends it; the record hashes it)."""
        if self._prompt is None:
            self._prompt = self.arm.build(self)
        return self._prompt

    async def chat(
        self, prompt: Prompt, *, temperature: float, max_tokens: int | None, sample_index: int = 0
    ) -> ChatResult:
        """Send a prompt; its family and reply form go with it as headers (harness.model.client.prompt_headers)."""
        if self.client is None:
            raise RuntimeError(f"arm {self.arm.name} needs a model: give --base-url/--model")
        if max_tokens is None:
            raise RuntimeError(f"arm {self.arm.name} sends a prompt without an output-token cap (Decoding.max_tokens)")
        seed = derive_seed(self.seed, self.case.case_id, self.arm.name, sample_index) if temperature > 0 else None
        result = await self.client.chat(
            prompt.messages,
            temperature=temperature,
            max_tokens=max_tokens,
            sample_index=sample_index,
            seed=seed,
            run_seed=self.seed,
            headers=prompt_headers(prompt.family.name, prompt.family.reply_form),
        )
        self.chats.append(result)
        return result

    async def execute(self, program: str) -> ExecResult:
        """The executor's result for one program; InfraError when the sandbox itself failed (never scored)."""
        if self.executor is None:
            raise RuntimeError(f"arm {self.arm.name} needs the executor")
        result: ExecResult = await asyncio.to_thread(self.executor.run, program)
        if result.outcome == Outcome.INFRA_ERROR:
            raise InfraError(f"executor infrastructure failure on case {self.case.case_id}: {result.error}")
        return result


class Scoring(enum.StrEnum):
    """How a solver's rows are scored, at run time and when `harness score`/`verify` rescore them."""

    REPLY = "reply"  # the last reply's text, with score_reply
    VALUE = "value"  # the stored answer and kind, with score_value


class Rescorable(Protocol):
    """What rescoring reads of a stored record (harness.run.record.Record has these; the record sits above the
    solvers): its replies, and its answer with the answer's kind."""

    @property
    def replies(self) -> list[str]: ...
    @property
    def answer(self) -> Any: ...
    @property
    def answer_kind(self) -> str | None: ...


def rescore_value(record: Rescorable, case: Case | Gold, scorer: str) -> bool:
    """A value-scored record's verdict: its stored answer and kind under `scorer`; no answer scores wrong."""
    if record.answer is None:
        return False
    if record.answer_kind is None:
        raise ScoringError(f"a stored answer without its kind: {record.answer!r}")
    return bool(score_value(record.answer, record.answer_kind, case, scorer).correct)


class Solver(ABC):
    """One solver kind (module docstring). Subclasses set `name` and implement `solve` and `request_bounds`."""

    name: ClassVar[str]
    scoring: ClassVar[Scoring] = Scoring.VALUE
    completion_assumption: ClassVar[int] = DEFAULT_COMPLETION_TOKENS
    uses_library: ClassVar[bool] = False
    uses_convention: ClassVar[bool] = False
    agreement_options: ClassVar[bool] = False

    @abstractmethod
    async def solve(self, ctx: Context) -> Solution:
        """Solve one case; never score (the runner scores with every scorer)."""

    @abstractmethod
    def request_bounds(self, arm: Arm, case: Case) -> tuple[int, int]:
        """(min, max) chat requests one case costs under `arm`, from the arm's definition and the case."""

    def completion_tokens(self, arm: Arm) -> int:
        """Completion tokens per request assumed for the plan when no measured results exist (a stated
        assumption: typical reply lengths of instruction models on these prompts), capped at the arm's cap."""
        return min(self.completion_assumption, arm.max_tokens or 10**9)

    def rescore(self, record: Rescorable, case: Case | Gold, scorer: str) -> bool:
        """A stored record's verdict under `scorer`, from what the record holds (the reply or the value); `case`
        may be the case's parsed gold (harness.scoring.scorers.Gold), as `harness verify` passes it."""
        if self.scoring is Scoring.REPLY and record.replies:
            return bool(score_reply(record.replies[-1], case, scorer).correct)
        return rescore_value(record, case, scorer)

    def reads_gold_variables(self, arm: Arm) -> bool:
        """Whether the arm converts the benchmark's gold variables (then the dataset's own convention applies)."""
        return False

    def option_changes(
        self, arm: Arm, *, k: int | None = None, m: int | None = None, temperature: float | None = None
    ) -> dict:
        """The Arm fields --router-k/--router-m/--router-temperature change; ValueError for a solver they do not
        apply to (all but the router)."""
        if k is not None or m is not None or temperature is not None:
            raise ValueError(
                f"--router-k/--router-m/--router-temperature apply to the router arms only, not {arm.name}"
            )
        return {}

    def config(self) -> dict:
        """This instance's parameters as stored in the arm's config (none by default)."""
        return {}

    def templates(self, arm: Arm) -> tuple[str, ...]:
        """Template names of the follow-up requests this solver sends (none by default)."""
        return ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.config() == self.config()

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.config().items()))))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"<solver {self.name}{'(' + params + ')' if params else ''}>"


def samples_of(arm: Arm) -> int:
    return max(1, arm.samples)


# --- values ------------------------------------------------------------------------------------------


def to_json_value(value: Any) -> tuple[Any, str]:
    """A Python answer (number, date, (weeks, days)) as (JSON value, kind); ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not an answer")
    if isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            raise ValueError(f"non-finite number {value!r}")
        return value, "number"
    if isinstance(value, _dt.datetime):
        return value.date().isoformat(), "date"
    if isinstance(value, _dt.date):
        return value.isoformat(), "date"
    if (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return [value[0], value[1]], "weeks_days"
    raise ValueError(f"not an answer value: {value!r}")


def vote_key(answer: Any) -> str:
    """Equality used by votes: numbers compared at 10 significant digits; other values exactly."""
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return f"n:{float(answer):.10g}"
    return f"v:{answer!r}"


def majority(values: list[Any]) -> tuple[Any, int] | None:
    """The most frequent value (by vote_key), ties to the one seen first; None for an empty list."""
    if not values:
        return None
    counts: dict[str, int] = {}
    first: dict[str, Any] = {}
    for v in values:
        k = vote_key(v)
        counts[k] = counts.get(k, 0) + 1
        first.setdefault(k, v)
    best = max(counts, key=lambda k: (counts[k], -list(first).index(k)))
    return first[best], counts[best]


def exec_outcome(result: ExecResult) -> str:
    """The row outcome of an executor result (executor.outcomes.taxonomy)."""
    return taxonomy(result.outcome)


def answer_of(result: ExecResult | None) -> tuple[Any, str | None]:
    return (result.answer, result.kind) if result is not None else (None, None)


def error_of(result: ExecResult | None) -> str | None:
    """The executor's error message of a result (None without a result: no program ran)."""
    return result.error if result is not None else None


def jsonable(v: Any) -> Any:
    if v is None:
        return None
    try:
        return to_json_value(v)[0]
    except ValueError:
        return repr(v)


def value_solution(value: Any, detail: Detail) -> Solution:
    try:
        answer, kind = to_json_value(value)
    except ValueError as exc:
        return Solution(outcome=UNREADABLE_VALUE, reason=str(exc), detail=detail)
    return Solution(outcome=ANSWERED, answer=answer, answer_kind=kind, detail=detail)
