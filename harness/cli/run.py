"""`harness run` (any arm over a dataset, resumable) and `harness score` (rescore stored results, summary).

    harness run --arm program-solve --arm open-book --dataset bundled-test --seeds 42-46 \
        --base-url http://127.0.0.1:8088/v1 [--model ID] [--server-profile plain|vllm|llama.cpp] \
        [--api-key-env OPENAI_API_KEY] --out results
    harness run --arm gold-lib --dataset dev            # no model needed
    harness score --results results [--scorer medcalc] [--markdown summary.md]

`harness run`'s options come in groups, each a typed value (`ArmOptions`: which arms and how configured;
`CaseOptions`: which cases; `ServerOptions`: the model server and how to talk to it; `RunOptions`: where results go
and how the run proceeds), which together build the one typed request a run session runs
(harness.run.request.RunRequest). The options it shares with a reproduction (arms, seeds, dataset, limit, server,
timeout, executor, concurrency, order, scorer, out, ...) are the run spec's, declared once with their defaults in
harness.cli.vocabulary.SPEC (the defaults: harness.run.manifest.ReproduceSettings'); where `harness run` differs
(its seeds, dataset, concurrency, ...) vocabulary.PER_COMMAND says so and why. The results root's SHA256SUMS are
written when the run ends, however it ends (harness.core.sums.SumsOnExit). Rescoring is harness.verify.rescore's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from harness.arms.options import ArmOptionError, apply_options
from harness.arms.registry import get_arm, paper_arms
from harness.arms.spec import Arm
from harness.cli.convention import announce, convention_option
from harness.cli.errors import check_out_dir
from harness.cli.vocabulary import spec_option
from harness.core.sums import SumsOnExit
from harness.core.typed_json import field_names
from harness.data.dataset import Case, Dataset
from harness.model.client import DEFAULT_API_KEY_ENV, ModelRequestError
from harness.model.server_info import ServerInfo, ServerInfoError, read_server_info
from harness.run.request import ModelTarget, RunRequest
from harness.run.runner import ConfigMismatchError, summary_markdown
from harness.run.session import (
    CaseSelectionError,
    RunSetupError,
    interrupted_line,
    pick_cases,
    run_session,
    sigterm_as_interrupt,
)
from harness.scoring.scorers import SCORERS
from harness.verify.rescore import RescoreError, convention_problems, rescore_tree


def option_group(
    name: str, cls: type, *options: Callable[[Any], Any]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Click options whose values the command receives as one `cls` value (a frozen dataclass whose fields are the
    options' parameter names), under `name`."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def command(**kw: Any) -> Any:
            kw[name] = cls(**{field: kw.pop(field) for field in field_names(cls)})
            return f(**kw)

        for opt in reversed(options):
            command = opt(command)
        return command

    return decorate


@dataclass(frozen=True)
class ArmOptions:
    """Which arms run, and their options (formula versions, router settings)."""

    arm_names: tuple[str, ...]
    formula_versions: tuple[str, ...]
    router_k: int | None
    router_m: int | None
    router_temperature: float | None

    def arms(self) -> list[Arm]:
        """The configured arms ("all": the paper's); a bad name or option is a usage error naming the option."""
        names = list(paper_arms()) if "all" in self.arm_names else list(dict.fromkeys(self.arm_names))
        try:
            arms = [get_arm(n) for n in names]
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--arms") from None
        try:
            arms, notes = apply_options(
                arms, self.formula_versions, self.router_k, self.router_m, self.router_temperature
            )
        except ArmOptionError as exc:
            raise click.BadParameter(str(exc), param_hint=exc.option) from None
        for note in notes:
            click.echo(note, err=True)
        return arms


arm_options = option_group(
    "arm_options",
    ArmOptions,
    spec_option("arms", "run", dest="arm_names"),
    click.option(
        "--formula-version",
        "formula_versions",
        multiple=True,
        metavar="CALC_ID=VERSION",
        help="Formula version for a calculator (repeatable), e.g. 9=ckd-epi-2021; applies to the arms that "
        "supply formula text or call the library [default: the benchmark's version]. "
        "`harness formulas versions` lists them.",
    ),
    click.option("--router-k", default=None, type=click.IntRange(1), help="Router arms: programs per case [5]."),
    click.option("--router-m", default=None, type=click.IntRange(1), help="Router arms: programs that must agree [3]."),
    click.option("--router-temperature", default=None, type=float, help="Router arms: sampling temperature [0.7]."),
)


@dataclass(frozen=True)
class CaseOptions:
    """Which cases of which dataset, at which seeds, under which unit convention."""

    dataset: Dataset
    seeds: tuple[int, ...]
    case_ids: tuple[str, ...]
    calculators: tuple[int, ...]
    limit: int | None
    shortest: bool
    spread: bool
    all_cases: bool
    convention: str | None

    def cases(self) -> list[Case]:
        """The selected cases; a selection of nothing or an unknown case id is a usage error naming the option."""
        try:
            return pick_cases(self.dataset, self.case_ids, self.calculators, self.limit, self.shortest, self.spread)
        except CaseSelectionError as exc:
            if exc.param_hint:
                raise click.BadParameter(str(exc), param_hint=exc.param_hint) from None
            raise click.UsageError(str(exc)) from None


def case_options(f: Callable[..., Any]) -> Callable[..., Any]:
    group = option_group(
        "case_options",
        CaseOptions,
        spec_option("dataset", "run"),
        spec_option("seeds", "run"),
        click.option("--case", "case_ids", multiple=True, help="Only these case ids (calculator-row), repeatable."),
        click.option("--calculator", "calculators", multiple=True, type=int, help="Only these calculator ids."),
        spec_option("limit"),
        spec_option("shortest"),
        click.option(
            "--spread",
            is_flag=True,
            help="The shortest note of each calculator, calculators round-robin over categories (the CPU demo's rule).",
        ),
        spec_option("all_cases"),
        spec_option("convention"),
    )
    return group(f)


@dataclass(frozen=True)
class ServerOptions:
    """The model server a run talks to, and how (its profile, key, timeout, response cache, description)."""

    base_url: str | None
    model: str | None
    model_revision: str | None
    server_profile: str
    api_key_env: str
    timeout: float
    cache_dir: str | None
    no_cache: bool
    server_info: str | None

    def target(self, arms: list[Arm], out_dir: Path) -> ModelTarget:
        """The run's model target; a model arm without a server, or an API-key variable that is not set, is a usage
        error."""
        needs_model = [a.name for a in arms if a.needs_model]
        if needs_model and not self.base_url:
            raise click.UsageError(f"arm(s) {', '.join(needs_model)} need a model: give --base-url (and --model)")
        if needs_model and self.api_key_env != DEFAULT_API_KEY_ENV and not os.environ.get(self.api_key_env):
            raise click.BadParameter(
                f"environment variable {self.api_key_env} is not set (or empty)", param_hint="--api-key-env"
            )
        cache = None if self.no_cache else Path(self.cache_dir or out_dir / ".cache" / "responses")
        return ModelTarget(
            base_url=self.base_url,
            model=self.model,
            revision=self.model_revision,
            server_profile=self.server_profile,
            timeout=self.timeout,
            cache_dir=cache,
            api_key_env=self.api_key_env,
            server_info=self._described(),
        )

    def _described(self) -> ServerInfo | None:
        """The `--server-info` file (written by `harness serve start --server-info`), typed; a usage error naming
        it."""
        if not self.server_info:
            return None
        try:
            return read_server_info(self.server_info)
        except ServerInfoError as exc:
            raise click.BadParameter(str(exc), param_hint="--server-info") from None


server_options = option_group(
    "server_options",
    ServerOptions,
    spec_option("base_url"),
    click.option("--model", default=None, help="Model id to request [default: the first id the server lists]."),
    click.option("--model-revision", default=None, help="Model revision recorded with every row and in keys."),
    spec_option("server_profile", "run"),
    click.option(
        "--api-key-env",
        default=DEFAULT_API_KEY_ENV,
        show_default=True,
        metavar="VAR",
        help="Environment variable holding the model server's API key, sent as a Bearer token when set; "
        "the key is never recorded.",
    ),
    spec_option("timeout"),
    click.option(
        "--cache-dir",
        default=None,
        type=click.Path(file_okay=False),
        help="Response cache [default: OUT/.cache/responses].",
    ),
    click.option("--no-cache", is_flag=True, help="Do not read or write the response cache."),
    click.option(
        "--server-info",
        default=None,
        type=click.Path(exists=True, dir_okay=False),
        help="JSON file describing the model server (launcher describe()), copied into the run manifest.",
    ),
)


@dataclass(frozen=True)
class RunOptions:
    """Where the results go and how the run proceeds: executor, concurrency, request order, scorer, progress."""

    out_dir: str
    executor_backend: str
    concurrency: int
    order: str
    scorer: str
    no_progress: bool
    progress_interval: float


run_options = option_group(
    "run_options",
    RunOptions,
    spec_option("out", "run", dest="out_dir"),
    spec_option("executor_backend"),
    spec_option("concurrency", "run"),
    spec_option("order"),
    spec_option("scorer"),
    spec_option("no_progress"),
    click.option(
        "--progress-interval",
        default=60.0,
        show_default=True,
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help="When the output is not a terminal: a progress line this often, whatever happens (records "
        "done, requests in flight, tokens received).",
    ),
)


def build_request(
    arm_options: ArmOptions, case_options: CaseOptions, server_options: ServerOptions, run_options: RunOptions
) -> RunRequest:
    """The one typed request of `harness run`'s option groups (every usage error raised before anything runs)."""
    arms = arm_options.arms()
    seeds = list(case_options.seeds)
    cases = case_options.cases()
    target = server_options.target(arms, Path(run_options.out_dir))
    check_out_dir(run_options.out_dir)
    choice = announce(case_options.dataset, case_options.convention)
    return RunRequest.build(
        arms,
        case_options.dataset,
        cases,
        seeds,
        out_dir=run_options.out_dir,
        convention=choice,
        target=target,
        executor_backend=run_options.executor_backend,
        concurrency=run_options.concurrency,
        scorer=run_options.scorer,
        all_cases=case_options.all_cases,
        progress=not run_options.no_progress,
        progress_interval_s=run_options.progress_interval,
        order=run_options.order,
    )


@click.command("run")
@arm_options
@case_options
@server_options
@run_options
def run(
    arm_options: ArmOptions, case_options: CaseOptions, server_options: ServerOptions, run_options: RunOptions
) -> None:
    """Run arms over a dataset at the given seeds; resumable (done rows are skipped)."""
    request = build_request(arm_options, case_options, server_options, run_options)
    signals: list[int] = []
    with SumsOnExit(request.out_dir):
        try:
            with sigterm_as_interrupt() as signals:
                summaries = asyncio.run(run_session(request)).summaries
        except KeyboardInterrupt:
            click.echo(
                interrupted_line(
                    request.out_dir,
                    [a.name for a in request.arms],
                    list(request.seeds),
                    signals,
                    "harness " + shlex.join(sys.argv[1:]),
                ),
                err=True,
            )
            sys.exit(130)
        except RunSetupError as exc:
            raise click.UsageError(str(exc)) from None
        except ModelRequestError as exc:
            raise click.ClickException(
                f"model request failed, run stopped (finished rows are kept; rerun to resume): {exc}"
            ) from None
        except ConfigMismatchError as exc:
            raise click.ClickException(str(exc)) from None
    for s in summaries:
        n = s.total
        acc = 100.0 * s.correct / n if n else 0.0
        click.echo(
            f"{s.arm} seed {s.seed}: {n} cases, {s.written} new, {s.skipped} resumed, "
            f"{s.infra_failed} infra-failed, accuracy {acc:.1f}% ({s.correct}/{n}), outcomes {s.outcomes}, "
            f"{s.wall_s:.1f} s -> {s.path}"
        )
    if any(s.infra_failed for s in summaries):
        click.echo("some cases failed as executor infrastructure and were not recorded; rerun to retry them", err=True)
        sys.exit(3)


@click.command("score")
@click.option(
    "--results",
    "results_dir",
    default="results",
    show_default=True,
    type=click.Path(exists=True, file_okay=False),
    help="Results root to read.",
)
@click.option(
    "--scorer",
    default=None,
    type=click.Choice(sorted(SCORERS)),
    help="Rescore with this scorer [default: each row's own scorer].",
)
@click.option(
    "--markdown",
    "markdown_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also write the summary table here.",
)
@click.option("--arm", "arm_filter", multiple=True, help="Only these arms.")
@convention_option
def score(
    results_dir: str, scorer: str | None, markdown_path: str | None, arm_filter: tuple[str, ...], convention: str | None
) -> None:
    """Rescore every stored row from its replies/answer (harness.verify.rescore) and print a summary (arm, n,
    accuracy, outcomes), and say which unit convention each convention-dependent arm's rows were made under.

    Exits 1 if a stored score disagrees with the rescored one under the row's own scorer, or if rows mix unit
    conventions or (with --convention) were made under another one."""
    try:
        rows, mismatches = rescore_tree(results_dir, scorer, tuple(arm_filter))
    except RescoreError as exc:
        raise click.UsageError(str(exc)) from None
    if not rows:
        raise click.UsageError(f"no results under {results_dir}")
    conv_lines, conv_problems = convention_problems(results_dir, convention)
    for line in conv_lines:
        click.echo(line, err=True)
    table = summary_markdown([dataclasses.replace(row.record, correct=row.correct) for row in rows if row.record])
    click.echo(table)
    if markdown_path:
        Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_path).write_text(table)
    for m in mismatches + conv_problems:
        click.echo(f"MISMATCH {m}", err=True)
    if mismatches or conv_problems:
        sys.exit(1)
