"""One run session: select the cases, build the model client and the executor, run arms, write the run manifest.

The library half of `harness run`, shared with the reproduce pipeline; the CLI turns its errors into usage errors.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import signal
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from executor.api import Executor
from harness.arms.prompts import template_hashes
from harness.arms.solvers import uses_convention
from harness.arms.spec import Arm
from harness.data.conventions import ConventionChoice
from harness.data.dataset import Dataset, load_dataset
from harness.model.client import ModelClient
from harness.model.endpoint import endpoint_info
from harness.model.preflight import listed_models
from harness.model.rehearsal.labels import is_synthetic_model
from harness.run.case_selection import spread_across_calculators
from harness.run.manifest import (
    ClientInfo,
    ConventionRef,
    ExecutorInfo,
    ModelRef,
    RunManifest,
    arm_configs,
    dataset_ref,
    origin,
    read_manifests,
    updated,
    write_manifest,
)
from harness.run.request import RunRequest
from harness.run.runner import NO_MODEL, run_arms
from harness.run.store import StoreError, TornLineWarning, iter_result_files, read_result_file


@contextmanager
def sigterm_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM behaves like Ctrl-C inside the block (a `finally` runs, the caller says what was kept): it goes to
    the Ctrl-C handler in force, so inside asyncio.run the main task is cancelled as on Ctrl-C rather than a
    KeyboardInterrupt raised inside whichever task was running. Yields the list of signals received."""
    received: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        on_ctrl_c = signal.getsignal(signal.SIGINT)
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt(f"signal {signum}")

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield received
        return
    old_int = signal.getsignal(signal.SIGINT)
    if not callable(old_int):  # Ctrl-C ignored (a background job of a script): asyncio then leaves SIGINT alone
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)


def records_kept(out_dir: str | Path, arms: list[str], seeds: Sequence[int]) -> tuple[int, int]:
    """(records, results files) of these arms and seeds under ``out_dir``, read through the store's reader."""
    wanted = {f"seed{s}" for s in seeds}
    files = [p for p in iter_result_files(out_dir, arms) if p.stem in wanted]
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)  # a line torn by the interrupt is redone on resume
        for p in files:
            try:
                n += len(read_result_file(p))
            except StoreError:
                pass
    return n, len(files)


def interrupted_line(
    out_dir: str | Path, arms: list[str], seeds: list[int], signals: list[int], resume_command: str
) -> str:
    """The closing line of an interrupted run: what stopped it (a signal, else Ctrl-C), the records kept, and the
    command that resumes."""
    why = f"signal {signals[0]}" if signals else "Ctrl-C"
    n, files = records_kept(out_dir, arms, seeds)
    return (
        f"interrupted ({why}): {n:,} record(s) kept in {files} results file(s) under {out_dir}; "
        f"resume with: {resume_command}"
    )


class CaseSelectionError(ValueError):
    """The case filters select nothing or name unknown case ids; `param_hint` names the option at fault."""

    def __init__(self, message: str, param_hint: str | None = None):
        super().__init__(message)
        self.param_hint = param_hint


class RunSetupError(RuntimeError):
    """A run cannot start (e.g. the model server lists no model)."""


def check_convention_consistent(
    out_dir: str | Path, dataset: Dataset, choice: ConventionChoice, arms: Sequence[Arm]
) -> None:
    """Refuse to resume into ``out_dir`` under another unit convention than its earlier runs on the same dataset
    used, when both runs hold arms whose answer depends on it. Raises RunSetupError naming the manifest and both
    conventions."""
    if not any(a.solver.uses_convention for a in arms):
        return
    for found in read_manifests(out_dir, kind="run"):
        path, m = found.path, found.manifest
        if not isinstance(m, RunManifest):
            continue
        if m.dataset.sha256 != dataset.sha256 or not any(uses_convention(c.solver) for c in m.arms.values()):
            continue
        prev = m.convention.name
        if prev != choice.name:
            raise RunSetupError(
                f"{out_dir} holds results made under unit convention {prev!r} ({path.name}); this run would use "
                f"{choice.name!r} ({choice.reason}). A result set cannot mix conventions: give --convention "
                f"{prev} to resume it, or another --out"
            )


