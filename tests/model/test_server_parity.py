"""The kit's scripted fake servers against the real one: the same HTTP requests go to the rehearsal server
(harness/model/rehearsal/server.py, started by the kit's RehearsalLauncher), to the scripted fake (ScriptedServer,
harness/model/rehearsal/server.py) and to the
real vLLM server (the CPU twin of the pinned release, tests/fixtures_vllm.py), and their answers must agree in status
code and in the body fields the kit reads, so the fakes cannot drift from the protocol they stand in for.

Black-box over HTTP: each server is reached only through its URL (plain httpx requests), never through its code,
so the test holds whatever the fakes are built on. What a fake does not claim to model is not asked of it: the
rehearsal server answers only its own `rehearsal-*` models and needs the kit's reply-form header (which vLLM
ignores); the scripted fake answers from its script, so only its default answers (the model list, a completion)
are compared. The one field a fake may add is its own synthetic label (the rehearsal server's `rehearsal`
object)."""

from __future__ import annotations

import httpx
import pytest

from harness.core.ports import free_port
from harness.model.client import prompt_headers
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.rehearsal.server import ScriptedServer

pytestmark = pytest.mark.vllm

HEADERS = prompt_headers("note-only", "reply")  # the kit sends them with every request; vLLM ignores them
MESSAGES = [{"role": "user", "content": "What is 2 + 2? End with: Final answer: <number>"}]


def _shape(obj) -> object:
    """The JSON shape: dicts as {key: shape}, lists by their first element, scalars by type (ints count as numbers)."""
    if isinstance(obj, dict):
        return {k: _shape(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shape(obj[0])] if obj else []
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, (int, float)):
        return "number"
    return type(obj).__name__


# The rehearsal server's own label on every completion ({"synthetic": true, "family", "shape"}; its records are
# labelled synthetic by harness/model/rehearsal/labels.py): the one field a fake may send that vLLM does not.
FAKE_LABELS = {"rehearsal": {"body.rehearsal"}, "scripted": set()}


def _covers(real, fake, path="body", labels=frozenset()) -> list[str]:
    """Where the fake's shape is not the real one's: a field the real server does not send (other than the fake's
    own label), or one of another type."""
    if isinstance(fake, dict):
        if not isinstance(real, dict):
            return [f"{path}: the fake sends an object, the real server {real}"]
        return [
            p
            for k, v in fake.items()
            if f"{path}.{k}" not in labels
            for p in (
                [f"{path}.{k}: sent by the fake, not by the real server"]
                if k not in real
                else _covers(real[k], v, f"{path}.{k}", labels)
            )
        ]
    if isinstance(fake, list):
        if not isinstance(real, list):
            return [f"{path}: the fake sends a list, the real server {real}"]
        return _covers(real[0], fake[0], f"{path}[0]", labels) if fake and real else []
    return [] if fake == real or "NoneType" in (fake, real) else [f"{path}: {fake} in the fake, {real} in the real"]


# what the kit's client reads of a chat completion (harness/model/client.py _parse_completion) and of the model list
CLIENT_READS = {
    "choices": [{"message": {"content": "str"}, "finish_reason": "str"}],
    "usage": {"prompt_tokens": "number", "completion_tokens": "number"},
    "model": "str",
}
LIST_READS = {"data": [{"id": "str"}]}


def _reads(shape, reads, path="body") -> list[str]:
    if isinstance(reads, dict):
        return [
            p
            for k, v in reads.items()
            for p in (
                [f"{path}.{k} missing"]
                if not isinstance(shape, dict) or k not in shape
                else _reads(shape[k], v, f"{path}.{k}")
            )
        ]
    if isinstance(reads, list):
        return _reads(shape[0], reads[0], f"{path}[0]") if isinstance(shape, list) and shape else [f"{path} empty"]
    return [] if shape == reads else [f"{path}: {shape}, the client reads a {reads}"]


