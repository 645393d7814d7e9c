"""The plan of a reproduction (`make reproduce DRY_RUN=1`): the population of cases, request counts from each arm's
solver (`Solver.request_bounds`), tokens per request (measured from stored results, else estimated from the arms'
real prompts and the solvers' stated completion assumptions), the launcher's pins and commands, a time estimate
from the launcher's throughput assumption, and, for a GPU launcher, that estimate with its prefill term scaled by the
share of prompt tokens vLLM's prefix cache leaves to compute under the run's request order (measured:
docs/bench-gpu-hours.json, `make bench-gpu-hours`).

The plan is one frozen value (`Plan`, with an `ArmPlan` per arm and a `ModelPlan` per model), read and written
through harness.core.typed_json (`harness serve plan --json`); `build_plan` makes it in named steps and
`format_plan` prints it section by section."""

from __future__ import annotations

import json
import shlex
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from harness.arms.coverage import arm_cases
from harness.arms.solvers import Context
from harness.arms.spec import Arm
from harness.core.typed_json import from_json, to_json
from harness.data import datahub
from harness.data.dataset import Case, DatasetError, load_dataset
from harness.model.serving import ImagePlan, LauncherDescription, ServerPlan, Throughput
from harness.reproduce.acceptance import measured_rates
from harness.reproduce.config import PAPER_SEEDS, ROOT, ReproduceConfig, ReproduceError, resolve_arms, select_cases
from harness.reproduce.smoke import smoke_description
from harness.run.store import StoreError, iter_result_files, read_result_file, result_sets

CHARS_PER_TOKEN = 4.0  # prompt-size estimate when no measured results exist (English text, BPE tokenizers)
GPU_HOURS_REPORT = ROOT / "docs" / "bench-gpu-hours.json"  # prefix-cache shares per model and order (issue 36)
WORDS_TO_TOKENS = 1.35  # fallback: note words to tokens
RECORD_FIELDS_BYTES = 2000  # a record's fields besides the request and replies (keys, scores, program, executor)
BOUNDS = ("min", "max")

__all__ = [
    "ArmPlan",
    "Disk",
    "Downloads",
    "ModelPlan",
    "Plan",
    "PrefixCache",
    "Requests",
    "Seconds",
    "Tokens",
    "build_plan",
    "format_plan",
    "model_seconds",
    "plan_population",
    "read_plan",
    "request_bounds",
]


# ---- the plan's types --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Requests:
    """Chat requests at the plan's lower and upper bound (a solver's request_bounds)."""

    min: int
    max: int

    def __add__(self, other: Requests) -> Requests:
        return Requests(self.min + other.min, self.max + other.max)

    def times(self, n: int) -> Requests:
        return Requests(self.min * n, self.max * n)


@dataclass(frozen=True)
class Seconds:
    min: float
    max: float

    def __add__(self, other: Seconds) -> Seconds:
        return Seconds(self.min + other.min, self.max + other.max)


@dataclass(frozen=True)
class Tokens:
    """Mean tokens per request of an arm: measured on stored results, estimated, or none (`-`: no model)."""

    prompt: float
    completion: float
    source: Literal["measured", "estimated", "-"]
    detail: str
    measured_on: tuple[str, ...] = ()  # the models whose stored results were measured


@dataclass(frozen=True)
class ArmPlan:
    """One arm of the plan: its cases, requests per case, per seed and in all (per model), tokens, results size."""

    arm: str
    title: str
    solver: str
    needs_model: bool
    covered_only: bool
    samples: int
    repair_cap: int
    cases: int
    requests_per_case: Requests
    requests_per_seed: Requests
    requests: Requests
    tokens_per_request: Tokens
    results_bytes: int
    results_bytes_source: Literal["measured", "estimated"]


@dataclass(frozen=True)
class PrefixCache:
    """A GPU model's time with vLLM's prefix cache, per request order: the prefill term times the share of prompt
    tokens the engine computed (`computed_share`, measured). `off` / `unmeasured`: why there is no projection."""

    off: str | None = None
    unmeasured: str | None = None
    computed_share: dict[str, float] = field(default_factory=dict)
    source: str | None = None
    estimate_s: dict[str, Seconds] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelPlan:
    """One model of the plan: the arms it runs and their requests, its server (the launcher's part), the throughput
    the estimate assumes (measured by gpu-acceptance where it was), the time (None: unknown)."""

    key: str
    arms: tuple[str, ...]
    requests: Requests
    server: ServerPlan
    throughput: Throughput | None = None
    estimate_s: Seconds | None = None
    prefix_cache: PrefixCache | None = None