def pick_cases(
    dataset: Dataset,
    case_ids: tuple[str, ...],
    calculators: tuple[int, ...],
    limit: int | None,
    shortest: bool,
    spread: bool = False,
) -> list[Any]:
    """The cases a run covers: named case ids, then calculator filter, shortest notes first, (with `spread`)
    one case per calculator round-robin over categories (harness.run.case_selection), at most `limit`."""
    cases = list(dataset.cases)
    if case_ids:
        known = dataset.by_case_id()
        missing = [c for c in case_ids if c not in known]
        if missing:
            raise CaseSelectionError(f"case id(s) not in {dataset.name}: {', '.join(missing)}", param_hint="--case")
        cases = [known[c] for c in case_ids]
    if calculators:
        cases = [c for c in cases if c.calculator_id in set(calculators)]
    if shortest:
        cases = sorted(cases, key=lambda c: (len(c.note.split()), c.case_id))
    if spread:
        cases = spread_across_calculators(cases)
    if limit is not None:
        cases = cases[:limit]
    if not cases:
        raise CaseSelectionError("no cases selected")
    return cases


async def run_session(request: RunRequest) -> RunManifest:
    """Run a request's arms over its cases at its seeds (the building block of `harness run`, the reproduce pipeline
    and the rehearsal): builds the model client and the executor, writes the run manifest before and after, and
    returns it as written at the end (its `summaries`: one per arm and seed). The
    unit convention was resolved when the request was built (RunRequest.build); it is recorded in the manifest, and
    a run into a directory made under another convention is refused (RunSetupError)."""
    arms, dataset, cases, seeds = list(request.arms), request.dataset, list(request.cases), list(request.seeds)
    choice, out_dir, target = request.convention, request.out_dir, request.target
    base_url, model, model_revision, server_profile = (
        target.base_url,
        target.model,
        target.revision,
        target.server_profile,
    )
    timeout, concurrency, scorer, server = target.timeout, request.concurrency, request.scorer, target.server_info
    api_key_env = target.api_key_env
    check_convention_consistent(out_dir, dataset, choice, arms)

    client = None
    model_id = model
    executor = None
    ex_cm = None
    try:
        # Local preflight before the server's: the executor backend, then the model server; nothing is
        # written until both answer.
        if any(a.needs_executor for a in arms):
            ex_cm = Executor(backend=request.executor_backend)
            executor = ex_cm.__enter__()
        if any(a.needs_model for a in arms):
            if base_url is None:
                raise RunSetupError("arms that ask a model need its server: give --base-url")
            entries = await asyncio.to_thread(listed_models, base_url, min(timeout, 60.0), api_key_env=api_key_env)
            ids = [m["id"] for m in entries]
            if model_id is None:
                if not ids:
                    raise RunSetupError(f"{base_url}/models lists no model; give --model")
                model_id = ids[0]
            client = ModelClient(
                base_url,
                model_id,
                profile=server_profile,
                model_revision=model_revision,
                concurrency=concurrency,
                timeout=timeout,
                cache_dir=target.cache_dir,
                api_key_env=api_key_env,
            )
            if server is None:  # a server the kit did not start: what it says about itself (GET /version ...)
                server = await asyncio.to_thread(
                    lambda: endpoint_info(base_url, model_id, server_profile, entries, api_key_env=api_key_env)
                )
        one_shot = []
        if any(a.example for a in arms):
            one_shot = load_dataset("one-shot").cases
        spec = request.spec(
            model_id or NO_MODEL, server_profile=server_profile if client else None, revision=model_revision
        )
        run_id = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        manifest = RunManifest(
            run_id=run_id,
            origin=origin(),
            dataset=dataset_ref(dataset),
            arms=arm_configs(arms),
            arm_config_hashes={a.name: a.config_hash() for a in arms},
            prompts=template_hashes(),
            seeds=tuple(seeds),
            scorer=scorer,
            case_ids=tuple(c.case_id for c in cases),
            model=ModelRef(spec.model, model_revision, spec.server_profile),
            client=ClientInfo.of(client.describe()) if client else None,
            server=server,
            executor=ExecutorInfo.of(executor.describe()) if executor is not None else None,
            convention=ConventionRef.of(choice),
            order=request.order,
            # rehearsal-server output: never a model result
            synthetic=is_synthetic_model(spec.model) or bool(server is not None and server.synthetic),
        )
        write_manifest(out_dir, manifest)
        summaries = await run_arms(
            arms,
            dataset,
            seeds,
            spec,
            client=client,
            executor=executor,
            one_shot=one_shot,
            cases=cases,
            all_cases=request.all_cases,
        )
        manifest = updated(
            manifest,
            summaries=tuple(summaries),
            requests_sent=client.sent if client else 0,
            cache_hits=client.cache_hits if client else 0,
        )
        write_manifest(out_dir, manifest)
        return manifest
    finally:
        if ex_cm is not None:
            ex_cm.__exit__(None, None, None)
        if client is not None:
            await client.aclose()
