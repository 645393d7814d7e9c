"""Drive arms over cases: seeded case order, resume by record key, progress bar, one record per case.

For each (arm, seed) unit: cases are ordered by sha256("{seed}:{case_id}") (the seed fixes the order and
the run identity), keys already in the results file are skipped, the rest are solved with at most
`concurrency` cases in flight over the whole run, scored with every scorer, and appended to the unit's store as they
finish (fsync batched: every STORE_SYNC_EVERY records or STORE_SYNC_INTERVAL_S seconds, and at the end). Which item
takes a free slot next is the run's request order (harness.run.schedule: arm-major or case-major); no record
depends on it. A case whose executor failed as infrastructure is not recorded (a rerun retries it).
A run manifest is written at the start and rewritten at the end with counts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import functools
import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from harness.arms.coverage import arm_cases, formula_version_fields
from harness.arms.solvers import ChatClient, Context, InfraError, ProgramExecutor, Solution
from harness.arms.spec import Arm
from harness.core.outcomes import ROW_OUTCOMES, RowOutcome
from harness.core.units import Convention
from harness.data.conventions import default_convention
from harness.data.dataset import Case, Dataset
from harness.model.client import ModelRejectedRequest
from harness.model.rehearsal.labels import is_synthetic_model
from harness.run.progress import DEFAULT_INTERVAL_S, LineProgress, duration
from harness.run.record import Record, StoredGold, TokenCounts
from harness.run.schedule import CASE_MAJOR, DEFAULT_ORDER, Item, case_order, check_order, phases
from harness.run.store import ResultStore, record_key, results_path
from harness.scoring.scorers import SCORERS, score_reply, score_value

NO_MODEL = "library"  # model field of rows written without a model (Gold-Solve library)
STORE_SYNC_EVERY = 256  # records between fsyncs of a results file ...
STORE_SYNC_INTERVAL_S = 1.0  # ... or seconds, whichever comes first; and always at the end of an (arm, seed)


class ConfigMismatchError(RuntimeError):
    """A results file already holds rows of the same arm under another configuration."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _value_to_json(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


@dataclass
class RunSpec:
    """What a run needs besides the arm and the cases."""

    model: str = NO_MODEL
    model_revision: str | None = None
    server_profile: str | None = None
    scorer: str = "paper"
    out_dir: Path = Path("results")
    concurrency: int = 1
    progress: bool = True
    progress_interval_s: float = DEFAULT_INTERVAL_S  # seconds between timed progress lines (output not a terminal)
    # the unit convention in force: run_session resolves it (--convention, else the dataset's own by content);
    # None (a library caller's RunSpec) means the dataset's own, resolved when the arm runs
    convention: Convention | None = None
    order: str = DEFAULT_ORDER  # which item takes a free slot next (harness.run.schedule)

    def __post_init__(self) -> None:
        check_order(self.order)


@dataclass
class ArmSeedSummary:
    arm: str
    seed: int
    path: str
    total: int
    skipped: int = 0
    written: int = 0
    infra_failed: int = 0
    correct: int = 0
    outcomes: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0  # from this unit's first case taking a slot to its last record
    started_at: str | None = None  # when its first case took a slot (UTC); seeds of one arm overlap
    finished_at: str | None = None


