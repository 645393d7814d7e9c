"""Fewer GPU-hours per reproduction (issue 36): vLLM's prefix-cache counters under the runner's two request orders,
and the H100 hours they project for the paper's run (`make bench-gpu-hours` -> runs/bench/gpu-hours.json; the
committed report is docs/bench-gpu-hours.json, which `make reproduce DRY_RUN=1` reads).

    .venv/bin/python -m bench gpu-hours [--out runs/bench/gpu-hours.json] [--cases 4] [--no-twin]

The stream. The paper's requests as the runner issues them: its units (harness.run.runner.planned_units) in either
order (harness.run.schedule.phases: arm-major, the kit's order until now, or case-major), each item sending the
requests its solver always sends (request_bounds' minimum: one prompt, or the vote and recalled arms' samples, all
of them the arm's first prompt, built by the arm itself), one after another, with at most `concurrency` items in
flight. Left out: the follow-ups that depend on the model's replies (a repair turn, which begins with the original
prompt and so would hit the cache too; the recalled arm's extraction, which is extract-lib's own prompt).

1. The real engine. The vLLM CPU twin (harness.model.vllm.cpu.VllmCpuLauncher: vLLM 0.32.0's own server) with
   prefix caching on, serves a sample of cases in both orders in one session (the same server; the cache reset
   between orders through the dev-mode POST /reset_prefix_cache), every request with max_tokens 1 (the counters are
   about prompts; a one-token reply does not change which prefix blocks exist). Read from GET /metrics before and
   after each order: vllm:prefix_cache_queries / _hits, vllm:prompt_tokens, vllm:prompt_tokens_by_source
   (local_compute: prompt tokens computed; local_cache_hit) (vllm/v1/metrics/loggers.py). The sample is a scale
   model of the H100 run: its KV cache holds the same share of the stream's distinct prompt tokens as the H100's
   cache holds of the paper's 7B stream (kv_capacity), and the plan's 64 requests in flight scale with it (at the
   sample's cache size, 64 running prompts would need more blocks than the whole cache; the H100's 64 hold a few
   per cent of its own), to at least one.
2. vLLM's own scheduler without a model (bench/vllm_replay.py, in .venv-vllm): the same stream replayed through the
   engine's Scheduler, KV-cache manager and block pool, first at the twin's settings (its counters must equal the
   twin's), then at the H100's (block size 16, the capacity below, the plan's max-num-seqs and concurrency, 8,192
   batched tokens, each request decoding the plan's completion tokens for its arm) over 1,100 cases: the bundled
   slice's 110 real cases, each in 10 copies whose token ids differ after the system message (so copies share
   nothing of a case, as different cases share nothing).
3. The plan's arithmetic (harness.reproduce.plan): time = requests x (prompt tokens / prefill rate + completion
   tokens / decode rate) + start-up, with the prefill term multiplied by the share of prompt tokens the replay's
   engine computed under each order. Deterministic mode keeps prefix caching off (serving.json), so its share is 1
   whatever the order, times the plan's deterministic slowdown.

The KV capacity (kv_capacity) follows vLLM 0.32.0's own sizing (sources cited at the constants).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.machine import Machine, uptime
from harness.arms.solvers import Context
from harness.arms.spec import Arm
from harness.calculators import LIBRARY
from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.data import datahub
from harness.data.dataset import Case, Dataset, load_dataset
from harness.model.vllm import locks as vllm_pins
from harness.model.vllm.cpu import VENV_PYTHON, VllmCpuLauncher, model_dir
from harness.reproduce.config import PAPER_SEEDS, ReproduceConfig, model_arm_names, resolve_arms
from harness.reproduce.plan import build_plan, model_seconds
from harness.run.runner import RunSpec, planned_units
from harness.run.schedule import ARM_MAJOR, CASE_MAJOR, ORDERS, phases

MODELS = ("qwen2.5-7b", "qwen2.5-32b-awq")  # the paper's two models (`make reproduce`'s default)
SCALE_MODEL = "qwen2.5-7b"  # the twin's cache is sized after this model's H100 cache
GIB = 1 << 30

# --- the H100's KV cache, as vLLM 0.32.0 sizes it ------------------------------------------------------------------
# vllm/v1/worker/utils.py:724-726 request_memory: requested = ceil(total memory x --gpu-memory-utilization).
# vllm/v1/worker/gpu_worker.py:740-744 determine_available_memory: KV bytes = requested - non-KV memory - the CUDA
#   graph estimate; non-KV (vllm/utils/mem_utils.py:312-321) = what the instance consumed after its profile run
#   (weights, CUDA context and other non-torch memory) + the profile run's transient activation peak; the CUDA-graph
#   estimate is on by default (vllm/envs.py:2221-2222, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1).
# vllm/v1/core/kv_cache_utils.py:1627 num_blocks = KV bytes // bytes per block, a block's bytes summed over the
#   layers (kv_cache_utils.py:1520-1539, _get_kv_cache_bytes_per_block), each layer's page block_size x 2 (K and V)
#   x KV heads x head size x dtype bytes (vllm/v1/kv_cache_interface.py AttentionSpec).
# vllm/config/cache.py:72 DEFAULT_BLOCK_SIZE = 16 on the GPU; vllm/platforms/cpu.py:289-296: the CPU twin's default
#   is 128 and its attention backend takes multiples of 32 only ("No common block size for 16 (CPU_ATTN:
#   [MultipleOf(32)])" at start-up), so the twin runs at 32.
# vllm/engine/arg_utils.py:2935-2938: on a >= 70 GiB GPU that is not an A100 the API server batches 8,192 tokens per
#   step (max_num_batched_tokens); on CPU 2,048 (arg_utils.py:2976-2979).
# VLLM_CPU_KVCACHE_SPACE is read with int() (vllm/envs.py:887-891, vllm/platforms/cpu.py:323-326): whole GiB only, a
#   fraction is refused at start. The twin's capacity is set in blocks instead, --num-gpu-blocks-override
#   (kv_cache_utils.py:1231-1236 may_override_num_blocks), inside the 2 GiB it reserves.
H100_TOTAL_BYTES = 81559 * (1 << 20)  # nvidia-smi's total for "NVIDIA H100 80GB HBM3" (huggingface/
# text-generation-inference#2572); CUDA's mem_get_info reports the same
H100_BLOCK_SIZE = 16
H100_MAX_BATCHED_TOKENS = 8192
TWIN_BLOCK_SIZE = 32
TWIN_MAX_BATCHED_TOKENS = 2048
# Non-KV memory besides the weights (CUDA context and other non-torch memory, the profile run's activation peak at
# 8,192 tokens, the CUDA-graph estimate): not derivable from a config and not measurable here. Stated assumption
# with a range; the capacity's spread over it is reported beside the central value.
OVERHEAD_GIB = {"low": 1.0, "central": 2.0, "high": 4.0}


@dataclass(frozen=True)
class Architecture:
    """What sizes a model's weights and KV cache, from its config.json."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int
    kv_dtype_bytes: int  # the served dtype: bfloat16 / float16 = 2, float32 = 4
    weights: str  # "dense" (kv_dtype_bytes per parameter) or "awq-int4-g128"
    source: str

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.kv_dtype_bytes

    def weight_bytes(self) -> int:
        """Weights as loaded: untied embedding and lm_head, q/k/v with biases (Qwen2), o, gate/up/down, norms. AWQ:
        4-bit linear weights with an fp16 scale and a 4-bit zero per 128 inputs (AutoAWQ's GEMM layout), the rest
        fp16."""
        h, kv = self.hidden, self.kv_heads * self.head_dim
        linears = [
            (h, h),
            (h, kv),
            (h, kv),
            (h, h),
            (h, self.intermediate),
            (h, self.intermediate),
            (self.intermediate, h),
        ]
        biases = h + 2 * kv
        other = 2 * self.vocab * h + self.layers * (2 * h + biases) + h  # embeddings, norms, biases
        dense = sum(i * o for i, o in linears) * self.layers
        if self.weights == "dense":
            return (dense + other) * self.kv_dtype_bytes
        quant = sum(i * o // 2 + (i // 128) * o * 2 + (i // 128) * o // 2 for i, o in linears) * self.layers
        return quant + other * 2


ARCHITECTURES = {
    "qwen2.5-7b": Architecture(
        28,
        3584,
        18944,
        28,
        4,
        152064,
        2,
        "dense",
        "config.json of Qwen/Qwen2.5-7B-Instruct (as re-published verbatim, e.g. huggingface.co/osllmai-community/"
        "Qwen2.5-7B-Instruct/blob/main/config.json; the pinned revision's own file is on the hub, which this machine "
        "cannot reach): 28 layers, hidden 3584, intermediate 18944, 28 heads, 4 KV heads, vocab 152064, untied; "
        "served in bfloat16 (serving.json)",
    ),
    "qwen2.5-32b-awq": Architecture(
        64,
        5120,
        27648,
        40,
        8,
        152064,
        2,
        "awq-int4-g128",
        "config.json of Qwen/Qwen2.5-32B (huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json; the AWQ checkpoint "
        "keeps its architecture): 64 layers, hidden 5120, intermediate 27648, 40 heads, 8 KV heads, vocab 152064, "
        "untied; served in float16 with 4-bit AWQ weights (serving.json; group size 128 assumed, AutoAWQ's default)",
    ),
}


def kv_capacity(key: str) -> dict:
    """The H100's KV cache for model `key` under serving.json's flags, with its derivation."""
    arch = ARCHITECTURES[key]
    flags = vllm_pins.serving_flags(key)
    util = float(flags["gpu_memory_utilization"])
    requested = math.ceil(H100_TOTAL_BYTES * util)
    weights = arch.weight_bytes()
    per_token = arch.kv_bytes_per_token()
    per_block = per_token * H100_BLOCK_SIZE
    out = {
        "model": key,
        "architecture": dataclasses.asdict(arch),
        "gpu_memory_utilization": util,
        "total_bytes": H100_TOTAL_BYTES,
        "requested_bytes": requested,
        "weight_bytes": weights,
        "kv_bytes_per_token": per_token,
        "block_size": H100_BLOCK_SIZE,
        "max_num_seqs": int(flags["max_num_seqs"]),
    }
    ranges: dict[str, dict[str, float]] = {}
    for name, gib in OVERHEAD_GIB.items():
        kv = requested - weights - int(gib * GIB)
        blocks = kv // per_block
        out[name] = ranges[name] = {
            "overhead_gib": gib,
            "kv_bytes": kv,
            "blocks": blocks,
            "tokens": blocks * H100_BLOCK_SIZE,
        }
    c = ranges["central"]
    out["derivation"] = (
        f"ceil({H100_TOTAL_BYTES / GIB:.2f} GiB x {util}) = {requested / GIB:.2f} GiB requested; minus weights "
        f"{weights / GIB:.2f} GiB ({arch.weights}, from the config) and {c['overhead_gib']} GiB of other non-KV memory "
        f"(assumed, range {OVERHEAD_GIB['low']}-{OVERHEAD_GIB['high']} GiB) = {c['kv_bytes'] / GIB:.2f} GiB; one token "
        f"is 2 x {arch.layers} layers x {arch.kv_heads} KV heads x {arch.head_dim} x {arch.kv_dtype_bytes} bytes = "
        f"{per_token:,} bytes, a block of {H100_BLOCK_SIZE} tokens {per_block:,} bytes: {c['blocks']:,} blocks = "
        f"{c['tokens']:,} tokens (range {ranges['high']['tokens']:,}-{ranges['low']['tokens']:,})"
    )
    return out


def twin_architecture() -> dict:
    """The CPU twin's converted model: its KV bytes per token, from its own config.json."""
    cfg = json.loads((model_dir() / "config.json").read_text())
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
    dtype_bytes = {"float32": 4, "bfloat16": 2, "float16": 2}[
        str(vllm_pins.serving_config()["cpu_twin"]["flags"]["dtype"])
    ]
    return {
        "layers": cfg["num_hidden_layers"],
        "kv_heads": kv,
        "head_dim": head_dim,
        "dtype_bytes": dtype_bytes,
        "kv_bytes_per_token": 2 * cfg["num_hidden_layers"] * kv * head_dim * dtype_bytes,
    }


# --- the request stream ------------------------------------------------------------------------------------------
@dataclass
class Stream:
    """A run's requests in issue order: phases of items, an item a list of [sequence index, copy, max_tokens]; the
    distinct prompts (chat messages) the indices point to; each item's (arm, seed, case id)."""

    order: str
    messages: list[list[dict]]
    phases: list[list[list[list[int]]]]
    items: list[tuple[str, int, str]]
    temperatures: dict[int, float]

    @property
    def requests(self) -> int:
        return sum(len(item) for phase in self.phases for item in phase)


def model_arms(key: str) -> list[Arm]:
    """The arms `make reproduce` runs for `key` that send requests (ARMS=all)."""
    names = model_arm_names(["all"], key)
    return [a for a in resolve_arms(["all"], key) if a.name in names]


def copy_cases(cases: list[Case], copies: int) -> list[Case]:
    """`copies` copies of each case: copy k's case id differs (row number + k x 1,000,000), its text does not."""
    return [dataclasses.replace(c, row_number=c.row_number + k * 1_000_000) for k in range(copies) for c in cases]


def build_stream(
    arms: list[Arm],
    cases: list[Case],
    order: str,
    *,
    max_tokens: Callable[[Arm], int],
    seeds: Iterable[int] = PAPER_SEEDS,
    dataset: Dataset | None = None,
    copies: int = 1,
) -> Stream:
    """The stream the runner would send for `arms` x `seeds` over `cases` (each in `copies` copies) in `order`."""
    dataset = dataset or load_dataset("bundled-test")
    one_shot = load_dataset("one-shot").cases
    run_cases = copy_cases(cases, copies)
    spec = RunSpec(model="gpu-hours-stream", order=order, progress=False)
    units = planned_units(arms, dataset, list(seeds), spec, run_cases)
    index: dict[str, int] = {}
    messages: list[list[dict]] = []
    temperatures: dict[int, float] = {}
    built: dict[tuple, int] = {}
    out_phases, items = [], []
    for phase in phases(units, order):
        out = []
        for it in phase.items:
            arm, seed = units[it.unit].arm, units[it.unit].seed
            copy, row = divmod(it.case.row_number, 1_000_000)
            lo = arm.solver.request_bounds(arm, it.case)[0]
            if not lo:
                continue
            k = (arm.name, seed, it.case.calculator_id, row)
            if k not in built:
                original = dataclasses.replace(it.case, row_number=row)
                msgs = Context(case=original, arm=arm, seed=seed, one_shot=one_shot).prompt().messages
                built[k] = intern_messages(msgs, messages, index)
            seq = built[k]
            temperatures[seq] = arm.temperature
            out.append([[seq, copy, int(max_tokens(arm))] for _ in range(lo)])
            items.append((arm.name, seed, f"{it.case.calculator_id}-{row}" + (f"~{copy}" if copy else "")))
        out_phases.append(out)
    return Stream(order, messages, [p for p in out_phases if p], items, temperatures)


def sample_cases(dataset: Dataset, n: int) -> list[Case]:
    """`n` cases of typical note length: those closest to the median word count, alternately from the library's
    calculators and the others (the Verified split has 440 of 1,100 cases on library calculators)."""
    words = statistics.median(len(c.note.split()) for c in dataset.cases)
    ranked = sorted(dataset.cases, key=lambda c: (abs(len(c.note.split()) - words), c.case_id))
    covered = [c for c in ranked if c.calculator_id in LIBRARY]
    other = [c for c in ranked if c.calculator_id not in LIBRARY]
    picked: list[Case] = []
    while len(picked) < n and (covered or other):
        pool = covered if (len(picked) % 2 == 0 and covered) or not other else other
        picked.append(pool.pop(0))
    return picked


# --- tokens ------------------------------------------------------------------------------------------------------
def run_vllm_tool(args: list[str], payload: object, work: Path, name: str) -> Any:
    """bench/vllm_replay.py in the twin's virtualenv on a JSON input; its JSON output. The tool's output depends on
    its input alone (two runs of the H100 replays gave the same counters), so a work directory that already holds
    this input byte for byte and its output (--work of an earlier run) gives that output without a second run."""
    src, dst = work / f"{name}.in.json", work / f"{name}.out.json"
    text = json.dumps(payload)
    if dst.is_file() and src.is_file() and src.read_text() == text:
        out = json.loads(dst.read_text())
        return {**out, "reused_from": str(dst)} if isinstance(out, dict) else out
    dst.unlink(missing_ok=True)
    src.write_text(text)
    cmd = ["nice", "-n", "10", str(VENV_PYTHON), "-m", "bench.vllm_replay", *args[:1], *args[1:], str(src), str(dst)]
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"}
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench.vllm_replay {args[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(dst.read_text())


def tokenize(messages: list[list[dict]], work: Path) -> list[list[int]]:
    return run_vllm_tool(["tokenize", str(model_dir())], messages, work, "tokenize")


def copied(ids: list[int], copy: int, cut: int) -> list[int]:
    from bench.vllm_replay import COPY_STRIDE

    return ids if not copy else ids[:cut] + [t + copy * COPY_STRIDE for t in ids[cut:]]


def distinct_tokens(stream: Stream, ids: list[list[int]], cut: int) -> int:
    from bench.vllm_replay import distinct_tokens as trie

    seqs = sorted({(r[0], r[1]) for phase in stream.phases for item in phase for r in item})
    return trie(copied(ids[s], c, cut) for s, c in seqs)


def sent_tokens(stream: Stream, ids: list[list[int]]) -> int:
    return sum(len(ids[r[0]]) for phase in stream.phases for item in phase for r in item)


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def system_prefix(ids: list[list[int]]) -> int:
    """Tokens every prompt shares (the system message and the user turn's opening)."""
    first = ids[0]
    return min(common_prefix(first, other) for other in ids)


def shared_prefixes(stream: Stream, blanked: Stream, ids: list[list[int]]) -> dict:
    """From the prompts alone (first two seeds): per arm, its prompt length; where the note starts in it (the common
    prefix with the same prompt built on the case with its note blanked); the longest prefix it shares with its own
    prompt for another case (template text, or a calculator's page other cases of that calculator share); the
    longest it shares with another arm's prompt for the same case and seed, and which arm; and with its own prompt
    at the next seed."""

    def by_item(s: Stream) -> dict:
        return {item: requests[0][0] for item, requests in zip(s.items, (it for ph in s.phases for it in ph))}

    by, blank = by_item(stream), by_item(blanked)
    arms = list(dict.fromkeys(a for a, _, _ in by))
    cases = sorted({c for _, _, c in by})
    seeds = sorted({s for _, s, _ in by})
    out = {}
    for arm in arms:
        length, note_at, other_case, best, next_seed = [], [], [], [], []
        partner: Counter[str] = Counter()
        for case in cases:
            mine = by.get((arm, seeds[0], case))
            if mine is None:
                continue
            length.append(len(ids[mine]))
            if (arm, seeds[0], case) in blank:
                note_at.append(common_prefix(ids[mine], ids[blank[(arm, seeds[0], case)]]))
            others = [by[(arm, seeds[0], c)] for c in cases if c != case and (arm, seeds[0], c) in by]
            other_case.append(max((common_prefix(ids[mine], ids[o]) for o in others), default=0))
            pairs = [
                (common_prefix(ids[mine], ids[by[(b, seeds[0], case)]]), b)
                for b in arms
                if b != arm and (b, seeds[0], case) in by
            ]
            if pairs:
                n, b = max(pairs)
                best.append(n)
                partner[b] += 1
            if len(seeds) > 1 and (arm, seeds[1], case) in by:
                next_seed.append(common_prefix(ids[mine], ids[by[(arm, seeds[1], case)]]) / len(ids[mine]))
        mean = lambda xs: round(statistics.mean(xs), 1) if xs else None  # noqa: E731
        out[arm] = {
            "cases": len(length),
            "prompt_tokens_mean": mean(length),
            "note_starts_at_token_mean": mean(note_at),
            "longest_shared_with_another_case_mean": mean(other_case),
            "longest_shared_with_another_arm_mean": mean(best),
            "shared_with_another_arm_share_mean": round(statistics.mean(b / n for b, n in zip(best, length)), 3)
            if best
            else None,
            "partner": partner.most_common(1)[0][0] if partner else None,
            "next_seed_shared_share_mean": round(statistics.mean(next_seed), 3) if next_seed else None,
        }
    return out


# --- the real engine: the CPU twin -----------------------------------------------------------------------------------
METRICS = {
    "prefix_cache_queries": "vllm:prefix_cache_queries_total",
    "prefix_cache_hits": "vllm:prefix_cache_hits_total",
    "prompt_tokens": "vllm:prompt_tokens_total",
    "generation_tokens": "vllm:generation_tokens_total",
    "prompt_tokens_computed": 'vllm:prompt_tokens_by_source_total{source="local_compute"}',
    "prompt_tokens_cached": 'vllm:prompt_tokens_by_source_total{source="local_cache_hit"}',
    "preemptions": "vllm:num_preemptions_total",
    "requests": "vllm:request_success_total",
}


def read_metrics(text: str) -> dict[str, float]:
    """The counters of METRICS from a Prometheus text page (summed over the other labels)."""
    out = dict.fromkeys(METRICS, 0.0)
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name_labels, value = line.rsplit(" ", 1)
        name, _, labels = name_labels.partition("{")
        for key, want in METRICS.items():
            want_name, _, want_label = want.partition("{")
            if name == want_name and (not want_label or want_label.rstrip("}") in labels):
                out[key] += float(value)
    return out


async def send(stream: Stream, base_url: str, model: str, concurrency: int, ids: list[list[int]]) -> dict:
    """The stream against a server: each phase's items in order over `concurrency` slots, an item's requests one
    after another; every reply's usage checked against the prompt's token count."""
    mismatched = 0
    async with httpx.AsyncClient(timeout=1800) as client:
        for phase in stream.phases:
            queue = iter(phase)

            async def worker(queue: Iterator[list[list[int]]] = queue) -> None:
                nonlocal mismatched
                for item in queue:
                    for seq, _copy, max_tokens in item:
                        r = await client.post(
                            f"{base_url}/chat/completions",
                            json={
                                "model": model,
                                "messages": stream.messages[seq],
                                "max_tokens": max_tokens,
                                "temperature": stream.temperatures[seq],
                            },
                        )
                        r.raise_for_status()
                        mismatched += r.json()["usage"]["prompt_tokens"] != len(ids[seq])

            await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    return {"usage_prompt_tokens_differing_from_tokenizer": mismatched}


def twin_session(
    streams: dict[str, Stream], ids: list[list[int]], *, blocks: int, concurrency: int, max_model_len: int, log: Path
) -> dict:
    """Both orders' streams on one CPU twin started by the kit's launcher, the prefix cache reset between them."""
    launcher = VllmCpuLauncher(
        port=free_port(),
        log_path=log,
        overrides={"max_num_seqs": concurrency, "max_model_len": max_model_len},
        extra_env={"VLLM_SERVER_DEV_MODE": "1"},
        extra_args=(
            "--enable-prefix-caching",
            "--block-size",
            str(TWIN_BLOCK_SIZE),
            "--num-gpu-blocks-override",
            str(blocks),
            "--max-num-batched-tokens",
            str(TWIN_MAX_BATCHED_TOKENS),
        ),
    )
    out: dict = {"command": launcher.command_line()}
    started = time.monotonic()
    launcher.start()
    try:
        launcher.wait_ready(900)
        out["startup_s"] = round(time.monotonic() - started, 1)
        out["vllm_version"] = launcher.describe().server_version
        root = launcher.base_url[:-3]
        page = httpx.get(f"{root}/metrics").text
        out["cache_config_info"] = next(
            (ln for ln in page.splitlines() if ln.startswith("vllm:cache_config_info")), None
        )
        sample = sorted({r[0] for s in streams.values() for ph in s.phases for it in ph for r in it})
        differing = 0
        for seq in sample:
            got = httpx.post(
                f"{root}/tokenize",
                json={
                    "model": launcher.model_id,
                    "messages": next(iter(streams.values())).messages[seq],
                    "add_generation_prompt": True,
                },
            ).json()["tokens"]
            differing += got != ids[seq]
        out["tokenize_check"] = {"prompts": len(sample), "differing_from_the_replays_tokenizer": differing}
        for order, stream in streams.items():
            reset = httpx.post(f"{root}/reset_prefix_cache").json()
            if not reset.get("success"):
                raise RuntimeError(f"the twin refused to reset its prefix cache: {reset}")
            before = read_metrics(httpx.get(f"{root}/metrics").text)
            load_before, t0 = uptime(), time.monotonic()
            checks = asyncio.run(send(stream, launcher.base_url, launcher.model_id, concurrency, ids))
            wall = time.monotonic() - t0
            after = read_metrics(httpx.get(f"{root}/metrics").text)
            counters = {k: int(round(after[k] - before[k])) for k in METRICS}
            out[order] = {
                "counters": counters,
                "requests_sent": stream.requests,
                "wall_s": round(wall, 1),
                "uptime_before": load_before,
                "uptime_after": uptime(),
                **checks,
            }
    finally:
        launcher.stop()
    return out


# --- the engine's scheduler without a model ----------------------------------------------------------------------
def replay(
    stream: Stream, ids: list[list[int]], *, engine: dict, concurrency: int, cut: int, work: Path, name: str
) -> dict:
    used = sorted({r[0] for ph in stream.phases for it in ph for r in it})
    local = {s: i for i, s in enumerate(used)}
    job = {
        "model_dir": str(model_dir()),
        "engine": engine,
        "concurrency": concurrency,
        "copies_from": cut,
        "sequences": [ids[s] for s in used],
        "phases": [[[[local[r[0]], r[1], r[2]] for r in it] for it in ph] for ph in stream.phases],
    }
    return run_vllm_tool(["replay"], job, work, name)


# --- GPU-hours ----------------------------------------------------------------------------------------------------
def plan_hours(key: str, computed_share: dict[str, float]) -> dict:
    """The plan's arithmetic for `key` (harness.reproduce.plan: requests x tokens / rates + start-up), its prefill
    term scaled by each order's computed share; deterministic mode: no prefix cache, the plan's slowdown."""
    plan = build_plan(ReproduceConfig(models=(key,)))
    model = plan.models[0]
    tp = model.throughput
    if tp is None:
        raise ValueError(f"{key}: the plan has no throughput assumptions for it")
    rows = [a for a in plan.arms if a.needs_model and a.arm in model.arms]
    seconds = {b: model_seconds(rows, tp, b) for b in ("min", "max")}
    prefill = {b: s[0] for b, s in seconds.items()}
    decode = {b: s[1] for b, s in seconds.items()}
    out = {
        "rates": {k: getattr(tp, k) for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "startup_s")},
        "prefill_share_of_plan": round(prefill["min"] / (prefill["min"] + decode["min"]), 3),
        "no_prefix_cache": {b: round((prefill[b] + decode[b] + tp.startup_s) / 3600, 2) for b in ("min", "max")},
    }
    for order, share in computed_share.items():
        out[order] = {
            "computed_share": round(share, 4),
            "hours": {b: round((prefill[b] * share + decode[b] + tp.startup_s) / 3600, 2) for b in ("min", "max")},
        }
    slow = float(vllm_pins.serving_config()["throughput_assumptions"].get("deterministic_slowdown", 1.0))
    out["deterministic"] = {
        "computed_share": 1.0,
        "slowdown": slow,
        "hours": {b: round(((prefill[b] + decode[b]) * slow + tp.startup_s) / 3600, 2) for b in ("min", "max")},
    }
    return out


@dataclass
class Options:
    out: Path
    cases: int = 4  # the twin's sample
    copies: int | None = None  # copies of the bundled slice [the paper's cases / the slice's]
    twin: bool = True  # False: the replays only (no server started)
    work: Path | None = None  # scratch directory [a temporary one]
    population: int | None = None  # the first N cases of the bundled slice only (a tiny run) [all 110]
    models: tuple[str, ...] = MODELS


def intern_messages(msgs: list[dict], messages: list, seen: dict) -> int:
    """The index of the prompt `msgs` in `messages`, appended the first time (`seen`: its JSON text -> index)."""
    text = json.dumps(msgs, sort_keys=True)
    if text not in seen:
        seen[text] = len(messages)
        messages.append(msgs)
    return seen[text]


def index_messages(stream: Stream, messages: list, seen: dict) -> None:
    """Point `stream` at the shared prompt list `messages` (adding the prompts it does not hold yet)."""
    remap = {i: intern_messages(m, messages, seen) for i, m in enumerate(stream.messages)}
    stream.phases = [[[[remap[r[0]], r[1], r[2]] for r in it] for it in ph] for ph in stream.phases]
    stream.temperatures = {remap[k]: v for k, v in stream.temperatures.items()}
    stream.messages = messages


def main(opts: Options) -> int:
    machine = Machine()
    work = Path(opts.work or tempfile.mkdtemp(prefix="gpu-hours-"))
    work.mkdir(parents=True, exist_ok=True)
    dataset = load_dataset("bundled-test")
    population = list(dataset.cases)[: opts.population] if opts.population else list(dataset.cases)
    models = tuple(dict.fromkeys((SCALE_MODEL, *opts.models)))  # the twin's cache is scaled after SCALE_MODEL's
    paper_cases = int(datahub.entry("verified").get("rows") or 1100)
    copies = opts.copies or max(1, round(paper_cases / len(population)))
    report: dict = {
        "issue": 36,
        "population": {
            "cases": len(population),
            "copies": copies,
            "paper_cases": paper_cases,
            "note": f"the bundled slice's {len(population)} real cases (2 per calculator, "
            f"{sum(c.calculator_id in LIBRARY for c in population)} on library calculators), each in {copies} "
            "copies whose token ids differ after the system message: the stand-in for the Verified split, which "
            "this machine cannot fetch",
        },
    }
    plans = {key: build_plan(ReproduceConfig(models=(key,))) for key in models}

    def completion(key: str) -> Callable[[Arm], int]:
        means = {a.arm: a.tokens_per_request.completion for a in plans[key].arms}
        return lambda arm: max(1, round(means.get(arm.name) or 1))

    one = lambda arm: 1  # noqa: E731 - the twin's requests: the prompt is what the cache counts
    full = {
        key: {
            o: build_stream(model_arms(key), population, o, max_tokens=completion(key), dataset=dataset, copies=copies)
            for o in ORDERS
        }
        for key in models
    }
    sample = sample_cases(dataset, opts.cases)
    twin_streams = {
        o: build_stream(model_arms(SCALE_MODEL), sample, o, max_tokens=one, dataset=dataset) for o in ORDERS
    }
    pairs = build_stream(
        model_arms(SCALE_MODEL), population, CASE_MAJOR, max_tokens=one, dataset=dataset, seeds=PAPER_SEEDS[:2]
    )
    blanked = build_stream(
        model_arms(SCALE_MODEL),
        [dataclasses.replace(c, note="x") for c in population],
        CASE_MAJOR,
        max_tokens=one,
        dataset=dataset,
        seeds=PAPER_SEEDS[:1],
    )
    messages: list[list[dict]] = []
    seen: dict[str, int] = {}
    for stream in [*(s for by in full.values() for s in by.values()), *twin_streams.values(), pairs, blanked]:
        index_messages(stream, messages, seen)
    ids = tokenize(messages, work)  # every prompt, once, with the model's chat template
    cut = system_prefix(ids)

    capacity = {key: kv_capacity(key) for key in models}
    report["kv_capacity"] = capacity
    d_full = {key: distinct_tokens(full[key][ARM_MAJOR], ids, cut) for key in models}
    s_full = {key: sent_tokens(full[key][ARM_MAJOR], ids) for key in models}
    # the paper stream's distinct prompt tokens: the replayed population's, per case, x the paper's cases
    per_paper = paper_cases / (len(population) * copies)
    ratio = capacity[SCALE_MODEL]["central"]["tokens"] / (d_full[SCALE_MODEL] * per_paper)
    report["workload"] = {
        key: {
            "requests": full[key][ARM_MAJOR].requests,
            "prompt_tokens_sent": s_full[key],
            "distinct_prompt_tokens": d_full[key],
            "distinct_share": round(d_full[key] / s_full[key], 4),
            "cache_tokens_over_distinct": round(capacity[key]["central"]["tokens"] / d_full[key], 4),
        }
        for key in models
    }
    report["shared_prefixes"] = shared_prefixes(pairs, blanked, ids)

    # the sample on the real engine (a scale model of the H100 run) and the same stream replayed
    d_sample = distinct_tokens(twin_streams[ARM_MAJOR], ids, cut)
    twin_blocks = math.ceil(ratio * d_sample / TWIN_BLOCK_SIZE)
    scaled = max(1, round(capacity[SCALE_MODEL]["max_num_seqs"] * len(sample) / paper_cases))
    arch = twin_architecture()
    reserved = int(vllm_pins.serving_config()["cpu_twin"]["env"]["VLLM_CPU_KVCACHE_SPACE"]) * GIB
    if twin_blocks * TWIN_BLOCK_SIZE * arch["kv_bytes_per_token"] > reserved:
        raise RuntimeError(f"{twin_blocks} blocks do not fit the twin's {reserved // GIB} GiB KV reservation")
    report["twin_scale"] = {
        "cases": [c.case_id for c in sample],
        "distinct_prompt_tokens": d_sample,
        "prompt_tokens_sent": sent_tokens(twin_streams[ARM_MAJOR], ids),
        "requests": twin_streams[ARM_MAJOR].requests,
        "cache_tokens_over_distinct": round(ratio, 4),
        "blocks": twin_blocks,
        "block_size": TWIN_BLOCK_SIZE,
        "tokens": twin_blocks * TWIN_BLOCK_SIZE,
        "max_num_seqs_and_concurrency": scaled,
        "max_num_batched_tokens": TWIN_MAX_BATCHED_TOKENS,
        "architecture": arch,
        "max_tokens": 1,
        "derivation": (
            f"the H100's {capacity[SCALE_MODEL]['central']['tokens']:,} KV tokens for {SCALE_MODEL} over "
            f"the paper stream's {round(d_full[SCALE_MODEL] * per_paper):,} distinct prompt tokens = "
            f"{ratio:.4f}; x the "
            f"sample's {d_sample:,} distinct prompt tokens / {TWIN_BLOCK_SIZE} = {twin_blocks} blocks "
            f"(--num-gpu-blocks-override); the plan's {capacity[SCALE_MODEL]['max_num_seqs']} sequences x "
            f"{len(sample)}/{paper_cases} cases -> {scaled} (max-num-seqs and the client's concurrency)"
        ),
    }
    # vLLM refuses a cache smaller than one max-length request (kv_cache_utils.py _check_enough_kv_cache_memory): a
    # small sample's twin serves a shorter max-model-len, never shorter than its longest prompt and reply
    max_len = min(8192, (twin_blocks - 1) * TWIN_BLOCK_SIZE)
    longest = max(len(ids[r[0]]) + r[2] for s in twin_streams.values() for ph in s.phases for it in ph for r in it)
    if longest > max_len:
        raise RuntimeError(
            f"the twin's {twin_blocks} blocks hold {max_len} tokens, less than the sample's longest "
            f"request ({longest}): give more --cases"
        )
    report["twin_scale"]["max_model_len"] = max_len
    twin_engine = {
        "block_size": TWIN_BLOCK_SIZE,
        "num_blocks": twin_blocks,
        "max_num_seqs": scaled,
        "max_num_batched_tokens": TWIN_MAX_BATCHED_TOKENS,
        "max_model_len": max_len,
    }
    # the H100's settings over the paper's 1,100 cases: each replay is one single-threaded process whose counters
    # depend on nothing but its input, so they run side by side (and beside the twin)
    pool = ThreadPoolExecutor(max_workers=2 * len(models))
    h100_jobs = {}
    for key in models:
        cap = capacity[key]
        engine = {
            "block_size": H100_BLOCK_SIZE,
            "num_blocks": cap["central"]["blocks"],
            "max_num_seqs": cap["max_num_seqs"],
            "max_num_batched_tokens": H100_MAX_BATCHED_TOKENS,
            "max_model_len": 8192,
        }
        h100_jobs[key] = {
            o: pool.submit(
                replay,
                full[key][o],
                ids,
                engine=engine,
                concurrency=cap["max_num_seqs"],
                cut=cut,
                work=work,
                name=f"h100-{key}-{o}",
            )
            for o in ORDERS
        }
    if opts.twin:
        report["twin"] = twin_session(
            twin_streams,
            ids,
            blocks=twin_blocks,
            concurrency=scaled,
            max_model_len=max_len,
            log=opts.out.with_name("gpu-hours-twin.log"),
        )
    report["replay_twin_settings"] = {
        o: replay(s, ids, engine=twin_engine, concurrency=scaled, cut=cut, work=work, name=f"twin-{o}")
        for o, s in twin_streams.items()
    }
    if opts.twin:
        report["twin_vs_replay"] = {
            o: {
                k: {
                    "twin": report["twin"][o]["counters"][k],
                    "replay": report["replay_twin_settings"][o]["counters"][k],
                }
                for k in ("prefix_cache_queries", "prefix_cache_hits", "prompt_tokens", "prompt_tokens_computed")
            }
            for o in ORDERS
        }
        report["twin_vs_replay"]["identical"] = all(
            v["twin"] == v["replay"] for o in ORDERS for v in report["twin_vs_replay"][o].values()
        )

    report["replay_h100"], shares = {}, {}
    for key in models:
        report["replay_h100"][key] = {o: job.result() for o, job in h100_jobs[key].items()}
        shares[key] = {
            o: r["counters"]["prompt_tokens_computed"] / r["counters"]["prompt_tokens"]
            for o, r in report["replay_h100"][key].items()
        }
    pool.shutdown()
    version = report["replay_h100"][models[0]][ARM_MAJOR]["vllm_version"]
    report["projection"] = {
        "computed_share": {key: {o: round(v, 4) for o, v in shares[key].items()} for key in models},
        "source": (
            f"docs/bench-gpu-hours.json (`make bench-gpu-hours`): vLLM {version}'s scheduler and KV-cache "
            f"manager at the H100's settings over {len(population) * copies:,} cases ({copies} copies of "
            f"{len(population)} bundled cases), completions of the plan's length"
            + (
                f"; at the CPU twin's settings its counters equal the real server's on {len(sample)} cases"
                if report.get("twin_vs_replay", {}).get("identical")
                else "; not checked against the real server in this run"
                if not opts.twin
                else "; at the CPU twin's settings its counters DIFFER from the real server's (twin_vs_replay)"
            )
        ),
    }
    hours = {key: plan_hours(key, shares[key]) for key in models}
    hours["total"] = {
        o: {b: round(sum(hours[k][o]["hours"][b] for k in models), 2) for b in ("min", "max")}
        for o in (*ORDERS, "deterministic")
    }
    hours["total"]["no_prefix_cache"] = {
        b: round(sum(hours[k]["no_prefix_cache"][b] for k in models), 2) for b in ("min", "max")
    }
    report["gpu_hours"] = hours
    report["machine"] = dataclasses.asdict(machine.finish())
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(summary(report), indent=1))
    return 0


def summary(report: dict) -> dict:
    out = {"gpu_hours": report["gpu_hours"]}
    for key, by_order in report["replay_h100"].items():
        out[key] = {
            o: {k: r["counters"][k] for k in ("prompt_tokens", "prompt_tokens_computed", "prefix_cache_hits")}
            for o, r in by_order.items()
        }
    if "twin" in report:
        out["twin"] = {o: report["twin"][o]["counters"] for o in ORDERS}
    return out
