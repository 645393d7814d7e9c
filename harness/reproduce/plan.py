"""The plan of a reproduction (`make reproduce DRY_RUN=1`): the population of cases, request counts from each arm's
solver (`Solver.request_bounds`), tokens per request (measured from stored results, else estimated from the arms'
real prompts and the solvers' stated completion assumptions), the launcher's pins and commands, and a time
estimate from the launcher's throughput assumption."""
from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path

from harness.arms.registry import Arm
from harness.arms.solvers import Context
from harness.data import datahub
from harness.data.dataset import Case, DatasetError, load_dataset
from harness.reproduce.config import (PAPER_SEEDS, ROOT, ReproduceConfig, ReproduceError, arm_cases, model_arm_names,
                                      resolve_arms, select_cases)
from harness.reproduce.launchers import launcher_kind, make_launcher
from harness.run.store import StoreError, iter_result_files, read_result_file, result_sets

CHARS_PER_TOKEN = 4.0     # prompt-size estimate when no measured results exist (English text, BPE tokenizers)
WORDS_TO_TOKENS = 1.35    # fallback: note words to tokens


def request_bounds(arm: Arm, case: Case) -> tuple[int, int]:
    """(min, max) chat requests one case costs under an arm: its solver's `request_bounds`."""
    return arm.solver_kind.request_bounds(arm, case)


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
    try:
        ds = load_dataset(dataset)
    except DatasetError as exc:
        if dataset != "verified":
            raise ReproduceError(f"cannot load dataset {dataset!r}: {exc}") from None
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
    for path in (p for result_set in result_sets(root) for p in iter_result_files(result_set)):
        try:
            records = read_result_file(path)
        except (OSError, StoreError):
            continue        # an unreadable file only costs the estimate its measurements
        for rec in records:
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
    completion = arm.solver_kind.completion_tokens(arm)
    sizes, source = [], "prompts built on the cases, 4 characters per token"
    try:
        one_shot = load_dataset("one-shot").cases if arm.example else []
        for case in cases:
            if request_bounds(arm, case)[1] == 0:
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


def build_plan(cfg: ReproduceConfig, *, results_root: Path = ROOT / "results") -> dict:
    """Everything `DRY_RUN=1` prints, as data: pins, commands, request counts per arm, time estimate."""
    arms = resolve_arms(cfg.arms)
    pop = plan_population(cfg.dataset, cfg.limit, cfg.shortest)
    measured = measured_token_means(results_root)
    plan: dict = {"launcher": cfg.launcher, "models": [], "seeds": cfg.seeds, "dataset": pop.description,
                  "dataset_stand_in": pop.stand_in, "n_cases": len(pop.cases), "out": str(cfg.out),
                  "generation_config": cfg.generation_config, "deterministic": cfg.deterministic,
                  "arms": [], "problems": [], "notes": []}
    kind = launcher_kind(cfg.launcher)
    kind.plan_fields(plan, cfg.generation_config, cfg.deterministic)
    for arm in arms:
        sel = arm_cases(arm, pop.cases, cfg.all_cases)
        lo = hi = 0
        for c in sel:
            a, b = request_bounds(arm, c)
            lo, hi = lo + a, hi + b
        per_case = sorted({request_bounds(arm, c) for c in sel}) if sel else [(0, 0)]
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
    plan["requests_per_model"] = total          # a model that runs every arm of the plan
    all_models = {"min": 0, "max": 0}
    any_model = any(a.needs_model for a in arms)
    total_s = {"min": 0.0, "max": 0.0}
    for key in cfg.models:
        names = model_arm_names(cfg.arms, key)
        rows = [a for a in plan["arms"] if a["needs_model"] and a["arm"] in names]
        entry: dict = {"key": key, "arms": [a["arm"] for a in rows],
                       "requests": {b: sum(a["requests"][b] for a in rows) for b in ("min", "max")}}
        for b in ("min", "max"):
            all_models[b] += entry["requests"][b]
        try:
            launcher = make_launcher(cfg.launcher, key, generation_config=cfg.generation_config,
                                     deterministic=cfg.deterministic, log_dir=cfg.out / "server-logs",
                                     dataset=cfg.dataset, base_url=cfg.base_url, server_profile=cfg.server_profile)
            entry.update(model_id=launcher.model_id, revision=kind.revision(launcher),
                         command=launcher.command(), server_profile=launcher.server_profile)
            entry.update(kind.model_plan_fields(launcher))
        except Exception as exc:  # noqa: BLE001 - an unpinned model is reported, the plan continues
            entry["error"] = str(exc)
            plan["problems"].append(f"{key}: {exc}")
            entry.update(kind.model_fields_on_error(key))
        try:
            tp = kind.throughput(key)
        except Exception as exc:  # noqa: BLE001 - an unpinned model has no throughput entry: reported, plan goes on
            plan["problems"].append(str(exc))
            tp = None
        if tp is not None:
            slow = tp.get("deterministic_slowdown", 1.0) if cfg.deterministic else 1.0
            est = {}
            for bound in ("min", "max"):
                secs = sum(a["requests"][bound] * (a["tokens_per_request"]["prompt"] / tp["prefill_tokens_per_s"]
                                                   + a["tokens_per_request"]["completion"] / tp["decode_tokens_per_s"])
                           for a in rows) * slow
                est[bound] = secs + (tp["startup_s"] if any_model else 0)
                total_s[bound] += est[bound]
            entry["throughput_assumption"] = tp
            entry["estimate_s"] = est
        plan["models"].append(entry)
    plan["estimate_s"] = total_s
    plan["requests_all_models"] = all_models
    partial = [m for m in plan["models"] if len(m["arms"]) < sum(a["needs_model"] for a in plan["arms"])]
    if partial:
        plan["notes"].append(
            "ARMS=all runs, for each model, the arms the paper reports for it: "
            + "; ".join(f"{m['key']}: {', '.join(m['arms'])}" for m in partial)
            + " (ARMS=every runs every paper arm on every model).")
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