def record_for(
    arm: Arm,
    seed: int,
    case: Case,
    dataset: Dataset,
    spec: RunSpec,
    key: str,
    sol: Solution,
    ctx: Context,
    started: str,
) -> Record:
    """Assemble and score one results record (harness.run.record.Record)."""
    scores, parsed = {}, {}
    if sol.text is not None:
        for s in sorted(SCORERS):
            sc = score_reply(sol.text, case, s)
            scores[s], parsed[s] = bool(sc.correct), sc.parsed
        answer = _value_to_json(parsed[spec.scorer])
        kind = None if answer is None else _kind_of(parsed[spec.scorer])
        outcome = RowOutcome.ANSWERED.value if answer is not None else RowOutcome.UNREADABLE_VALUE.value
    else:
        answer, kind, outcome = sol.answer, sol.answer_kind, sol.outcome
        for s in sorted(SCORERS):
            if answer is None:
                scores[s] = False
                continue
            sc = score_value(answer, kind, case, s)
            scores[s], parsed[s] = bool(sc.correct), sc.parsed
        if outcome == RowOutcome.ANSWERED.value and parsed.get(spec.scorer) is None:
            outcome = "unreadable_value"
    chats = ctx.chats
    prompt_tokens = sum(c.prompt_tokens or 0 for c in chats) if chats else None
    completion_tokens = sum(c.completion_tokens or 0 for c in chats) if chats else None
    return Record(
        key=key,
        model=spec.model,
        model_revision=spec.model_revision,
        server_profile=spec.server_profile,
        arm=arm.name,
        arm_config_hash=_config_hash(arm),
        seed=seed,
        dataset=dataset.name,
        dataset_path=str(dataset.path),
        dataset_sha256=dataset.sha256,
        case_id=case.case_id,
        row_number=case.row_number,
        calculator_id=case.calculator_id,
        calculator_name=case.calculator_name,
        output_type=case.output_type,
        prompt_hash=prompt_hash(arm, ctx),
        request=[c.request for c in chats],
        replies=[c.text for c in chats],
        program=sol.program,
        executor=sol.executor,
        answer=answer,
        answer_kind=kind,
        outcome=outcome,
        reason=sol.reason,
        detail=sol.detail,
        correct=scores.get(spec.scorer, False),
        scorer=spec.scorer,
        scores=scores,
        gold=StoredGold(case.gold_answer, case.lower_limit, case.upper_limit),
        latency_ms=round(sum(c.latency_ms for c in chats), 1) if chats else None,
        tokens=TokenCounts(prompt_tokens, completion_tokens),
        retries=sum(c.retries for c in chats),
        finish_reasons=[c.finish_reason for c in chats],
        truncated=[c.truncated for c in chats],
        cached=[c.cached for c in chats],
        server_model=next((c.server_model for c in chats if c.server_model), None),
        started_at=started,
        finished_at=_now(),
        **formula_version_fields(arm, case, answer, kind, spec.scorer, spec.convention),
        synthetic=_synthetic(spec, chats),
    )


def prompt_hash(arm: Arm, ctx: Context) -> str | None:
    """sha256 of the arm's first request for the case (the prompt the solver built; built here only when the
    solver answered without sending it, e.g. a router's library route); None when no request was sent."""
    if not ctx.chats or arm.prompt is None:
        return None
    messages = ctx.prompt().messages
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest() if messages else None


def _synthetic(spec: RunSpec, chats: Iterable[Any]) -> bool:
    """Rows fed by the rehearsal server (harness.model.rehearsal.labels) are marked; real rows keep their fields."""
    return is_synthetic_model(spec.model) or any(is_synthetic_model(c.server_model) for c in chats)


def _kind_of(value: Any) -> str:
    if isinstance(value, _dt.date):
        return "date"
    if isinstance(value, (tuple, list)):
        return "weeks_days"
    return "number"


@functools.cache
def _config_hash(arm: Arm) -> str:
    """arm.config_hash(), once per arm (it hashes the arm's config and template texts; arms are frozen)."""
    return arm.config_hash()


def make_key(arm: Arm, seed: int, case: Case, dataset: Dataset, spec: RunSpec) -> str:
    return record_key(
        model=spec.model,
        model_revision=spec.model_revision,
        server_profile=spec.server_profile,
        arm=arm.name,
        arm_config_hash=_config_hash(arm),
        seed=int(seed),
        dataset_sha256=dataset.sha256,
        case_id=case.case_id,
    )


def model_spec(arm: Arm, spec: RunSpec) -> RunSpec:
    """The settings an arm's records are made under: model-free arms (Gold-Solve) are stored under the `library`
    model whatever server is given."""
    return (
        spec if arm.needs_model else dataclasses.replace(spec, model=NO_MODEL, model_revision=None, server_profile=None)
    )


def unit_todo(arm: Arm, seed: int, cases: Iterable[Case], dataset: Dataset, spec: RunSpec) -> list[tuple[Case, str]]:
    """One (arm, seed) unit's cases in the seed's order, each with its record key."""
    return [(c, make_key(arm, seed, c, dataset, spec)) for c in case_order(cases, seed)]


