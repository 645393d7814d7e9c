"""The request order (harness.run.schedule) changes which requests reach the model server together, never what a
run writes: the same slice run arm-major and case-major against the scripted FAKE model server
(harness.model.rehearsal.server.ScriptedServer, answering each prompt by its content) with the real runner and the
real executor (process backend) gives records identical by content, byte-identical tables, the same response-cache
keys and entries, and the same requests, in another order."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from bench.compare import canonical_records, content_checksums
from harness.analysis.tables import build_all
from harness.arms.registry import ARMS
from harness.calculators import LIBRARY
from harness.data.dataset import load_dataset
from harness.model.rehearsal.server import ScriptedServer
from harness.model.rehearsal.sources import SCRIPTED_MODEL, chat_completion
from harness.run.manifest import read_manifests
from harness.run.request import ModelTarget, RunRequest
from harness.run.runner import RunSpec, planned_units
from harness.run.schedule import ARM_MAJOR, CASE_MAJOR, ORDERS, case_order, phases
from harness.run.session import run_session

ARM_NAMES = ("note-only", "program-solve", "blind-repair", "blind-vote", "extract-lib", "formulate-tree", "gold-lib")
SEEDS = (42, 43)
VOLATILE_CACHE_FIELDS = ("latency_ms", "retries")


def scripted_reply(raw: bytes) -> dict:
    """The fake's answer, a function of the prompt alone: a program for program prompts (one in three raises, so
    the repair and vote paths run), a corrected program for a repair turn, JSON for extraction and formulation,
    a final answer otherwise."""
    body = json.loads(raw)
    prompt = body["messages"][-1]["content"]
    n = int(hashlib.sha256(prompt.encode()).hexdigest()[:6], 16)
    if prompt.startswith("Running your program did not return a value"):
        text = f"```python\nanswer = {n % 40 + 1}\n```"
    elif prompt.startswith("Write a Python program"):
        text = "```python\nanswer = 1 / 0\n```" if n % 3 == 0 else f"```python\nanswer = {n % 40 + 1}\n```"
    elif prompt.startswith("Extract from the patient note"):
        text = json.dumps({"age": n % 90})
    elif prompt.startswith("Work out how to calculate"):
        text = json.dumps({"calculation": "x", "formula": "a", "variables": {"a": n % 9}, "missing": [], "tree": "a"})
    else:
        text = f"Step by step.\nFinal answer: {n % 100}"
    return chat_completion(text, model=SCRIPTED_MODEL, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4)


def _slice():
    ds = load_dataset("bundled-test")
    covered = [c for c in ds.cases if c.calculator_id in LIBRARY][:2]
    other = [c for c in ds.cases if c.calculator_id not in LIBRARY][:2]
    return ds, covered + other


def _run(tmp: Path, order: str, srv: ScriptedServer) -> tuple[Path, list[dict]]:
    """The slice in `order` into its own results root, against `srv` (one server for both orders: the response
    cache's key holds the server's URL)."""
    ds, cases = _slice()
    out = tmp / order
    arms = [ARMS[n] for n in ARM_NAMES]
    before = len(srv.requests)
    target = ModelTarget(
        base_url=srv.url, model=SCRIPTED_MODEL, server_profile="plain", cache_dir=out / ".cache" / "responses"
    )
    request = RunRequest.build(
        arms,
        ds,
        cases,
        SEEDS,
        out_dir=out,
        target=target,
        executor_backend="process",
        concurrency=3,
        progress=False,
        order=order,
    )
    asyncio.run(run_session(request))
    build_all(out, out / "tables", draws=200)
    return out, list(srv.requests[before:])


def _cache_entries(root: Path) -> dict[str, dict]:
    out = {}
    for p in sorted((root / ".cache" / "responses").rglob("*.json")):
        entry = json.loads(p.read_text())
        entry["result"] = {k: v for k, v in entry["result"].items() if k not in VOLATILE_CACHE_FIELDS}
        out[p.relative_to(root).as_posix()] = entry
    return out


def test_both_orders_write_the_same_records_tables_and_cache(tmp_path):
    with ScriptedServer(reply=scripted_reply) as srv:
        (a, sent_a), (b, sent_b) = (_run(tmp_path, o, srv) for o in (ARM_MAJOR, CASE_MAJOR))

    # the server saw the same requests, in another order
    canon = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(canon, sent_a)) == sorted(map(canon, sent_b))
    assert list(map(canon, sent_a)) != list(map(canon, sent_b))
    assert len(sent_a) > 40

    # records by content (bench/compare.py: less timing and transport fields), then every table byte for byte
    records_a = canonical_records(a, ignore=("dataset_path",))
    records_b = canonical_records(b, ignore=("dataset_path",))
    assert len(records_a) == len(ARM_NAMES) * len(SEEDS) * 4 - 2 * len(SEEDS) * 2  # blind-vote, -repair: 2 cases
    assert records_a == records_b
    tables_a = {p.relative_to(a / "tables"): p.read_bytes() for p in (a / "tables").rglob("*") if p.is_file()}
    tables_b = {p.relative_to(b / "tables"): p.read_bytes() for p in (b / "tables").rglob("*") if p.is_file()}
    assert len(tables_a) > 10 and tables_a == tables_b
    assert content_checksums(a, a / "tables") == content_checksums(b, b / "tables")

    # the response cache: the same keys, the same entries (less latency and retries)
    assert _cache_entries(a) == _cache_entries(b) != {}

    # each run manifest says which order made it
    orders = {root.name: f.manifest.order for root in (a, b) for f in read_manifests(root, kind="run")}
    assert orders == {ARM_MAJOR: ARM_MAJOR, CASE_MAJOR: CASE_MAJOR}


def test_case_major_sends_a_case_whole_before_the_next_and_keeps_each_units_items():
    ds, cases = _slice()
    arms = [ARMS[n] for n in ARM_NAMES]
    units = planned_units(arms, ds, list(SEEDS), RunSpec(model="m"), cases)
    (phase,) = phases(units, CASE_MAJOR)
    first = [c.case_id for c in case_order(cases, SEEDS[0])]
    seen = [it.case.case_id for it in phase.items]
    assert [c for i, c in enumerate(seen) if i == 0 or seen[i - 1] != c] == first  # one run of items per case
    one_case = [(units[it.unit].arm.name, units[it.unit].seed) for it in phase.items if it.case.case_id == first[0]]
    assert one_case == [(u.arm.name, u.seed) for u in units if any(c.case_id == first[0] for c, _ in u.todo)]
    by_arm = phases(units, ARM_MAJOR)
    assert [len(p.units) for p in by_arm] == [len(SEEDS)] * len(ARM_NAMES)
    assert sorted((it.unit, it.key) for p in by_arm for it in p.items) == sorted(
        (it.unit, it.key) for it in phase.items
    )
    # arm-major: seed after seed within an arm, each seed's cases in its own order
    p0 = by_arm[0]
    assert [it.case.case_id for it in p0.items] == [c.case_id for s in SEEDS for c in case_order(cases, s)]


def test_an_unknown_order_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown request order 'by-seed'"):
        RunSpec(order="by-seed")
    assert set(ORDERS) == {ARM_MAJOR, CASE_MAJOR}
