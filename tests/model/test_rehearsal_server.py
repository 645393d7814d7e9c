"""The rehearsal server over real HTTP: routes, labels, determinism, every reply shape through the real
solvers and executor, fault injection counts. It is a scripted fake; these tests check that it is a
faithful one and that its output is always labelled synthetic."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from harness.model.client import prompt_headers
from harness.model.rehearsal.labels import SYNTHETIC_FINGERPRINT, mixing_problem
from harness.model.rehearsal.replies import AnswerKey, make_reply, program_reply
from harness.model.rehearsal.server import Faults
from tests.fixtures_rehearsal import running_rehearsal_server
from tests.records import record

ROOT = Path(__file__).resolve().parents[2]


def _body(model="rehearsal-alpha", content="Write a Python program that computes 2+2.", **extra):
    return {
        "model": model,
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": content}],
        "temperature": 0,
        "max_tokens": 256,
        **extra,
    }


def test_the_version_route_answers_only_for_a_server_version_it_was_given(rehearsal_server):
    """GET /version is vLLM's route: the fake answers it only when it plays a server of that version."""
    from harness.model.rehearsal.server import ScriptedServer

    root = rehearsal_server.base_url.removesuffix("/v1")
    with httpx.Client(timeout=10) as http:
        assert http.get(f"{root}/version").status_code == 404
        with ScriptedServer(model="m", server_version="0.32.0") as srv:
            r = http.get(f"{srv.base_url.removesuffix('/v1')}/version")
            assert (r.status_code, r.json()) == (200, {"version": "0.32.0"})
            assert http.post(f"{srv.base_url.removesuffix('/v1')}/version").status_code == 404


def test_models_routes_and_errors(rehearsal_server):
    base = rehearsal_server.base_url
    with httpx.Client(timeout=10) as http:
        ids = [m["id"] for m in http.get(f"{base}/models").json()["data"]]
        assert ids == ["rehearsal-alpha", "rehearsal-beta"]
        r = http.post(
            f"{base}/chat/completions",
            json=_body(model="Qwen/Qwen2.5-7B-Instruct"),
            headers=prompt_headers("program", "program"),
        )
        assert r.status_code == 404 and "not served here" in r.text
        assert (
            http.post(
                f"{base}/chat/completions", content=b"{not json", headers=prompt_headers("program", "program")
            ).status_code
            == 400
        )
        form = prompt_headers("program", "program")
        assert http.post(f"{base}/chat/completions", json={"model": "rehearsal-alpha"}, headers=form).status_code == 400
        no_form = http.post(f"{base}/chat/completions", json=_body())  # the form is never guessed from the text
        assert no_form.status_code == 400 and "X-Harness-Reply-Form" in no_form.text
        assert http.get(f"{base}/nothing").status_code == 404
        ok = http.post(f"{base}/chat/completions", json=_body(), headers=form).json()
    assert ok["system_fingerprint"] == SYNTHETIC_FINGERPRINT and ok["model"] == "rehearsal-alpha"
    assert ok["rehearsal"]["synthetic"] is True
    assert ok["choices"][0]["finish_reason"] in {"stop", "length"}


def test_malformed_http_is_answered_400_and_the_server_keeps_serving(rehearsal_server):
    """aiohttp parses the HTTP: a Content-Length that is not a number, a bad request line, a body over the limit
    get an answer (400, 400, 413) on the socket instead of a dropped connection, and the server goes on."""
    import socket

    def exchange(data: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", rehearsal_server.port), timeout=10) as s:
            s.sendall(data)
            return s.recv(65536)

    assert exchange(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}").startswith(
        b"HTTP/1.0 400 "
    )
    assert exchange(b"NOT A REQUEST LINE\r\n\r\n").startswith(b"HTTP/1.0 400 ")
    big = exchange(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 9000000\r\n"
        b"X-Harness-Reply-Form: reply\r\n\r\n"
    )
    assert big.startswith(b"HTTP/1.1 413 ") and b"body too large" in big
    with httpx.Client(timeout=10) as http:
        assert http.get(f"{rehearsal_server.base_url}/models").status_code == 200
        assert (
            http.post(
                f"{rehearsal_server.base_url}/chat/completions",
                json=_body(),
                headers=prompt_headers("program", "program"),
            ).status_code
            == 200
        )