@dataclass(frozen=True)
class Disk:
    results_bytes: int
    assumption: str
    estimated_arms: tuple[str, ...]


@dataclass(frozen=True)
class Downloads:
    """What the run downloads before it starts (None: a size the kit does not record)."""

    weights_bytes: dict[str, int | None]
    image_bytes: int | None
    total_bytes: int | None
    known_bytes: int


@dataclass(frozen=True)
class Plan:
    """Everything `DRY_RUN=1` prints, as data (module docstring)."""

    launcher: str
    model_keys: tuple[str, ...]
    seeds: tuple[int, ...]
    dataset: str  # what was counted, in words
    dataset_stand_in: bool  # the published shape of an unfetched dataset
    n_cases: int
    out: str
    generation_config: str
    deterministic: bool
    order: str
    image: ImagePlan | None
    launcher_header: tuple[str, ...]
    arms: tuple[ArmPlan, ...]
    models: tuple[ModelPlan, ...]
    requests_per_model: Requests  # a model that runs every arm of the plan
    requests_all_models: Requests
    estimate_s: Seconds | None  # None: a model's throughput is unknown (an external server)
    estimate_with_prefix_cache_s: dict[str, Seconds] | None
    estimate_unknown_for: tuple[str, ...]
    disk: Disk
    downloads: Downloads
    notes: tuple[str, ...]
    problems: tuple[str, ...]

    def to_json(self) -> dict:
        return to_json(self)


def read_plan(data: Any) -> Plan:
    """A plan from its JSON form (`harness serve plan --json`)."""
    return from_json(Plan, data)


def request_bounds(arm: Arm, case: Case) -> tuple[int, int]:
    """(min, max) chat requests one case costs under an arm: its solver's `request_bounds`."""
    return arm.solver.request_bounds(arm, case)


@dataclass
class Population:
    """The cases a plan counts requests over (possibly a stand-in for an unavailable dataset)."""

    name: str
    cases: list
    description: str
    token_cases: list  # real cases whose prompts are measured for the token estimate
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
            raise ReproduceError(
                f"cannot derive the Verified shape: {rows} pinned rows over {len(by_calc)} calculators"
            ) from None
        per_calc = rows // len(by_calc)
        cases = []
        for _cid, group in sorted(by_calc.items()):
            cases += [group[i % len(group)] for i in range(per_calc)]
        if limit is not None:
            cases = cases[:limit]
        desc = (
            f"verified (not fetched here: {str(exc).splitlines()[0]}); counted on its published shape, "
            f"{len(by_calc)} calculators x {per_calc} cases = {rows} rows (calculators and output types "
            f"from the bundled slice)"
        )
        return Population("verified", cases, desc, slice_.cases, stand_in=True)
    cases = select_cases(ds, limit, shortest)
    return Population(
        ds.name,
        cases,
        f"{ds.name}: {ds.path} ({len(ds.cases)} rows, sha256 {ds.sha256[:12]}...)"
        + (f"; {len(cases)} selected" if len(cases) != len(ds.cases) else ""),
        cases,
    )


@dataclass
class MeasuredArm:
    """One arm measured on stored results: mean tokens per request (over `requests` requests of `models`) and the
    mean size of a record (over the results files of `size_models`)."""

    prompt: float = 0.0
    completion: float = 0.0
    requests: int = 0
    models: list[str] = field(default_factory=list)
    record_bytes: float | None = None
    size_models: list[str] = field(default_factory=list)


