"""The plan of a reproduction (`make reproduce DRY_RUN=1`): the population of cases, request counts from each arm's
solver (`Solver.request_bounds`), tokens per request (measured from stored results, else estimated from the arms'
real prompts and the solvers' stated completion assumptions), the launcher's pins and commands, a time estimate
from the launcher's throughput assumption, and, for vLLM, that estimate with its prefill term scaled by the share of
prompt tokens vLLM's prefix cache leaves to compute under the run's request order (measured: docs/bench-gpu-hours.json,
`make bench-gpu-hours`)."""
from __future__ import annotations

import json
import shlex
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.arms.spec import Arm
from harness.arms.solvers import Context
from harness.data import datahub
from harness.data.dataset import Case, DatasetError, load_dataset
from harness.arms.coverage import arm_cases
from harness.model.serving import LauncherDescription, ServerPlan
from harness.reproduce.acceptance import measured_rates
from harness.reproduce.config import (PAPER_SEEDS, ROOT, ReproduceConfig, ReproduceError, model_arm_names, resolve_arms,
                                      select_cases)
from harness.reproduce.smoke import SMOKE_DESCRIPTION
from harness.run.store import StoreError, iter_result_files, read_result_file, result_sets

CHARS_PER_TOKEN = 4.0     # prompt-size estimate when no measured results exist (English text, BPE tokenizers)
GPU_HOURS_REPORT = ROOT / "docs" / "bench-gpu-hours.json"   # prefix-cache shares per model and order (issue 36)
WORDS_TO_TOKENS = 1.35    # fallback: note words to tokens


def _description_fields(desc: LauncherDescription) -> dict:
    """The plan's fields of the launcher kind's description (its image, the settings in words)."""
    out = {"generation_config_meaning": desc.generation_config_meaning,
           "deterministic_meaning": desc.deterministic_meaning} if desc.generation_config_meaning else {}
    image = desc.image
    if image is not None and image.reference is not None:
        out.update(image=image.reference, vllm_version=image.vllm_version, image_choice=image.choice,
                   image_source=image.source)
        if image.choice == "own":
            out.update(image_lock=image.lock, image_lock_sha256=image.lock_sha256, image_content=image.content,
                       image_id=image.id, image_download_bytes=image.download_bytes)
    return out


def _server_fields(m: ServerPlan) -> dict:
    """The plan's entry of one model's server: what it would start, or why it cannot be built."""
    if m.server is None:
        return {"error": m.error, **({"model_id": m.model_id, "revision": m.revision} if m.model_id else {})}
    info = m.server
    out = dict(model_id=info.model_id, revision=info.revision, command=list(info.command),
               server_profile=info.server_profile)
    if m.lines:
        model = info.model or {}
        out.update(flags=info.flags, env=info.env, plan_lines=list(m.lines),
                   contract_problems=[p.split("vLLM contract: ", 1)[-1] for p in m.problems])
        if info.determinism is not None or model.get("license"):
            out.update(gated=bool(model.get("gated")), license=model.get("license"),
                       revision_source=model.get("revision_source"))
    return out


def request_bounds(arm: Arm, case: Case) -> tuple[int, int]:
    """(min, max) chat requests one case costs under an arm: its solver's `request_bounds`."""
    return arm.solver.request_bounds(arm, case)


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
    sizes: dict[str, dict] = {}
    root = Path(results_root)
    if not root.is_dir():
        return {}
    for path in (p for result_set in result_sets(root) for p in iter_result_files(result_set)):
        try:
            records = read_result_file(path)
        except (OSError, StoreError):
            continue        # an unreadable file only costs the estimate its measurements
        if records:
            size = sizes.setdefault(records[0].get("arm"), {"bytes": 0, "records": 0, "models": set()})
            size["bytes"] += path.stat().st_size
            size["records"] += len(records)
            size["models"].add(str(records[0].get("model")))
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
    means = {arm: {"prompt": a["prompt"] / a["requests"], "completion": a["completion"] / a["requests"],
                   "requests": a["requests"], "models": sorted(map(str, a["models"]))}
             for arm, a in acc.items() if a["requests"]}
    for arm, size in sizes.items():
        means.setdefault(arm, {"requests": 0, "models": sorted(size["models"])})
        means[arm]["record_bytes"] = size["bytes"] / size["records"]
        means[arm]["size_models"] = sorted(size["models"])
    return means


