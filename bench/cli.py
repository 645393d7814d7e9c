"""`python -m bench ...`: the benchmarks' one command line (`make bench-*`, `make rehearse` call it). Thin commands:
each builds its module's options and calls it; the exit status is the module's (1: a target missed or a check
failed)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.core.paths import REPO_ROOT

OUT = REPO_ROOT / "runs" / "bench"
_path = click.Path(path_type=Path)
_Command = TypeVar("_Command", bound=Callable[..., Any])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """The kit's benchmarks and probes (JSON reports under runs/bench/)."""


@main.command("executor")
@click.option("--out", type=_path, default=OUT / "executor.json", show_default=True)
@click.option("--n-seq", type=int, default=200, show_default=True, help="Back-to-back programs per mode.")
@click.option("--n-spaced", type=int, default=100, show_default=True, help="Programs sent one at a time, 50 ms apart.")
@click.option("--bursts", type=int, default=8, show_default=True, help="Bursts of 32 programs.")
@click.option("--burst-gap", type=float, default=0.5, show_default=True, help="Seconds between bursts.")
@click.option(
    "--n-mixed", type=int, default=200, show_default=True, help="Programs of the mixed pattern (1 in 20 hits a limit)."
)
@click.option("--n-pool", type=int, default=1100, show_default=True, help="Programs through run_many.")
@click.option("--n-docker", type=int, default=20, show_default=True, help="Programs for docker run per program.")
@click.option("--workers", type=int, default=None, help="Workers per backend [the cores].")
@click.option("--spares", type=int, default=None, help="Spare children per supervisor [the executor's].")
@click.option(
    "--python", "python", default=None, help="Interpreter of the bare-subprocess baseline [/usr/bin/python3]."
)
@click.option("--image", default=None, help="Executor image [the built one].")
@click.option("--runtime", default=None, help="Docker runtime of the container backend [runsc].")
@click.option("--n-phases", type=int, default=100, show_default=True, help="Children of the phase breakdown (0: skip).")
@click.option(
    "--harness-dataset", default="dev", show_default=True, help="Dataset of the harness end-to-end run ('' to skip)."
)
@click.option("--harness-concurrency", type=int, default=32, show_default=True)
@click.option(
    "--fake-server-port", type=int, default=18431, show_default=True, help="Port of the scripted fake server (0: any)."
)
@click.option(
    "--baseline-ref", default="", help="Git ref of an A/B baseline executor, e.g. cc9e450 (before issue 33) [no A/B]."
)
@click.option(
    "--baseline-image", default=None, help="Executor image built from --baseline-ref [mathsolver-executor:latest]."
)
@click.option(
    "--ab-rounds", type=click.IntRange(1), default=3, show_default=True, help="Interleaved rounds of the A/B."
)
@click.option(
    "--ab-n", type=click.IntRange(1), default=100, show_default=True, help="Programs per mix and round in the A/B."
)
@click.option("--only-ab", is_flag=True, help="Measure the A/B section alone.")
def executor_cmd(**kw: Any) -> None:  # every option, passed on to executor.Options by name
    """Executor latency patterns, 1,100 programs, baselines, the phase breakdown, the harness end to end."""
    from bench import executor

    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        opts = executor.Options(**kw)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    sys.exit(executor.main(opts))


@main.command("honest-corpus")
@click.option("--backend", type=click.Choice(["process", "container"]), default="process", show_default=True)
@click.option(
    "--executor-src",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Directory holding the executor package to measure, e.g. an earlier commit's (git archive REF "
    "executor | tar -x -C DIR) [this checkout's].",
)
@click.option("--image", default=None, help="Executor image for the container backend [the built one].")
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True)
@click.option("--out", type=_path, default=None, help="Write the JSON here [stdout].")
def honest_corpus_cmd(
    backend: str, executor_src: Path | None, image: str | None, workers: int, out: Path | None
) -> None:
    """How many honest programs (bench/honest_programs.py and the CPU demo's) an executor refuses."""
    from bench import honest_corpus

    try:
        sys.exit(honest_corpus.main(backend, executor_src, image, workers, out))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@main.command("vllm-cpu")