def test_non_rehearsal_model_ids_are_refused():
    from harness.model.rehearsal.server import RehearsalServer

    with pytest.raises(ValueError, match="must start with 'rehearsal-'"):
        RehearsalServer(models=("qwen2.5-7b",))


def test_replies_are_deterministic_per_seed_and_request(rehearsal_server):
    bodies = [_body(content=f"Write a Python program number {i}.") for i in range(40)]
    form = prompt_headers("program", "program")
    with httpx.Client(timeout=10, headers=form) as http:
        url = f"{rehearsal_server.base_url}/chat/completions"
        first = [http.post(url, json=b).content for b in bodies]
        again = [http.post(url, json=b).content for b in bodies]
    assert first == again
    with running_rehearsal_server(seed=8) as other, httpx.Client(timeout=10, headers=form) as http:
        url = f"{other.base_url}/chat/completions"
        other_seed = [http.post(url, json=b).content for b in bodies]
    assert other_seed != first  # the rehearsal seed changes the replies
    key = AnswerKey(None)
    assert [json.loads(c)["choices"][0]["message"]["content"] for c in first] == [
        make_reply(7, b, rehearsal_server.answer_key, "program").text for b in bodies
    ]
    assert make_reply(7, bodies[0], key, "program").reply_form == "program"
    with pytest.raises(ValueError, match="reply form 'poem' is not served"):
        make_reply(7, bodies[0], key, "poem")


def test_keep_alive_serves_many_requests_on_one_connection(rehearsal_server):
    with httpx.Client(
        timeout=10, limits=httpx.Limits(max_connections=1), headers=prompt_headers("note_only", "reply")
    ) as http:
        for i in range(200):
            assert (
                http.post(f"{rehearsal_server.base_url}/chat/completions", json=_body(content=f"q{i}")).status_code
                == 200
            )
    assert rehearsal_server.stats.completions == 200


EXPECTED_PROGRAM = {
    "correct": "answered",
    "wrong": "answered",
    "raises": "raised_error",
    "static_policy": "sandbox_rejection",
    "sandbox_memory": "raised_error",
    "cpu_loop": "raised_error",
    "wrong_kind": "wrong_return_kind",
    "no_answer_var": "raised_error",
    "no_code": "no_program",
    "truncated": "raised_error",
}
EXPECTED_REPLY = {
    "final_correct": ("answered", True),
    "final_wrong": ("answered", False),
    "final_unreadable": ("unreadable_value", False),
    "json": ("answered", True),
    "boxed": ("answered", True),
    "truncated": ("unreadable_value", False),
    "no_final_line": ("unreadable_value", False),
}
EXPECTED_EXTRACT = {
    "extraction": "answered",
    "extraction_missing": "abstained",
    "no_json": "abstained",
    "truncated": "abstained",
}
EXPECTED_TREE = {
    "tree_correct": "answered",
    "tree_wrong": "answered",
    "tree_missing_var": "abstained",
    "tree_bad_op": "abstained",
    "no_json": "abstained",
    "truncated": "abstained",
}


def test_every_program_shape_reaches_its_executor_outcome():
    """Each program shape's text through the kit's program extraction and the real executor (process
    backend): the taxonomy outcome the solvers record."""
    from executor.api import Executor
    from executor.outcomes import taxonomy
    from harness.arms.prompts import extract_program
    from harness.model.rehearsal.replies import Draw

    with Executor(backend="process") as ex:
        for shape, expected in EXPECTED_PROGRAM.items():
            text, finish = program_reply(shape, 12.5, Draw("t", shape))
            assert (finish == "length") == (shape == "truncated")
            program = extract_program(text)
            got = "no_program" if program is None else taxonomy(ex.run(program).to_dict()["outcome"])
            assert got == expected, (shape, text)


