"""`make reproduce`: the paper's runs through one pipeline, whatever serves the model.

    plan = build_plan(cfg)            # the dry run: commands, pins, request counts, time estimate
    run_pipeline(cfg)                 # preflight is the caller's (harness serve reproduce)

The pipeline, for each chosen model: `launcher.start()`, wait until `/v1/models` lists the model,
run every arm x seed through `harness.run.session.run_session` (the same client/executor/runner building blocks
as `harness run`; the results store resumes by record key, so an interrupted run continues where it
stopped), stop the server (always: also on Ctrl-C and SIGTERM), then write the reproduction manifest
(launcher description: image digest, model revision, server flags, the sampling defaults the server
logged, GPU, vLLM version; the executor's backend, image digest and policy hash from the run
manifests), statistics, tables, figures, the report, and a sha256 manifest of the run's directory.

The only branch between the H100 path and CI is `make_launcher`: `vllm` (harness.model.vllm.VllmLauncher,
pinned image and models) or `llama-cpp` (harness.model.serving.LlamaCppLauncher, the CPU model).
Model-free arms (Gold-Solve) need no server: they run once, stored under the `library` model, which
the statistics share across models.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import json
import os
import signal
import socket
import statistics
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from harness.analysis.report import write_outputs
from harness.analysis.stats.bootstrap import DEFAULT_DRAWS
from harness.analysis.stats_payload import stats_payload
from harness.analysis.analysis_step import analyse
from harness.core.canonical_json import json_file_text
from harness.arms.registry import ARMS, EXTENSION_ARMS, Arm
from harness.run.session import CaseSelectionError, apply_convention, pick_cases, run_session
from harness.core.paths import REPO_ROOT

ROOT = REPO_ROOT
LAUNCHERS = ("vllm", "llama-cpp")
PAPER_SEEDS = [42, 43, 44, 45, 46]
PAPER_MODELS = ["qwen2.5-7b", "qwen2.5-32b-awq"]  # the paper's two models; MODELS=all adds Mistral and Phi
DEFAULT_OUT = ROOT / "results" / "reproduce"
CHARS_PER_TOKEN = 4.0     # prompt-size estimate when no measured results exist (English text, BPE tokenizers)
WORDS_TO_TOKENS = 1.35    # fallback: note words to tokens

# Completion tokens per request assumed when no measured results exist (a stated assumption: typical
# reply lengths of instruction models on these prompts; always capped at the arm's output-token cap).
COMPLETION_ASSUMPTION = {"reply": 350, "program": 300, "repair": 300, "vote": 300, "extract_library": 120,
                         "recalled": 350, "tree": 250}
# The CPU server (llama-cpp-python, Qwen2.5-Coder-0.5B GGUF, 2 cores): measured order of magnitude,
# one request at a time.
CPU_THROUGHPUT = {"prefill_tokens_per_s": 50, "decode_tokens_per_s": 15, "startup_s": 10,
                  "deterministic_slowdown": 1.0,
                  "source": "order of magnitude measured on the kit's 2-core CI machine (one request at a time)"}


class ReproduceError(RuntimeError):
    """A reproduction that cannot be planned or run as asked; the message says what to change."""


@dataclass
class ReproduceConfig:
    launcher: str = "vllm"
    models: list[str] = field(default_factory=list)       # empty: the launcher's defaults
    arms: list[str] = field(default_factory=lambda: ["all"])
    seeds: list[int] = field(default_factory=lambda: list(PAPER_SEEDS))
    dataset: str = "verified"
    out: Path = DEFAULT_OUT
    generation_config: str = "auto"
    deterministic: bool = False
    limit: int | None = None
    shortest: bool = False
    all_cases: bool = False
    executor_backend: str = "auto"
    concurrency: int | None = None
    timeout: float = 900.0
    ready_timeout: float | None = None
    scorer: str = "paper"
    draws: int | None = None
    progress: bool = True
    convention: str | None = None   # unit convention; None: the dataset's own by content (harness.data.conventions)

    def __post_init__(self) -> None:
        if self.launcher not in LAUNCHERS:
            raise ReproduceError(f"unknown launcher {self.launcher!r}; choose one of {', '.join(LAUNCHERS)}")
        if not self.seeds:
            raise ReproduceError("no seeds given")
        if self.limit is not None and self.limit < 1:
            raise ReproduceError(f"--limit must be at least 1, not {self.limit}")
        self.out = Path(self.out)
        self.models = resolve_models(self.launcher, self.models)
        resolve_arms(self.arms)  # unknown names fail here, before anything runs


# --------------------------------------------------------------------------- selection


def split_names(text: str | None) -> list[str]:
    """'a,b c' -> ['a', 'b', 'c'] (commas or spaces)."""
    return [p for p in (text or "").replace(",", " ").split() if p]


def resolve_models(launcher: str, names: list[str]) -> list[str]:
    if launcher == "llama-cpp":
        from harness.model.serving import CPU_MODEL_ID
        known = [CPU_MODEL_ID]
        default = known
    else:
        from harness.model.vllm import all_model_keys
        known = all_model_keys()
        default = [m for m in PAPER_MODELS if m in known]
    if not names:
        return list(default)
    if "all" in names:
        return list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ReproduceError(f"unknown model(s) for the {launcher} launcher: {', '.join(unknown)}; "
                             f"known: {', '.join(known)} (or 'all')")
    return list(dict.fromkeys(names))


def resolve_arms(names: list[str]) -> list[Arm]:
    if not names or "all" in names:
        return [a for a in ARMS.values() if a.name not in EXTENSION_ARMS]   # the paper's arms; routers by name
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        raise ReproduceError(f"unknown arm(s): {', '.join(unknown)}; known: {', '.join(ARMS)} (or 'all')")
    return [ARMS[n] for n in dict.fromkeys(names)]


def select_cases(dataset, limit: int | None, shortest: bool) -> list:
    try:
        return pick_cases(dataset, (), (), limit, shortest)
    except CaseSelectionError as exc:
        raise ReproduceError(str(exc)) from None


def arm_cases(arm: Arm, cases: list, all_cases: bool = False) -> list:
    """The cases an arm runs on: vote/repair levers on the library's covered cases (as the runner does)."""
    if arm.covered_only and not all_cases:
        from harness.run.runner import covered_cases
        return covered_cases(cases)
    return list(cases)