@click.option("--out", type=_path, default=OUT / "vllm-cpu.json", show_default=True)
@click.option("--prompt-tokens", type=click.IntRange(1), default=1000, show_default=True)
@click.option("--decode-tokens", type=click.IntRange(2), default=64, show_default=True)
def vllm_cpu_cmd(out: Path, prompt_tokens: int, decode_tokens: int) -> None:
    """The vLLM CPU twin started by the kit's launcher: start-up, prefill/decode tokens/s, RSS (run it alone)."""
    from bench import vllm_cpu

    sys.exit(vllm_cpu.main(out, prompt_tokens, decode_tokens))


@main.command("gpu-hours")
@click.option("--out", type=_path, default=OUT / "gpu-hours.json", show_default=True)
@click.option(
    "--cases",
    type=click.IntRange(1),
    default=8,
    show_default=True,
    help="Cases of the CPU twin's sample (both orders: about 50 min at this machine's prefill rate).",
)
@click.option(
    "--copies",
    type=click.IntRange(1),
    default=None,
    help="Copies of the bundled slice in the H100 replays [the paper's cases / the slice's].",
)
@click.option("--no-twin", is_flag=True, help="The replays only: start no server.")
@click.option(
    "--population",
    type=click.IntRange(1),
    default=None,
    help="The first N cases of the bundled slice only, for a tiny run [all 110].",
)
@click.option("--models", default=None, help="Comma-separated model keys [qwen2.5-7b,qwen2.5-32b-awq].")
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Scratch directory for the replays' inputs and outputs [a temporary one].",
)
def gpu_hours_cmd(
    out: Path,
    cases: int,
    copies: int | None,
    no_twin: bool,
    work: Path | None,
    population: int | None,
    models: str | None,
) -> None:
    """vLLM's prefix-cache counters under both request orders (the CPU twin, then the engine's scheduler at the
    H100's settings) and the H100 hours they project for the paper's run."""
    from bench import gpu_hours

    chosen = tuple(m for m in (models or "").replace(",", " ").split()) or gpu_hours.MODELS
    unknown = [m for m in chosen if m not in gpu_hours.ARCHITECTURES]
    if unknown:
        raise click.BadParameter(
            f"no architecture recorded for {', '.join(unknown)}; known: {', '.join(gpu_hours.ARCHITECTURES)}",
            param_hint="--models",
        )
    sys.exit(
        gpu_hours.main(
            gpu_hours.Options(
                out=out, cases=cases, copies=copies, twin=not no_twin, work=work, population=population, models=chosen
            )
        )
    )


@main.command("demo-models")
@click.option("--out", type=_path, default=OUT / "demo-models.json", show_default=True)
@click.option(
    "--models",
    default=None,
    help="Comma-separated candidates: catalogued GGUF ids and vllm-cpu:<id> "
    "[every catalogued GGUF and vllm-cpu:qwen2.5-coder-0.5b-instruct].",
)
@click.option("--cases", type=click.IntRange(1), default=8, show_default=True)
@click.option("--threads", type=click.IntRange(1), default=None, help="Server threads [the cores].")
@click.option(
    "--parallel", type=click.IntRange(1), default=1, show_default=True, help="Server slots and cases in flight."
)
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results directory [a temporary one].",
)
def demo_models_cmd(
    out: Path, models: str | None, cases: int, threads: int | None, parallel: int, work: Path | None
) -> None:
    """Which model the CPU demo uses, by measurement: correct per arm, tokens, wall and server CPU time, download."""
    from bench import demo_models

    sys.exit(demo_models.main(out, models, cases, threads, parallel, work))