@pytest.fixture(scope="module")
def servers(vllm_cpu_server, tmp_path_factory):
    """{name: (base_url, model id)} of the three servers, each up for the module."""
    rehearsal = RehearsalLauncher(
        model_id="rehearsal-alpha",
        port=free_port(),
        seed=7,
        log_path=tmp_path_factory.mktemp("rehearsal") / "server.log",
    )
    rehearsal.start()
    try:
        rehearsal.wait_ready(60)
        with ScriptedServer() as fake:
            yield {
                "vllm": (vllm_cpu_server.base_url, vllm_cpu_server.model_id),
                "rehearsal": (rehearsal.base_url, "rehearsal-alpha"),
                "scripted": (fake.url, fake.source.model),
            }
    finally:
        rehearsal.stop()


def _post(base_url: str, body: dict) -> httpx.Response:
    return httpx.post(f"{base_url}/chat/completions", json=body, headers=HEADERS, timeout=600)


def test_the_model_list_has_the_same_status_and_fields(servers):
    answers = {name: httpx.get(f"{url}/models", timeout=30) for name, (url, _) in servers.items()}
    assert {name: r.status_code for name, r in answers.items()} == dict.fromkeys(servers, 200)
    real = _shape(answers["vllm"].json())
    for name in ("rehearsal", "scripted"):
        fake = _shape(answers[name].json())
        assert _covers(real, fake, labels=FAKE_LABELS[name]) == [] and _reads(fake, LIST_READS) == [], name
        assert answers[name].json()["object"] == answers["vllm"].json()["object"] == "list"
        assert servers[name][1] in [m["id"] for m in answers[name].json()["data"]]


def test_a_completion_has_the_same_status_and_the_fields_the_client_reads(servers):
    answers = {
        name: _post(url, {"model": model, "messages": MESSAGES, "temperature": 0, "max_tokens": 8})
        for name, (url, model) in servers.items()
    }
    assert {name: r.status_code for name, r in answers.items()} == dict.fromkeys(servers, 200)
    real = _shape(answers["vllm"].json())
    assert _reads(real, CLIENT_READS) == []
    for name in ("rehearsal", "scripted"):
        fake = _shape(answers[name].json())
        assert _covers(real, fake, labels=FAKE_LABELS[name]) == [] and _reads(fake, CLIENT_READS) == [], name
        assert answers[name].json()["object"] == answers["vllm"].json()["object"] == "chat.completion"


def test_the_token_cap_cuts_with_finish_reason_length_and_counts_the_cap(servers):
    """max_tokens 1 on a prompt that needs more: both servers that model the cap answer 200, finish "length",
    completion_tokens 1 (the scripted fake answers its script, so it is not asked)."""
    for name in ("vllm", "rehearsal"):
        url, model = servers[name]
        r = _post(url, {"model": model, "messages": MESSAGES, "temperature": 0, "max_tokens": 1})
        assert r.status_code == 200, (name, r.text)
        body = r.json()
        assert body["choices"][0]["finish_reason"] == "length" and body["usage"]["completion_tokens"] == 1, name


def test_an_unknown_request_field_is_accepted(servers):
    """vLLM accepts a field it does not know (llama.cpp's repeat_penalty): 200, and so do the fakes."""
    for name, (url, model) in servers.items():
        r = _post(url, {"model": model, "messages": MESSAGES, "temperature": 0, "max_tokens": 2, "repeat_penalty": 1.0})
        assert r.status_code == 200, (name, r.text)


def test_an_unknown_model_is_404_with_an_error_message(servers):
    for name in ("vllm", "rehearsal"):
        url, _ = servers[name]
        r = _post(url, {"model": "no-such-model", "messages": MESSAGES, "temperature": 0, "max_tokens": 2})
        assert r.status_code == 404, (name, r.text)
        error = r.json()["error"]
        assert isinstance(error["message"], str) and error["message"], name