def measured_token_means(results_root: Path = ROOT / "results") -> dict[str, MeasuredArm]:
    """Per arm, what stored results measure: tokens per request and bytes per record (unreadable files skipped)."""
    root = Path(results_root)
    if not root.is_dir():
        return {}
    tokens: dict[str, list] = {}  # arm -> [prompt tokens, completion tokens, requests, models]
    sizes: dict[str, list] = {}  # arm -> [bytes, records, models]
    for path in (p for result_set in result_sets(root) for p in iter_result_files(result_set)):
        try:
            records = read_result_file(path)
        except (OSError, StoreError):
            continue  # an unreadable file only costs the estimate its measurements
        if records:
            size = sizes.setdefault(records[0].arm, [0, 0, set()])
            size[0], size[1] = size[0] + path.stat().st_size, size[1] + len(records)
            size[2].add(records[0].model)
        for rec in records:
            tok, n = rec.tokens, len(rec.request)
            if n and tok is not None and tok.prompt is not None and tok.completion is not None:
                acc = tokens.setdefault(rec.arm, [0, 0, 0, set()])
                acc[0], acc[1], acc[2] = acc[0] + tok.prompt, acc[1] + tok.completion, acc[2] + n
                acc[3].add(rec.model)
    means = {arm: MeasuredArm(p / n, c / n, n, sorted(models)) for arm, (p, c, n, models) in tokens.items() if n}
    for arm, (n_bytes, n_records, models) in sizes.items():
        m = means.setdefault(arm, MeasuredArm(models=sorted(models)))
        m.record_bytes, m.size_models = n_bytes / n_records, sorted(models)
    return means


def estimated_token_means(arm: Arm, cases: list) -> Tokens:
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
        words = [min(len(c.note.split()), arm.note_words or 10**9) for c in cases]
        sizes = [w * WORDS_TO_TOKENS + 300 for w in words] or [0]
        if not source.startswith("note"):
            source = f"note lengths x {WORDS_TO_TOKENS} tokens/word + 300"
    return Tokens(
        statistics.mean(sizes),
        completion,
        "estimated",
        f"prompt: {source}; completion: stated assumption ({completion} tokens)",
    )


# ---- building the plan --------------------------------------------------------------------------------------------


def build_plan(cfg: ReproduceConfig, *, results_root: Path = ROOT / "results") -> Plan:
    """The plan of `cfg` (module docstring): the population, the arms counted, the launcher described, the models
    estimated, then the totals and the notes."""
    pop = plan_population(cfg.dataset, cfg.limit, cfg.shortest)
    measured = measured_token_means(results_root)
    desc = cfg.kind.describe_plan(list(cfg.models), cfg.launch_options())
    arms = tuple(arm_plan(arm, pop, measured, cfg) for arm in resolve_arms(cfg.arms))
    models = tuple(model_plans(cfg, arms, desc))
    unknown = tuple(m.key for m in models if m.estimate_s is None and m.arms)
    problems = desc.problems + tuple(p for m in models for p in m.server.problems)
    return Plan(
        launcher=cfg.launcher,
        model_keys=tuple(cfg.models),
        seeds=tuple(cfg.seeds),
        dataset=pop.description,
        dataset_stand_in=pop.stand_in,
        n_cases=len(pop.cases),
        out=str(cfg.out),
        generation_config=cfg.generation_config,
        deterministic=cfg.deterministic,
        order=cfg.order,
        image=desc.image,
        launcher_header=desc.header,
        arms=arms,
        models=models,
        requests_per_model=sum((a.requests for a in arms), Requests(0, 0)),
        requests_all_models=sum((m.requests for m in models), Requests(0, 0)),
        estimate_s=None if unknown else sum((m.estimate_s for m in models if m.estimate_s), Seconds(0.0, 0.0)),
        estimate_with_prefix_cache_s=_with_prefix_cache(models),
        estimate_unknown_for=unknown,
        disk=disk_estimate(arms, len(models), measured),
        downloads=download_estimate(desc),
        notes=desc.notes + plan_notes(arms, models),
        problems=problems,
    )


