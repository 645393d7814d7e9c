"""bench/demo_slots.py, the demo's slot count by measurement: the per-case comparison with the committed demo, the
rule that picks the count from the measured runs (generated run sets, not only the examples), and the lock write
that the demo's default slot count and its estimate then read. The measurement itself is `make bench-demo-slots`,
run alone."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import demo_slots
from bench.demo_slots import ARMS, MIN_GAIN, choose, compare, records
from harness.core.paths import REPO_ROOT
from harness.model import cpu_models
from harness.model.cpu_models import CpuModel, estimate_line, role_model


def _run(slots: int, wall: float, identical: bool = True) -> dict:
    return {
        "slots": slots,
        "wall_s": wall,
        "wall_s_per_case": round(wall / 8, 1),
        "same_as_committed_demo": {"identical": identical},
    }


def test_the_committed_demo_compares_identical_with_itself_and_a_changed_answer_differs():
    ref = records(REPO_ROOT / "results" / "cpu-demo", role_model("demo"))
    assert {arm for arm, _ in ref} == set(ARMS) and len(ref) == 3 * 8
    same = compare(ref, ref)
    assert same == {
        "cases_compared": 24,
        "outcomes_identical": 24,
        "replies_identical": 24,
        "differing": [],
        "identical": True,
    }
    (arm, case), rec = next(iter(ref.items()))
    changed = {**ref, (arm, case): dataclasses.replace(rec, correct=not rec.correct, replies=["other"])}
    got = compare(changed, ref)
    assert got["differing"] == [f"{arm} {case}"] and got["replies_identical"] == 23 and not got["identical"]
    assert compare({}, ref)["identical"] is False  # nothing compared is no evidence


def test_the_rule_takes_more_slots_only_when_clearly_faster_and_never_with_other_outcomes():
    assert choose([_run(1, 600), _run(2, 420), _run(4, 400)])["slots"] == 2  # 2 is within 5% of the fastest
    assert choose([_run(1, 600), _run(2, 590), _run(4, 400)])["slots"] == 4
    assert choose([_run(1, 100), _run(2, 96), _run(4, 92)])["slots"] == 2  # each step < 5%, together more
    assert choose([_run(1, 600), _run(2, 300, identical=False), _run(4, 590)])["slots"] == 1
    nothing = choose([_run(1, 600, identical=False)])
    assert nothing["slots"] == 1 and "wall_s_per_case" not in nothing
    assert "not even one slot" in nothing["reason"] and "llama.cpp#7594" in nothing["reason"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(10, 1000), st.booleans()), min_size=1, max_size=5))
def test_the_chosen_count_gave_the_committed_outcomes_and_is_the_smallest_near_the_fastest(walls):
    runs = [_run(2**i, wall, same) for i, (wall, same) in enumerate(walls)]
    chosen = choose(runs)
    eligible = [r for r in runs if r["same_as_committed_demo"]["identical"]]
    if not eligible:
        assert chosen["slots"] == 1
        return
    pick = next(r for r in eligible if r["slots"] == chosen["slots"])
    fastest = min(r["wall_s"] for r in eligible)
    assert pick["wall_s"] <= fastest * (1 + MIN_GAIN)  # near the fastest
    assert all(r["wall_s"] > fastest * (1 + MIN_GAIN) for r in eligible if r["slots"] < pick["slots"])


def test_the_lock_write_gives_the_demo_its_slots_and_the_estimate_its_measured_rate(tmp_path, monkeypatch):
    lock = tmp_path / "cpu_models.json"
    lock.write_text(cpu_models.CATALOGUE.read_text())
    monkeypatch.setattr(cpu_models, "CATALOGUE", lock)
    monkeypatch.setattr(demo_slots, "CATALOGUE", lock)
    model = role_model("demo")
    before = cpu_models.get_model(model).demo_timing
    doc = {
        "date": "2026-11-28T00:00:00+00:00",
        "cases": 8,
        "threads": 2,
        "machine": {"loadavg_start": "0.10 0.20 0.30"},
        "runs": [_run(1, 560), _run(2, 400), _run(4, 390)],
    }
    demo_slots.write_lock(model, choose(doc["runs"]), doc)
    m = cpu_models.get_model(model)
    assert m.demo_slots == 2 and m.demo_timing["wall_s_per_case"] == 50.0
    assert m.demo_timing["server_cpu_s_per_case"] == before["server_cpu_s_per_case"]  # the CPU figure is kept
    line = estimate_line(m, cases=8, cores=2)
    assert "about 7 min at 2 server slot(s) on 2 free cores (measured alone: 50 s per case, 2026-11-28" in line
    # another slot count than the measured one falls back to the CPU-seconds estimate
    assert "CPU s per case" in estimate_line(m, cases=8, cores=2, slots=1)
    assert json.loads(lock.read_text())["models"][model]["demo_timing"]["slots"] == 2


def test_a_model_without_a_measured_slot_count_uses_one():
    m = CpuModel(
        id="m",
        file="m.gguf",
        source="t",
        gguf_bytes=1,
        gguf_sha256="",
        gguf_identity={},
        wheels=(),
        demo_timing={"server_cpu_s_per_case": 90.0, "threads": 2, "measured": "x"},
    )
    assert m.demo_slots == 1
    assert (
        CpuModel(id="n", file="n", source="t", gguf_bytes=1, gguf_sha256="", gguf_identity={}, wheels=()).demo_slots
        == 1
    )


@pytest.mark.parametrize("bad", ["0", "two", ""])
def test_the_cli_refuses_a_slot_list_it_cannot_read(bad):
    from click.testing import CliRunner

    from bench.cli import main

    r = CliRunner().invoke(main, ["demo-slots", "--slots", bad, "--cases", "1"])
    assert r.exit_code == 2 and "--slots" in r.output


def test_main_compares_each_count_with_the_committed_demo_and_its_own_one_slot_run(tmp_path, monkeypatch):
    """The measurement's bookkeeping, with the runs themselves stood in for (each returns the committed demo's
    records, the 2-slot run with one reply changed): the JSON, the table and the rule's pick."""
    from types import SimpleNamespace

    model = role_model("demo")
    ref = records(REPO_ROOT / "results" / "cpu-demo", model)
    ((key, rec),) = list(ref.items())[:1]
    changed = {**ref, key: dataclasses.replace(rec, answer="other", replies=["other"])}

    def fake_run(model_id, n, cases, threads, work, reference):
        got = changed if n == 2 else ref
        return {
            "slots": n,
            "wall_s": 100.0 / n,
            "wall_s_per_case": round(100.0 / n / cases, 1),
            "server_cpu_s": 50.0,
            "completion_tokens_per_s": 5.0 * n,
            "load_before": "0.00 0.00 0.00",
            "same_as_committed_demo": compare(got, reference),
            "records": got,
        }

    monkeypatch.setattr(demo_slots, "run_slots", fake_run)
    monkeypatch.setattr(demo_slots, "get_model", lambda m: SimpleNamespace(path=demo_slots.CATALOGUE))
    out = tmp_path / "demo-slots.json"
    assert demo_slots.main(out, [1, 2, 4], cases=8, model=model, threads=2, work=tmp_path) == 0
    doc = json.loads(out.read_text())
    by = {r["slots"]: r for r in doc["runs"]}
    assert by[2]["same_as_one_slot"]["differing"] == [f"{key[0]} {key[1]}"] and by[4]["same_as_one_slot"]["identical"]
    assert doc["chosen"]["slots"] == 4 and doc["rule"] == demo_slots.RULE  # 2 differs; 4 is the fastest
    assert "| 2 | 50.0 | 6.2 | 10.0 | 50.0 | 23/24 | 23/24 | 23/24 |" in doc["table"]