def reply_form_of(arm, body: dict) -> str:
    """The reply form the client sent with a stored request body, from the request's structure: a second user
    turn is a repair; a greedy request of a sampling arm that is not a repair is its library extraction; any
    other is the arm's prompt family's form."""
    if sum(m["role"] == "user" for m in body["messages"]) > 1:
        return "repair"
    if arm.temperature > 0 and body["temperature"] == 0:
        return "extract"
    return arm.prompt.reply_form


def test_every_reply_shape_through_the_real_runner(rehearsal_server, tmp_path):
    """All arms on 44 bundled cases through the real client, solvers, process executor, scorer and store;
    every record's outcome is the one its reply shapes (recomputed from the stored requests) imply."""
    from executor.api import Executor
    from harness.arms.registry import ARMS
    from harness.data.dataset import load_dataset
    from harness.model.client import ModelClient
    from harness.run.request import RunRequest, planned_keys
    from harness.run.runner import run_arms
    from harness.run.store import load_records

    ds = load_dataset("bundled-test")
    cases = ds.cases[:44]
    one_shot = load_dataset("one-shot").cases
    request = RunRequest.build(list(ARMS.values()), ds, cases, [42], out_dir=tmp_path, concurrency=16, progress=False)
    # vllm-seeded: the rehearsal's profile (sampled votes carry seeds; the fake answers by the request body)
    spec = request.spec("rehearsal-alpha", server_profile="vllm-seeded")

    async def go():
        async with ModelClient(
            rehearsal_server.base_url,
            "rehearsal-alpha",
            profile="vllm-seeded",
            concurrency=16,
            cache_dir=tmp_path / "cache",
        ) as client:
            with Executor(backend="process") as ex:
                return await run_arms(
                    list(request.arms), ds, [42], spec, client=client, executor=ex, one_shot=one_shot, cases=cases
                )

    summaries = asyncio.run(go())
    assert sum(s.infra_failed for s in summaries) == 0
    records = load_records(tmp_path)
    # the keys the run wrote are exactly the ones planned_keys (the rehearsal's completeness count) expects
    assert {r.key for r in records} == planned_keys(request, model="rehearsal-alpha", server_profile="vllm-seeded")
    seen = Counter()
    key = rehearsal_server.answer_key
    by_id = ds.by_case_id()
    for r in records:
        if r.model == "library":
            assert r.synthetic is False
            continue
        assert r.synthetic is True and r.server_model == ("rehearsal-alpha" if r.request else None)
        arm = ARMS[r.arm]
        forms = [reply_form_of(arm, body) for body in r.request]
        shapes = [make_reply(7, body, key, form).shape for body, form in zip(r.request, forms)]
        family = forms[0] if forms else None
        seen.update(f"{r.arm}:{s}" for s in shapes)
        lo, hi = arm.solver.request_bounds(arm, by_id[r.case_id])  # what the reproduce plan counts
        assert lo <= len(r.request) <= hi, (r.arm, r.case_id, len(r.request), (lo, hi))
        if arm.solver.name == "program":
            assert r.outcome == EXPECTED_PROGRAM[shapes[0]], (r.case_id, shapes)
            if shapes[0] == "correct":
                assert r.correct
            if shapes[0] == "wrong":
                assert not r.correct
            assert r.finish_reasons == (["length"] if shapes[0] == "truncated" else ["stop"])
        elif arm.solver.name == "repair":
            assert len(shapes) == (1 if shapes[0] == "correct" or shapes[0] == "wrong" else 2)
            if len(shapes) == 2:
                assert r.request[1]["messages"][-1]["content"].startswith("Running your program")
                assert forms[1] == "repair"
            assert r.outcome == EXPECTED_PROGRAM[shapes[-1]]
        elif arm.solver.name == "vote":
            assert arm.samples <= len(shapes) <= arm.samples + arm.solver.repair_cap
            sampled = [b for b in r.request if b["temperature"] > 0]
            assert len(sampled) == arm.samples and len({b["seed"] for b in sampled}) == arm.samples
        elif arm.solver.name == "reply":
            assert family == "reply"
            assert (r.outcome, r.correct) == EXPECTED_REPLY[shapes[0]], (r.case_id, shapes[0], r.replies)
        elif arm.solver.name == "extract_library" and r.request:
            assert family == "extract"
            expected = EXPECTED_EXTRACT[shapes[0]]
            assert r.outcome == expected or (
                shapes[0] == "extraction" and r.outcome == "abstained" and "LibraryAbstain" in (r.reason or "")
            )
        elif arm.solver.name == "tree" and r.request:
            assert family == "tree"
            assert r.outcome == EXPECTED_TREE[shapes[0]], (r.case_id, shapes[0], r.reason)
            if shapes[0] == "tree_correct":
                assert r.correct
    shapes_seen = {s.split(":")[1] for s in seen}
    for needed in (
        "correct",
        "wrong",
        "raises",
        "static_policy",
        "no_code",
        "final_correct",
        "final_wrong",
        "final_unreadable",
        "json",
        "extraction",
        "tree_correct",
        "tree_missing_var",
    ):
        assert needed in shapes_seen, (needed, sorted(shapes_seen))
    assert any(a.startswith("extract-lib-recalled") for a in seen)
    assert any(r.finish_reasons and "length" in r.finish_reasons for r in records)
    assert mixing_problem((p, 1, r) for p, r in enumerate(records)) is None