def arm_plan(arm: Arm, pop: Population, measured: dict[str, MeasuredArm], cfg: ReproduceConfig) -> ArmPlan:
    """One arm counted over the population: its cases, requests (per case, per seed, in all), tokens, results size."""
    sel = arm_cases(arm, pop.cases, cfg.all_cases)
    bounds = [request_bounds(arm, c) for c in sel]
    per_seed = Requests(sum(b[0] for b in bounds), sum(b[1] for b in bounds))
    m = measured.get(arm.name)
    tokens = arm_tokens(arm, m, [c for c in pop.token_cases if arm_cases(arm, [c], cfg.all_cases)])
    n_seeds = len(cfg.seeds)
    record_bytes = (
        m.record_bytes if m and m.record_bytes else estimated_record_bytes(tokens, per_seed.max / max(1, len(sel)))
    )
    return ArmPlan(
        arm=arm.name,
        title=arm.title,
        solver=arm.solver.name,
        needs_model=arm.needs_model,
        covered_only=arm.covered_only and not cfg.all_cases,
        samples=arm.samples,
        repair_cap=arm.solver.config().get("repair_cap", 0),
        cases=len(sel),
        requests_per_case=Requests(min((b[0] for b in bounds), default=0), max((b[1] for b in bounds), default=0)),
        requests_per_seed=per_seed,
        requests=per_seed.times(n_seeds),
        tokens_per_request=tokens,
        results_bytes=round(record_bytes * len(sel) * n_seeds),
        results_bytes_source="measured" if m and m.record_bytes else "estimated",
    )


def arm_tokens(arm: Arm, m: MeasuredArm | None, token_cases: list) -> Tokens:
    """Tokens per request: measured on stored results where there are some, else estimated (no model: none)."""
    if m is not None and m.requests:
        return Tokens(
            m.prompt,
            m.completion,
            "measured",
            f"means of {m.requests} stored requests of {', '.join(m.models)} (assumed to hold for the "
            f"planned models: replies of another model, size or server differ)",
            tuple(m.models),
        )
    if arm.needs_model:
        return estimated_token_means(arm, token_cases)
    return Tokens(0.0, 0.0, "-", "no model")


def model_plans(cfg: ReproduceConfig, arms: tuple[ArmPlan, ...], desc: LauncherDescription) -> list[ModelPlan]:
    """Each model's arms and requests, its launcher's part, and its time at the throughput assumed (the box's
    measured rates where gpu-acceptance measured them; the prefix-cache projection on a GPU launcher)."""
    gpu = cfg.kind.gpu  # the H100 projections apply
    shares = prefix_cache_shares() if gpu else {}  # read once for every model
    rates = measured_rates() if gpu else {}  # make gpu-acceptance's, once written
    any_model = any(a.needs_model for a in arms)
    arm_names = cfg.model_arm_names()
    out = []
    for key in cfg.models:
        names = arm_names[key]
        rows = tuple(a for a in arms if a.needs_model and a.arm in names)
        server = desc.models[key]  # its launcher described (or why it could not be built)
        tp = _measured(server.throughput, rates.get(key))
        est = prefix = None
        if tp is not None:
            slow = tp.deterministic_slowdown if cfg.deterministic else 1.0
            start = tp.startup_s if any_model else 0
            est = Seconds(*((sum(model_seconds(rows, tp, b)) * slow + start) for b in BOUNDS))
            prefix = prefix_cache_projection(key, rows, tp, slow, cfg, any_model, shares) if gpu else None
        out.append(
            ModelPlan(
                key,
                tuple(a.arm for a in rows),
                sum((a.requests for a in rows), Requests(0, 0)),
                server,
                tp,
                est,
                prefix,
            )
        )
    return out


def _measured(tp: Throughput | None, rates: dict | None) -> Throughput | None:
    """The stated assumption with the box's measured rates in its place (make gpu-acceptance), where measured."""
    if tp is None or not rates:
        return tp
    return replace(
        tp,
        prefill_tokens_per_s=rates["prefill_tokens_per_s"],
        decode_tokens_per_s=rates["decode_tokens_per_s"],
        source=rates["source"],
        deterministic_slowdown=rates.get("deterministic_slowdown", tp.deterministic_slowdown),
        measured=True,
    )


def _with_prefix_cache(models: tuple[ModelPlan, ...]) -> dict[str, Seconds] | None:
    """The run's time with the prefix cache per request order, when every model has a projection."""
    projected = [m.prefix_cache for m in models]
    if not projected or not all(p is not None and p.estimate_s for p in projected):
        return None
    return {
        order: sum((p.estimate_s[order] for p in projected), Seconds(0.0, 0.0)) for order in projected[0].estimate_s
    }


