"""`harness run` (any arm over a dataset, resumable) and `harness score` (rescore stored results, summary).

    harness run --arm program-solve --arm open-book --dataset bundled-test --seeds 42-46 \
        --base-url http://127.0.0.1:8088/v1 [--model ID] [--server-profile llama.cpp] --out results
    harness run --arm gold-lib --dataset dev            # no model needed
    harness score --results results [--scorer medcalc] [--markdown summary.md]
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import json
import sys
from pathlib import Path

import click

from harness.arms import ARMS, get_arm
from harness.dataset import dataset_option
from harness.scoring import SCORERS


def parse_seeds(text: str) -> list[int]:
    """"42-46", "42,43" or "42" -> sorted distinct seeds."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                seeds.update(range(lo, hi + 1))
            else:
                seeds.add(int(part))
        except ValueError:
            raise click.BadParameter(f"{part!r} is not a seed or a range like 42-46", param_hint="--seeds") from None
    if not seeds:
        raise click.BadParameter("no seeds given", param_hint="--seeds")
    return sorted(seeds)


def _pick_cases(dataset, case_ids: tuple[str, ...], calculators: tuple[int, ...], limit: int | None,
                shortest: bool) -> list:
    cases = list(dataset.cases)
    if case_ids:
        known = dataset.by_case_id()
        missing = [c for c in case_ids if c not in known]
        if missing:
            raise click.BadParameter(f"case id(s) not in {dataset.name}: {', '.join(missing)}", param_hint="--case")
        cases = [known[c] for c in case_ids]
    if calculators:
        cases = [c for c in cases if c.calculator_id in set(calculators)]
    if shortest:
        cases = sorted(cases, key=lambda c: (len(c.note.split()), c.case_id))
    if limit is not None:
        cases = cases[:limit]
    if not cases:
        raise click.UsageError("no cases selected")
    return cases


@click.command("run")
@click.option("--arm", "arm_names", multiple=True, required=True,
              help=f"Arm to run (repeatable), or 'all'. Known: {', '.join(ARMS)}.")
