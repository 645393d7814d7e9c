"""Container-side configuration checks that need no docker: the seccomp profile is not stale,
the run flags carry every hardening flag, the pool validates its options, and the executor
source digest matches the build script's recipe."""

from __future__ import annotations

import subprocess

import pytest

from executor import policy, pool

SECCOMP_FLAG = f"--security-opt=seccomp={pool.SECCOMP_PROFILE.resolve()}"


def pool_flags() -> list[str]:
    return pool.default_run_flags()


def test_seccomp_profile_file_is_not_stale():
    """containers/executor/seccomp.json must be exactly what policy.py renders
    (regenerate: `executor seccomp-profile > containers/executor/seccomp.json`)."""
    assert pool.SECCOMP_PROFILE.read_text() == policy.seccomp_profile_json()


def test_run_flags_carry_every_hardening_flag():
    flags = pool_flags()
    for required in (
        "--runtime=runsc",
        "--network=none",
        "--read-only",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        "--user=executor",
        SECCOMP_FLAG,
        "--log-driver=none",
    ):
        assert required in flags, required
    mem = [f.split("=", 1)[1] for f in flags if f.startswith("--memory=")]
    swap = [f.split("=", 1)[1] for f in flags if f.startswith("--memory-swap=")]
    assert mem and mem == swap, "memory must equal memory+swap (no swap)"
    pids = [int(f.split("=", 1)[1]) for f in flags if f.startswith("--pids-limit=")]
    assert pids and pids[0] >= 128
    # no writable directory may be shared by the programs of one container (issue 22, item 4)
    assert [f for f in flags if f.startswith(("--tmpfs", "--mount", "--volume", "-v"))] == [
        "--tmpfs=/tmp:ro,nosuid,nodev,noexec"
    ]
    assert "--ipc=none" in flags and "--hostname=executor" in flags


def test_run_flags_reject_unknown_placeholder(tmp_path):
    f = tmp_path / "flags.txt"
    f.write_text("--memory={memroy}\n")
    with pytest.raises(pool.ContainerBackendUnavailable, match="unknown placeholder 'memroy'"):
        pool.read_run_flags(f, memory="1g")


def test_pool_rejects_bad_options_before_touching_docker():
    with pytest.raises(ValueError, match="pids_limit must be an integer >= 128"):
        pool.ContainerPool(1, "x", pids_limit=64)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        pool.ContainerPool(0, "x")
    with pytest.raises(ValueError, match="unknown executor limit"):
        pool.ContainerPool(1, "x", limits={"wall_secs": 1})


def test_source_digest_matches_the_build_script_recipe(tmp_path):
    """pool.executor_source_digest() == `find executor -name '*.py' | sort | xargs sha256sum | sha256sum`
    (the recipe of scripts/build-executor-image.sh) and changes when a source changes."""
    pkg = tmp_path / "executor"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "sub" / "b.py").write_text("B = 2\n")
    shell = subprocess.run(
        "find executor -name '*.py' -not -path '*/__pycache__/*' | LC_ALL=C sort "
        "| xargs sha256sum | sha256sum | cut -d' ' -f1",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert pool.executor_source_digest(pkg) == shell
    (pkg / "a.py").write_text("A = 2\n")
    assert pool.executor_source_digest(pkg) != shell
