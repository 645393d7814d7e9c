"""`make reproduce`: the paper's runs through one pipeline, whatever serves the model.

    plan = build_plan(cfg)            # the dry run (harness.reproduce.plan)
    run_pipeline(cfg)                 # preflight is the caller's (harness serve reproduce)

The pipeline, for each chosen model: `launcher.start()`, wait until `/v1/models` lists the model,
run every arm x seed through `harness.run.session.run_session` (the same client/executor/runner building blocks
as `harness run`; the results store resumes by record key, so an interrupted run continues where it
stopped), stop the server (always: also on Ctrl-C and SIGTERM), then write the reproduction manifest
(launcher description: image digest, model revision, server flags, the sampling defaults the server
logged, GPU, vLLM version; the executor's backend, image digest and policy hash from the run
manifests), statistics, tables, figures, the report (harness.analysis.report.write_outputs), and a sha256
manifest of the run's directory.

The only branch between the H100 path, CI, rehearsals and an external server is the launcher kind
(harness.model.launchers): vllm, vllm-cpu, llama-cpp, rehearsal (a scripted fake; synthetic records) or external.
Model-free arms (Gold-Solve) need no server: they run once, stored under the `library` model, which
the statistics share across models.
"""
from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
from pathlib import Path
from typing import Callable

from harness.analysis.report import write_outputs
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS
from harness.analysis.stats_payload import stats_payload
from harness.analysis.results_analysis import analyse
from harness.arms.spec import Arm
from harness.core.canonical_json import json_file_text
from harness.data.dataset import DatasetError, load_dataset
from harness.model.rehearsal.labels import is_synthetic_model
from harness.core.host import runsc_record
from harness.model.server_info import ServerInfo
from harness.reproduce.config import (ReproduceConfig, ReproduceError, check_same_settings, config_dict,
                                      launch_settings, model_arm_names, resolve_arms, select_cases)
from harness.run.manifest import (Block, ConventionRef, ReproduceManifest, ServerRun, dataset_ref, manifest_path, now,
                                  origin, updated, write_manifest)
from harness.run.request import ModelTarget, RunRequest, planned_keys
from harness.run.session import run_session, sigterm_as_interrupt
from harness.run.store import iter_result_files, read_result_file, results_path
from harness.core.sums import write_own_sums
from harness.verify.verification import Report, verify


def _block_request(cfg: ReproduceConfig, request: RunRequest, arms: list[Arm], *, base_url: str | None = None,
                   model: str | None = None, revision: str | None = None, profile: str | None = None,
                   concurrency: int = 1, server: ServerInfo | None = None) -> RunRequest:
    """The reproduction's request narrowed to one block: `arms` against one server (or none); `server` is what the
    run manifest records of it (the launcher's describe())."""
    target = ModelTarget(base_url=base_url, model=model, revision=revision, server_profile=profile or "plain",
                         timeout=cfg.timeout, cache_dir=cfg.out / ".cache" / "responses", server_info=server)
    return dataclasses.replace(request, arms=tuple(arms), target=target, concurrency=concurrency)


def _run_block(cfg: ReproduceConfig, request: RunRequest, *, model_key: str | None = None,
               echo: Callable[[str], None] = print) -> Block:
    """One `harness run` of a block's request (its building blocks, called directly), as the reproduce manifest
    lists it: the run manifest it wrote, by name."""
    run = asyncio.run(run_session(request))
    for s in run.summaries:
        echo(f"{s.arm} seed {s.seed}: {s.total} cases, {s.written} new, {s.skipped} resumed, {s.infra_failed} "
             f"infra-failed, {s.correct} correct, outcomes {s.outcomes} -> {s.path}")
    return Block(model=run.model.id if run.uses_model else None, model_key=model_key,
                 arms=tuple(a.name for a in request.arms), run_manifest=manifest_path("run", run.run_id, root=".").name,
                 executor=run.executor, summaries=run.summaries)


def pending_cases(request: RunRequest, *, model: str, revision: str | None, profile: str | None) -> int:
    """How many (arm, seed, case) records of the request are not in the store yet (planned_keys: the keys the
    runner makes)."""
    done: set = set()
    for arm in request.arms:
        for seed in request.seeds:
            path = results_path(request.out_dir, model, arm.name, seed)
            if path.exists():
                done |= {rec.get("key") for rec in read_result_file(path)}
    return len(planned_keys(request, model=model, server_profile=profile, revision=revision) - done)