def test_fault_injection_is_counted_and_retried(tmp_path):
    """5xx, slow (past the client timeout) and dropped connections at high rates: every request still
    completes through the real client's retries, and each injected fault cost exactly one extra attempt."""
    from harness.model.client import ModelClient

    log = tmp_path / "faults.jsonl"
    faults = Faults(rate_5xx=0.15, rate_slow=0.05, rate_drop=0.15, slow_s=3.0)
    with running_rehearsal_server(seed=1, faults=faults, fault_log=log) as server:

        async def go():
            async with ModelClient(
                server.base_url,
                "rehearsal-beta",
                profile="vllm",
                concurrency=32,
                timeout=1.0,
                max_retries=8,
                backoff=0.01,
                backoff_cap=0.05,
            ) as client:
                results = await asyncio.gather(
                    *[
                        client.chat(
                            [{"role": "user", "content": f"Write a Python program {i}"}],
                            temperature=0,
                            max_tokens=64,
                            headers=prompt_headers("program", "program"),
                        )
                        for i in range(300)
                    ]
                )
                return client.sent, results

        sent, results = asyncio.run(go())
        injected = server.stats.faults
    assert len(results) == 300 and all(r.server_model == "rehearsal-beta" for r in results)
    total = sum(injected.values())
    assert injected["http_5xx"] > 10 and injected["drop"] > 10 and injected["slow"] > 2
    assert sent - 300 == total == sum(r.retries for r in results)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert Counter(x["fault"] for x in lines) == Counter({k: v for k, v in injected.items() if v})


def test_fault_rates_are_validated():
    with pytest.raises(ValueError, match="fault rate"):
        Faults(rate_5xx=1.5).validate()