def estimated_token_means(arm: Arm, cases: list) -> dict:
    """Mean prompt tokens per request from the arm's real prompts on `cases` (characters / 4), or
    from note lengths when the prompts cannot be built; completion tokens from the stated assumption."""
    completion = arm.solver.completion_tokens(arm)
    sizes, source = [], "prompts built on the cases, 4 characters per token"
    try:
        one_shot = load_dataset("one-shot").cases if arm.example else []
        for case in cases:
            if request_bounds(arm, case)[1] == 0:
                continue
            msgs = Context(case=case, arm=arm, seed=PAPER_SEEDS[0], one_shot=one_shot).prompt().messages
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
                  "arms": [], "problems": [], "notes": [], "model_keys": list(cfg.models)}
    desc = cfg.kind.describe_plan(cfg.models, cfg.launch_options())
    plan.update(_description_fields(desc), launcher_header=list(desc.header))
    plan["notes"] += list(desc.notes)
    plan["problems"] += list(desc.problems)
    for arm in arms:
        sel = arm_cases(arm, pop.cases, cfg.all_cases)
        lo = hi = 0
        for c in sel:
            a, b = request_bounds(arm, c)
            lo, hi = lo + a, hi + b
        per_case = sorted({request_bounds(arm, c) for c in sel}) if sel else [(0, 0)]
        m = measured.get(arm.name) or {}
        if m.get("requests"):
            tokens = {"prompt": m["prompt"], "completion": m["completion"],
                      "source": "measured", "measured_on": m["models"],
                      "detail": f"means of {m['requests']} stored requests of {', '.join(m['models'])} (assumed to "
                                f"hold for the planned models: replies of another model, size or server differ)"}
        elif arm.needs_model:
            tokens = estimated_token_means(arm, [c for c in pop.token_cases if arm_cases(arm, [c], cfg.all_cases)])
        else:
            tokens = {"prompt": 0.0, "completion": 0.0, "source": "-", "detail": "no model"}
        plan["arms"].append({
            "arm": arm.name, "title": arm.title, "solver": arm.solver.name, "needs_model": arm.needs_model,
            "covered_only": arm.covered_only and not cfg.all_cases, "samples": arm.samples,
            "repair_cap": arm.solver.config().get("repair_cap", 0), "cases": len(sel),
            "requests_per_case": {"min": min(p[0] for p in per_case), "max": max(p[1] for p in per_case)},
            "requests_per_seed": {"min": lo, "max": hi},
            "requests": {"min": lo * len(cfg.seeds), "max": hi * len(cfg.seeds)},
            "tokens_per_request": tokens,
            "results_bytes": (round(m["record_bytes"] * len(sel) * len(cfg.seeds)) if m.get("record_bytes")
                              else round(estimated_record_bytes(tokens, hi / max(1, len(sel))) * len(sel)
                                         * len(cfg.seeds))),
            "results_bytes_source": "measured" if m.get("record_bytes") else "estimated",
        })
    total = {"min": sum(a["requests"]["min"] for a in plan["arms"]),
             "max": sum(a["requests"]["max"] for a in plan["arms"])}
    plan["requests_per_model"] = total          # a model that runs every arm of the plan
    all_models = {"min": 0, "max": 0}
    any_model = any(a.needs_model for a in arms)
    total_s = {"min": 0.0, "max": 0.0}
    unknown_time: list[str] = []
    gpu = cfg.kind.gpu                   # the H100 projections apply
    measured_shares = prefix_cache_shares() if gpu else {}   # read once for every model
    measured_tp = measured_rates() if gpu else {}   # make gpu-acceptance's, once written
    for key in cfg.models:
        names = model_arm_names(cfg.arms, key)
        rows = [a for a in plan["arms"] if a["needs_model"] and a["arm"] in names]
        entry: dict = {"key": key, "arms": [a["arm"] for a in rows],
                       "requests": {b: sum(a["requests"][b] for a in rows) for b in ("min", "max")}}
        for b in ("min", "max"):
            all_models[b] += entry["requests"][b]
        model = desc.models[key]           # its launcher described (or why it could not be built)
        entry.update(_server_fields(model))
        plan["problems"] += list(model.problems)
        tp = ({k: v for k, v in asdict(model.throughput).items() if k != "measured" or v}
              if model.throughput is not None else None)
        if tp is not None and key in measured_tp:      # the box's measured rates replace the stated assumption
            tp = {**tp, **{k: v for k, v in measured_tp[key].items() if k != "concurrency"}, "measured": True}
        if tp is None and rows:
            entry["estimate_s"] = None     # unknown: no throughput to assume (an external server is the user's)
            unknown_time.append(key)
        if tp is not None:
            slow = tp.get("deterministic_slowdown", 1.0) if cfg.deterministic else 1.0
            est = {}
            for bound in ("min", "max"):
                prefill, decode = model_seconds(rows, tp, bound)
                est[bound] = (prefill + decode) * slow + (tp["startup_s"] if any_model else 0)
                total_s[bound] += est[bound]
            entry["throughput_assumption"] = tp
            entry["estimate_s"] = est
            if gpu:
                entry["prefix_cache"] = prefix_cache_projection(key, rows, tp, slow, cfg, any_model, measured_shares)
        plan["models"].append(entry)
    plan["estimate_s"] = None if unknown_time else total_s
    plan["order"] = cfg.order
    projected = [m.get("prefix_cache") for m in plan["models"]]
    if projected and all(p and p.get("estimate_s") for p in projected):
        plan["estimate_with_prefix_cache_s"] = {
            order: {b: sum(p["estimate_s"][order][b] for p in projected) for b in ("min", "max")}
            for order in projected[0]["estimate_s"]}
    plan["estimate_unknown_for"] = unknown_time
    plan["disk"] = disk_estimate(plan, measured)
    plan["downloads"] = download_estimate(desc)
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
                         "decode rate), plus server start-up; weight downloads are not included. Each rate is an "
                         "assumption (its source is printed with the model) until `make gpu-acceptance` has measured "
                         "it on your box (then the model's line says `measured`).")
    return plan


