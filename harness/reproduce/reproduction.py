"""`make reproduce`: the paper's runs through one pipeline, whatever serves the model.

    plan = build_plan(cfg)            # the dry run (harness.reproduce.plan)
    run_pipeline(cfg)                 # preflight is the caller's (harness reproduce)

The pipeline: the model-free arms (Gold-Solve: no server; stored under the `library` model, which the statistics
share across models), then for each chosen model: `launcher.start()`, wait until `/v1/models` lists the model, run
its arms x seeds through `harness.run.session.run_session` (the same client/executor/runner building blocks as
`harness run`; the results store resumes by record key, so an interrupted run continues where it stopped), stop the
server (always: also on Ctrl-C and SIGTERM). The reproduce manifest is rewritten as it goes (launcher description:
image digest, model revision, server flags, the sampling defaults the server logged, GPU, vLLM version; the blocks'
run manifests), then statistics, tables, figures and the report (harness.analysis.report.write_outputs); the run
directory's SHA256SUMS are written last, also when the run fails or is interrupted (harness.core.sums.SumsOnExit).

The only branch between the H100 path, CI, rehearsals and an external server is the launcher kind
(harness.model.launchers): vllm, vllm-cpu, llama-cpp, rehearsal (a scripted fake; synthetic records) or external.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.report import write_outputs
from harness.analysis.results_analysis import analyse
from harness.analysis.stats.arrays import ResultsError
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS
from harness.analysis.stats_payload import stats_payload
from harness.arms.spec import Arm
from harness.core.canonical_json import json_file_text
from harness.core.host import runsc_host_record
from harness.core.sums import SumsOnExit, SumsWritten, write_own_sums
from harness.model.rehearsal.labels import is_synthetic_model
from harness.model.server_info import ServerInfo
from harness.model.serving import Launcher
from harness.reproduce.config import ReproduceConfig, ReproduceError, Resolved, check_same_settings
from harness.run.manifest import (
    Block,
    ConventionRef,
    LiveManifest,
    Outputs,
    ReproduceManifest,
    ServerRun,
    dataset_ref,
    manifest_path,
    now,
    origin,
)
from harness.run.request import ModelTarget, RunRequest, planned_keys
from harness.run.session import run_session, sigterm_as_interrupt
from harness.run.store import iter_result_files, read_result_file, results_path
from harness.verify.verification import Report, verify

Echo = Callable[[str], None]


def run_pipeline(cfg: ReproduceConfig, *, echo: Echo = print) -> ReproduceManifest:
    """Run the whole reproduction (module docstring); returns the reproduce manifest as written last."""
    pipeline = _Pipeline.start(cfg, echo)
    with SumsOnExit(cfg.out) as sums:
        with sigterm_as_interrupt() as signals:
            try:
                pipeline.run_model_free()
                for key in cfg.models if pipeline.resolved.with_model else ():
                    pipeline.run_model(key)
            except BaseException as exc:
                pipeline.stopped(exc, signals)
                raise
        pipeline.finish()
    _say_done(cfg, pipeline.live.path, sums.written, echo)
    return pipeline.live.manifest


@dataclass
class _Pipeline:
    """One reproduction as it runs: its config, its names resolved once, the run request its blocks narrow, the
    reproduce manifest rewritten as it goes, the infrastructure failures counted so far."""

    cfg: ReproduceConfig
    resolved: Resolved
    request: RunRequest
    live: LiveManifest
    echo: Echo
    infra_failed: int = 0

    @classmethod
    def start(cls, cfg: ReproduceConfig, echo: Echo) -> _Pipeline:
        """Resolve the config, build the request, refuse a directory of other settings, write the first manifest."""
        resolved = cfg.resolve()
        request = _request(cfg, resolved)
        echo(f"{resolved.dataset.name}: {request.convention.describe()}")
        check_same_settings(cfg)
        cfg.out.mkdir(parents=True, exist_ok=True)
        existing = sum(1 for _ in iter_result_files(cfg.out))
        echo(
            f"reproduce: {len(request.arms)} arm(s) x {len(cfg.seeds)} seed(s) on {len(resolved.cases)} case(s) of "
            f"{resolved.dataset.name}, models {', '.join(cfg.models) if resolved.with_model else '(none needed)'}, "
            f"launcher {cfg.launcher}, results in {cfg.out}"
            + (f" (resuming: {existing} results file(s) already there)" if existing else "")
        )
        return cls(cfg, resolved, request, LiveManifest(cfg.out, _first_manifest(cfg, resolved, request)), echo)

    def run_model_free(self) -> None:
        arms = self.resolved.arms_of(None, self.request.arms)
        if arms:
            self.echo(f"model-free arm(s) {', '.join(a.name for a in arms)}: no server needed")
            self._add_block(_run_block(self.cfg, _block_request(self.cfg, self.request, arms), echo=self.echo))

    def run_model(self, key: str) -> None:
        """One model's block: its server started (unless every record is there), its arms run, the server stopped
        whatever happens and described again."""
        cfg, echo = self.cfg, self.echo
        launcher = cfg.kind.for_model(key, cfg.launch_options())
        if is_synthetic_model(launcher.model_id):
            self.live.update(synthetic=True)  # a rehearsal server's model: its records are synthetic
        arms = self.resolved.arms_of(key, self.request.arms)
        todo = pending_cases(
            dataclasses.replace(self.request, arms=arms),
            model=launcher.model_id,
            revision=launcher.revision,
            profile=launcher.server_profile,
        )
        if not todo:
            echo(f"[{key}] every record is already in {cfg.out}: the server is not started")
            self._put_server(ServerRun(key, launcher.describe(), skipped="all records present"), new=True)
            return
        echo(f"[{key}] {todo} (arm, seed, case) record(s) to run, arms {', '.join(a.name for a in arms)}")
        self._put_server(ServerRun(key), new=True)
        try:
            info = self._start_server(key, launcher)
            request = _block_request(
                cfg,
                self.request,
                arms,
                base_url=launcher.base_url,
                model=launcher.model_id,
                revision=launcher.revision,
                profile=launcher.server_profile,
                concurrency=cfg.concurrency or launcher.concurrency,
                server=info,
            )
            self._add_block(_run_block(cfg, request, model_key=key, echo=echo))
        finally:
            echo(f"[{key}] stopping the server")
            launcher.stop()
            # described again once stopped: what the server logged up to its end
            self._put_server(ServerRun(key, launcher.describe(), stopped_at=now()), new=False)

    def _start_server(self, key: str, launcher: Launcher) -> ServerInfo:
        """Start the server, wait until it lists the model, record its description."""
        echo = self.echo
        echo(f"[{key}] starting {self.cfg.launcher} server: {' '.join(launcher.command())}")
        launcher.start()
        ready_timeout = self.cfg.ready_timeout or self.cfg.kind.ready_timeout
        echo(f"[{key}] waiting up to {ready_timeout:.0f} s for {launcher.base_url}/models to list {launcher.model_id}")
        launcher.wait_ready(ready_timeout)
        info = launcher.describe()
        self._put_server(ServerRun(key, info), new=False)
        if info.sampling_defaults_logged is not None or self.cfg.kind.logs_sampling_defaults:
            echo(f"[{key}] sampling defaults the server logged: {info.sampling_defaults_logged}")
        return info

    def _add_block(self, block: Block) -> None:
        self.infra_failed += sum(s.infra_failed for s in block.summaries)
        self.live.update(blocks=self.live.manifest.blocks + (block,))

    def _put_server(self, server: ServerRun, *, new: bool) -> None:
        """A model's server added (`new`) or its entry replaced by what is now known of it."""
        servers = self.live.manifest.servers
        self.live.update(servers=servers + (server,) if new else servers[:-1] + (server,))

    def stopped(self, exc: BaseException, signals: list[int]) -> None:
        """The manifest says how the run ended early: interrupted (Ctrl-C, SIGTERM) or failed, and why."""
        self.live.update(
            error=f"{type(exc).__name__}: signal {signals[0]}" if signals else f"{type(exc).__name__}: {exc}",
            status="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
        )

    def finish(self) -> None:
        """The status, then the outputs derived from the records (the report shows the manifest as of its status)."""
        self.live.update(infra_failed=self.infra_failed, status="complete" if not self.infra_failed else "incomplete")
        self.live.update(outputs=outputs(self.cfg.out, self.cfg.draws, echo=self.echo))


