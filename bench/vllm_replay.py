"""vLLM's own scheduler and KV-cache manager, driven through a request stream without a model: the prefix-cache
counters of a stream too long to prefill on this machine (`python -m bench gpu-hours`, its `replay` sections).

Runs in the vLLM CPU twin's virtualenv (.venv-vllm) and imports vLLM, its tokenizer library and the standard library
only (nothing of the kit):

    .venv-vllm/bin/python -m bench.vllm_replay tokenize MODEL_DIR PROMPTS.json OUT.json   # chat prompts -> token ids
    .venv-vllm/bin/python -m bench.vllm_replay replay JOB.json OUT.json

`tokenize` applies the model's chat template with add_generation_prompt, as the server's /tokenize and chat endpoint
do (the benchmark checks its ids against the running server's /tokenize). Nothing here is a stand-in for the cache: the
engine's own Scheduler (vllm/v1/core/sched/scheduler.py), KVCacheManager, BlockPool, block hashing and LRU eviction
run unchanged; only the model's forward pass is left out. Each scheduled request whose prompt is complete gets one
sampled token per step (the same token, and ignore_eos), so it holds its KV blocks for exactly its `max_tokens`
decode steps, as the engine core's loop (vllm/v1/engine/core.py EngineCore.step: schedule, execute,
update_from_output) would with a model that writes that many tokens. The counters are read as the server's
/metrics reads them: prefix-cache queries and hits from the scheduler's stats, prompt tokens computed and cached
from each request's PrefillStats (vllm/v1/metrics/stats.py PromptTokenStats).

The replay job (JSON):
    model_dir          a model directory with config.json (the engine's configuration is built from it; the model's
                       size plays no part without a forward pass)
    engine             block_size, num_blocks, max_num_seqs, max_num_batched_tokens, max_model_len
    sequences          the distinct prompts' token ids
    copies_from        token position from which a request's `copy` index is folded into its token ids (copy k
                       adds k * COPY_STRIDE to every id at or after it): k copies of a case that share nothing
                       after that position and exactly what they shared before it
    phases             list of phases run one after another, each a list of items in issue order; an item is a
                       list of requests [sequence index, copy, max_tokens] sent one after another
    concurrency        items in flight (each free slot takes the next item of the phase)
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # .venv-vllm only; never imported at run time outside a function
    from vllm.config import VllmConfig
    from vllm.sampling_params import SamplingParams
    from vllm.v1.core.kv_cache_utils import BlockHash
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.request import Request

    BlockHasher = Callable[[Request], list[BlockHash]]

COPY_STRIDE = 1_000_000  # beyond every vocabulary: a copied id never equals a real one


def tokenize(model_dir: str, prompts: list[list[dict]]) -> list[list[int]]:
    """Each chat prompt's token ids under the model's chat template, with the assistant turn opened."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    out = []
    for messages in prompts:
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        out.append(list(ids["input_ids"] if hasattr(ids, "keys") else ids))
    return out


def distinct_tokens(sequences: Iterable[list[int]]) -> int:
    """Tokens in the union of the sequences' prefixes (a token trie's nodes): what a cache of unbounded size with
    one-token blocks would still have to compute."""
    seen: set[int] = set()
    n = 0
    for ids in sequences:
        h = 0
        for t in ids:
            h = hash((h, t))
            if h not in seen:
                seen.add(h)
                n += 1
    return n


def engine(model_dir: str, e: dict[str, Any]) -> tuple[VllmConfig, Scheduler, BlockHasher]:
    """The scheduler vLLM's engine core would build for these settings (vllm/v1/engine/core.py EngineCore.__init__),
    with a KV cache of exactly e['num_blocks'] blocks."""
    import torch
    from vllm.engine.arg_utils import EngineArgs
    from vllm.utils.hashing import get_hash_fn_by_name
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.structured_output import StructuredOutputManager

    args = EngineArgs(
        model=model_dir,
        block_size=e["block_size"],
        max_num_seqs=e["max_num_seqs"],
        max_num_batched_tokens=e["max_num_batched_tokens"],
        max_model_len=e["max_model_len"],
        enable_prefix_caching=True,
        num_gpu_blocks_override=e["num_blocks"],
        enforce_eager=True,
        dtype="float32",
    )
    cfg = args.create_engine_config()
    cfg.cache_config.num_gpu_blocks = e["num_blocks"]  # what the worker's profiling would have set
    spec = FullAttentionSpec(block_size=e["block_size"], num_kv_heads=1, head_size=1, dtype=torch.float32)
    kv = KVCacheConfig(
        num_blocks=e["num_blocks"],
        kv_cache_tensors=[],
        kv_cache_groups=[KVCacheGroupSpec(["model.layers.0.self_attn.attn"], spec)],
    )
    sched = Scheduler(
        vllm_config=cfg,
        kv_cache_config=kv,
        structured_output_manager=StructuredOutputManager(cfg),
        block_size=e["block_size"],
        log_stats=True,
    )
    hash_fn = get_hash_fn_by_name(cfg.cache_config.prefix_caching_hash_algo)
    init_none_hash(hash_fn)
    return cfg, sched, get_request_block_hasher(e["block_size"], hash_fn)


