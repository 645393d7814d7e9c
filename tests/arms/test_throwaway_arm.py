"""Adding an arm is one registry entry: an arm defined here alone (reusing the Gold-Solve library's solver, so it
needs no model) runs, rescores, is planned by `make reproduce` and shows in the tables under its own label."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.analysis.stats.labels import arm_label
from harness.analysis.tables import build_all
from harness.arms.registry import ARMS, Arm, Display, arm_order, ladder
from harness.cli.run import run as run_cmd, score as score_cmd
from harness.reproduce.pipeline import ReproduceConfig, build_plan

NAME = "throwaway-gold"
THROWAWAY = Arm(NAME, "Throwaway Gold-Solve", "gold_library", None, needs_model=False,
                notes="defined in this test only",
                display=Display("Throwaway gold library", "Throwaway", 99, ("hardcoded", "given", "function")))


@pytest.fixture
def throwaway(monkeypatch):
    monkeypatch.setitem(ARMS, NAME, THROWAWAY)
    return THROWAWAY


def test_throwaway_arm_runs_rescores_plans_and_tabulates(throwaway, tmp_path):
    assert arm_order()[-1] == NAME and NAME in ladder() and arm_label(NAME) == "Throwaway gold library"
    out = tmp_path / "results"
    r = CliRunner().invoke(run_cmd, ["--arm", NAME, "--dataset", "bundled-test", "--seeds", "42", "--out", str(out),
                                     "--no-progress"])
    assert r.exit_code == 0, r.output
    files = sorted(out.glob(f"*/{NAME}/seed42.jsonl"))
    assert len(files) == 1
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert rows and {row["arm"] for row in rows} == {NAME}
    assert {row["arm_config_hash"] for row in rows} == {throwaway.config_hash()}
    assert sum(row["correct"] for row in rows) > 0

    scored = CliRunner().invoke(score_cmd, ["--results", str(out), "--arm", NAME])
    assert scored.exit_code == 0, scored.output  # exit 1 would mean a stored score the rescoring does not reproduce
    assert NAME in scored.output

    plan = build_plan(ReproduceConfig(arms=[NAME], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"]),
                      results_root=tmp_path / "no-results")
    planned = [a for a in plan["arms"] if a.get("arm", a.get("name")) == NAME]
    assert planned, plan["arms"]

    tables = tmp_path / "tables"
    build_all(out, tables, draws=200)
    table1 = (tables / "table1.md").read_text()
    assert "Throwaway gold library" in table1 and "hardcoded" in table1


def test_the_registry_is_unchanged_without_the_fixture():
    assert NAME not in ARMS and NAME not in arm_order()