def _request(cfg: ReproduceConfig, resolved: Resolved) -> RunRequest:
    """The whole reproduction as one run request (each block narrows it), its unit convention resolved once."""
    try:
        return RunRequest.build(
            resolved.arms,
            resolved.dataset,
            resolved.cases,
            cfg.seeds,
            out_dir=cfg.out,
            convention=cfg.convention,
            executor_backend=cfg.executor_backend,
            scorer=cfg.scorer,
            all_cases=cfg.all_cases,
            progress=cfg.progress,
            order=cfg.order,
        )
    except ValueError as exc:
        raise ReproduceError(str(exc)) from None


def _first_manifest(cfg: ReproduceConfig, resolved: Resolved, request: RunRequest) -> ReproduceManifest:
    arms = request.arms
    return ReproduceManifest(
        run_id=_dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ"),
        origin=origin(),
        dataset=dataset_ref(resolved.dataset),
        settings=cfg.launch_settings(),
        config=cfg.settings,
        case_ids=tuple(c.case_id for c in resolved.cases),
        arms=tuple(a.name for a in arms),
        arms_by_model={key: tuple(sorted(names)) for key, names in resolved.model_arm_names.items()},
        arm_config_hashes={a.name: a.config_hash() for a in arms},
        convention=ConventionRef.of(request.convention),
        gvisor=runsc_host_record(),
        status="running",
    )