# --------------------------------------------------------------------------- launchers: the one branch


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_launcher(kind: str, model_key: str, *, generation_config: str = "auto", deterministic: bool = False,
                  log_dir: Path | None = None):
    """The launcher for one model. This is the only place the H100 path and CI differ."""
    log_dir = Path(log_dir) if log_dir else DEFAULT_OUT / "server-logs"
    if kind == "vllm":
        from harness.model.vllm import VllmLauncher
        return VllmLauncher(model_key, generation_config=generation_config, deterministic=deterministic,
                            log_path=log_dir / f"{model_key}.log")
    if kind == "llama-cpp":
        from harness.model.serving import LlamaCppLauncher
        if deterministic:
            raise ReproduceError("--deterministic is a vLLM option (VLLM_BATCH_INVARIANT); the llama.cpp CPU "
                                 "server is single-stream and has no such switch")
        return LlamaCppLauncher(model_id=model_key, port=free_port(), log_path=log_dir / f"{model_key}.log")
    raise ReproduceError(f"unknown launcher {kind!r}; choose one of {', '.join(LAUNCHERS)}")


def launcher_revision(launcher) -> str | None:
    """What pins the served weights: the vLLM lock's commit, or the GGUF's sha256."""
    rev = getattr(launcher, "revision", None)
    if rev:
        return rev
    from harness.model.serving import CPU_MODEL, CPU_MODEL_ID
    if getattr(launcher, "model_id", None) == CPU_MODEL_ID:
        return f"gguf-sha256:{CPU_MODEL['gguf_sha256']}"
    return None


def launcher_preflight(cfg: ReproduceConfig):
    """Preflight checks for the chosen launcher (harness.model.vllm.Check items)."""
    from harness.model.vllm import Check, dataset_check, preflight
    if cfg.launcher == "vllm":
        return preflight(cfg.models, deterministic=cfg.deterministic, dataset=cfg.dataset)
    from harness.model.serving import DEFAULT_GGUF, DEFAULT_SERVER_PYTHON
    return [
        Check("CPU model server virtualenv", DEFAULT_SERVER_PYTHON.exists(), str(DEFAULT_SERVER_PYTHON),
              "make server-venv"),
        Check("CPU model GGUF", DEFAULT_GGUF.exists(), str(DEFAULT_GGUF), "make model (scripts/fetch-model.sh)"),
        dataset_check(cfg.dataset),
    ]


# --------------------------------------------------------------------------- request counts