def run_pipeline(cfg: ReproduceConfig, *, echo: Callable[[str], None] = print) -> ReproduceManifest:
    """Run the whole reproduction; returns the reproduce manifest (also written to disk)."""
    arms = resolve_arms(cfg.arms)
    try:
        dataset = load_dataset(cfg.dataset)
    except DatasetError as exc:
        raise ReproduceError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
    cases = select_cases(dataset, cfg.limit, cfg.shortest)
    try:
        request = RunRequest.build(arms, dataset, cases, cfg.seeds, out_dir=cfg.out, convention=cfg.convention,
                                   executor_backend=cfg.executor_backend, scorer=cfg.scorer,
                                   all_cases=cfg.all_cases, progress=cfg.progress, order=cfg.order)
    except ValueError as exc:
        raise ReproduceError(str(exc)) from None
    arms, choice = list(request.arms), request.convention
    echo(f"{dataset.name}: {choice.describe()}")
    check_same_settings(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    run_id = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    model_free = [a for a in arms if not a.needs_model]
    with_model = [a for a in arms if a.needs_model]
    manifest = ReproduceManifest(
        run_id=run_id, origin=origin(), dataset=dataset_ref(dataset), settings=launch_settings(cfg),
        config=config_dict(cfg), case_ids=tuple(c.case_id for c in cases), arms=tuple(a.name for a in arms),
        arms_by_model={key: tuple(sorted(model_arm_names(cfg.arms, key))) for key in cfg.models},
        arm_config_hashes={a.name: a.config_hash() for a in arms}, convention=ConventionRef.of(choice),
        gvisor=runsc_record() or {"note": "no /etc/docker/mathsolver-runsc.json: runsc was not installed by this "
                                          "kit's scripts/install-host.sh"},
        status="running")
    blocks: list[Block] = []
    servers: list[ServerRun] = []
    existing = sum(1 for _ in iter_result_files(cfg.out))
    echo(f"reproduce: {len(arms)} arm(s) x {len(cfg.seeds)} seed(s) on {len(cases)} case(s) of {dataset.name}, "
         f"models {', '.join(cfg.models) if with_model else '(none needed)'}, launcher {cfg.launcher}, "
         f"results in {cfg.out}" + (f" (resuming: {existing} results file(s) already there)" if existing else ""))

    def save(**changes) -> Path:
        nonlocal manifest
        manifest = updated(manifest, blocks=tuple(blocks), servers=tuple(servers), **changes)
        return write_manifest(cfg.out, manifest)

    save()
    infra_failed = 0
    kind = cfg.kind
    with sigterm_as_interrupt() as signals:
        try:
            if model_free:
                echo(f"model-free arm(s) {', '.join(a.name for a in model_free)}: no server needed")
                block = _run_block(cfg, _block_request(cfg, request, model_free), echo=echo)
                blocks.append(block)
                infra_failed += sum(s.infra_failed for s in block.summaries)
            for key in (cfg.models if with_model else []):
                launcher = kind.for_model(key, cfg.launch_options())
                if is_synthetic_model(launcher.model_id):
                    save(synthetic=True)   # a rehearsal server's model: its records are synthetic
                names = model_arm_names(cfg.arms, key)
                model_arms = [a for a in with_model if a.name in names]
                todo = pending_cases(dataclasses.replace(request, arms=tuple(model_arms)), model=launcher.model_id,
                                     revision=launcher.revision, profile=launcher.server_profile)
                if not todo:
                    echo(f"[{key}] every record is already in {cfg.out}: the server is not started")
                    servers.append(ServerRun(key, launcher.describe(), skipped="all records present"))
                    continue
                echo(f"[{key}] {todo} (arm, seed, case) record(s) to run, arms {', '.join(a.name for a in model_arms)}")
                servers.append(ServerRun(key))
                try:
                    echo(f"[{key}] starting {cfg.launcher} server: {' '.join(launcher.command())}")
                    launcher.start()
                    ready_timeout = cfg.ready_timeout or kind.ready_timeout
                    echo(f"[{key}] waiting up to {ready_timeout:.0f} s for {launcher.base_url}/models to list "
                         f"{launcher.model_id}")
                    launcher.wait_ready(ready_timeout)
                    info = launcher.describe()
                    servers[-1] = ServerRun(key, info)
                    save()
                    if info.sampling_defaults_logged is not None or kind.logs_sampling_defaults:
                        echo(f"[{key}] sampling defaults the server logged: {info.sampling_defaults_logged}")
                    concurrency = cfg.concurrency or launcher.concurrency
                    block = _run_block(cfg, _block_request(cfg, request, model_arms, base_url=launcher.base_url,
                                                           model=launcher.model_id, revision=launcher.revision,
                                                           profile=launcher.server_profile, concurrency=concurrency,
                                                           server=info),
                                       model_key=key, echo=echo)
                    blocks.append(block)
                    infra_failed += sum(s.infra_failed for s in block.summaries)
                finally:
                    echo(f"[{key}] stopping the server")
                    launcher.stop()
                    # described again once stopped: what the server logged up to its end
                    servers[-1] = ServerRun(key, launcher.describe(), stopped_at=now())
        except BaseException as exc:
            save(error=(f"{type(exc).__name__}: signal {signals[0]}" if signals else f"{type(exc).__name__}: {exc}"),
                 status="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            raise
    status = "complete" if not infra_failed else "incomplete"
    save(infra_failed=infra_failed, status=status)        # the report shows the manifest as of this point
    path = save(outputs=outputs(cfg.out, cfg.draws, echo=echo))
    checksums = write_checksums(cfg.out)                   # last: covers the manifest, results, logs, outputs
    echo(f"manifest: {path}")
    checked = verify_run(cfg.out, tables=False)   # the verify stage on what was just written
    for line in checked.notes + checked.problems:
        echo(f"verify: {line}")
    echo(f"checksums: {checksums['path']} ({checksums['files']} files); verify with "
         f"`harness verify --results {cfg.out}` (or `cd {cfg.out} && sha256sum -c {Path(checksums['path']).name}`)")
    return updated(manifest, checksums=checksums)


# Settings that change what the server answers but are not part of a record's key (the key has the model,
# its revision and the client profile): one results directory holds one combination of them.
def outputs(out: Path, draws: int | None = None, *, echo: Callable[[str], None] = print) -> dict:
    """Statistics, tables, figures and the report from the run's results (`analysis.report.write_outputs`, as
    `harness report` does). Results the analysis cannot read fail here, naming the problem; the records stay on
    disk and the manifest already says how the run ended. The root's SHA256SUMS are written first, so the report's
    comparison reads the records and manifests as this run wrote them (harness.analysis.comparison.integrity);
    `write_checksums` rewrites them over every output afterwards."""
    write_own_sums(Path(out))
    try:
        an = analyse(out, draws=draws or DEFAULT_DRAWS)
    except ResultsError as exc:
        raise ReproduceError(f"the results in {out} cannot be analysed: {exc}") from None
    p = Path(out) / "stats.json"
    p.write_text(json_file_text(stats_payload(an), indent=1), encoding="utf-8")
    files = write_outputs(an, out, out)
    done = {"stats": str(p), "tables": [str(x) for x in files.table_paths], "tables_omitted": files.omitted,
            "figures": [str(x) for x in files.figures], "report": str(files.page),
            "comparison": str(files.comparison.markdown) if files.comparison else None}  # the paper against ours
    echo("outputs: " + "; ".join([str(p), f"{len(files.tables)} table(s) in {Path(out) / 'tables'}", str(files.page)]))
    return done


def write_checksums(out: Path) -> dict:
    """sha256 of every file of the run's directory (hidden caches excluded), paths relative to it: the root's
    own SHA256SUMS, which `harness verify --results OUT` checks (harness.verify.verification)."""
    return write_own_sums(Path(out))


def verify_run(out: Path, *, tables: bool = True) -> Report:
    """The verify stage's report on the run's directory (checksums against its SHA256SUMS, rescoring, tables)."""
    return verify(Path(out), tables=tables)