@main.command("demo-slots")
@click.option("--out", type=_path, default=OUT / "demo-slots.json", show_default=True)
@click.option("--slots", default="1,2,4", show_default=True, help="Slot counts to measure, comma-separated.")
@click.option("--cases", type=click.IntRange(1), default=8, show_default=True, help="The demo's cases (as DEMO_CASES).")
@click.option("--model", default=None, help="The model [harness/model/cpu_models.json's role demo].")
@click.option("--threads", type=click.IntRange(1), default=None, help="Server threads [the cores].")
@click.option(
    "--write-lock",
    is_flag=True,
    help="Write the chosen slot count and its rate into cpu_models.json (refused unless measured alone).",
)
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results directory [a temporary one].",
)
def demo_slots_cmd(
    out: Path, slots: str, cases: int, model: str | None, threads: int | None, write_lock: bool, work: Path | None
) -> None:
    """The demo's llama.cpp slot count by measurement: wall, tokens/s, per-case outcomes against the committed demo."""
    from bench import demo_slots

    try:
        counts = sorted({int(x) for x in slots.split(",") if x.strip()})
    except ValueError:
        raise click.BadParameter(f"{slots!r}: comma-separated slot counts, e.g. 1,2,4", param_hint="--slots") from None
    if not counts or min(counts) < 1:
        raise click.BadParameter(f"{slots!r}: slot counts are 1 or more", param_hint="--slots")
    sys.exit(demo_slots.main(out, counts, cases, model, threads, write_lock, work))


@main.command("client")
@click.option("--out", type=_path, default=OUT / "client.json", show_default=True)
@click.option("--n", type=click.IntRange(1), default=2200, show_default=True, help="Requests per client per round.")
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True)
@click.option("--concurrency", type=click.IntRange(1), default=32, show_default=True)
def client_cmd(out: Path, n: int, rounds: int, concurrency: int) -> None:
    """The kit's model client against bare httpx and aiohttp, on the rehearsal server (a fake)."""
    from bench import client

    sys.exit(client.main(out, n, rounds, concurrency))


@main.command("stats")
@click.option("--out", type=_path, default=OUT / "stats.json", show_default=True)
@click.option("--draws", type=click.IntRange(100), default=None, help="Bootstrap draws [the kit's 10,000].")
@click.option(
    "--loop-draws", type=click.IntRange(2), default=200, show_default=True, help="Draws the per-draw loop is timed on."
)
@click.option(
    "--repeats",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="Timed repeats of the array version (median kept).",
)
def stats_cmd(out: Path, draws: int | None, loop_draws: int, repeats: int) -> None:
    """The full s5 table on synthetic correctness data against a per-draw loop."""
    from bench import stats
    from harness.analysis.stats.bootstrap import DEFAULT_DRAWS

    sys.exit(stats.main(out, draws or DEFAULT_DRAWS, loop_draws, repeats))


@main.command("scoring")
@click.option("--out", type=_path, default=OUT / "scoring.json", show_default=True)
@click.option("--size", type=click.IntRange(1), default=None, help="Reply length in characters [100,000].")
def scoring_cmd(out: Path, size: int | None) -> None:
    """Every scorer on ~100 kB adversarial replies (each call < 1 s)."""
    from bench import scoring

    sys.exit(scoring.main(out, size or scoring.SIZE))


def timed_over_a_result_set(name: str, what: str) -> Callable[[_Command], _Command]:
    """RESULTS, --label, --out (OUT/<name>.json) and --code: the options of a timing over one result set whose
    figures merge under `runs.<label>`, optionally with another checkout's harness package."""

    def wrap(f: _Command) -> _Command:
        for option in reversed(
            (
                click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path)),
                click.option("--label", default="run", show_default=True),
                click.option("--out", type=_path, default=OUT / f"{name}.json", show_default=True),
                click.option(
                    "--code",
                    type=click.Path(exists=True, file_okay=False, path_type=Path),
                    default=None,
                    help=f"Checkout whose harness package runs {what}.",
                ),
            )
        ):
            f = option(f)
        return f

    return wrap


@main.command("stages")
@timed_over_a_result_set("stages", "the stages")
def stages_cmd(results: Path, label: str, out: Path, code: Path | None) -> None:
    """Wall and CPU time of each post-run stage over one result set."""
    from bench import stages

    sys.exit(stages.main(results, label, out, code))


@main.command("compare-timing")
@timed_over_a_result_set("compare-timing", "the comparison")
@click.option("--draws", type=click.IntRange(100), default=10_000, show_default=True)
def compare_timing_cmd(results: Path, label: str, out: Path, code: Path | None, draws: int) -> None:
    """Wall, CPU and peak memory of `harness compare` over one result set, cold and warm analysis cache."""
    from bench import compare_timing

    sys.exit(compare_timing.main(results, label, out, code, draws))


