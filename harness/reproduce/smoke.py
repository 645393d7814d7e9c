"""`harness serve smoke`: start one model's server, wait until it serves, send one real chat request per reply
form (a program, a final-answer reply, a library extraction's JSON object) on one case, check each reply parses, record
what the server logged (vLLM version, sampling defaults), stop. `make reproduce` runs it first for every model, so
a server that cannot start, a request the server refuses or replies no parser reads fail within minutes, named,
before the multi-hour run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.arms import prompts
from harness.arms.library_inputs import calculator_for
from harness.arms.registry import ARMS, smoke_probes
from harness.arms.solvers import Context, ExtractLibrarySolver
from harness.data.dataset import Case, load_dataset
from harness.model.client import ModelClient, ModelRequestError
from harness.model.serving import Launcher, LaunchError
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.errors import ReproduceError
from harness.scoring.scorers import score_reply

# One arm per reply form the paper's arms ask for, whose reply must parse as one: the arms whose registry entry says
# so (harness.arms.spec.PaperRole.smoke_probe; harness.arms.registry.smoke_probes).


def smoke_description() -> str:
    """What the smoke step does, with the probes the registry names (the plan prints it)."""
    probes = ", ".join(f"{form}: {arm}" for form, arm in smoke_probes())
    return (
        "start the server, wait until it lists the model, send one chat request per reply form "
        f"({probes}) on one covered case with "
        "the arms' own temperature and token cap, check each reply parses (a program, a final answer, "
        "a JSON object), record the logged vLLM version and sampling defaults, stop"
    )


class SmokeError(ReproduceError):
    """The smoke test failed; the message names the model and the cause."""


@dataclass
class FormResult:
    reply_form: str
    arm: str
    parsed: bool
    finish_reason: str | None
    detail: str


def _parses(reply_form: str, text: str, case: Case) -> tuple[bool, str]:
    if reply_form == "program":
        ok = prompts.extract_program(text) is not None
        return ok, "a program" if ok else "no program in the reply"
    if reply_form == "reply":
        parsed = score_reply(text, case, "paper").parsed
        return parsed is not None, f"answer {parsed!r}" if parsed is not None else "no final answer read"
    obj = prompts.extract_json_object(text)
    return obj is not None, "a JSON object" if obj is not None else "no JSON object in the reply"


async def _requests(launcher: Launcher, case: Case, one_shot: list[Case], timeout: float) -> list[FormResult]:
    out = []
    async with ModelClient(
        launcher.base_url, launcher.model_id, profile=launcher.server_profile, timeout=timeout, max_retries=2
    ) as client:
        for reply_form, arm_name in smoke_probes():
            arm = ARMS[arm_name]
            ctx = Context(case=case, arm=arm, seed=42, client=client, one_shot=one_shot)
            # the arm's own first request (extract-lib's is its extraction prompt, greedy, the solver's token cap)
            if reply_form == "extract" and isinstance(arm.solver, ExtractLibrarySolver):
                r = await ctx.chat(ctx.prompt(), temperature=0.0, max_tokens=arm.solver.max_tokens)
            else:
                r = await ctx.chat(ctx.prompt(), temperature=arm.temperature, max_tokens=arm.max_tokens)
            ok, detail = _parses(reply_form, r.text, case)
            out.append(FormResult(reply_form, arm_name, ok, r.finish_reason, detail))
    return out


def smoke(
    cfg: ReproduceConfig, model_key: str, *, echo: Callable[[str], None] = print, log_dir: Path | None = None
) -> dict:
    """Smoke-test one model's server; returns what it found, raises SmokeError naming the cause."""
    kind = cfg.kind
    ds = load_dataset(cfg.dataset)
    # a case every probe can answer: one the library covers when a probe calls the library (its extraction prompt)
    library = [ARMS[a] for _, a in smoke_probes() if ARMS[a].solver.uses_library]
    case = next((c for c in ds.cases if all(calculator_for(a, c.calculator_id) is not None for a in library)), None)
    if case is None:
        raise SmokeError(f"smoke {model_key}: no case of {ds.name} is covered by the library (the extraction prompt)")
    launcher = kind.for_model(model_key, cfg.launch_options(log_dir or cfg.out / "server-logs" / "smoke"))
    echo(f"[smoke {model_key}] starting {cfg.launcher} server: {' '.join(launcher.command())}")
    found: dict = {"model_key": model_key, "case_id": case.case_id}
    try:
        launcher.start()
        launcher.wait_ready(cfg.ready_timeout or kind.ready_timeout)
        results = asyncio.run(_requests(launcher, case, load_dataset("one-shot").cases, kind.smoke_request_timeout))
        server = launcher.describe()
    except (LaunchError, ModelRequestError) as exc:
        raise SmokeError(f"smoke {model_key}: {exc}") from None
    finally:
        launcher.stop()
    found["reply_forms"] = [r.__dict__ for r in results]
    found["vllm_version"] = server.server_version
    found["sampling_defaults_logged"] = server.sampling_defaults_logged
    for r in results:
        echo(
            f"[smoke {model_key}] {r.reply_form} ({r.arm}): {'ok' if r.parsed else 'FAIL'}, {r.detail}, "
            f"finish {r.finish_reason}"
        )
    if kind.logs_sampling_defaults:
        echo(
            f"[smoke {model_key}] server version {found['vllm_version']}, sampling defaults logged: "
            f"{found['sampling_defaults_logged']}"
        )
    bad = [r for r in results if not r.parsed]
    if bad:
        raise SmokeError(f"smoke {model_key}: " + "; ".join(f"{r.reply_form} reply: {r.detail}" for r in bad))
    return found