def prefix_cache_shares(report: Path = GPU_HOURS_REPORT) -> dict:
    """{model key: {order: share of prompt tokens the engine computed}} from the committed gpu-hours report, with
    its source; {} when there is none."""
    try:
        data = json.loads(Path(report).read_text())
        return {"shares": data["projection"]["computed_share"], "source": data["projection"]["source"]}
    except (OSError, ValueError, KeyError):
        return {}


def model_seconds(rows: list[dict], tp: dict, bound: str) -> tuple[float, float]:
    """(prefill, decode) seconds of a model's arm rows at the throughput assumption `tp`: requests x tokens per
    request / tokens per second, at the plan's `bound` ("min" or "max") of requests; no slowdown, no start-up."""
    prefill = sum(a["requests"][bound] * a["tokens_per_request"]["prompt"] for a in rows) / tp["prefill_tokens_per_s"]
    decode = sum(a["requests"][bound] * a["tokens_per_request"]["completion"] for a in rows) / tp["decode_tokens_per_s"]
    return prefill, decode


def prefix_cache_projection(key: str, rows: list[dict], tp: dict, slow: float, cfg: ReproduceConfig,
                            any_model: bool, measured: dict) -> dict:
    """The time estimate with vLLM's prefix cache: the prefill term times the share of prompt tokens the engine
    computes under each request order (`measured`: prefix_cache_shares(), docs/bench-gpu-hours.json), the decode
    term and start-up unchanged. Off in deterministic mode (serving.json's flags turn prefix caching off: every prompt
    token is computed, whatever the order)."""
    if cfg.deterministic:
        return {"off": "deterministic mode runs with --no-enable-prefix-caching: every prompt token is computed, "
                       "in either order"}
    shares = (measured.get("shares") or {}).get(key)
    if not shares:
        return {"unmeasured": f"no prefix-cache measurement for {key} in {GPU_HOURS_REPORT.name}"}
    out: dict = {"computed_share": shares, "source": measured["source"], "order": cfg.order, "estimate_s": {}}
    for order, share in shares.items():
        est = {}
        for bound in ("min", "max"):
            prefill, decode = model_seconds(rows, tp, bound)
            est[bound] = (prefill * share + decode) * slow + (tp["startup_s"] if any_model else 0)
        out["estimate_s"][order] = est
    return out


RECORD_FIELDS_BYTES = 2000   # a record's fields besides the request and replies (keys, scores, program, executor)


def estimated_record_bytes(tokens: dict, requests_per_case: float) -> float:
    """A record's size without stored results to measure: its fields plus the request and replies text of each
    request, CHARS_PER_TOKEN characters per token."""
    return RECORD_FIELDS_BYTES + requests_per_case * CHARS_PER_TOKEN * (tokens["prompt"] + tokens["completion"])


def disk_estimate(plan: dict, measured: dict) -> dict:
    """Bytes the run's results files will take: records x each arm's mean record size, measured on the stored
    results (whose replies come from another model) where there are some, else estimated from the tokens."""
    n_models = max(1, len(plan["models"]))
    total = sum(a["results_bytes"] * (n_models if a["needs_model"] else 1) for a in plan["arms"])
    sources = sorted({m for a in plan["arms"] if a["results_bytes_source"] == "measured"
                      for m in measured[a["arm"]].get("size_models", [])})
    estimated = [a["arm"] for a in plan["arms"] if a["results_bytes_source"] == "estimated"]
    assumption = (f"record sizes measured on stored results of {', '.join(sources)} (another model's replies "
                  f"differ in length)" if sources else "")
    if estimated:
        assumption += ("; " if assumption else "") + (
            f"{len(estimated)} arm(s) without stored results estimated at {RECORD_FIELDS_BYTES} bytes of fields "
            f"+ {CHARS_PER_TOKEN:.0f} characters per prompt and completion token of each request")
    return {"results_bytes": total, "assumption": assumption, "estimated_arms": estimated}