def plan_notes(arms: tuple[ArmPlan, ...], models: tuple[ModelPlan, ...]) -> tuple[str, ...]:
    """What the plan's figures assume, in words."""
    notes = []
    partial = [m for m in models if len(m.arms) < sum(a.needs_model for a in arms)]
    if partial:
        notes.append(
            "ARMS=all runs, for each model, the arms the paper reports for it: "
            + "; ".join(f"{m.key}: {', '.join(m.arms)}" for m in partial)
            + " (ARMS=every runs every paper arm on every model)."
        )
    notes.append("Arms without a model (Gold-Solve) run without a server, once for all models; they send no request.")
    notes += [
        f"tokens per request: {d}"
        for d in sorted({a.tokens_per_request.detail for a in arms if a.tokens_per_request.source != "-"})
    ]
    notes.append(
        "Time = sum over arms of requests x (prompt tokens / prefill rate + completion tokens / decode rate), "
        "plus server start-up; weight downloads are not included. Each rate is an assumption (its source is "
        "printed with the model) until `make gpu-acceptance` has measured it on your box (then the model's "
        "line says `measured`)."
    )
    return tuple(notes)


def prefix_cache_shares(report: Path = GPU_HOURS_REPORT) -> dict:
    """{"shares": {model key: {order: share of prompt tokens the engine computed}}, "source": ...} from the committed
    gpu-hours report; {} when there is none."""
    try:
        data = json.loads(Path(report).read_text())
        return {"shares": data["projection"]["computed_share"], "source": data["projection"]["source"]}
    except (OSError, ValueError, KeyError):
        return {}


def model_seconds(rows: Iterable[ArmPlan], tp: Throughput, bound: str) -> tuple[float, float]:
    """(prefill, decode) seconds of a model's arm rows at the throughput assumption `tp`: requests x tokens per
    request / tokens per second, at the plan's `bound` ("min" or "max") of requests; no slowdown, no start-up."""
    prefill = sum(getattr(a.requests, bound) * a.tokens_per_request.prompt for a in rows) / tp.prefill_tokens_per_s
    decode = sum(getattr(a.requests, bound) * a.tokens_per_request.completion for a in rows) / tp.decode_tokens_per_s
    return prefill, decode


def prefix_cache_projection(
    key: str,
    rows: Iterable[ArmPlan],
    tp: Throughput,
    slow: float,
    cfg: ReproduceConfig,
    any_model: bool,
    measured: dict,
) -> PrefixCache:
    """The time estimate with vLLM's prefix cache: the prefill term times the share of prompt tokens the engine
    computes under each request order (`measured`: prefix_cache_shares(), docs/bench-gpu-hours.json), the decode
    term and start-up unchanged. Off in deterministic mode (serving.json's flags turn prefix caching off: every prompt
    token is computed, whatever the order)."""
    if cfg.deterministic:
        return PrefixCache(
            off="deterministic mode runs with --no-enable-prefix-caching: every prompt token is "
            "computed, in either order"
        )
    shares = (measured.get("shares") or {}).get(key)
    if not shares:
        return PrefixCache(unmeasured=f"no prefix-cache measurement for {key} in {GPU_HOURS_REPORT.name}")
    start = tp.startup_s if any_model else 0

    def seconds(share: float) -> Seconds:
        return Seconds(
            *((model_seconds(rows, tp, b)[0] * share + model_seconds(rows, tp, b)[1]) * slow + start for b in BOUNDS)
        )

    return PrefixCache(
        computed_share=dict(shares),
        source=measured["source"],
        estimate_s={order: seconds(share) for order, share in shares.items()},
    )


def estimated_record_bytes(tokens: Tokens, requests_per_case: float) -> float:
    """A record's size without stored results to measure: its fields plus the request and replies text of each
    request, CHARS_PER_TOKEN characters per token."""
    return RECORD_FIELDS_BYTES + requests_per_case * CHARS_PER_TOKEN * (tokens.prompt + tokens.completion)


def disk_estimate(arms: tuple[ArmPlan, ...], n_models: int, measured: dict[str, MeasuredArm]) -> Disk:
    """Bytes the run's results files will take: records x each arm's mean record size, measured on the stored
    results (whose replies come from another model) where there are some, else estimated from the tokens."""
    total = sum(a.results_bytes * (max(1, n_models) if a.needs_model else 1) for a in arms)
    sources = sorted({m for a in arms if a.results_bytes_source == "measured" for m in measured[a.arm].size_models})
    estimated = tuple(a.arm for a in arms if a.results_bytes_source == "estimated")
    assumption = (
        f"record sizes measured on stored results of {', '.join(sources)} (another model's replies differ in length)"
        if sources
        else ""
    )
    if estimated:
        assumption += ("; " if assumption else "") + (
            f"{len(estimated)} arm(s) without stored results estimated at {RECORD_FIELDS_BYTES} bytes of fields "
            f"+ {CHARS_PER_TOKEN:.0f} characters per prompt and completion token of each request"
        )
    return Disk(total, assumption, estimated)