@dataclass(frozen=True)
class Unit:
    """One (arm, seed) unit of a run: the arm, the seed, the settings its records are made under (model-free arms:
    the `library` model), and its items, (case, record key) in the seed's case order. Each unit writes one results
    file."""

    arm: Arm
    seed: int
    spec: RunSpec
    todo: tuple[tuple[Case, str], ...]


def planned_units(
    arms: list[Arm],
    dataset: Dataset,
    seeds: list[int],
    spec: RunSpec,
    cases: list[Case] | None = None,
    all_cases: bool = False,
) -> list[Unit]:
    """Every (arm, seed) unit a run makes, arm by arm, seed by seed. run_arms runs these units;
    harness.run.request.planned_keys counts them."""
    base = list(cases if cases is not None else dataset.cases)
    out = []
    for arm in arms:
        unit_spec = model_spec(arm, spec)
        selected = arm_cases(arm, base, all_cases)
        out += [Unit(arm, seed, unit_spec, tuple(unit_todo(arm, seed, selected, dataset, unit_spec))) for seed in seeds]
    return out


class _UnitRun:
    """One (arm, seed) unit while it runs: its results store (refused if it holds the arm under another
    configuration), the items still to do, its summary; closed when its last item is done."""

    def __init__(
        self,
        arm: Arm,
        seed: int,
        todo: list[tuple[Case, str]],
        dataset: Dataset,
        spec: RunSpec,
        progress: Progress | LineProgress | None,
    ) -> None:
        if spec.convention is None:  # the dataset's own convention, as `harness run` would choose it
            spec = dataclasses.replace(spec, convention=default_convention(dataset).convention)
        self.arm, self.seed, self.todo, self.dataset, self.spec, self.progress = (
            arm,
            seed,
            todo,
            dataset,
            spec,
            progress,
        )
        path = results_path(spec.out_dir, spec.model, arm.name, seed)
        # fsync batched: a killed harness loses nothing it wrote; a machine crash at most the last second,
        # which a resumed run redoes (harness.run.store)
        self.store = ResultStore(path, sync_every=STORE_SYNC_EVERY, sync_interval_s=STORE_SYNC_INTERVAL_S)
        other = sorted({r.arm_config_hash for r in self.store.records if r.arm == arm.name} - {arm.config_hash()})
        if other:
            self.store.close()
            raise ConfigMismatchError(
                f"{path} holds rows of arm {arm.name} run with another configuration (arm_config_hash "
                f"{str(other[0])[:12]}..., this run {arm.config_hash()[:12]}...; e.g. other formula versions or "
                f"router k/m/temperature): one configuration per results file, use another --out"
            )
        self.summary = ArmSeedSummary(arm.name, seed, str(path), total=len(todo))
        self.pending = {k for _, k in todo if k not in self.store.done_keys}
        self.summary.skipped = len(todo) - len(self.pending)
        self.task_id = (
            progress.add_task(f"{arm.name} seed {seed}", total=len(todo), completed=self.summary.skipped)
            if progress is not None
            else None
        )
        self.first_slot: float | None = None
        self.closed = False

    async def solve(
        self, case: Case, key: str, *, client: ChatClient | None, executor: ProgramExecutor | None, one_shot: list[Case]
    ) -> None:
        """One item: solve it, score it, append its record (an executor infrastructure failure: no record)."""
        arm, seed, spec = self.arm, self.seed, self.spec
        if self.first_slot is None:
            self.first_slot = time.perf_counter()
            self.summary.started_at = _now()
        ctx = Context(
            case=case,
            arm=arm,
            seed=seed,
            client=client,
            executor=executor,
            one_shot=one_shot or [],
            dataset=self.dataset,
            convention=spec.convention,
        )
        started = _now()
        try:
            sol = await arm.solver.solve(ctx)
        except InfraError:
            sol = None
        except ModelRejectedRequest as exc:  # the server refused this case's request: its outcome, not an abort
            print(
                f"{arm.name} seed {seed} case {case.case_id}: request rejected by the model server "
                f"(HTTP {exc.status}), recorded as {RowOutcome.REQUEST_REJECTED.value}: {str(exc)[:300]}",
                file=sys.stderr,
            )
            sol = Solution(
                outcome=RowOutcome.REQUEST_REJECTED.value,
                reason=str(exc)[:1000],
                detail={"rejected_status": exc.status, "requests_answered_before": len(ctx.chats)},
            )
        if sol is None:
            self.summary.infra_failed += 1
        else:
            self.store.append(record_for(arm, seed, case, self.dataset, spec, key, sol, ctx, started))
            self.summary.written += 1
        self.pending.discard(key)
        if self.progress is not None:
            self.progress.advance(self.task_id)

    def close(self) -> ArmSeedSummary:
        if self.closed:
            return self.summary
        self.closed = True
        self.store.close()
        keys = {k for _, k in self.todo}
        for rec in self.store.records:
            if rec.key in keys:
                self.summary.outcomes[rec.outcome] = self.summary.outcomes.get(rec.outcome, 0) + 1
                self.summary.correct += rec.correct
        self.summary.wall_s = round(time.perf_counter() - self.first_slot, 2) if self.first_slot else 0.0
        self.summary.finished_at = _now() if self.first_slot else None
        return self.summary