@dataset_option("--dataset", "--split", "dataset")
@click.option("--seeds", default="42", show_default=True, help="Seeds: 42-46, or 42,43.")
@click.option("--base-url", default=None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8088/v1.")
@click.option("--model", default=None, help="Model id to request [default: the first id the server lists].")
@click.option("--model-revision", default=None, help="Model revision recorded with every row and in keys.")
@click.option("--server-profile", default="llama.cpp", show_default=True,
              type=click.Choice(["llama.cpp", "vllm", "plain"]), help="Extra request fields for this server.")
@click.option("--out", "out_dir", default="results", show_default=True, type=click.Path(file_okay=False),
              help="Results root.")
@click.option("--executor-backend", default="auto", show_default=True,
              type=click.Choice(["auto", "container", "process"]))
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Cases (and requests) in flight.")
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
@click.option("--all-cases", is_flag=True, help="Run vote/repair levers on every case, not only the covered ones.")
@click.option("--server-info", default=None, type=click.Path(exists=True, dir_okay=False),
              help="JSON file describing the model server (launcher describe()), copied into the run manifest.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def run(arm_names, dataset, seeds, base_url, model, model_revision, server_profile, out_dir, executor_backend,
        concurrency, timeout, cache_dir, no_cache, scorer, case_ids, calculators, limit, shortest, all_cases,
        server_info, no_progress):
    """Run arms over a dataset at the given seeds; resumable (done rows are skipped)."""
    names = list(ARMS) if "all" in arm_names else list(dict.fromkeys(arm_names))
    try:
        arms = [get_arm(n) for n in names]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--arm") from None
    seed_list = parse_seeds(seeds)
    cases = _pick_cases(dataset, case_ids, calculators, limit, shortest)
    needs_model = any(a.needs_model for a in arms)
    if needs_model and not base_url:
        raise click.UsageError(f"arm(s) {', '.join(a.name for a in arms if a.needs_model)} need a model: "
                               "give --base-url (and --model)")
    from harness.client import ModelRequestError
    try:
        summaries = _invoke(arms, dataset, cases, seed_list, base_url, model, model_revision, server_profile, out_dir,
                            executor_backend, concurrency, timeout, cache_dir, no_cache, scorer, all_cases,
                            no_progress, server_info)
    except ModelRequestError as exc:
        raise click.ClickException(f"model request failed, run stopped (finished rows are kept; rerun to resume): "
                                   f"{exc}") from None
    for s in summaries:
        n = s.total
        acc = 100.0 * s.correct / n if n else 0.0
        click.echo(f"{s.arm} seed {s.seed}: {n} cases, {s.written} new, {s.skipped} resumed, "
                   f"{s.infra_failed} infra-failed, accuracy {acc:.1f}% ({s.correct}/{n}), outcomes {s.outcomes}, "
                   f"{s.wall_s:.1f} s -> {s.path}")
    if any(s.infra_failed for s in summaries):
        click.echo("some cases failed as executor infrastructure and were not recorded; rerun to retry them", err=True)
        sys.exit(3)


def _invoke(arms, dataset, cases, seed_list, base_url, model, model_revision, server_profile, out_dir,
            executor_backend, concurrency, timeout, cache_dir, no_cache, scorer, all_cases, no_progress, server_info):
    cache = None if no_cache else (cache_dir or Path(out_dir) / ".cache" / "responses")
    server = json.loads(Path(server_info).read_text()) if server_info else None
    return asyncio.run(_run(arms, dataset, cases, seed_list, base_url=base_url, model=model,
                            model_revision=model_revision, server_profile=server_profile, out_dir=Path(out_dir),
                            executor_backend=executor_backend, concurrency=concurrency, timeout=timeout,
                            cache_dir=cache, scorer=scorer, all_cases=all_cases, progress=not no_progress,
                            server=server))


async def _run(arms, dataset, cases, seeds, *, base_url, model, model_revision, server_profile, out_dir,
               executor_backend, concurrency, timeout, cache_dir, scorer, all_cases, progress, server=None):
    """Run arms (the building block of `harness run` and of harness.reproduce); `server` is the launcher's
    describe() dict for the manifest."""
    from harness.client import ModelClient
    from harness.dataset import load_dataset
    from harness.manifest import write_run_manifest
    from harness.prompts import template_hashes
    from harness.runner import NO_MODEL, RunSpec, run_arms

    client = None
    model_id = model
    if any(a.needs_model for a in arms):
        if model_id is None:
            probe = ModelClient(base_url, "probe", profile=server_profile)
            try:
                ids = await probe.server_models()
            finally:
                await probe.aclose()
            if not ids:
                raise click.UsageError(f"{base_url}/models lists no model; give --model")
            model_id = ids[0]
        client = ModelClient(base_url, model_id, profile=server_profile, model_revision=model_revision,
                             concurrency=concurrency, timeout=timeout, cache_dir=cache_dir)
    one_shot = []
    if any(a.example for a in arms):
        one_shot = load_dataset("one-shot").cases
    spec = RunSpec(model=model_id or NO_MODEL, model_revision=model_revision,
                   server_profile=server_profile if client else None, scorer=scorer, out_dir=out_dir,
                   concurrency=concurrency, progress=progress)
    run_id = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    executor = None
    ex_cm = None
    try:
        if any(a.needs_executor for a in arms):
            from executor.api import Executor
            ex_cm = Executor(backend=executor_backend)
            executor = ex_cm.__enter__()
        manifest_fields = dict(
            arms={a.name: a.config() for a in arms}, arm_config_hashes={a.name: a.config_hash() for a in arms},
            prompts=template_hashes(), seeds=seeds, scorer=scorer, n_cases=len(cases),
            case_ids=[c.case_id for c in cases],
            model={"id": spec.model, "revision": model_revision, "server_profile": spec.server_profile},
            client=client.describe() if client else None, server=server,
            executor=executor.describe() if executor is not None and hasattr(executor, "describe") else None,
        )
        from harness.model.synthetic import is_synthetic_model
        if is_synthetic_model(spec.model) or (server or {}).get("synthetic"):
            manifest_fields["synthetic"] = True   # rehearsal-server output: never a model result
        write_run_manifest(out_dir, run_id, dataset, **manifest_fields)
        summaries = await run_arms(arms, dataset, seeds, spec, client=client, executor=executor, one_shot=one_shot,
                                   cases=cases, all_cases=all_cases)
        write_run_manifest(out_dir, run_id, dataset, **manifest_fields,
                           summaries=[s.__dict__ for s in summaries],
                           requests_sent=client.sent if client else 0, cache_hits=client.cache_hits if client else 0)
        return summaries
    finally:
        if ex_cm is not None:
            ex_cm.__exit__(None, None, None)
        if client is not None:
            await client.aclose()


@click.command("score")
@click.option("--results", "results_dir", default="results", show_default=True,
              type=click.Path(exists=True, file_okay=False), help="Results root to read.")
@click.option("--scorer", default=None, type=click.Choice(sorted(SCORERS)),
              help="Rescore with this scorer [default: each row's own scorer].")
@click.option("--markdown", "markdown_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the summary table here.")
@click.option("--arm", "arm_filter", multiple=True, help="Only these arms.")
def score(results_dir, scorer, markdown_path, arm_filter):
    """Rescore every stored row from its replies/answer and print a summary (arm, n, accuracy, outcomes).

    Exits 1 if a stored score disagrees with the rescored one under the row's own scorer."""
    from harness.rescore import CaseIndex, RescoreError, rescore_record
    from harness.runner import summary_markdown
    from harness.store import iter_located_records

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
    table = summary_markdown(rescored)
    click.echo(table)
    if markdown_path:
        Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_path).write_text(table)
    for m in mismatches:
        click.echo(f"MISMATCH {m}", err=True)
    if mismatches:
        sys.exit(1)