def download_estimate(desc: LauncherDescription) -> Downloads:
    """What the run downloads before it starts: model weights (bytes where the pins record them) and the server
    image (the launcher's); None for a size this kit does not record."""
    weights = {key: m.weights_bytes for key, m in desc.models.items()}
    image = desc.image_bytes
    sizes = list(weights.values()) + [image]
    return Downloads(weights, image, None if any(v is None for v in sizes) else sum(sizes), sum(v for v in sizes if v))


# ---- printing it ----------------------------------------------------------------------------------------------------


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _hours(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def _span(rq: Requests) -> str:
    """ "a" or "a..b", thousands separated."""
    return f"{rq.min:,}" if rq.min == rq.max else f"{rq.min:,}..{rq.max:,}"


def format_plan(plan: Plan) -> str:
    """The plan as the dry run prints it: the run, each model, the requests per arm, the totals, notes, problems."""
    lines = _run_lines(plan)
    for m in plan.models:
        lines += _model_lines(m, plan.order)
    lines += _arm_table(plan) + _total_lines(plan)
    lines += [f"note: {n}" for n in plan.notes] + [f"PROBLEM: {p}" for p in plan.problems]
    return "\n".join(lines) + "\n"


def _run_lines(plan: Plan) -> list[str]:
    return [
        "Reproduction plan (dry run: nothing is started, nothing is downloaded)",
        "",
        f"launcher:   {plan.launcher}",
        f"models:     {', '.join(m.key for m in plan.models)}",
        f"seeds:      {', '.join(map(str, plan.seeds))}",
        f"dataset:    {plan.dataset}",
        f"results:    {plan.out}",
        *plan.launcher_header,
        "",
    ]


def _model_lines(m: ModelPlan, order: str) -> list[str]:
    """One model: what serves it (or why it cannot), its command, flags, the launcher's lines, the smoke step, its
    time."""
    server, info = m.server, m.server.info
    lock = (info.model if info is not None else None) or {}
    lines = [
        f"model {m.key}: {server.model_id} @ {server.revision or 'UNPINNED'}"
        + (f"  [{lock['license']}]" if lock.get("license") else "")
        + ("  [gated: needs HF_TOKEN]" if lock.get("gated") else "")
    ]
    if server.error:
        lines.append(f"  REFUSED: {server.error}")
    if info is not None and info.command:
        lines.append(f"  command: {shlex.join(info.command)}")
    if info is not None and info.flags and server.lines:
        lines.append("  flags:   " + ", ".join(f"{k}={v}" for k, v in info.flags.items() if k != "port"))
    if m.estimate_s is None and m.arms:
        lines.append(
            "  time:    unknown (no throughput assumption for this launcher: time a few requests on your server)"
        )
    lines += [f"  {ln}" for ln in server.lines]
    if info is not None and info.command:
        lines.append(f"  smoke:   first, `harness serve smoke`: {smoke_description()}")
    if m.estimate_s is not None and m.throughput is not None:
        tp = m.throughput
        lines.append(
            f"  time:    {_hours(m.estimate_s.min)} .. {_hours(m.estimate_s.max)} "
            f"({'measured' if tp.measured else 'assumed'} {tp.prefill_tokens_per_s} prompt tok/s, "
            f"{tp.decode_tokens_per_s} completion tok/s, start-up {tp.startup_s} s; "
            f"{'source' if tp.measured else 'assumption'}: {tp.source or 'not stated'})"
        )
        lines += _prefix_cache_lines(m.prefix_cache, order)
    return lines


def _prefix_cache_lines(pc: PrefixCache | None, order: str) -> list[str]:
    """The model's time with the prefix cache under the run's order (and the other order), or why there is none."""
    if pc is None:
        return []
    if pc.off or pc.unmeasured:
        return [f"  prefix cache: {pc.off or pc.unmeasured}"]
    mine = pc.estimate_s.get(order)
    lines = (
        [
            f"  prefix cache, order {order} (this run's): {_hours(mine.min)} .. {_hours(mine.max)}, "
            f"{pc.computed_share[order]:.0%} of prompt tokens computed"
        ]
        if mine
        else []
    )
    lines += [
        f"  prefix cache, order {o}: {_hours(e.min)} .. {_hours(e.max)}, "
        f"{pc.computed_share[o]:.0%} of prompt tokens computed"
        for o, e in pc.estimate_s.items()
        if o != order
    ]
    lines.append(f"  (prefill term x the share vLLM computed; {pc.source})")
    return lines


def _arm_table(plan: Plan) -> list[str]:
    """Requests per arm (per model), the totals per model and for all models."""
    lines = [
        "",
        f"Requests per arm, per model, {len(plan.seeds)} seed(s):",
        f"  {'arm':<22} {'cases':>6} {'req/case':>9} {'requests':>15} {'prompt tok':>10} {'compl. tok':>10}  source",
    ]
    for a in plan.arms:
        rpc, t = a.requests_per_case, a.tokens_per_request
        per = f"{rpc.min}" if rpc.min == rpc.max else f"{rpc.min}..{rpc.max}"
        cases = f"{a.cases}" + ("c" if a.covered_only else "")
        lines.append(
            f"  {a.arm:<22} {cases:>6} {per:>9} {_span(a.requests):>15} {t.prompt:>10.0f} "
            f"{t.completion:>10.0f}  {t.source}" + (f" on {', '.join(t.measured_on)}" if t.measured_on else "")
        )
    tot = plan.requests_per_model
    lines.append(f"  {'total per model':<22} {'':>6} {'':>9} {tot.min:,}..{tot.max:,}".rstrip())
    n_model_arms = sum(a.needs_model for a in plan.arms)
    lines += [
        f"  {m.key:<22} {'':>6} {'':>9} {_span(m.requests):>15}  ({len(m.arms)} arm(s): {', '.join(m.arms)})"
        for m in plan.models
        if len(m.arms) < n_model_arms
    ]
    every = plan.requests_all_models if plan.models else tot
    return lines + [
        f"  {f'all {len(plan.models) or 1} model(s)':<22} {'':>6} {'':>9} {every.min:,}..{every.max:,}",
        "  (c: the library's covered cases only, as in the paper)",
        "",
    ]


def _total_lines(plan: Plan) -> list[str]:
    """The run's time (with the prefix cache, where projected), its disk and downloads."""
    est, cached = plan.estimate_s, plan.estimate_with_prefix_cache_s
    if est is None:
        lines = [
            f"Estimated time, all models: unknown (no throughput assumption for "
            f"{', '.join(plan.estimate_unknown_for)} under launcher {plan.launcher})"
        ]
    else:
        lines = [
            f"Estimated time, all models: {_hours(est.min)} .. {_hours(est.max)}"
            + (" (every prompt token computed)" if cached else "")
        ]
    if cached and plan.order in cached:
        mine = cached[plan.order]
        others = "; ".join(f"{o}: {_hours(v.min)} .. {_hours(v.max)}" for o, v in cached.items() if o != plan.order)
        lines.append(
            f"With vLLM's prefix cache, order {plan.order} (this run's): {_hours(mine.min)} .. "
            f"{_hours(mine.max)}" + (f" ({others})" if others else "")
        )
    disk, dl = plan.disk, plan.downloads
    own_image = plan.image is not None and plan.image.choice == "own"
    lines.append(f"Disk for results: about {_size(disk.results_bytes)} (assumption: {disk.assumption})")
    lines.append(
        f"Downloads: {_size(dl.total_bytes)}"
        + (f" (at least {_size(dl.known_bytes)})" if dl.total_bytes is None and dl.known_bytes else "")
        + " - weights: "
        + ", ".join(f"{k} {_size(v)}" for k, v in dl.weights_bytes.items())
        + (f"; server image {_size(dl.image_bytes)}" if dl.image_bytes != 0 else "")
        + (" (the wheels make vllm-image downloads)" if dl.image_bytes and own_image else "")
        + (
            "; unknown: the pins record no size (see the model's and the image's registry pages)"
            if dl.total_bytes is None
            else ""
        )
    )
    return lines