def test_store_and_verify_refuse_mixing_real_and_synthetic(tmp_path):
    from harness.run.store import ResultStore, StoreError

    base = {
        "arm": "open-book",
        "seed": 42,
        "case_id": "2-1",
        "calculator_id": 2,
        "outcome": "answered",
        "correct": True,
        "scorer": "paper",
    }
    store = ResultStore(tmp_path / "f.jsonl")
    assert store.append(record(**base, key="a", model="Qwen/Qwen2.5-7B-Instruct"))
    with pytest.raises(StoreError, match="never mixed"):
        store.append(record(**base, key="b", model="rehearsal-alpha", synthetic=True))
    assert store.append(record(**base, key="c", model="library"))  # model-free rows belong to neither
    recs = [
        ("x.jsonl", 1, record(**base, model="Qwen/Qwen2.5-7B-Instruct")),
        ("y.jsonl", 3, record(**base, model="rehearsal-beta", synthetic=True)),
    ]
    msg = mixing_problem(recs)
    assert "x.jsonl:1" in msg and "y.jsonl:3" in msg


def test_cli_entry_points_start_and_stop(tmp_path):
    """`harness serve rehearsal` (the script, and `python -m harness.cli` as the launcher starts it) listens,
    answers, stops on SIGTERM."""
    import socket

    for argv in (
        [str(ROOT / ".venv/bin/harness"), "serve", "rehearsal"],
        [sys.executable, "-m", "harness.cli", "serve", "rehearsal"],
    ):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ready = tmp_path / f"ready-{port}.json"
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--seed", "3", "--model", "rehearsal-x", "--ready-file", str(ready)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.time() + 60
            while not ready.exists():
                assert proc.poll() is None and time.time() < deadline, "server did not become ready"
                time.sleep(0.1)
            info = json.loads(ready.read_text())
            assert info["synthetic"] is True and info["models"] == ["rehearsal-x"]
            ids = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10).json()["data"]
            assert [m["id"] for m in ids] == ["rehearsal-x"]
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(20) == 0
    bad = subprocess.run(
        [sys.executable, "-m", "harness.cli", "serve", "rehearsal", "--fault-5xx", "2"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "fault rate" in bad.stderr


def test_launcher_serves_both_models_injects_faults_and_survives_a_crash(tmp_path):
    """RehearsalLauncher as `make rehearse` uses it: two models in one process, faults on and logged, its own
    ready line; kill() is a crash (SIGKILL, port freed) and a start on the same port serves again."""
    import socket

    from harness.model.client import ModelClient
    from harness.model.rehearsal.launcher import RehearsalLauncher

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launcher = RehearsalLauncher(
        model_id="rehearsal-alpha",
        extra_model_ids=("rehearsal-beta",),
        port=port,
        seed=5,
        log_path=tmp_path / "server.log",
        faults=Faults(rate_5xx=0.3),
        fault_log=tmp_path / "faults.jsonl",
    )
    launcher.start()
    try:
        launcher.wait_ready(60)
        served = launcher.served()
        assert served["models"] == ["rehearsal-alpha", "rehearsal-beta"] and served["faults"]["http_5xx"] == 0.3
        assert launcher.describe().facts["served"] == served and launcher.describe().synthetic is True

        async def go(model):
            async with ModelClient(
                launcher.base_url,
                model,
                profile="vllm",
                concurrency=8,
                timeout=10.0,
                max_retries=20,
                backoff=0.01,
                backoff_cap=0.02,
            ) as client:
                return await asyncio.gather(
                    *[
                        client.chat(
                            [{"role": "user", "content": f"q {i}"}],
                            temperature=0,
                            max_tokens=32,
                            headers=prompt_headers("note_only", "reply"),
                        )
                        for i in range(40)
                    ]
                )

        replies = asyncio.run(go("rehearsal-beta"))
        assert {r.server_model for r in replies} == {"rehearsal-beta"}
        logged = launcher.faults_logged()
        assert len(logged) == sum(r.retries for r in replies) > 0
        pid = served["pid"]
        launcher.kill()
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{launcher.base_url}/models", timeout=2)
        launcher.start()
        launcher.wait_ready(60)
        assert launcher.served()["pid"] != pid
        assert len(asyncio.run(go("rehearsal-alpha"))) == 40
    finally:
        launcher.stop()
