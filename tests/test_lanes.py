"""The lanes (tests/lanes.py): a test's lane follows from the fixtures it uses, whatever its file says; the lanes
split the suite without overlap; a resource asked for at run time in a lane that cannot hold it fails the test; the
report of a run counts every lane and fails when one failed or did not run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT, claim
from tests.lanes import LANES, admits, format_report, lane_of, markers_from_fixtures, report

# Files whose tests need a real component only through a fixture (no mark of their own in the file) or through a
# parameter, next to one with explicit marks, and ones with neither.
PROBE_FILES = (
    "tests/executor/test_executor_honest.py",
    "tests/executor/test_executor_issue22.py",
    "tests/model/test_vllm_cpu_server.py",
    "tests/reproduce/test_slurm.py",
    "tests/test_demo.py",
    "tests/core/test_units.py",
)


def test_the_last_marked_lane_wins_and_unmarked_tests_are_unit():
    assert lane_of([]) == "unit" and lane_of(["slow", "parametrize"]) == "unit"
    assert lane_of(["docker"]) == "docker" and lane_of(["docker", "model"]) == "model"
    assert lane_of(["slurm", "model"]) == "model" and lane_of(["vllm", "docker", "slurm"]) == "vllm"


def test_resource_fixtures_give_their_markers():
    assert markers_from_fixtures(["tmp_path", "container_backend"]) == {"docker"}
    assert markers_from_fixtures(["dockerd"]) == {"docker"}  # docker itself (an image build), no executor
    assert markers_from_fixtures(["model_server", "vllm_cpu_server", "slurm_cluster"]) == {"model", "vllm", "slurm"}
    assert markers_from_fixtures(["process_executor", "rehearsal_server"]) == set()


def test_a_lane_holds_its_own_resource_and_those_before_it():
    assert not any(admits("unit", m) for m in LANES[1:])
    assert admits("docker", "docker") and not admits("docker", "model") and not admits("slurm", "vllm")
    assert admits("vllm", "model") and admits("model", "docker") and all(admits("all", m) for m in LANES)


def _request(lane: str, fixture: str = "container_backend"):
    return SimpleNamespace(config=SimpleNamespace(getoption=lambda name: lane), fixturename=fixture)


def test_a_resource_asked_for_at_run_time_in_the_unit_lane_fails_and_names_the_fix():
    with pytest.raises(
        pytest.fail.Exception,
        match=r"container_backend .*asked for in the unit lane: mark the test "
        r"requesting it `docker`",
    ):
        claim(_request("unit"), "docker")
    with pytest.raises(pytest.fail.Exception, match="model_server .*in the docker lane"):
        claim(_request("docker", "model_server"), "model")
    claim(_request("docker"), "docker")
    claim(_request("all"), "vllm")


def test_collection_puts_each_test_in_exactly_one_lane_by_its_fixtures():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--show-lanes",
            *PROBE_FILES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ids = {lane: set() for lane in LANES}
    shown = [line.split(" ", 2)[1:] for line in proc.stdout.splitlines() if line.startswith("lane ")]
    for lane, nodeid in shown:
        ids[lane].add(nodeid)
    collected = {line for line in proc.stdout.splitlines() if "::" in line and not line.startswith("lane ")}
    assert collected and {n for _, n in shown} == collected and len(shown) == len(collected)  # one lane each
    ids["all"] = collected
    docker, unit = ids["docker"], ids["unit"]
    # the container half of the parametrised backend_executor fixture, in a file without a docker mark
    honest = [i for i in ids["all"] if i.startswith("tests/executor/test_executor_honest.py::test_every_honest")]
    assert {i for i in honest if "[container" in i} <= docker and {i for i in honest if "[process" in i} <= unit
    assert any("[container" in i for i in honest)
    # a test asking for the container by argument, and a module fixture parametrised over both backends
    assert (
        "tests/executor/test_executor_issue22.py::test_no_directory_is_shared_between_programs_in_the_container"
        in docker
    )
    assert any("test_environment_is_empty_even_in_proc[container]" in i for i in docker)
    assert any("test_environment_is_empty_even_in_proc[process]" in i for i in unit)
    assert ids["vllm"] and all(i.startswith("tests/model/test_vllm_cpu_server.py") for i in ids["vllm"])
    assert ids["slurm"] and all("test_slurm.py" in i and "own_model_server" not in i for i in ids["slurm"])
    assert any("test_each_array_task_starts_and_stops_its_own_model_server" in i for i in ids["model"])
    assert any(i.startswith("tests/test_demo.py") for i in ids["model"])
    assert all(i in unit for i in ids["all"] if i.startswith("tests/core/test_units.py"))
    # --lane keeps exactly the tests shown in that lane
    one = PROBE_FILES[0]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--lane", "docker", one],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert {line for line in proc.stdout.splitlines() if "::" in line} == {i for i in docker if i.startswith(one)}


def _junit(path: Path, cases: list[tuple[str, str | None]]) -> None:
    body = "".join(
        f'<testcase classname="tests.x.test_{n}" name="t{n}" time="{i + 1}.5">'
        + (f"<{tag} message='m'/>" if tag else "")
        + "</testcase>"
        for i, (n, tag) in enumerate(cases)
    )
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')


def test_the_report_counts_every_lane_and_fails_when_one_failed_or_did_not_run(tmp_path, capsys):
    for lane in LANES:
        _junit(tmp_path / f"{lane}.xml", [("a", None), ("b", "skipped")])
        (tmp_path / f"lane-{lane}.json").write_text(
            json.dumps({"exit_status": 0, "wall_s": 10, "workers": 1, "machine_busy_pct": 55})
        )
    assert report(tmp_path, 60.0, "1.0 1.0 1.0") == 0
    out = capsys.readouterr().out
    assert f"{len(LANES)} passed, 0 failed, 0 errors, {len(LANES)} skipped in {len(LANES)} lanes, 60 s" in out
    summary = json.loads((tmp_path / "lanes.json").read_text())
    assert summary["lanes"]["unit"] == {
        "tests": 2,
        "passed": 1,
        "failed": 0,
        "error": 0,
        "skipped": 1,
        "exit_status": 0,
        "wall_s": 10,
        "workers": 1,
        "machine_busy_pct": 55,
        "test_seconds": 4.0,
    }
    assert "55%" in out.splitlines()[2]
    assert summary["per_file_s"]["tests/x/test_b.py"] == 2.5 * len(LANES)
    assert summary["slowest"][0]["seconds"] == 2.5
    _junit(tmp_path / "model.xml", [("a", "failure")])
    (tmp_path / "lane-model.json").write_text(json.dumps({"exit_status": 1, "wall_s": 5}))
    assert report(tmp_path) == 1
    assert "lanes FAILED: model" in capsys.readouterr().err
    (tmp_path / "model.xml").unlink()
    (tmp_path / "lane-model.json").unlink()
    _junit(tmp_path / "vllm.xml", [("a", None)])
    assert report(tmp_path) == 1  # the model lane did not run at all
    assert "lanes that did not run: model" in capsys.readouterr().err
    assert report(tmp_path, lanes=("unit", "vllm")) == 0  # unless it was not asked for (make test-fast)
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 4


def test_an_empty_lane_is_not_a_failure():
    entry = {
        "tests": 0,
        "passed": 0,
        "failed": 0,
        "error": 0,
        "skipped": 0,
        "exit_status": 5,
        "wall_s": 3,
        "workers": 1,
        "machine_busy_pct": None,
        "test_seconds": 0.0,
    }
    assert "ok" in format_report({"lanes": {"slurm": entry}}).splitlines()[2]


@pytest.mark.parametrize(
    "plan, message",
    [
        ("unit docker+slurm model+vllm+dokker", "unknown lane dokker in TEST_PLAN"),
        ("unit docker+slurm model+vllm+docker", "lane docker is twice in TEST_PLAN"),
        ("unit docker+slurm model", "lane vllm is in no group of TEST_PLAN"),
    ],
)
def test_a_plan_that_misses_repeats_or_misspells_a_lane_is_refused_before_anything_runs(plan, message, tmp_path):
    """scripts/test-lanes.sh's groups (TEST_PLAN): every lane of the run in exactly one group, or exit 2 naming it,
    before a pytest starts (nothing is written to TEST_OUT)."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "test-lanes.sh")],
        env={**os.environ, "TEST_PLAN": plan, "TEST_OUT": str(tmp_path / "out")},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()