@main.command("read-timing")
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--before",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="Another checkout's tree whose store reads the set as the 'before'.",
)
@click.option("--repeat", type=click.IntRange(1), default=3, show_default=True, help="Alternating before/after pairs.")
@click.option("--out", type=_path, default=OUT / "read-timing.json", show_default=True)
def read_timing_cmd(results: Path, before: Path, repeat: int, out: Path) -> None:
    """Every record of RESULTS read by the store's reader: this checkout against --before, alternately."""
    from bench import read_timing

    sys.exit(read_timing.main(results, before, out, repeat))


@main.command("rehearse")
@click.option("--size", type=click.Choice(["full", "small"]), default="full", show_default=True)
@click.option("--out", type=_path, default=REPO_ROOT / "runs" / "rehearsal", show_default=True)
@click.option("--bench", type=_path, default=OUT / "pipeline.json", show_default=True)
@click.option(
    "--seed",
    type=int,
    default=20261123,
    show_default=True,
    help="Rehearsal seed (server replies, fault draws, kill points).",
)
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="[the vLLM profile's max_num_seqs, as make reproduce]"
)
@click.option(
    "--executor-backend", type=click.Choice(["container", "process", "auto"]), default="container", show_default=True
)
@click.option("--no-resume-check", is_flag=True)
@click.option(
    "--resume-scope",
    type=click.Choice(["first-model", "all-models"]),
    default="first-model",
    show_default=True,
    help="first-model: rerun only the model the kills land in, the other's files copied "
    "from the reference; all-models: rerun both.",
)
@click.option("--port", type=int, default=None, help="The rehearsal server's port [a free one].")
@click.option(
    "--per-calculator", type=click.IntRange(1), default=None, help="Override the size's cases per calculator."
)
@click.option("--seeds", default=None, help="Override the size's seeds, e.g. 42-43.")
@click.option(
    "--order",
    type=click.Choice(["arm-major", "case-major"]),
    default=None,
    help="The request order of the runs [the one `make reproduce` uses]; the report says which ran.",
)
def rehearse_cmd(
    size: str,
    out: Path,
    bench: Path,
    seed: int,
    concurrency: int | None,
    executor_backend: str,
    no_resume_check: bool,
    resume_scope: str,
    port: int | None,
    per_calculator: int | None,
    seeds: str | None,
    order: str | None,
) -> None:
    """The whole pipeline at the paper's workload shape against the rehearsal server (a scripted fake)."""
    from bench import rehearsal

    settings = rehearsal.RehearsalSettings(
        size=size,
        out=out,
        bench=bench,
        seed=seed,
        concurrency=concurrency,
        executor_backend=executor_backend,
        resume_check=not no_resume_check,
        resume_scope=resume_scope,
        port=port,
        per_calculator=per_calculator,
        seeds=seeds,
        order=order,
    )
    sys.exit(rehearsal.main(settings))


@main.command("synthesize-fullsize")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=_path)
@click.option("--cases", type=click.IntRange(1), default=1100, show_default=True)
@click.option("--seeds", default="42-46", show_default=True)
def synthesize_cmd(source: Path, out: Path, cases: int, seeds: str) -> None:
    """A SYNTHETIC full-size result set replicated from a rehearsal's (SOURCE: a `make rehearse` --out)."""
    import json

    from bench.fullsize import FullsizeError, synthesize
    from harness.core.seeds import parse_seeds

    try:
        info = synthesize(source, out, cases, parse_seeds(seeds))
    except FullsizeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(info, indent=1, sort_keys=True))


@main.command("compare-records")
@click.argument("a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, file_okay=False, path_type=Path))
def compare_records_cmd(a: Path, b: Path) -> None:
    """Two rehearsals' reference records (A/results, B/results: `make rehearse OUT=...`) by content, without the
    fields that measure time or transport and `dataset_path`; exit 1 when they differ."""
    from bench.compare import compare_records

    c = compare_records(a / "results", b / "results")
    click.echo(
        f"{c['records_a']} vs {c['records_b']} records; identical by content: {c['identical']}; differing: "
        f"{len(c['differing'])}; only one side: {c['one_side_only']}"
    )
    sys.exit(0 if c["same"] else 1)