def replay(job: dict[str, Any]) -> dict[str, Any]:
    from vllm.sampling_params import SamplingParams
    from vllm.v1.metrics.stats import PromptTokenStats
    from vllm.v1.outputs import ModelRunnerOutput
    from vllm.v1.request import Request

    started = time.monotonic()
    ids = job["sequences"]
    cut = int(job.get("copies_from") or 0)

    def tokens(prompt: int, copy: int) -> list[int]:
        seq = ids[prompt]
        return seq if not copy else seq[:cut] + [t + copy * COPY_STRIDE for t in seq[cut:]]

    cfg, sched, hasher = engine(job["model_dir"], job["engine"])
    prompt_stats = PromptTokenStats()
    queries = hits = preempted = steps = requests = generated = idle = 0
    sent_sequences: set[tuple[int, int]] = set()
    distinct_input: list[tuple[int, int]] = []
    concurrency = int(job["concurrency"])
    n = 0
    for phase in job["phases"]:
        waiting = deque(phase)
        active: dict[str, deque[list[int]]] = {}  # request id -> the rest of its item's requests
        while waiting or active:
            while waiting and len(active) < concurrency:
                item = deque(waiting.popleft())
                first = item.popleft()
                rid = f"r{n}"
                n += 1
                active[rid] = item
                sched.add_request(_request(Request, SamplingParams, rid, tokens(first[0], first[1]), first[2], hasher))
                key = (first[0], first[1])
                if key not in sent_sequences:
                    sent_sequences.add(key)
                    distinct_input.append(key)
                requests += 1
            out = sched.schedule()
            req_ids = list(out.num_scheduled_tokens)
            sampled: list[list[int]] = []
            for rid in req_ids:
                r = sched.requests[rid]
                complete = r.num_computed_tokens + out.num_scheduled_tokens[rid] >= r.num_tokens
                sampled.append([7] if complete else [])
            mro = ModelRunnerOutput(
                req_ids=req_ids, req_id_to_index={r: i for i, r in enumerate(req_ids)}, sampled_token_ids=sampled
            )
            outputs = sched.update_from_output(out, mro)
            steps += 1
            for eco in outputs.values():
                st = eco.scheduler_stats
                if st is not None and st.prefix_cache_stats is not None:
                    queries += st.prefix_cache_stats.queries
                    hits += st.prefix_cache_stats.hits
                    preempted += st.prefix_cache_stats.preempted_requests
                for o in eco.outputs:
                    generated += len(o.new_token_ids)
                    if o.prefill_stats is not None:
                        prompt_stats.update_from_output(o.prefill_stats)
                    if o.finish_reason is not None:
                        rest = active.pop(o.request_id)
                        if rest:
                            nxt = rest.popleft()
                            rid = f"r{n}"
                            n += 1
                            active[rid] = rest
                            sched.add_request(
                                _request(Request, SamplingParams, rid, tokens(nxt[0], nxt[1]), nxt[2], hasher)
                            )
                            key = (nxt[0], nxt[1])
                            if key not in sent_sequences:
                                sent_sequences.add(key)
                                distinct_input.append(key)
                            requests += 1
            idle = 0 if req_ids else idle + 1
            if idle > 1000:
                raise RuntimeError(
                    f"the scheduler admits none of {len(active)} request(s) in flight: a prompt larger "
                    f"than the KV cache ({job['engine']['num_blocks']} blocks)?"
                )
    kvm = sched.kv_cache_manager
    return {
        "counters": {
            "requests": requests,
            "prefix_cache_queries": queries,
            "prefix_cache_hits": hits,
            "prompt_tokens": prompt_stats.total,
            "prompt_tokens_computed": prompt_stats.computed,
            "prompt_tokens_cached": prompt_stats.cached_tokens,
            "generation_tokens": generated,
            "preempted_requests": preempted,
            "steps": steps,
        },
        "distinct_prompt_tokens": distinct_tokens(tokens(p, c) for p, c in distinct_input),
        "distinct_prompts": len(distinct_input),
        "engine": {
            **job["engine"],
            "num_blocks_in_pool": kvm.block_pool.num_gpu_blocks,
            "prefix_caching_hash_algo": cfg.cache_config.prefix_caching_hash_algo,
            "scheduler": type(sched).__module__ + "." + type(sched).__name__,
            "async_scheduling": bool(cfg.scheduler_config.async_scheduling),
        },
        "vllm_version": _version(),
        "wall_s": round(time.monotonic() - started, 1),
    }


def _version() -> str:
    from vllm import __version__

    return str(__version__)


def _request(
    request_cls: type[Request],
    params_cls: type[SamplingParams],
    rid: str,
    token_ids: list[int],
    max_tokens: int,
    hasher: BlockHasher,
) -> Request:
    params = params_cls(max_tokens=max(1, int(max_tokens)), ignore_eos=True, temperature=0.0)
    return request_cls(rid, token_ids, params, None, block_hasher=hasher)


def main(argv: list[str]) -> int:
    result: list[list[int]] | dict[str, Any]
    if len(argv) == 4 and argv[0] == "tokenize":
        result = tokenize(argv[1], json.loads(open(argv[2], encoding="utf-8").read()))
    elif len(argv) == 3 and argv[0] == "replay":
        result = replay(json.loads(open(argv[1], encoding="utf-8").read()))
    else:
        print(
            "usage: python -m bench.vllm_replay tokenize MODEL_DIR PROMPTS.json OUT.json | replay JOB.json OUT.json",
            file=sys.stderr,
        )
        return 2
    with open(argv[-1], "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
