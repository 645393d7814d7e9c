"""`make gpu-acceptance` (`harness serve acceptance`): the first thing to run on a new box, before a 15-hour run.
One report, printed and written as JSON (`gpu-acceptance.json`), which the plan reads (`measured_rates`).

Phases (`--launcher vllm`, the H100; each server is the kit's own launcher's, started and stopped here):

  box          GPU-ONLY  the driver, the CUDA version it supports, each GPU's model, memory, compute capability
               (nvidia-smi), against the image's CUDA requirement (image.lock.json `cuda_requirement`)
  default      the 7B's server as `make reproduce` starts it (the paper's kernels): it starts, its /version, the
               kernels it logged; prefill and decode tokens/s at the plan's concurrency (serving.json max_num_seqs)
  fa2          GPU-ONLY  deterministic mode as the kit runs it (VLLM_BATCH_INVARIANT=1, FLASH_ATTN, FlashAttention 2):
               a set of greedy prompts served alone (one request at a time), then again while long prompts arrive
               mid-decode (sent once every greedy stream has its first tokens, so their prefills share batches with
               the greedy decodes: the FA3 failure of vllm-project/vllm #47069/#51902); token ids and logprobs
               compared exactly; its prefill/decode tokens/s (the deterministic slowdown, measured)
  fa3          GPU-ONLY  the same check with FlashAttention 3 (vLLM 0.32.0's SM90 default), for contrast
  tp2          GPU-ONLY, 2+ GPUs  the fa2 check under tensor parallel 2 (Mistral-7B as the plan serves it when
               HF_TOKEN is set, else the 7B at tensor parallel 2: the same all-reduce path)

With `--launcher vllm-cpu` (CI) the same code runs against the CPU twin: `default` (on the session's twin when
MATHSOLVER_VLLM_CPU_SERVER names one), and the determinism check on the twin's own kernels (the CPU platform refuses
batch invariance: what runs is the check's logic, not the mode); the GPU-only phases are reported as not run, each
with why. Sizes scale with the launcher (GPU_SIZES, CPU_SIZES).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx

from harness.core.paths import REPO_ROOT
from harness.data.dataset import load_dataset
from harness.model.launchers import LAUNCHERS, launcher_kind
from harness.model.prerequisites import run_quietly
from harness.model.serving import Launcher, LaunchError, LauncherSettingsError, LaunchOptions
from harness.model.vllm import locks as vllm
from harness.reproduce.errors import ReproduceError

REPORT_NAME = "gpu-acceptance.json"
DEFAULT_OUT = REPO_ROOT / "runs" / "gpu-acceptance"
REPORT_ENV = "MATHSOLVER_GPU_ACCEPTANCE"  # the report the plan reads (default DEFAULT_OUT / REPORT_NAME)
CHARS_PER_TOKEN = 4.0
PHASES = ("box", "default", "fa2", "fa3", "tp2")


@dataclass(frozen=True)
class Sizes:
    """How much each phase sends. `note_words`: the greedy prompts' note excerpt (None: the whole note)."""

    greedy_prompts: int
    greedy_tokens: int
    note_words: int | None
    long_prompts: int
    long_prompt_tokens: int
    mid_decode_after: int  # tokens every greedy stream must have before the long prompts are sent
    prefill_prompt_tokens: int
    decode_tokens: int


GPU_SIZES = Sizes(
    greedy_prompts=8,
    greedy_tokens=128,
    note_words=None,
    long_prompts=4,
    long_prompt_tokens=6000,
    mid_decode_after=8,
    prefill_prompt_tokens=1500,
    decode_tokens=256,
)
CPU_SIZES = Sizes(
    greedy_prompts=2,
    greedy_tokens=8,
    note_words=40,
    long_prompts=1,
    long_prompt_tokens=256,
    mid_decode_after=2,
    prefill_prompt_tokens=96,
    decode_tokens=12,
)


def report_path() -> Path:
    return Path(os.environ.get(REPORT_ENV) or DEFAULT_OUT / REPORT_NAME)


# --------------------------------------------------------------------------- the box (GPU-only)


