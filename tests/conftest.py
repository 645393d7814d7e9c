"""Shared pytest configuration. Each part of the kit keeps its fixtures in tests/fixtures_<part>.py;
they are all loaded here so test modules can use them without imports. The lanes (`--lane`, the markers a test
earns by its fixtures) are tests/lanes.py's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.lanes import LANES, admits, lane_of, markers_from_fixtures

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parent

pytest_plugins = sorted(f"tests.{p.stem}" for p in TESTS_DIR.glob("fixtures_*.py"))


def pytest_addoption(parser):
    parser.addoption(
        "--lane",
        choices=("all", *LANES),
        default="all",
        help="run one lane of the suite (tests/lanes.py): unit (no real component; run it with -n), "
        "docker, slurm, model, vllm; all [default] runs every test",
    )
    parser.addoption(
        "--show-lanes",
        action="store_true",
        help="print each collected test's lane (with --collect-only: where a new test will run)",
    )


def pytest_report_collectionfinish(config, items):
    if config.getoption("show_lanes"):
        return [f"lane {lane_of(m.name for m in item.iter_markers())} {item.nodeid}" for item in items]
    return []


@pytest.hookimpl(tryfirst=True)  # before -m/-k deselection and tests/fixtures_vllm.py's ordering
def pytest_collection_modifyitems(config, items):
    """Mark every test with the real components its fixtures use, then keep the tests of the chosen lane."""
    for item in items:
        for marker in sorted(markers_from_fixtures(item.fixturenames)):
            if item.get_closest_marker(marker) is None:
                item.add_marker(marker)
    lane = config.getoption("lane")
    if lane == "all":
        return
    keep, drop = [], []
    for item in items:
        (keep if lane_of(m.name for m in item.iter_markers()) == lane else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def claim(request, marker: str) -> None:
    """Called by the fixture that sets up `marker`'s real component: fail when this lane's process cannot hold it,
    i.e. a test asked for it at run time (getfixturevalue) without carrying the mark."""
    lane = request.config.getoption("lane")
    if not admits(lane, marker):
        pytest.fail(
            f"{request.fixturename} (the {marker} lane's component) was asked for in the {lane} lane: mark "
            f"the test requesting it `{marker}` (pytest.mark.{marker}, or on the parameter that needs it) or "
            f"request the fixture by argument, so that it runs in the {marker} lane",
            pytrace=False,
        )


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(condition: bool, reason: str) -> None:
    """Skip when a real component is missing locally; fail in CI, where .ci/run installs everything."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"required in CI but missing: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    d = Path(os.environ.get("MEDCALC_SHARED_DIR", ROOT.parent / "shared" / "data" / "medcalc-bench"))
    if not (d / "test_dev_v1.0.csv").exists():
        pytest.skip(f"MedCalc-Bench dev files absent: {d}/test_dev_v1.0.csv not found (set MEDCALC_SHARED_DIR)")
    return d