def download_estimate(desc: LauncherDescription) -> dict:
    """What the run downloads before it starts: model weights (bytes where the pins record them) and the server
    image (the launcher's); None for a size this kit does not record."""
    weights = {key: m.weights_bytes for key, m in desc.models.items()}
    image = desc.image_bytes
    sizes = list(weights.values()) + [image]
    return {"weights_bytes": weights, "image_bytes": image,
            "total_bytes": None if any(v is None for v in sizes) else sum(sizes),
            "known_bytes": sum(v for v in sizes if v)}


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _hours(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def _prefix_cache_lines(pc: dict | None, order: str) -> list[str]:
    """The model's time with the prefix cache under the run's order (and the other order), or why there is none."""
    if not pc:
        return []
    if pc.get("off") or pc.get("unmeasured"):
        return [f"  prefix cache: {pc.get('off') or pc.get('unmeasured')}"]
    mine = pc["estimate_s"].get(order)
    lines = [f"  prefix cache, order {order} (this run's): {_hours(mine['min'])} .. {_hours(mine['max'])}, "
             f"{pc['computed_share'][order]:.0%} of prompt tokens computed"] if mine else []
    lines += [f"  prefix cache, order {o}: {_hours(e['min'])} .. {_hours(e['max'])}, "
              f"{pc['computed_share'][o]:.0%} of prompt tokens computed"
              for o, e in pc["estimate_s"].items() if o != order]
    lines.append(f"  (prefill term x the share vLLM computed; {pc['source']})")
    return lines


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
    lines += plan.get("launcher_header", [])
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
        if m.get("estimate_s", 0) is None:
            lines.append("  time:    unknown (no throughput assumption for this launcher: time a few requests on "
                         "your server)")
        lines += [f"  {ln}" for ln in m.get("plan_lines", [])]
        if m.get("command"):
            lines.append(f"  smoke:   first, `harness serve smoke`: {SMOKE_DESCRIPTION}")
        if m.get("estimate_s"):
            tp = m["throughput_assumption"]
            lines.append(f"  time:    {_hours(m['estimate_s']['min'])} .. {_hours(m['estimate_s']['max'])} "
                         f"({'measured' if tp.get('measured') else 'assumed'} {tp['prefill_tokens_per_s']} prompt "
                         f"tok/s, {tp['decode_tokens_per_s']} completion tok/s, start-up {tp['startup_s']} s; "
                         f"{'source' if tp.get('measured') else 'assumption'}: {tp.get('source') or 'not stated'})")
            lines += _prefix_cache_lines(m.get("prefix_cache"), plan["order"])
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
                     f"  {t['source']}" + (f" on {', '.join(t['measured_on'])}" if t.get("measured_on") else ""))
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
    if est is None:
        lines.append(f"Estimated time, all models: unknown (no throughput assumption for "
                     f"{', '.join(plan['estimate_unknown_for'])} under launcher {plan['launcher']})")
    else:
        lines.append(f"Estimated time, all models: {_hours(est['min'])} .. {_hours(est['max'])}"
                     + (" (every prompt token computed)" if plan.get("estimate_with_prefix_cache_s") else ""))
    cached = plan.get("estimate_with_prefix_cache_s")
    if cached and plan["order"] in cached:
        mine = cached[plan["order"]]
        others = "; ".join(f"{o}: {_hours(v['min'])} .. {_hours(v['max'])}" for o, v in cached.items()
                           if o != plan["order"])
        lines.append(f"With vLLM's prefix cache, order {plan['order']} (this run's): {_hours(mine['min'])} .. "
                     f"{_hours(mine['max'])}" + (f" ({others})" if others else ""))
    disk, dl = plan["disk"], plan["downloads"]
    lines.append(f"Disk for results: about {_size(disk['results_bytes'])} (assumption: {disk['assumption']})")
    lines.append(f"Downloads: {_size(dl['total_bytes'])}"
                 + (f" (at least {_size(dl['known_bytes'])})" if dl["total_bytes"] is None and dl["known_bytes"] else "")
                 + " - weights: " + ", ".join(f"{k} {_size(v)}" for k, v in dl["weights_bytes"].items())
                 + (f"; server image {_size(dl['image_bytes'])}" if dl["image_bytes"] != 0 else "")
                 + (" (the wheels make vllm-image downloads)" if dl["image_bytes"] and plan.get("image_choice") == "own"
                    else "")
                 + ("; unknown: the pins record no size (see the model's and the image's registry pages)"
                    if dl["total_bytes"] is None else ""))
    for n in plan["notes"]:
        lines.append(f"note: {n}")
    for p in plan["problems"]:
        lines.append(f"PROBLEM: {p}")
    return "\n".join(lines) + "\n"