def requests_per_case(arm: Arm, case) -> tuple[int, int]:
    """(min, max) chat requests one case costs under an arm, from the arm's definition and the case.

    No model: 0. Extract-Solve: 1 inside the library's calculators, else it abstains without a call.
    Formulate-Solve: date and gestational-age cases abstain before any call. Recalled: `samples`,
    plus one extraction when the samples disagree on a library calculator. Otherwise `samples`
    programs/replies plus at most `repair_cap` repair turns (capped at one per sample)."""
    if not arm.needs_model:
        return 0, 0
    from harness.library import LIBRARY
    from harness.arms.solvers import DATE_OUTPUT_TYPES
    in_library = case.calculator_id in LIBRARY
    if arm.solver == "extract_library":
        return (1, 1) if in_library else (0, 0)
    if arm.solver == "tree":
        return (0, 0) if case.output_type in DATE_OUTPUT_TYPES else (1, 1)
    n = max(1, arm.samples)
    if arm.solver == "recalled":
        return n, n + (1 if in_library else 0)
    if arm.solver == "router":
        # library calculators: Gold-Solve needs no call, Extract-Solve one; either may fall through to n programs
        if not in_library:
            return n, n
        return (0, n) if arm.router_library == "gold" else (1, 1 + n)
    extra = min(arm.repair_cap, n) if arm.repair else 0
    return n, n + extra


@dataclass
class Population:
    """The cases a plan counts requests over (possibly a stand-in for an unavailable dataset)."""

    name: str
    cases: list
    description: str
    token_cases: list          # real cases whose prompts are measured for the token estimate
    stand_in: bool = False


def plan_population(dataset: str, limit: int | None, shortest: bool) -> Population:
    """The dataset's cases; for an unfetched Verified split, its published shape: each calculator of
    the bundled slice weighted to the Verified row count per calculator (the benchmark is balanced)."""
    from harness.data.dataset import DatasetError, load_dataset
    try:
        ds = load_dataset(dataset)
    except DatasetError as exc:
        if dataset != "verified":
            raise ReproduceError(f"cannot load dataset {dataset!r}: {exc}") from None
        from harness.data import datahub
        rows = int(datahub.entry("verified").get("rows") or 0)
        slice_ = load_dataset("bundled-test")
        by_calc = slice_.by_calculator_id()
        if not rows or rows % len(by_calc):
            raise ReproduceError(f"cannot derive the Verified shape: {rows} pinned rows over {len(by_calc)} "
                                 "calculators") from None
        per_calc = rows // len(by_calc)
        cases = []
        for _cid, group in sorted(by_calc.items()):
            cases += [group[i % len(group)] for i in range(per_calc)]
        if limit is not None:
            cases = cases[:limit]
        desc = (f"verified (not fetched here: {str(exc).splitlines()[0]}); counted on its published shape, "
                f"{len(by_calc)} calculators x {per_calc} cases = {rows} rows (calculators and output types "
                f"from the bundled slice)")
        return Population("verified", cases, desc, slice_.cases, stand_in=True)
    cases = select_cases(ds, limit, shortest)
    return Population(ds.name, cases, f"{ds.name}: {ds.path} ({len(ds.cases)} rows, sha256 {ds.sha256[:12]}...)"
                      + (f"; {len(cases)} selected" if len(cases) != len(ds.cases) else ""), cases)


