"""`harness run` (any arm over a dataset, resumable) and `harness score` (rescore stored results, summary).

    harness run --arm program-solve --arm open-book --dataset bundled-test --seeds 42-46 \
        --base-url http://127.0.0.1:8088/v1 [--model ID] [--server-profile plain|vllm|llama.cpp] \
        [--api-key-env OPENAI_API_KEY] --out results
    harness run --arm gold-lib --dataset dev            # no model needed
    harness score --results results [--scorer medcalc] [--markdown summary.md]
"""
from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import click

from harness.arms.options import ArmOptionError, apply_options
from harness.arms.registry import ARMS, get_arm, paper_arms
from harness.cli.errors import check_out_dir
from harness.cli.convention import announce, convention_option
from harness.cli.dataset_option import dataset_option
from harness.model.client import DEFAULT_API_KEY_ENV, SERVER_PROFILES, ModelRequestError
from harness.model.server_info import ServerInfoError, read_server_info
from harness.run.runner import ConfigMismatchError, summary_markdown
from harness.run.request import ModelTarget, RunRequest
from harness.run.schedule import DEFAULT_ORDER, ORDERS
from harness.run.session import (CaseSelectionError, RunSetupError, interrupted_line, pick_cases, run_session,
                                 sigterm_as_interrupt)
from harness.run.store import iter_located_records
from harness.core import seeds as core_seeds
from harness.scoring.scorers import SCORERS
from harness.verify.rescore import CaseIndex, RescoreError, convention_problems, rescore_record


