"""Shared pytest configuration. Each part of the kit keeps its fixtures in tests/fixtures_<part>.py;
they are all loaded here so test modules can use them without imports."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parent

pytest_plugins = sorted(f"tests.{p.stem}" for p in TESTS_DIR.glob("fixtures_*.py"))


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