def measured_token_means(results_root: Path = ROOT / "results") -> dict[str, dict]:
    """arm -> {prompt, completion, requests, models} mean tokens per request, from stored results."""
    acc: dict[str, dict] = {}
    root = Path(results_root)
    if not root.is_dir():
        return {}
    for path in sorted(root.rglob("seed*.jsonl")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            tok = rec.get("tokens") or {}
            n = len(rec.get("request") or [])
            if not n or tok.get("prompt") is None or tok.get("completion") is None:
                continue
            a = acc.setdefault(rec.get("arm"), {"prompt": 0, "completion": 0, "requests": 0, "models": set()})
            a["prompt"] += tok["prompt"]
            a["completion"] += tok["completion"]
            a["requests"] += n
            a["models"].add(rec.get("model"))
    return {arm: {"prompt": a["prompt"] / a["requests"], "completion": a["completion"] / a["requests"],
                  "requests": a["requests"], "models": sorted(map(str, a["models"]))}
            for arm, a in acc.items() if a["requests"]}


def estimated_token_means(arm: Arm, cases: list) -> dict:
    """Mean prompt tokens per request from the arm's real prompts on `cases` (characters / 4), or
    from note lengths when the prompts cannot be built; completion tokens from the stated assumption."""
    completion = min(COMPLETION_ASSUMPTION.get(arm.solver, 300), arm.max_tokens or 10 ** 9)
    if arm.solver in ("extract_library",):
        completion = min(completion, arm.extract_max_tokens)
    sizes, source = [], "prompts built on the cases, 4 characters per token"
    try:
        from harness.data.dataset import load_dataset
        from harness.arms.solvers import Context
        one_shot = load_dataset("one-shot").cases if arm.example else []
        for case in cases:
            if requests_per_case(arm, case)[1] == 0:
                continue
            msgs = arm.build(Context(case=case, arm=arm, seed=PAPER_SEEDS[0], one_shot=one_shot))
            if msgs:
                sizes.append(sum(len(m.get("content") or "") for m in msgs) / CHARS_PER_TOKEN)
    except Exception as exc:  # noqa: BLE001 - fall back to note lengths, and say so
        sizes, source = [], f"note lengths x {WORDS_TO_TOKENS} tokens/word + 300 (prompts not buildable: {exc})"
    if not sizes:
        words = [min(len(c.note.split()), arm.note_words or 10 ** 9) for c in cases]
        sizes = [w * WORDS_TO_TOKENS + 300 for w in words] or [0]
        if not source.startswith("note"):
            source = f"note lengths x {WORDS_TO_TOKENS} tokens/word + 300"
    return {"prompt": statistics.mean(sizes), "completion": completion, "source": "estimated",
            "detail": f"prompt: {source}; completion: stated assumption ({completion} tokens)"}


def throughput_for(cfg: ReproduceConfig, key: str) -> dict:
    if cfg.launcher == "vllm":
        from harness.model.vllm import throughput_assumption
        return throughput_assumption(key)
    return dict(CPU_THROUGHPUT)


def build_plan(cfg: ReproduceConfig, *, results_root: Path = ROOT / "results") -> dict:
    """Everything `DRY_RUN=1` prints, as data: pins, commands, request counts per arm, time estimate."""
    arms = resolve_arms(cfg.arms)
    pop = plan_population(cfg.dataset, cfg.limit, cfg.shortest)
    measured = measured_token_means(results_root)
    plan: dict = {"launcher": cfg.launcher, "models": [], "seeds": cfg.seeds, "dataset": pop.description,
                  "dataset_stand_in": pop.stand_in, "n_cases": len(pop.cases), "out": str(cfg.out),
                  "generation_config": cfg.generation_config, "deterministic": cfg.deterministic,
                  "arms": [], "problems": [], "notes": []}
    if cfg.launcher == "vllm":
        from harness.model.vllm import PinError, image_lock, image_reference, serving_config
        serving = serving_config()
        plan["generation_config_meaning"] = serving["generation_config_choices"].get(cfg.generation_config)
        plan["deterministic_meaning"] = serving["deterministic"]["note"] if cfg.deterministic else \
            "as in the paper: default kernels, prefix caching on"
        try:
            plan["image"] = image_reference()
            lock = image_lock()
            plan["image_source"] = lock.get("digest_source")
            plan["vllm_version"] = lock.get("vllm_version")
        except PinError as exc:
            plan["problems"].append(str(exc))
    for arm in arms:
        sel = arm_cases(arm, pop.cases, cfg.all_cases)
        lo = hi = 0
        for c in sel:
            a, b = requests_per_case(arm, c)
            lo, hi = lo + a, hi + b
        per_case = sorted({requests_per_case(arm, c) for c in sel}) if sel else [(0, 0)]
        if arm.name in measured:
            m = measured[arm.name]
            tokens = {"prompt": m["prompt"], "completion": m["completion"], "source": "measured",
                      "detail": f"means of {m['requests']} stored requests ({', '.join(m['models'])})"}
        elif arm.needs_model:
            tokens = estimated_token_means(arm, [c for c in pop.token_cases if arm_cases(arm, [c], cfg.all_cases)])
        else:
            tokens = {"prompt": 0.0, "completion": 0.0, "source": "-", "detail": "no model"}
        plan["arms"].append({
            "arm": arm.name, "title": arm.title, "solver": arm.solver, "needs_model": arm.needs_model,
            "covered_only": arm.covered_only and not cfg.all_cases, "samples": arm.samples,
            "repair_cap": arm.repair_cap if arm.repair else 0, "cases": len(sel),
            "requests_per_case": {"min": min(p[0] for p in per_case), "max": max(p[1] for p in per_case)},
            "requests_per_seed": {"min": lo, "max": hi},
            "requests": {"min": lo * len(cfg.seeds), "max": hi * len(cfg.seeds)},
            "tokens_per_request": tokens,
        })
    total = {"min": sum(a["requests"]["min"] for a in plan["arms"]),
             "max": sum(a["requests"]["max"] for a in plan["arms"])}
    plan["requests_per_model"] = total
    any_model = any(a.needs_model for a in arms)
    total_s = {"min": 0.0, "max": 0.0}
    for key in cfg.models:
        entry: dict = {"key": key}
        try:
            launcher = make_launcher(cfg.launcher, key, generation_config=cfg.generation_config,
                                     deterministic=cfg.deterministic, log_dir=cfg.out / "server-logs")
            entry.update(model_id=launcher.model_id, revision=launcher_revision(launcher),
                         command=launcher.command(), server_profile=launcher.server_profile)
            if cfg.launcher == "vllm":
                entry.update(flags=launcher.flags, env=launcher.env(), gated=bool(launcher.lock.get("gated")),
                             license=launcher.lock.get("license"), revision_source=launcher.lock.get("revision_source"))
        except Exception as exc:  # noqa: BLE001 - an unpinned model is reported, the plan continues
            from harness.model.vllm import model_entry
            entry["error"] = str(exc)
            plan["problems"].append(f"{key}: {exc}")
            try:
                e = model_entry(key) if cfg.launcher == "vllm" else {}
                entry.update(model_id=e.get("repo"), revision=e.get("revision"))
            except Exception:  # noqa: BLE001
                pass
        try:
            tp = throughput_for(cfg, key)
        except Exception as exc:  # noqa: BLE001
            plan["problems"].append(str(exc))
            tp = None
        if tp is not None:
            slow = tp.get("deterministic_slowdown", 1.0) if cfg.deterministic else 1.0
            est = {}
            for bound in ("min", "max"):
                secs = sum(a["requests"][bound] * (a["tokens_per_request"]["prompt"] / tp["prefill_tokens_per_s"]
                                                   + a["tokens_per_request"]["completion"] / tp["decode_tokens_per_s"])
                           for a in plan["arms"]) * slow
                est[bound] = secs + (tp["startup_s"] if any_model else 0)
                total_s[bound] += est[bound]
            entry["throughput_assumption"] = tp
            entry["estimate_s"] = est
        plan["models"].append(entry)
    plan["estimate_s"] = total_s
    plan["notes"].append("Arms without a model (Gold-Solve) run without a server, once for all models; they send "
                         "no request.")
    details = sorted({a["tokens_per_request"]["detail"] for a in plan["arms"]
                      if a["tokens_per_request"]["source"] != "-"})
    plan["notes"] += [f"tokens per request: {d}" for d in details]
    plan["notes"].append("Time = sum over arms of requests x (prompt tokens / prefill rate + completion tokens / "
                         "decode rate), plus server start-up; weight downloads are not included.")
    return plan


def _hours(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def format_plan(plan: dict) -> str:
    seeds = plan["seeds"]
    lines = ["Reproduction plan (dry run: nothing is started, nothing is downloaded)", "",
             f"launcher:   {plan['launcher']}",
             f"models:     {', '.join(m['key'] for m in plan['models'])}",
             f"seeds:      {', '.join(map(str, seeds))}",
             f"dataset:    {plan['dataset']}",
             f"results:    {plan['out']}"]
    if plan["launcher"] == "vllm":
        lines += [f"generation config: {plan['generation_config']} ({plan.get('generation_config_meaning')})",
                  f"deterministic:     {'on' if plan['deterministic'] else 'off'} ({plan.get('deterministic_meaning')})",
                  "", f"image: {plan.get('image', 'NOT PINNED')}  (vLLM {plan.get('vllm_version')})",
                  f"  digest source: {plan.get('image_source')}"]
    lines.append("")
    import shlex
    for m in plan["models"]:
        lines.append(f"model {m['key']}: {m.get('model_id')} @ {m.get('revision') or 'UNPINNED'}"
                     + (f"  [{m['license']}]" if m.get("license") else "")
                     + ("  [gated: needs HF_TOKEN]" if m.get("gated") else ""))
        if m.get("error"):
            lines.append(f"  REFUSED: {m['error']}")
        if m.get("command"):
            lines.append(f"  command: {shlex.join(m['command'])}")
        if m.get("flags"):
            lines.append("  flags:   " + ", ".join(f"{k}={v}" for k, v in m["flags"].items()))
        if m.get("estimate_s"):
            tp = m["throughput_assumption"]
            lines.append(f"  time:    {_hours(m['estimate_s']['min'])} .. {_hours(m['estimate_s']['max'])} "
                         f"(assumed {tp['prefill_tokens_per_s']} prompt tok/s, {tp['decode_tokens_per_s']} "
                         f"completion tok/s, start-up {tp['startup_s']} s)")
    lines += ["", f"Requests per arm, per model, {len(seeds)} seed(s):",
              f"  {'arm':<22} {'cases':>6} {'req/case':>9} {'requests':>15} {'prompt tok':>10} {'compl. tok':>10}  source"]
    for a in plan["arms"]:
        rpc = a["requests_per_case"]
        rq = a["requests"]
        per = f"{rpc['min']}" if rpc["min"] == rpc["max"] else f"{rpc['min']}..{rpc['max']}"
        req = f"{rq['min']:,}" if rq["min"] == rq["max"] else f"{rq['min']:,}..{rq['max']:,}"
        t = a["tokens_per_request"]
        cases = f"{a['cases']}" + ("c" if a["covered_only"] else "")
        lines.append(f"  {a['arm']:<22} {cases:>6} {per:>9} {req:>15} {t['prompt']:>10.0f} {t['completion']:>10.0f}"
                     f"  {t['source']}")
    tot = plan["requests_per_model"]
    lines += [f"  {'total':<22} {'':>6} {'':>9} {tot['min']:,}..{tot['max']:,}".rstrip(),
              "  (c: the library's covered cases only, as in the paper)", ""]
    est = plan["estimate_s"]
    lines.append(f"Estimated time, all models: {_hours(est['min'])} .. {_hours(est['max'])}")
    for n in plan["notes"]:
        lines.append(f"note: {n}")
    for p in plan["problems"]:
        lines.append(f"PROBLEM: {p}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the pipeline


@contextmanager
def _sigterm_as_interrupt():
    """SIGTERM behaves like Ctrl-C inside the pipeline, so `finally` stops the server."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _new_manifests(out: Path, before: set[Path]) -> list[Path]:
    return sorted(p for p in out.glob("manifest-*.json")
                  if p not in before and not p.name.startswith("manifest-reproduce-"))


def _run_block(cfg: ReproduceConfig, arms: list[Arm], dataset, cases: list, *, base_url=None, model=None,
               revision=None, profile=None, concurrency: int = 1, echo: Callable[[str], None] = print) -> dict:
    """One `harness run` over `arms` (its building blocks, called directly); the run manifest it wrote."""
    before = set(cfg.out.glob("manifest-*.json"))
    summaries = asyncio.run(run_session(arms, dataset, cases, cfg.seeds, base_url=base_url, model=model,
                                 model_revision=revision, server_profile=profile or "plain", out_dir=cfg.out,
                                 executor_backend=cfg.executor_backend, concurrency=concurrency,
                                 timeout=cfg.timeout, cache_dir=cfg.out / ".cache" / "responses",
                                 scorer=cfg.scorer, all_cases=cfg.all_cases, progress=cfg.progress,
                                 convention=cfg.convention))
    for s in summaries:
        echo(f"{s.arm} seed {s.seed}: {s.total} cases, {s.written} new, {s.skipped} resumed, {s.infra_failed} "
             f"infra-failed, {s.correct} correct, outcomes {s.outcomes} -> {s.path}")
    manifests = _new_manifests(cfg.out, before)
    executor = None
    for p in manifests:
        try:
            executor = json.loads(p.read_text()).get("executor") or executor
        except (OSError, ValueError):
            pass
    return {"arms": [a.name for a in arms], "run_manifests": [p.name for p in manifests], "executor": executor,
            "summaries": [asdict(s) if hasattr(s, "__dataclass_fields__") else dict(s.__dict__) for s in summaries]}


def pending_cases(cfg: ReproduceConfig, arms: list[Arm], dataset, cases: list, *, model: str,
                  revision: str | None, profile: str | None) -> int:
    """How many (arm, seed, case) records are not in the store yet (keys as the runner makes them)."""
    from harness.run.runner import RunSpec, make_key
    from harness.run.store import results_path
    spec = RunSpec(model=model, model_revision=revision, server_profile=profile, out_dir=cfg.out)
    n = 0
    for arm in arms:
        sel = arm_cases(arm, cases, cfg.all_cases)
        for seed in cfg.seeds:
            path = results_path(cfg.out, model, arm.name, seed)
            done = set()
            if path.exists():
                for line in path.read_text(encoding="utf-8").splitlines():
                    try:
                        done.add(json.loads(line)["key"])
                    except (ValueError, KeyError, TypeError):
                        continue
            n += sum(make_key(arm, seed, c, dataset, spec) not in done for c in sel)
    return n


def run_pipeline(cfg: ReproduceConfig, *, echo: Callable[[str], None] = print) -> dict:
    """Run the whole reproduction; returns the reproduction manifest (also written to disk)."""
    from harness.data.dataset import DatasetError, load_dataset
    from harness.run.manifest import write_run_manifest

    arms = resolve_arms(cfg.arms)
    try:
        dataset = load_dataset(cfg.dataset)
    except DatasetError as exc:
        raise ReproduceError(f"dataset {cfg.dataset!r} is not available: {exc}") from None
    cases = select_cases(dataset, cfg.limit, cfg.shortest)
    try:
        arms, choice = apply_convention(arms, dataset, cfg.convention)
    except ValueError as exc:
        raise ReproduceError(str(exc)) from None
    echo(f"{dataset.name}: {choice.describe()}")
    check_same_settings(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    run_id = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    model_free = [a for a in arms if not a.needs_model]
    with_model = [a for a in arms if a.needs_model]
    manifest: dict = {"kind": "reproduce", "launcher": cfg.launcher, "config": _config_dict(cfg),
                      "case_ids": [c.case_id for c in cases], "arms": [a.name for a in arms],
                      "arm_config_hashes": {a.name: a.config_hash() for a in arms}, "blocks": [], "servers": [],
                      "convention": choice.to_dict(),
                      "status": "running"}
    existing = sum(1 for _ in cfg.out.glob("*/*/seed*.jsonl"))
    echo(f"reproduce: {len(arms)} arm(s) x {len(cfg.seeds)} seed(s) on {len(cases)} case(s) of {dataset.name}, "
         f"models {', '.join(cfg.models) if with_model else '(none needed)'}, launcher {cfg.launcher}, "
         f"results in {cfg.out}" + (f" (resuming: {existing} results file(s) already there)" if existing else ""))

    def save(status: str) -> Path:
        manifest["status"] = status
        return write_run_manifest(cfg.out, f"reproduce-{run_id}", dataset, **manifest)

    save("running")
    infra_failed = 0
    with _sigterm_as_interrupt():
        try:
            if model_free:
                echo(f"model-free arm(s) {', '.join(a.name for a in model_free)}: no server needed")
                block = _run_block(cfg, model_free, dataset, cases, echo=echo)
                manifest["blocks"].append({"model": None, **block})
                infra_failed += sum(s.get("infra_failed", 0) for s in block["summaries"])
            for key in (cfg.models if with_model else []):
                launcher = make_launcher(cfg.launcher, key, generation_config=cfg.generation_config,
                                         deterministic=cfg.deterministic, log_dir=cfg.out / "server-logs")
                server: dict = {"model_key": key}
                manifest["servers"].append(server)
                todo = pending_cases(cfg, with_model, dataset, cases, model=launcher.model_id,
                                     revision=launcher_revision(launcher), profile=launcher.server_profile)
                if not todo:
                    echo(f"[{key}] every record is already in {cfg.out}: the server is not started")
                    server.update(launcher.describe())
                    server.update(skipped="all records present", revision=launcher_revision(launcher))
                    continue
                echo(f"[{key}] {todo} (arm, seed, case) record(s) to run")
                try:
                    echo(f"[{key}] starting {cfg.launcher} server: {' '.join(launcher.command())}")
                    launcher.start()
                    ready_timeout = cfg.ready_timeout or (1800.0 if cfg.launcher == "vllm" else 300.0)
                    echo(f"[{key}] waiting up to {ready_timeout:.0f} s for {launcher.base_url}/models to list "
                         f"{launcher.model_id}")
                    launcher.wait_ready(ready_timeout)
                    server.update(launcher.describe())
                    server["revision"] = launcher_revision(launcher)
                    save("running")
                    if server.get("sampling_defaults_logged") is not None or cfg.launcher == "vllm":
                        echo(f"[{key}] sampling defaults the server logged: {server.get('sampling_defaults_logged')}")
                    concurrency = cfg.concurrency or int(getattr(launcher, "flags", {}).get("max_num_seqs", 1))
                    block = _run_block(cfg, with_model, dataset, cases, base_url=launcher.base_url,
                                       model=launcher.model_id, revision=server["revision"],
                                       profile=launcher.server_profile, concurrency=concurrency, echo=echo)
                    manifest["blocks"].append({"model": launcher.model_id, "model_key": key, **block})
                    infra_failed += sum(s.get("infra_failed", 0) for s in block["summaries"])
                finally:
                    echo(f"[{key}] stopping the server")
                    launcher.stop()
                    server["stopped_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
                    if cfg.launcher == "vllm" and server.get("sampling_defaults_logged") is None:
                        try:  # the saved log, if the run ended before describe()
                            from harness.model.vllm import logged_sampling_defaults, logged_vllm_version
                            text = Path(launcher.log_path).read_text()
                            server["sampling_defaults_logged"] = logged_sampling_defaults(text)
                            server["vllm_version"] = server.get("vllm_version") or logged_vllm_version(text)
                        except OSError:
                            pass
        except BaseException as exc:
            manifest["error"] = f"{type(exc).__name__}: {exc}"
            save("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            raise
    manifest["infra_failed"] = infra_failed
    status = "complete" if not infra_failed else "incomplete"
    save(status)                                  # the report shows the manifest as of this point
    manifest["outputs"] = outputs(cfg, echo=echo)
    path = save(status)
    manifest["checksums"] = write_checksums(cfg.out)  # last: covers the manifest, results, logs, outputs
    echo(f"manifest: {path}")
    echo(f"checksums: {manifest['checksums']['path']} ({manifest['checksums']['files']} files); verify with "
         f"`cd {cfg.out} && sha256sum -c {Path(manifest['checksums']['path']).name}`")
    manifest["manifest_path"] = str(path)
    return manifest


# Settings that change what the server answers but are not part of a record's key (the key has the model,
# its revision and the client profile): one results directory holds one combination of them.
SERVER_SETTINGS = ("launcher", "generation_config", "deterministic")


def check_same_settings(cfg: ReproduceConfig) -> None:
    """Refuse to resume into a results directory produced under other server settings (its records
    would be taken as done)."""
    mine = {k: getattr(cfg, k) for k in SERVER_SETTINGS}
    for p in sorted(Path(cfg.out).glob("manifest-reproduce-*.json")):
        try:
            theirs = json.loads(p.read_text()).get("config") or {}
        except (OSError, ValueError):
            continue
        diff = {k: (theirs.get(k), mine[k]) for k in SERVER_SETTINGS if k in theirs and theirs.get(k) != mine[k]}
        if diff:
            said = ", ".join(f"{k}={a!r} there, {b!r} now" for k, (a, b) in diff.items())
            raise ReproduceError(f"{cfg.out} holds results made under other server settings ({said}; see {p.name}); "
                                 "give this run its own --out (OUT=) so the two are compared, not mixed")


def _config_dict(cfg: ReproduceConfig) -> dict:
    d = asdict(cfg)
    d["out"] = str(cfg.out)
    return d


def outputs(cfg: ReproduceConfig, *, echo: Callable[[str], None] = print) -> dict:
    """Statistics, tables, figures and the report from the run's results (`analysis.report.write_outputs`, as
    `harness report` does). Skipped with a note only when the results do not determine an analysis."""
    done: dict = {"notes": []}
    try:
        an = analyse(cfg.out, draws=cfg.draws or DEFAULT_DRAWS)
    except Exception as exc:  # noqa: BLE001 - a note, not a failure: the results are on disk
        done["notes"].append(f"statistics skipped: {type(exc).__name__}: {exc}")
        echo(f"note: statistics skipped ({type(exc).__name__}: {exc})")
        return done
    p = cfg.out / "stats.json"
    p.write_text(json_file_text(stats_payload(an), indent=1), encoding="utf-8")
    done["stats"] = str(p)
    files = write_outputs(an, cfg.out, cfg.out)
    done["tables"] = [str(x) for x in files.table_paths]
    done["tables_omitted"] = files.omitted
    done["figures"] = [str(x) for x in files.figures]
    done["report"] = str(files.page)
    echo("outputs: " + "; ".join([str(p), f"{len(files.tables)} table(s) in {cfg.out / 'tables'}", str(files.page)]))
    for n in done["notes"]:
        echo(f"note: {n}")
    return done


CHECKSUM_FILE = "SHA256SUMS"


def write_checksums(out: Path) -> dict:
    """sha256 of every file of the run's directory (hidden caches excluded), paths relative to it."""
    from harness.verify.checksums import write_manifest
    target = Path(out) / CHECKSUM_FILE
    if target.exists():
        target.unlink()
    tmp = Path(out) / f".{CHECKSUM_FILE}.tmp"
    n = write_manifest(tmp, [Path(out)], root=Path(out))
    os.replace(tmp, target)
    return {"path": str(target), "files": n}


def verify_checksums(out: Path) -> list[str]:
    """Problems (missing, changed, unlisted files) of a run directory against its SHA256SUMS."""
    from harness.verify.checksums import check_manifest
    report = check_manifest(Path(out) / CHECKSUM_FILE, [Path(out)], root=Path(out))
    return [ln for ln in report.lines() if not ln.endswith(CHECKSUM_FILE)]