async def _drain(
    items: list[Item],
    runs: dict[int, _UnitRun],
    concurrency: int,
    *,
    client: ChatClient | None,
    executor: ProgramExecutor | None,
    one_shot: list[Case],
    on_unit_done: Callable[[int], None] | None = None,
) -> None:
    """Solve `items` in their order with at most `concurrency` in flight: each free slot takes the next item. A unit
    is closed (and `on_unit_done(index)` called) as soon as its last item is done. An item's own error cancels the
    rest and is raised as itself."""
    todo = [it for it in items if it.key in runs[it.unit].pending]
    queue = iter(todo)
    per_unit = Counter(it.unit for it in todo)  # one pass over the items (a paper run has ~100k per model)
    left = {i: per_unit[i] for i in runs}
    for i in [i for i, n in left.items() if n == 0]:
        runs[i].close()
        if on_unit_done is not None:
            on_unit_done(i)

    async def worker() -> None:
        for it in queue:
            await runs[it.unit].solve(it.case, it.key, client=client, executor=executor, one_shot=one_shot)
            left[it.unit] -= 1
            if left[it.unit] == 0:
                runs[it.unit].close()
                if on_unit_done is not None:
                    on_unit_done(it.unit)

    try:
        async with asyncio.TaskGroup() as group:  # one item failing cancels the others
            for _ in range(max(1, concurrency)):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:  # the item's own error (ConfigMismatchError, ...)
        raise group_error.exceptions[0] from None
    finally:
        for run in runs.values():
            run.close()


def make_progress(
    enabled: bool, interval_s: float = DEFAULT_INTERVAL_S, activity: Callable[[], Any] | None = None
) -> Progress | LineProgress | None:
    """A rich progress bar on a terminal; progress lines on a timer (harness.run.progress) when the output goes
    to a file or a pipe, where a bar would show nothing until it stops. `activity` returns the model client's
    counters (requests in flight, tokens received) for those lines."""
    if not enabled:
        return None
    if not Console().is_terminal:
        return LineProgress(interval_s=interval_s, activity=activity)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=False,
    )


def announce(progress: Progress | LineProgress | None, text: str) -> None:
    """An arm's start or end line, on whichever progress display the run has (none: nothing)."""
    if isinstance(progress, LineProgress):
        progress.note(text)
    elif progress is not None:
        progress.console.print(text)


def arm_start_line(arm: Arm, units: list[Unit], case_major: bool = False) -> str:
    cases = {k for unit in units for _, k in unit.todo}
    seeds = [unit.seed for unit in units]
    return (
        f"arm {arm.name}: starting, {len(cases):,} case run(s) over seed(s) {', '.join(map(str, seeds))}"
        f"{' (asks the model)' if arm.needs_model else ' (no model)'}"
        f"{', case by case with the other arms' if case_major else ''}"
    )


def arm_end_line(arm: Arm, summaries: list[ArmSeedSummary], wall_s: float) -> str:
    n = sum(s.total for s in summaries)
    correct = sum(s.correct for s in summaries)
    outcomes: dict[str, int] = {}
    for s in summaries:
        for k, v in s.outcomes.items():
            outcomes[k] = outcomes.get(k, 0) + v
    what = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1]))
    skipped = sum(s.skipped for s in summaries)
    resumed = f", {skipped} resumed" if skipped else ""
    return f"arm {arm.name}: done in {duration(wall_s)}, {correct}/{n} correct{resumed} ({what or 'no records'})"