def _span(rq: dict) -> str:
    """{"min": a, "max": b} -> "a" or "a..b", thousands separated."""
    return f"{rq['min']:,}" if rq["min"] == rq["max"] else f"{rq['min']:,}..{rq['max']:,}"


def format_plan(plan: dict) -> str:
    seeds = plan["seeds"]
    lines = ["Reproduction plan (dry run: nothing is started, nothing is downloaded)", "",
             f"launcher:   {plan['launcher']}",
             f"models:     {', '.join(m['key'] for m in plan['models'])}",
             f"seeds:      {', '.join(map(str, seeds))}",
             f"dataset:    {plan['dataset']}",
             f"results:    {plan['out']}"]
    lines += launcher_kind(plan["launcher"]).plan_header(plan)
    lines.append("")
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
        req = _span(rq)
        t = a["tokens_per_request"]
        cases = f"{a['cases']}" + ("c" if a["covered_only"] else "")
        lines.append(f"  {a['arm']:<22} {cases:>6} {per:>9} {req:>15} {t['prompt']:>10.0f} {t['completion']:>10.0f}"
                     f"  {t['source']}")
    tot = plan["requests_per_model"]
    models = plan.get("models") or []
    lines.append(f"  {'total per model':<22} {'':>6} {'':>9} {tot['min']:,}..{tot['max']:,}".rstrip())
    n_model_arms = sum(a["needs_model"] for a in plan["arms"])
    for m in models:
        if len(m["arms"]) < n_model_arms:
            rq = m["requests"]
            lines.append(f"  {m['key']:<22} {'':>6} {'':>9} {_span(rq):>15}  "
                         f"({len(m['arms'])} arm(s): {', '.join(m['arms'])})")
    every = plan["requests_all_models"] if models else tot
    lines += [f"  {f'all {len(models) or 1} model(s)':<22} {'':>6} {'':>9} {every['min']:,}..{every['max']:,}",
              "  (c: the library's covered cases only, as in the paper)", ""]
    est = plan["estimate_s"]
    lines.append(f"Estimated time, all models: {_hours(est['min'])} .. {_hours(est['max'])}")
    for n in plan["notes"]:
        lines.append(f"note: {n}")
    for p in plan["problems"]:
        lines.append(f"PROBLEM: {p}")
    return "\n".join(lines) + "\n"
