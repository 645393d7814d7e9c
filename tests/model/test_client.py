"""Model client: request body, seeds, cache, retries and fault paths.

Fault paths (5xx, timeouts, connection errors, 4xx, malformed bodies) use the scripted fake server
(harness.model.rehearsal.server.ScriptedServer: a real HTTP server on 127.0.0.1 that answers from a script), named
so in each test. The real CPU model server is exercised in test_client_real_server_* (marker `model`)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from harness.model.client import ModelAuthError, ModelClient, ModelRequestError, derive_seed, get_profile
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import chat_completion as completion

MSG = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is 2+2?"}]


def run(coro):
    return asyncio.run(coro)


async def _chat(url, *, cache_dir=None, timeout=5.0, max_retries=3, **kw):
    async with ModelClient(
        url,
        "scripted-model",
        profile="llama.cpp",
        backoff=0.01,
        timeout=timeout,
        max_retries=max_retries,
        cache_dir=cache_dir,
    ) as c:
        r = await c.chat(MSG, **kw)
        return r, c.sent


def test_request_body_sets_only_temperature_max_tokens_and_profile_scripted_fake_server():
    with ScriptedServer([]) as srv:
        r, _ = run(_chat(srv.url, temperature=0, max_tokens=64))
    body = srv.requests[0]
    assert set(body) == {"model", "messages", "temperature", "max_tokens", "repeat_penalty"}
    assert body["temperature"] == 0 and body["max_tokens"] == 64 and body["repeat_penalty"] == 1.0
    assert r.text == "Final answer: 4" and r.finish_reason == "stop" and not r.truncated
    assert (r.prompt_tokens, r.completion_tokens, r.server_model, r.retries) == (12, 5, "scripted-model", 0)
    assert r.latency_ms > 0 and r.request == body


def test_sampled_call_carries_derived_seed_greedy_does_not_scripted_fake_server():
    seed = derive_seed(42, "2-1", "blind-vote", 3)
    with ScriptedServer([]) as srv:
        run(_chat(srv.url, temperature=0.7, max_tokens=8, sample_index=3, seed=seed, run_seed=42))
        run(_chat(srv.url, temperature=0, max_tokens=8, seed=seed, run_seed=42))
    assert srv.requests[0]["seed"] == seed and "seed" not in srv.requests[1]
    assert derive_seed(42, "2-1", "blind-vote", 3) == seed
    assert len({derive_seed(s, "2-1", "blind-vote", i) for s in (42, 43) for i in range(5)}) == 10


def test_truncated_reply_marked_scripted_fake_server():
    with ScriptedServer([(200, completion("```python\nanswer = (", finish="length"), 0)]) as srv:
        r, _ = run(_chat(srv.url, temperature=0, max_tokens=8))
    assert r.truncated and r.finish_reason == "length"


def test_retry_on_503_then_success_scripted_fake_server():
    with ScriptedServer([(503, {"error": "busy"}, 0), (500, {"error": "oops"}, 0)]) as srv:
        r, sent = run(_chat(srv.url, temperature=0, max_tokens=8))
    assert r.retries == 2 and sent == 3 and len(srv.requests) == 3 and r.text == "Final answer: 4"


def test_no_retry_on_4xx_scripted_fake_server():
    with ScriptedServer([(400, {"error": "context length exceeded"}, 0)]) as srv:
        with pytest.raises(ModelRequestError, match="400.*not retried.*context length"):
            run(_chat(srv.url, temperature=0, max_tokens=8))
    assert len(srv.requests) == 1


def test_retries_exhausted_on_5xx_scripted_fake_server():
    with ScriptedServer([(502, b"bad gateway", 0)] * 5) as srv:
        with pytest.raises(ModelRequestError, match="after 3 attempts.*HTTP 502"):
            run(_chat(srv.url, temperature=0, max_tokens=8, max_retries=2))
    assert len(srv.requests) == 3


def test_retry_on_timeout_scripted_fake_server():
    with ScriptedServer([(200, completion("late"), 1.5)]) as srv:
        r, sent = run(_chat(srv.url, temperature=0, max_tokens=8, timeout=0.5))
    assert r.retries == 1 and r.text == "Final answer: 4" and sent == 2


def test_retry_on_connection_error_no_server_listening():
    with socket.socket() as s:  # a port with nothing listening: connection refused on every attempt
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelRequestError, match="after 3 attempts.*Connect"):
        run(_chat(f"http://127.0.0.1:{port}/v1", temperature=0, max_tokens=8, max_retries=2))


def test_malformed_body_is_an_error_scripted_fake_server():
    with ScriptedServer([(200, {"choices": []}, 0)]) as srv:
        with pytest.raises(ModelRequestError, match="not a chat completion"):
            run(_chat(srv.url, temperature=0, max_tokens=8))


def test_cache_resumed_run_sends_nothing_twice_scripted_fake_server(tmp_path):
    with ScriptedServer(
        [(200, completion("first"), 0), (200, completion("second"), 0), (200, completion("third"), 0)]
    ) as srv:
        r1, sent1 = run(_chat(srv.url, cache_dir=tmp_path, temperature=0, max_tokens=8, run_seed=42))
        r2, sent2 = run(_chat(srv.url, cache_dir=tmp_path, temperature=0, max_tokens=8, run_seed=42))
        # any change to the request identity misses the cache: sampling field, sample index, run seed
        r3, _ = run(_chat(srv.url, cache_dir=tmp_path, temperature=0, max_tokens=9, run_seed=42))
        r4, _ = run(_chat(srv.url, cache_dir=tmp_path, temperature=0, max_tokens=8, run_seed=43))
    assert (r1.text, r1.cached, sent1) == ("first", False, 1)
    assert (r2.text, r2.cached, sent2) == ("first", True, 0)
    assert r2.latency_ms == r1.latency_ms and r2.request == r1.request
    assert (r3.text, r4.cached) == ("second", False) and len(srv.requests) == 3


def test_bad_input_named():
    with pytest.raises(ValueError, match="base URL"):
        ModelClient("localhost:8088", "m")
    with pytest.raises(ValueError, match="unknown server profile 'tgi'"):
        get_profile("tgi")

    async def bad():
        async with ModelClient("http://127.0.0.1:1/v1", "m") as c:
            c.build_request([{"role": "robot", "content": "x"}], temperature=0, max_tokens=1)

    with pytest.raises(ValueError, match="message 0"):
        run(bad())


@pytest.mark.model
def test_client_real_server_greedy_call_and_cache(model_server, tmp_path):
    async def go():
        async with ModelClient(
            model_server.base_url, model_server.model_id, profile="llama.cpp", cache_dir=tmp_path
        ) as c:
            msgs = [
                {"role": "user", "content": "Write one Python line assigning 6*7 to answer. Return one code block."}
            ]
            a = await c.chat(msgs, temperature=0, max_tokens=40, run_seed=42)
            b = await c.chat(msgs, temperature=0, max_tokens=40, run_seed=42)
            return a, b, c.sent

    a, b, sent = run(go())
    assert a.server_model == model_server.model_id and a.completion_tokens and a.prompt_tokens
    assert a.finish_reason in {"stop", "length"} and "answer" in a.text
    assert b.cached and b.text == a.text and sent == 1


# --------------------------------------------------------------------------- API key (scripted fake server
# that demands a key, harness.model.rehearsal.server.ScriptedServer)


def test_api_key_read_from_openai_api_key_by_default_scripted_fake_server_with_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    with ScriptedServer([], api_key="sk-test-123") as srv:
        r, _ = run(_chat(srv.url, temperature=0, max_tokens=8))
    assert r.text == "Final answer: 4" and srv.auth == ["Bearer sk-test-123"]


def test_api_key_from_another_variable_never_recorded_scripted_fake_server_with_key(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_SERVER_KEY", "sk-other-456")

    async def go():
        async with ModelClient(srv.url, "scripted-model", api_key_env="MY_SERVER_KEY", cache_dir=tmp_path) as c:
            r = await c.chat(MSG, temperature=0, max_tokens=8)
            return r, c.describe()

    with ScriptedServer([], api_key="sk-other-456") as srv:
        r, described = run(go())
    assert srv.auth == ["Bearer sk-other-456"]
    stored = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert "sk-other-456" not in repr(described) + repr(r.to_dict()) + stored


def test_401_without_a_key_says_so_scripted_fake_server_with_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([], api_key="sk-test-123") as srv:
        with pytest.raises(ModelAuthError) as info:
            run(_chat(srv.url, temperature=0, max_tokens=8))
    msg = str(info.value)
    assert (
        "answered 401 Unauthorized: the server wants an API key and none was sent ($OPENAI_API_KEY is not set)" in msg
    )
    assert "--api-key-env" in msg and len(srv.requests) == 0  # not retried; refused before the body was read


def test_401_and_403_with_a_key_say_what_they_are_scripted_fake_server_with_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with ScriptedServer([], api_key="sk-right", forbidden_keys=["sk-wrong"]) as srv:
        with pytest.raises(ModelAuthError, match=r"403 Forbidden: the API key from \$OPENAI_API_KEY is not allowed"):
            run(_chat(srv.url, temperature=0, max_tokens=8))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-stale")
    with ScriptedServer([], api_key="sk-right") as srv:
        with pytest.raises(
            ModelAuthError,
            match=r"401 Unauthorized: the server did not accept the API key from "
            r"\$OPENAI_API_KEY",
        ) as info:
            run(_chat(srv.url, temperature=0, max_tokens=8))
    assert "sk-stale" not in str(info.value)


def test_preflight_reports_401_as_a_missing_key_scripted_fake_server_with_key(monkeypatch):
    from harness.model.preflight import ModelServerError, check_model_server

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([], api_key="sk-test-123") as srv:
        with pytest.raises(ModelServerError) as info:
            check_model_server(srv.url, 5.0)
        assert "GET /models answered 401 Unauthorized: the server wants an API key" in str(info.value)
        assert "--base-url must be" not in str(info.value)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
        assert check_model_server(srv.url, 5.0) == ["scripted-model"]


def _rehearsal_burst(url: str, n: int, concurrency: int) -> int:
    from harness.model.client import prompt_headers

    async def go():
        async with ModelClient(url, "rehearsal-alpha", profile="plain", concurrency=concurrency, max_retries=0) as c:
            msgs = [[{"role": "user", "content": f"case {i}: what is the answer?"}] for i in range(n)]
            results = await asyncio.gather(
                *(c.chat(m, temperature=0.0, max_tokens=64, headers=prompt_headers("t", "reply")) for m in msgs)
            )
            return len(results)

    return run(go())


def test_connections_are_reused_up_to_the_concurrency_rehearsal_fake_server():
    """Issue 25: the client keeps at most `concurrency` connections and reuses them (httpx, the client before,
    opened 51-123 connections for 600 requests at concurrency 32 against this server: make bench-client)."""
    from tests.fixtures_rehearsal import running_rehearsal_server

    with running_rehearsal_server(seed=7, models=("rehearsal-alpha",)) as server:
        assert _rehearsal_burst(server.base_url, 640, 32) == 640
        stats = server.stats_dict()
    assert stats["completions"] == 640
    assert stats["connections"] <= 32, stats["connections"]


def test_one_client_serves_two_event_loops_scripted_fake_server():
    """A client built outside a loop and used under two asyncio.run calls (a resume in the same process)."""
    with ScriptedServer() as srv:
        client = ModelClient(srv.url, "scripted-model", profile="llama.cpp", backoff=0.01)

        async def once():
            r = await client.chat(MSG, temperature=0.0, max_tokens=8)
            return r.text

        assert run(once()) == "Final answer: 4"
        assert run(once()) == "Final answer: 4"
        run(client.aclose())
    assert len(srv.requests) == 2