def seeds_option(text: str) -> list[int]:
    """The --seeds option: harness.core.seeds.parse_seeds with the problem reported as a bad --seeds value."""
    try:
        return core_seeds.parse_seeds(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--seeds") from None



def _server_info(path):
    """The `--server-info` file (written by `harness serve start --server-info`), typed; a usage error naming it."""
    if not path:
        return None
    try:
        return read_server_info(path)
    except ServerInfoError as exc:
        raise click.BadParameter(str(exc), param_hint="--server-info") from None


@click.command("run")
@click.option("--arm", "arm_names", multiple=True, required=True,
              help=f"Arm to run (repeatable), or 'all' (the paper's arms). Known: {', '.join(ARMS)}.")
@dataset_option("--dataset", "--split", "dataset")
@click.option("--seeds", default="42", show_default=True, help="Seeds: 42-46, or 42,43.")
@click.option("--base-url", default=None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8088/v1.")
@click.option("--model", default=None, help="Model id to request [default: the first id the server lists].")
@click.option("--model-revision", default=None, help="Model revision recorded with every row and in keys.")
@click.option("--server-profile", default="plain", show_default=True,
              type=click.Choice(sorted(SERVER_PROFILES)),
              help="Request fields for this server: plain (any OpenAI-compatible API: nothing added), vllm (nothing "
                   "added, no seed: the paper's request), vllm-seeded (per-request seeds on sampled calls), llama.cpp "
                   "(seeds, and repeat_penalty 1.0, which strict servers reject).")
@click.option("--api-key-env", default=DEFAULT_API_KEY_ENV, show_default=True, metavar="VAR",
              help="Environment variable holding the model server's API key, sent as a Bearer token when set; "
                   "the key is never recorded.")
@click.option("--out", "out_dir", default="results", show_default=True, type=click.Path(file_okay=False),
              help="Results root.")
@click.option("--executor-backend", default="auto", show_default=True,
              type=click.Choice(["auto", "container", "process"]))
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Cases (and requests) in flight.")
@click.option("--order", default=DEFAULT_ORDER, show_default=True, type=click.Choice(ORDERS),
              help="Which case goes out next: case-major sends every arm and seed of a case together (the model "
                   "server's prefix cache reuses the note); arm-major runs the arms one after another. No record "
                   "depends on it.")
@click.option("--timeout", default=900.0, show_default=True, type=float, help="Per-request timeout, seconds.")
@click.option("--cache-dir", default=None, type=click.Path(file_okay=False),
              help="Response cache [default: OUT/.cache/responses].")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--scorer", default="paper", show_default=True, type=click.Choice(sorted(SCORERS)),
              help="Scorer whose verdict fills `correct` (every scorer's verdict is stored in `scores`).")
@click.option("--case", "case_ids", multiple=True, help="Only these case ids (calculator-row), repeatable.")
@click.option("--calculator", "calculators", multiple=True, type=int, help="Only these calculator ids.")
@click.option("--limit", default=None, type=click.IntRange(1), help="At most N cases (after filters).")
@click.option("--shortest", is_flag=True, help="Take the cases with the shortest notes first (for CPU runs).")
@click.option("--spread", is_flag=True,
              help="The shortest note of each calculator, calculators round-robin over categories (the CPU demo's rule).")
@click.option("--all-cases", is_flag=True, help="Run vote/repair levers on every case, not only the covered ones.")
@click.option("--server-info", default=None, type=click.Path(exists=True, dir_okay=False),
              help="JSON file describing the model server (launcher describe()), copied into the run manifest.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--progress-interval", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              metavar="SECONDS", help="When the output is not a terminal: a progress line this often, whatever happens "
                                      "(records done, requests in flight, tokens received).")
@click.option("--formula-version", "formula_versions", multiple=True, metavar="CALC_ID=VERSION",
              help="Formula version for a calculator (repeatable), e.g. 9=ckd-epi-2021; applies to the arms that "
                   "supply formula text or call the library [default: the benchmark's version]. "
                   "`harness formulas versions` lists them.")
@click.option("--router-k", default=None, type=click.IntRange(1), help="Router arms: programs per case [5].")
@click.option("--router-m", default=None, type=click.IntRange(1), help="Router arms: programs that must agree [3].")
@click.option("--router-temperature", default=None, type=float, help="Router arms: sampling temperature [0.7].")
@convention_option
def run(arm_names, dataset, seeds, base_url, model, model_revision, server_profile, api_key_env, out_dir,
        executor_backend,
        concurrency, order, timeout, cache_dir, no_cache, scorer, case_ids, calculators, limit, shortest, spread,
        all_cases, server_info, no_progress, progress_interval, formula_versions, router_k, router_m, router_temperature, convention):
    """Run arms over a dataset at the given seeds; resumable (done rows are skipped)."""
    names = list(paper_arms()) if "all" in arm_names else list(dict.fromkeys(arm_names))
    try:
        arms = [get_arm(n) for n in names]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--arm") from None
    try:
        arms, notes = apply_options(arms, formula_versions, router_k, router_m, router_temperature)
    except ArmOptionError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from None
    for note in notes:
        click.echo(note, err=True)
    seed_list = seeds_option(seeds)
    try:
        cases = pick_cases(dataset, case_ids, calculators, limit, shortest, spread)
    except CaseSelectionError as exc:
        if exc.param_hint:
            raise click.BadParameter(str(exc), param_hint=exc.param_hint) from None
        raise click.UsageError(str(exc)) from None
    needs_model = any(a.needs_model for a in arms)
    if needs_model and not base_url:
        raise click.UsageError(f"arm(s) {', '.join(a.name for a in arms if a.needs_model)} need a model: "
                               "give --base-url (and --model)")
    if needs_model and api_key_env != DEFAULT_API_KEY_ENV and not os.environ.get(api_key_env):
        raise click.BadParameter(f"environment variable {api_key_env} is not set (or empty)",
                                 param_hint="--api-key-env")
    check_out_dir(out_dir)
    choice = announce(dataset, convention)
    cache = None if no_cache else Path(cache_dir or Path(out_dir) / ".cache" / "responses")
    target = ModelTarget(base_url=base_url, model=model, revision=model_revision, server_profile=server_profile,
                         timeout=timeout, cache_dir=cache, api_key_env=api_key_env,
                         server_info=_server_info(server_info))
    request = RunRequest.build(arms, dataset, cases, seed_list, out_dir=out_dir, convention=choice, target=target,
                               executor_backend=executor_backend, concurrency=concurrency, scorer=scorer,
                               all_cases=all_cases, progress=not no_progress,
                               progress_interval_s=progress_interval, order=order)
    signals: list[int] = []
    try:
        with sigterm_as_interrupt() as signals:
            summaries = asyncio.run(run_session(request)).summaries
    except KeyboardInterrupt:
        click.echo(interrupted_line(out_dir, [a.name for a in arms], seed_list, signals,
                                    "harness " + shlex.join(sys.argv[1:])), err=True)
        sys.exit(130)
    except RunSetupError as exc:
        raise click.UsageError(str(exc)) from None
    except ModelRequestError as exc:
        raise click.ClickException(f"model request failed, run stopped (finished rows are kept; rerun to resume): "
                                   f"{exc}") from None
    except ConfigMismatchError as exc:
        raise click.ClickException(str(exc)) from None
    for s in summaries:
        n = s.total
        acc = 100.0 * s.correct / n if n else 0.0
        click.echo(f"{s.arm} seed {s.seed}: {n} cases, {s.written} new, {s.skipped} resumed, "
                   f"{s.infra_failed} infra-failed, accuracy {acc:.1f}% ({s.correct}/{n}), outcomes {s.outcomes}, "
                   f"{s.wall_s:.1f} s -> {s.path}")
    if any(s.infra_failed for s in summaries):
        click.echo("some cases failed as executor infrastructure and were not recorded; rerun to retry them", err=True)
        sys.exit(3)


@click.command("score")
@click.option("--results", "results_dir", default="results", show_default=True,
              type=click.Path(exists=True, file_okay=False), help="Results root to read.")
@click.option("--scorer", default=None, type=click.Choice(sorted(SCORERS)),
              help="Rescore with this scorer [default: each row's own scorer].")
@click.option("--markdown", "markdown_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the summary table here.")
@click.option("--arm", "arm_filter", multiple=True, help="Only these arms.")
@convention_option
def score(results_dir, scorer, markdown_path, arm_filter, convention):
    """Rescore every stored row from its replies/answer and print a summary (arm, n, accuracy, outcomes), and
    say which unit convention each convention-dependent arm's rows were made under.

    Exits 1 if a stored score disagrees with the rescored one under the row's own scorer, or if rows mix unit
    conventions or (with --convention) were made under another one."""
    located = [(p, n, r) for p, n, r in iter_located_records(results_dir) if not arm_filter or r["arm"] in arm_filter]
    if not located:
        raise click.UsageError(f"no results under {results_dir}")
    cases = CaseIndex()
    mismatches = []
    rescored = []
    for path, line, r in located:
        try:
            case = cases.case(r, f"{path}:{line}")
        except RescoreError as exc:
            raise click.UsageError(str(exc)) from None
        use = scorer or r["scorer"]
        verdict = rescore_record(r, case, use)
        if use == r["scorer"] and verdict != bool(r["correct"]):
            mismatches.append(f"{r['arm']} seed {r['seed']} {r['case_id']}: stored {r['correct']}, rescored {verdict}")
        rescored.append({**r, "correct": verdict})
    conv_lines, conv_problems = convention_problems(results_dir, convention)
    for line in conv_lines:
        click.echo(line, err=True)
    mismatches += conv_problems
    table = summary_markdown(rescored)
    click.echo(table)
    if markdown_path:
        Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_path).write_text(table)
    for m in mismatches:
        click.echo(f"MISMATCH {m}", err=True)
    if mismatches:
        sys.exit(1)