def _say_done(cfg: ReproduceConfig, manifest: Path, sums: SumsWritten | None, echo: Echo) -> None:
    """The manifest's path, the verify stage on what was just written, and where its sums are."""
    echo(f"manifest: {manifest}")
    checked = verify_run(cfg.out, tables=False)
    for line in checked.notes + checked.problems:
        echo(f"verify: {line}")
    if sums is not None:
        echo(
            f"checksums: {sums.path} ({sums.files} files); verify with `harness verify --results {cfg.out}` (or "
            f"`cd {cfg.out} && sha256sum -c {Path(sums.path).name}`)"
        )


def _block_request(
    cfg: ReproduceConfig,
    request: RunRequest,
    arms: tuple[Arm, ...],
    *,
    base_url: str | None = None,
    model: str | None = None,
    revision: str | None = None,
    profile: str | None = None,
    concurrency: int = 1,
    server: ServerInfo | None = None,
) -> RunRequest:
    """The reproduction's request narrowed to one block: `arms` against one server (or none); `server` is what the
    run manifest records of it (the launcher's describe())."""
    target = ModelTarget(
        base_url=base_url,
        model=model,
        revision=revision,
        server_profile=profile or "plain",
        timeout=cfg.timeout,
        cache_dir=cfg.out / ".cache" / "responses",
        server_info=server,
    )
    return dataclasses.replace(request, arms=tuple(arms), target=target, concurrency=concurrency)


def _run_block(cfg: ReproduceConfig, request: RunRequest, *, model_key: str | None = None, echo: Echo = print) -> Block:
    """One `harness run` of a block's request (its building blocks, called directly), as the reproduce manifest
    lists it: the run manifest it wrote, by name."""
    run = asyncio.run(run_session(request))
    for s in run.summaries:
        echo(
            f"{s.arm} seed {s.seed}: {s.total} cases, {s.written} new, {s.skipped} resumed, {s.infra_failed} "
            f"infra-failed, {s.correct} correct, outcomes {s.outcomes} -> {s.path}"
        )
    return Block(
        model=run.model.id if run.uses_model else None,
        model_key=model_key,
        arms=tuple(a.name for a in request.arms),
        run_manifest=manifest_path("run", run.run_id, root=".").name,
        executor=run.executor,
        summaries=run.summaries,
    )


def pending_cases(request: RunRequest, *, model: str, revision: str | None, profile: str | None) -> int:
    """How many (arm, seed, case) records of the request are not in the store yet (planned_keys: the keys the
    runner makes)."""
    done: set = set()
    for arm in request.arms:
        for seed in request.seeds:
            path = results_path(request.out_dir, model, arm.name, seed)
            if path.exists():
                done |= {rec.key for rec in read_result_file(path)}
    return len(planned_keys(request, model=model, server_profile=profile, revision=revision) - done)


def outputs(out: Path, draws: int | None = None, *, echo: Echo = print) -> Outputs:
    """Statistics, tables, figures and the report from a root's results (`analysis.report.write_outputs`, as
    `harness report` does), for a reproduction and a merge. Results the analysis cannot read fail here, naming the
    problem; the records stay on disk and the manifest already says how the run ended. The root's SHA256SUMS are
    written first, so the report's comparison reads the records and manifests as this run wrote them
    (harness.analysis.comparison.integrity); the caller's SumsOnExit rewrites them over every output afterwards."""
    write_own_sums(Path(out))
    try:
        an = analyse(out, draws=draws or DEFAULT_DRAWS)
    except ResultsError as exc:
        raise ReproduceError(f"the results in {out} cannot be analysed: {exc}") from None
    p = Path(out) / "stats.json"
    p.write_text(json_file_text(stats_payload(an), indent=1), encoding="utf-8")
    files = write_outputs(an, out, out)
    echo("outputs: " + "; ".join([str(p), f"{len(files.tables)} table(s) in {Path(out) / 'tables'}", str(files.page)]))
    return Outputs(
        stats=str(p),
        tables=tuple(str(x) for x in files.table_paths),
        tables_omitted=dict(files.omitted),
        figures=tuple(str(x) for x in files.figures),
        report=str(files.page),
        comparison=str(files.comparison.markdown) if files.comparison else None,
    )


def verify_run(out: Path, *, tables: bool = True) -> Report:
    """The verify stage's report on the run's directory (checksums against its SHA256SUMS, rescoring, tables)."""
    return verify(Path(out), tables=tables)