def box_facts() -> dict:
    """nvidia-smi's GPUs and driver, and the CUDA version the driver supports (its header), against the image's."""
    req = vllm.image_lock().get("cuda_requirement") or {}
    if shutil.which("nvidia-smi") is None:
        return {"gpu": False, "why": "nvidia-smi not found: no NVIDIA driver on this machine", "requirement": req}
    q = run_quietly(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,compute_cap", "--format=csv,noheader"])
    gpus = [
        dict(zip(("name", "memory", "driver", "compute_capability"), (x.strip() for x in ln.split(","))))
        for ln in (q.stdout.splitlines() if q and q.returncode == 0 else [])
        if ln.strip()
    ]
    head = run_quietly(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([0-9.]+)", head.stdout if head and head.returncode == 0 else "")
    cuda = m.group(1) if m else None
    need = req.get("min_driver")
    driver_ok = bool(gpus) and need is not None and all(_version(g["driver"]) >= _version(need) for g in gpus)
    return {
        "gpu": bool(gpus),
        "gpus": gpus,
        "driver_cuda": cuda,
        "requirement": req,
        "driver_ok": driver_ok,
        "why": None if gpus else "nvidia-smi lists no GPU",
    }


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


# --------------------------------------------------------------------------- requests


async def _stream(
    client: httpx.AsyncClient,
    base_url: str,
    model: str,
    messages: list[dict],
    max_tokens: int,
    *,
    first_tokens: asyncio.Event | None = None,
    after: int = 0,
    ignore_eos: bool = False,
) -> dict:
    """One greedy chat completion, streamed: its token ids and logprobs as they arrive (vLLM's
    return_tokens_as_token_ids), the prompt size, the finish reason. `first_tokens` is set once `after` tokens came."""
    body = {
        "model": model,
        "messages": messages,
        "temperature": 0,
        "max_tokens": max_tokens,
        "logprobs": True,
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_tokens_as_token_ids": True,
    }
    if ignore_eos:
        body["ignore_eos"] = True
    tokens: list[str] = []
    logprobs: list[float] = []
    out: dict = {"finish_reason": None, "prompt_tokens": None}
    async with client.stream("POST", f"{base_url}/chat/completions", json=body) as resp:
        if resp.status_code != 200:
            raise ReproduceError(
                f"POST {base_url}/chat/completions answered {resp.status_code}: "
                f"{(await resp.aread()).decode(errors='replace')[:300]}"
            )
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or []:
                for t in (choice.get("logprobs") or {}).get("content") or []:
                    tokens.append(t["token"])
                    logprobs.append(t["logprob"])
                out["finish_reason"] = choice.get("finish_reason") or out["finish_reason"]
            if chunk.get("usage"):
                out["prompt_tokens"] = chunk["usage"].get("prompt_tokens")
            if first_tokens is not None and len(tokens) >= after:
                first_tokens.set()
    if first_tokens is not None:
        first_tokens.set()  # a completion shorter than `after` must not hold the long prompts back
    return {**out, "tokens": tokens, "logprobs": logprobs}


def greedy_messages(sizes: Sizes) -> tuple[list[list[dict]], list[list[dict]]]:
    """The greedy prompts (a case's question over its note, the bundled test slice's shortest notes first) and the
    long prompts (other cases' notes together, to about `long_prompt_tokens`)."""
    cases = sorted(load_dataset("bundled-test").cases, key=lambda c: (len(c.note), c.case_id))
    greedy = []
    for case in cases[: sizes.greedy_prompts]:
        note = case.note if sizes.note_words is None else " ".join(case.note.split()[: sizes.note_words])
        greedy.append(
            [{"role": "user", "content": f"Patient note:\n{note}\n\nQuestion: {case.question}\nAnswer briefly."}]
        )
    longs, pool = [], cases[sizes.greedy_prompts :]
    for i in range(sizes.long_prompts):
        text, j = "", i
        while len(text) < sizes.long_prompt_tokens * CHARS_PER_TOKEN and pool:
            text += pool[j % len(pool)].note + "\n\n"
            j += sizes.long_prompts
        text = text[: int(sizes.long_prompt_tokens * CHARS_PER_TOKEN)]
        longs.append([{"role": "user", "content": f"Summarise these patient notes in one sentence.\n\n{text}"}])
    return greedy, longs


async def determinism_check(base_url: str, model: str, sizes: Sizes) -> dict:
    """Greedy prompts served alone, then mixed with long prompts arriving mid-decode: identical token ids and
    logprobs per prompt, or where they first differ."""
    greedy, longs = greedy_messages(sizes)
    timeout = httpx.Timeout(3600.0, connect=30.0)
    async with httpx.AsyncClient(timeout=timeout) as client:
        t0 = time.monotonic()
        alone = [await _stream(client, base_url, model, m, sizes.greedy_tokens) for m in greedy]
        t_alone = time.monotonic() - t0
        events = [asyncio.Event() for _ in greedy]
        t0 = time.monotonic()
        tasks = [
            asyncio.create_task(
                _stream(client, base_url, model, m, sizes.greedy_tokens, first_tokens=e, after=sizes.mid_decode_after)
            )
            for m, e in zip(greedy, events)
        ]
        await asyncio.gather(*(e.wait() for e in events))
        long_sent_s = time.monotonic() - t0
        long_tasks = [asyncio.create_task(_stream(client, base_url, model, m, 8)) for m in longs]
        mixed = await asyncio.gather(*tasks)
        long_done = await asyncio.gather(*long_tasks)
        t_mixed = time.monotonic() - t0
    prompts = []
    for i, (a, b) in enumerate(zip(alone, mixed)):
        same_tokens = a["tokens"] == b["tokens"]
        same_logprobs = a["logprobs"] == b["logprobs"]
        first = next(
            (k for k, (x, y) in enumerate(zip(a["tokens"], b["tokens"])) if x != y),
            None if same_tokens else min(len(a["tokens"]), len(b["tokens"])),
        )
        lp_diff = max((abs(x - y) for x, y in zip(a["logprobs"], b["logprobs"])), default=0.0)
        prompts.append(
            {
                "prompt": i,
                "prompt_tokens": a["prompt_tokens"],
                "tokens": len(a["tokens"]),
                "identical_tokens": same_tokens,
                "identical_logprobs": same_logprobs,
                "first_token_difference": first,
                "max_logprob_difference": lp_diff,
            }
        )
    return {
        "greedy_prompts": len(greedy),
        "greedy_tokens": sizes.greedy_tokens,
        "long_prompts": len(longs),
        "long_prompt_tokens": [r["prompt_tokens"] for r in long_done],
        "long_prompts_sent_after_s": round(long_sent_s, 2),
        "seconds": {"alone": round(t_alone, 1), "mixed": round(t_mixed, 1)},
        "identical_tokens": sum(p["identical_tokens"] for p in prompts),
        "identical_logprobs": sum(p["identical_logprobs"] for p in prompts),
        "prompts": prompts,
    }


async def throughput(base_url: str, model: str, concurrency: int, sizes: Sizes) -> dict:
    """Prefill tokens/s: `concurrency` prompts of about prefill_prompt_tokens at once, one output token each; decode
    tokens/s: `concurrency` short prompts at once, decode_tokens each (ignore_eos), after their prefill.
    `concurrency` is the launcher's, what a run keeps in flight (the plan's: max_num_seqs for vLLM)."""
    _, longs = greedy_messages(replace(sizes, long_prompts=concurrency, long_prompt_tokens=sizes.prefill_prompt_tokens))
    # each prompt opens with its own tag, so no request reuses another's (or an earlier phase's) cached prefix: the
    # prefill rate counts computed tokens
    tag = time.time_ns()
    longs = [[{"role": "user", "content": f"[{tag}-{i}] {m[0]['content']}"}] for i, m in enumerate(longs)]
    short = [
        [{"role": "user", "content": f"[{tag}-{i}] Count from {i} upwards, one number per line."}]
        for i in range(concurrency)
    ]
    async with httpx.AsyncClient(timeout=httpx.Timeout(3600.0, connect=30.0)) as client:
        t0 = time.monotonic()
        pre = await asyncio.gather(*(_stream(client, base_url, model, m, 1) for m in longs))
        t_prefill = time.monotonic() - t0
        t0 = time.monotonic()
        dec = await asyncio.gather(
            *(_stream(client, base_url, model, m, sizes.decode_tokens, ignore_eos=True) for m in short)
        )
        t_decode = time.monotonic() - t0
    prompt_tokens = sum(r["prompt_tokens"] or 0 for r in pre)
    decoded = sum(len(r["tokens"]) for r in dec)
    return {
        "concurrency": concurrency,
        "prefill": {
            "requests": len(pre),
            "prompt_tokens": prompt_tokens,
            "seconds": round(t_prefill, 2),
            "tokens_per_s": round(prompt_tokens / t_prefill, 1),
        },
        "decode": {
            "requests": len(dec),
            "completion_tokens": decoded,
            "seconds": round(t_decode, 2),
            "tokens_per_s": round(decoded / t_decode, 1),
            "note": "includes the short prompts' prefill (a few dozen tokens each)",
        },
    }


# --------------------------------------------------------------------------- phases


@dataclass
class Phase:
    name: str
    ran: bool
    why: str | None = None  # why it did not run (GPU-only, one GPU, ...)
    seconds: float | None = None
    server: dict | None = None  # what the server said: version, kernels logged, command
    determinism: dict | None = None
    throughput: dict | None = None
    error: str | None = None


def acceptance_kinds() -> list[str]:
    """The launcher kinds gpu-acceptance runs (those that name the model it serves)."""
    return [name for name, kind in LAUNCHERS.items() if kind.acceptance_model]


def _server_phase(
    name: str,
    kind: type[Launcher],
    model: str,
    sizes: Sizes,
    *,
    out: Path,
    deterministic: bool,
    attention_config: dict | None = None,
    tensor_parallel: int | None = None,
    check: bool,
    rates: bool,
    echo: Callable[[str], None],
) -> Phase:
    """Start one server through the launcher kind, run the phase's checks against it, stop it."""
    started = time.monotonic()
    launcher = kind.for_model(model, LaunchOptions(deterministic=deterministic, log_dir=out / "server-logs" / name))
    if attention_config is not None:
        launcher.attention_config = attention_config
    if tensor_parallel is not None:
        launcher.flags = {**launcher.flags, "tensor_parallel_size": tensor_parallel}
    phase = Phase(name, True)
    try:
        echo(f"[{name}] starting: {' '.join(launcher.command())}")
        launcher.start()
        launcher.wait_ready(kind.ready_timeout)
        info = launcher.describe()
        phase.server = {
            "version": info.server_version,
            "kernels_logged": info.kernels_logged,
            "args": list(info.args),
            "env": info.env,
            "image": info.image,
            "ready_s": round(time.monotonic() - started, 1),
            "attached": bool(info.facts.get("attached")),
        }
        echo(
            f"[{name}] ready in {phase.server['ready_s']} s: vLLM {info.server_version}, kernels {info.kernels_logged}"
        )
        if check:
            phase.determinism = asyncio.run(determinism_check(launcher.base_url, launcher.model_id, sizes))
            d = phase.determinism
            echo(
                f"[{name}] determinism: {d['identical_tokens']}/{d['greedy_prompts']} identical tokens, "
                f"{d['identical_logprobs']}/{d['greedy_prompts']} identical logprobs"
            )
        if rates:
            phase.throughput = asyncio.run(
                throughput(launcher.base_url, launcher.model_id, launcher.concurrency, sizes)
            )
            t = phase.throughput
            echo(
                f"[{name}] prefill {t['prefill']['tokens_per_s']} tokens/s, decode {t['decode']['tokens_per_s']} "
                f"tokens/s at concurrency {t['concurrency']}"
            )
    except (LaunchError, LauncherSettingsError, ReproduceError, httpx.HTTPError, vllm.PinError) as exc:
        phase.error = f"{type(exc).__name__}: {exc}"
        echo(f"[{name}] FAILED: {phase.error}")
    finally:
        launcher.stop()
        phase.seconds = round(time.monotonic() - started, 1)
    return phase


def run_acceptance(
    launcher_name: str,
    *,
    out: Path = DEFAULT_OUT,
    phases: tuple[str, ...] = PHASES,
    echo: Callable[[str], None] = print,
) -> dict:
    """Every phase (module docstring); the report, also written to out/gpu-acceptance.json."""
    kind = _acceptance_kind(launcher_name)
    gpu_path, model = kind.gpu, kind.acceptance_model
    sizes = GPU_SIZES if gpu_path else CPU_SIZES
    t0 = time.monotonic()
    load0 = _loadavg()
    facts = box_facts()
    done = [_phase(name, kind, model, sizes, facts, out=out, echo=echo) for name in phases]
    report = {
        "kind": "gpu-acceptance",
        "launcher": launcher_name,
        "gpu": gpu_path and facts["gpu"],
        "model": model,
        "sizes": asdict(sizes),
        "box": facts,
        "phases": [asdict(p) for p in done],
        "rates": measured_from(done, model) if gpu_path and facts["gpu"] else None,
        "seconds": round(time.monotonic() - t0, 1),
        "loadavg": {"start": load0, "end": _loadavg()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "verdict": verdict(done, gpu_path),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_NAME).write_text(json.dumps(report, indent=1) + "\n")
    return report


def _acceptance_kind(launcher_name: str) -> type[Launcher]:
    """The launcher kind gpu-acceptance runs (one that names its acceptance model); ReproduceError otherwise."""
    try:
        kind = launcher_kind(launcher_name)
    except LauncherSettingsError as exc:
        raise ReproduceError(str(exc)) from None
    if not kind.acceptance_model:
        raise ReproduceError(f"gpu-acceptance runs the {' or '.join(acceptance_kinds())} launcher, not {launcher_name}")
    return kind


NOT_GPU = "GPU-only: the CPU twin runs no FlashAttention and refuses batch invariance (VLLM_BATCH_INVARIANT)"


def _phase(
    name: str, kind: type[Launcher], model: str, sizes: Sizes, facts: dict, *, out: Path, echo: Callable[[str], None]
) -> Phase:
    """One phase run, or why it is not run here (GPU-only on the CPU twin or without a GPU, one GPU for tp2)."""
    gpu_path = kind.gpu
    run = functools.partial(_server_phase, name, kind, sizes=sizes, out=out, echo=echo)
    if name == "box":
        return Phase(
            "box",
            gpu_path and facts["gpu"],
            None if gpu_path and facts["gpu"] else ("GPU-only: " + (facts.get("why") or "no GPU")),
        )
    if name == "default":
        return run(model, deterministic=False, check=not gpu_path, rates=True)
    if not gpu_path:
        return Phase(name, False, NOT_GPU if name != "tp2" else "GPU-only: tensor parallel 2 needs 2 GPUs")
    if not facts["gpu"]:
        return Phase(name, False, f"no GPU on this box ({facts.get('why')})")
    if name == "fa2":
        return run(model, deterministic=True, check=True, rates=True)
    if name == "fa3":
        return run(model, deterministic=True, attention_config={"flash_attn_version": 3}, check=True, rates=False)
    if name != "tp2":
        raise ValueError(f"unknown phase {name!r}; phases: {', '.join(PHASES)}")
    if len(facts["gpus"]) < 2:
        return Phase("tp2", False, f"{len(facts['gpus'])} GPU(s): tensor parallel 2 needs 2")
    if os.environ.get("HF_TOKEN"):
        return run("mistral-7b", deterministic=True, check=True, rates=False)
    return run(model, deterministic=True, tensor_parallel=2, check=True, rates=False)


def measured_from(phases: list[Phase], model: str) -> dict:
    """The rates the plan reads: the default server's (the paper's kernels) and, measured, the deterministic
    slowdown (the fa2 server's rates against the default's)."""
    by = {p.name: p.throughput for p in phases if p.throughput}
    if "default" not in by:
        return {}
    d = by["default"]
    rates = {
        model: {
            "prefill_tokens_per_s": d["prefill"]["tokens_per_s"],
            "decode_tokens_per_s": d["decode"]["tokens_per_s"],
            "concurrency": d["concurrency"],
        }
    }
    if "fa2" in by:
        f = by["fa2"]
        rates[model]["deterministic_slowdown"] = round(
            max(
                d["prefill"]["tokens_per_s"] / f["prefill"]["tokens_per_s"],
                d["decode"]["tokens_per_s"] / f["decode"]["tokens_per_s"],
            ),
            2,
        )
    return rates


def verdict(phases: list[Phase], gpu_path: bool) -> str:
    """One line: what passed, what did not, what was not run."""
    failed = [p.name for p in phases if p.ran and p.error]
    det = {p.name: p.determinism for p in phases if p.determinism}
    fa2 = det.get("fa2")
    parts = []
    if failed:
        parts.append(f"FAILED: {', '.join(failed)}")
    if fa2 is not None:
        parts.append(
            "deterministic mode (FA2) holds under mixed batches"
            if fa2["identical_tokens"] == fa2["greedy_prompts"]
            else "deterministic mode (FA2) does NOT hold: tokens differ"
        )
    if "fa3" in det:
        parts.append(f"FA3: {det['fa3']['identical_tokens']}/{det['fa3']['greedy_prompts']} identical")
    skipped = [p.name for p in phases if not p.ran]
    if skipped:
        parts.append(f"not run: {', '.join(skipped)}" + ("" if gpu_path else " (GPU-only)"))
    return "; ".join(parts) or "ok"


def _loadavg() -> list[str]:
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return []


def measured_rates(path: Path | None = None) -> dict:
    """{model key: {prefill_tokens_per_s, decode_tokens_per_s, deterministic_slowdown?, source}} from a GPU run of
    gpu-acceptance ({} when there is none, or the report is the CPU twin's)."""
    try:
        report = json.loads((path or report_path()).read_text())
    except (OSError, ValueError):
        return {}
    kind = LAUNCHERS.get(str(report.get("launcher")))
    if report.get("kind") != "gpu-acceptance" or not report.get("gpu") or kind is None or not kind.gpu:
        return {}
    gpus = ", ".join(g.get("name", "?") for g in (report.get("box") or {}).get("gpus") or [])
    return {
        k: {
            **v,
            "source": f"measured by make gpu-acceptance on {gpus} ({report.get('when')}), concurrency "
            f"{v.get('concurrency')}",
        }
        for k, v in (report.get("rates") or {}).items()
    }


# --------------------------------------------------------------------------- the report


def format_report(report: dict) -> str:
    box = report["box"]
    lines = [
        f"gpu-acceptance ({report['launcher']}, {report['model']}): {report['verdict']}",
        f"  took {report['seconds']} s, load {' '.join(report['loadavg']['start'])} -> "
        f"{' '.join(report['loadavg']['end'])}",
    ]
    if box.get("gpu"):
        lines.append(
            f"  box: driver {box['gpus'][0]['driver']} (CUDA {box['driver_cuda']}), needs >= "
            f"{box['requirement'].get('min_driver')} for CUDA {box['requirement'].get('cuda_runtime')}: "
            f"{'ok' if box['driver_ok'] else 'TOO OLD'}"
        )
        lines += [
            f"       {g['name']}, {g['memory']}, compute capability {g['compute_capability']}" for g in box["gpus"]
        ]
    else:
        lines.append(f"  box: GPU-only, not checked ({box.get('why')})")
    for p in report["phases"]:
        if p["name"] == "box":
            continue
        if not p["ran"]:
            lines.append(f"  {p['name']}: not run: {p['why']}")
            continue
        s = p.get("server") or {}
        lines.append(
            f"  {p['name']}: "
            + (
                f"FAILED: {p['error']}"
                if p.get("error")
                else f"server vLLM {s.get('version')} ready in {s.get('ready_s')} s"
                + (" (attached)" if s.get("attached") else "")
                + f", kernels {s.get('kernels_logged')}"
            )
            + f"; {p['seconds']} s"
        )
        d = p.get("determinism")
        if d:
            lines.append(
                f"     greedy prompts alone vs with {d['long_prompts']} long prompt(s) "
                f"({d['long_prompt_tokens']} tokens) arriving mid-decode: {d['identical_tokens']}/"
                f"{d['greedy_prompts']} identical tokens, {d['identical_logprobs']}/{d['greedy_prompts']} "
                f"identical logprobs"
            )
            for q in d["prompts"]:
                if not q["identical_tokens"] or not q["identical_logprobs"]:
                    lines.append(
                        f"       prompt {q['prompt']}: first token difference at "
                        f"{q['first_token_difference']}, max logprob difference {q['max_logprob_difference']:.3g}"
                    )
        t = p.get("throughput")
        if t:
            lines.append(
                f"     prefill {t['prefill']['tokens_per_s']} tokens/s ({t['prefill']['prompt_tokens']} "
                f"prompt tokens in {t['prefill']['seconds']} s), decode {t['decode']['tokens_per_s']} "
                f"tokens/s ({t['decode']['completion_tokens']} tokens in {t['decode']['seconds']} s), "
                f"concurrency {t['concurrency']}"
            )
    if report.get("rates"):
        lines.append(f"  the plan now uses these rates: {report['rates']}")
    return "\n".join(lines) + "\n"