async def run_arms(
    arms: list[Arm],
    dataset: Dataset,
    seeds: list[int],
    spec: RunSpec,
    *,
    client: ChatClient | None = None,
    executor: ProgramExecutor | None = None,
    one_shot: list[Case] | None = None,
    cases: list[Case] | None = None,
    all_cases: bool = False,
) -> list[ArmSeedSummary]:
    """Every arm at every seed. Vote/repair levers run on the covered cases unless `all_cases`.

    The run's items go out in `spec.order` (harness.run.schedule) over `spec.concurrency` case slots, first come
    first served: arm-major runs the arms one after another, the seeds of one arm together (seed 42's cases queue
    first, so the next seed's cases fill the slots a seed's last, slow cases leave idle); case-major sends every arm
    and seed of a case together. Each seed still writes its own results file, and records do not depend on the
    order they finish in. Summaries come in the units' order (arm, then seed) whatever the request order."""
    plan = planned_units(arms, dataset, seeds, spec, cases, all_cases)
    summaries: dict[int, ArmSeedSummary] = {}
    progress = make_progress(spec.progress, spec.progress_interval_s, getattr(client, "activity", None))
    if isinstance(progress, LineProgress):
        progress.plan(sum(len(unit.todo) for unit in plan))
    if progress is not None:
        progress.start()
    try:
        for phase in phases(plan, spec.order):
            by_arm: dict[str, list[int]] = {}
            for i in phase.units:
                by_arm.setdefault(plan[i].arm.name, []).append(i)
            started = time.perf_counter()
            runs: dict[int, _UnitRun] = {}
            try:
                for indices in by_arm.values():
                    arm = plan[indices[0]].arm
                    announce(
                        progress, arm_start_line(arm, [plan[i] for i in indices], case_major=spec.order == CASE_MAJOR)
                    )
                    for i in indices:
                        unit = plan[i]
                        runs[i] = _UnitRun(arm, unit.seed, list(unit.todo), dataset, unit.spec, progress)
            except BaseException:
                for run in runs.values():
                    run.close()
                raise

            def unit_done(
                i: int,
                runs: dict[int, _UnitRun] = runs,
                by_arm: dict[str, list[int]] = by_arm,
                started: float = started,
            ) -> None:
                summaries[i] = runs[i].summary
                indices = by_arm[plan[i].arm.name]
                if all(runs[j].closed for j in indices):
                    announce(
                        progress,
                        arm_end_line(plan[i].arm, [runs[j].summary for j in indices], time.perf_counter() - started),
                    )

            await _drain(
                list(phase.items),
                runs,
                spec.concurrency,
                client=client,
                executor=executor,
                one_shot=one_shot,
                on_unit_done=unit_done,
            )
    finally:
        if progress is not None:
            progress.stop()
    return [summaries[i] for i in sorted(summaries)]


def summary_markdown(records: list[Record]) -> str:
    """Markdown table per (model, arm): n, accuracy, outcome counts, mean latency and tokens per case."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        groups[(r.model, r.arm)].append(r)
    cols = list(ROW_OUTCOMES)
    lines = [
        "| model | arm | n | correct | accuracy % | "
        + " | ".join(cols)
        + " | mean latency s | mean completion tokens |",
        "|" + "---|" * (len(cols) + 7),
    ]
    for (model, arm), rs in sorted(groups.items()):
        n = len(rs)
        ok = sum(r.correct for r in rs)
        counts = [sum(r.outcome == c for r in rs) for c in cols]
        lat = [r.latency_ms for r in rs if r.latency_ms is not None]
        toks = [r.tokens.completion for r in rs if r.tokens is not None and r.tokens.completion is not None]
        lines.append(
            f"| {model} | {arm} | {n} | {ok} | {100.0 * ok / n:.1f} | "
            + " | ".join(map(str, counts))
            + f" | {(sum(lat) / len(lat) / 1000.0) if lat else 0:.1f} | {(sum(toks) / len(toks)) if toks else 0:.0f} |"
        )
    return "\n".join(lines) + "\n"
