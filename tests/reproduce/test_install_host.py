"""scripts/install-host.sh on the hosts users rent: its plan for Debian 12 and 13, Ubuntu 22.04, 24.04 and newer (read
from an os-release file it is given, with the distribution's facts, the archive's runsc candidate and python3's
version, as PLAN_* values), the support rule over generated os-release files, and a run against a pre-existing
daemon.json of a GPU box (NVIDIA runtime, default runtime nvidia): they survive, runsc is added, docker restarts once
through systemd.

The run uses FAKE `systemctl`, `docker` and `runsc` executables on PATH (they log their argv; `docker info` lists
the runtimes, `runsc --version` says the pinned release, `runsc do` succeeds) and a temporary DAEMON_JSON: it never
touches this machine's docker."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "install-host.sh"
OS_RELEASES = {
    "debian-12": (
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n'
    ),
    "ubuntu-22.04": 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'
    "VERSION_CODENAME=jammy\n",
    "ubuntu-24.04": 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n'
    "VERSION_CODENAME=noble\n",
    "debian-13": 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\nVERSION_ID="13"\nVERSION_CODENAME=trixie\n',
}
# Each distribution's facts as its archive states them (apt-cache policy runsc; python3 --version): bookworm has
# runsc 0.0~20221219 (backports: 20240729), trixie 0.0~20240729 itself, Ubuntu's archives an old one or none.
FACTS = {
    "debian-12": {"PLAN_RUNSC_CANDIDATE": "0.0~20221219.0-1+b3", "PLAN_PYTHON": "3.11"},
    "ubuntu-22.04": {"PLAN_RUNSC_CANDIDATE": "none", "PLAN_PYTHON": "3.10"},
    "ubuntu-24.04": {"PLAN_RUNSC_CANDIDATE": "0.0~20221219.0-1", "PLAN_PYTHON": "3.12"},
    "debian-13": {"PLAN_RUNSC_CANDIDATE": "0.0~20240729.0-4", "PLAN_PYTHON": "3.13"},
}


def _plan(tmp_path, name, **env) -> subprocess.CompletedProcess:
    osr = tmp_path / f"os-release-{name}"
    osr.write_text(OS_RELEASES[name])
    return subprocess.run(
        ["bash", str(SCRIPT), "--plan"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "OS_RELEASE": str(osr), **FACTS[name], **env},
    )


@pytest.mark.parametrize("name", list(OS_RELEASES))
def test_plan_keeps_an_existing_docker_ce_and_names_the_gvisor_source(tmp_path, name):
    r = _plan(tmp_path, name, PLAN_DOCKER="docker-ce 5:27.3.1-1~ubuntu.22.04~jammy", PLAN_RUNSC="none")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "keep the installed Docker (docker-ce 5:27.3.1" in out and "never replaced" in out
    assert "docker.io" not in out  # Debian's docker.io would remove docker-ce
    assert "debian-archive-keyring" in out and "mmdebstrap" in out
    assert "keeping every other runtime and default-runtime" in out
    if name == "debian-12":
        assert "-t bookworm-backports runsc (0.0~20240729" in out and "has no systrap" in out
        assert "python3 is 3.11: make setup" in out
    elif name == "debian-13":  # trixie's own runsc is the pinned release: no backports, no binaries
        assert "apt-get install runsc (the debian 13 archive's 0.0~20240729.0-4" in out and "backports" not in out
        assert "python3 is 3.13: make setup" in out
    else:
        assert "gVisor release 20240729.0 binaries" in out and ".sha512" in out
        assert ("python3.11" in out) if name == "ubuntu-22.04" else ("python3 is 3.12" in out)


def test_plan_on_a_bare_host_installs_docker_io_and_keeps_a_recent_runsc(tmp_path):
    r = _plan(tmp_path, "ubuntu-24.04", PLAN_DOCKER="none", PLAN_RUNSC="20240729")
    assert r.returncode == 0, r.stderr
    assert "apt-get install docker.io" in r.stdout and "keep the installed runsc (release 20240729" in r.stdout


def test_plan_refuses_an_unsupported_distribution_and_a_bad_platform(tmp_path):
    osr = tmp_path / "os-release"
    osr.write_text("ID=fedora\nVERSION_ID=40\n")
    r = subprocess.run(
        ["bash", str(SCRIPT), "--plan"], capture_output=True, text=True, env={**os.environ, "OS_RELEASE": str(osr)}
    )
    assert r.returncode == 1 and "unsupported distribution fedora 40" in r.stderr
    assert "supported are Debian 12 or newer, Ubuntu 22.04 or newer" in r.stderr and len(r.stderr.splitlines()) == 1
    r = _plan(tmp_path, "debian-12", RUNSC_PLATFORM="gvisor-fast")
    assert r.returncode == 1 and "RUNSC_PLATFORM must be ptrace, kvm or systrap" in r.stderr


def _support(tmp_path, text: str) -> subprocess.CompletedProcess:
    osr = tmp_path / "os-release"
    osr.write_text(text)
    return subprocess.run(
        ["bash", str(SCRIPT), "--plan"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "OS_RELEASE": str(osr),
            "PLAN_DOCKER": "none",
            "PLAN_RUNSC": "none",
            "PLAN_RUNSC_CANDIDATE": "none",
            "PLAN_PYTHON": "3.12",
        },
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    distro=st.sampled_from(["debian", "ubuntu", "fedora", "arch", "alpine", "rhel"]),
    major=st.integers(0, 40),
    minor=st.sampled_from([None, 4, 10]),
)
def test_the_support_rule_is_the_distributions_version_not_a_list_of_names(tmp_path, distro, major, minor):
    """Every generated os-release: a plan for exactly Debian >= 12 and Ubuntu >= 22.04, whatever their names (a
    Debian or Ubuntu release that does not exist yet is planned for), and one line naming the rule otherwise."""
    version = f"{major}" if minor is None else f"{major}.{minor:02d}"
    r = _support(tmp_path, f'ID={distro}\nVERSION_ID="{version}"\nVERSION_CODENAME=next\n')
    if distro == "debian":
        want = minor is None and major >= 12
    elif distro == "ubuntu":
        want = minor is not None and (major, minor) >= (22, 4)
    else:
        want = False
    if want:
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"install-host plan for {distro} {version} (next)")
        assert "next-backports" in r.stdout if distro == "debian" else "release 20240729.0 binaries" in r.stdout
    else:
        assert r.returncode == 1 and r.stdout == ""
        assert (
            f"unsupported distribution {distro} {version}" in r.stderr
            and "supported are Debian 12 or newer" in r.stderr
        )
        assert len(r.stderr.strip().splitlines()) == 1


def _fake(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def fake_host(tmp_path):
    """FAKE systemctl/docker/runsc on PATH; a systemd marker directory; a GPU box's daemon.json."""
    bin_dir, calls = tmp_path / "fakebin", tmp_path / "calls.log"
    bin_dir.mkdir()
    daemon = tmp_path / "docker" / "daemon.json"
    daemon.parent.mkdir()
    daemon.write_text(
        json.dumps(
            {
                "default-runtime": "nvidia",
                "data-root": "/data/docker",
                "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}},
            },
            indent=4,
        )
    )
    _fake(bin_dir / "systemctl", f'echo "systemctl $*" >> {calls}\nexit 0\n')
    _fake(
        bin_dir / "runsc",
        f'echo "runsc $*" >> {calls}\n'
        'if [ "$1" = --version ]; then echo "runsc version release-20240729.0"; fi\nexit 0\n',
    )
    _fake(bin_dir / "dockerd", "exit 0\n")
    _fake(
        bin_dir / "docker",
        f'echo "docker $*" >> {calls}\n'
        'case "$1" in info) echo \'{"nvidia":{},"runc":{},"runsc":{}}\';; '
        "version) echo 27.3.1;; esac\nexit 0\n",
    )
    (tmp_path / "systemd").mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "DAEMON_JSON": str(daemon),
        "SYSTEMD_DIR": str(tmp_path / "systemd"),
        "RUNSC_PLATFORM": "ptrace",
        "DOCKER_WAIT_S": "5",
    }
    return env, daemon, calls


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/bin/dpkg-query").exists(),
    reason="the install run needs root and dpkg (a Debian-family host)",
)
def test_install_keeps_the_nvidia_runtime_and_default_runtime_and_restarts_docker_once(fake_host):
    env, daemon, calls = fake_host
    pkgs = ["docker.io", "mmdebstrap", "debian-archive-keyring", "libseccomp2", "libgomp1"]
    missing = [
        p
        for p in pkgs
        if "install ok installed"
        not in subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout
    ]
    if missing:
        pytest.skip(f"would apt-get install {missing} on this machine")
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    cfg = json.loads(daemon.read_text())
    assert cfg["default-runtime"] == "nvidia" and cfg["data-root"] == "/data/docker"
    assert cfg["runtimes"]["nvidia"] == {"path": "nvidia-container-runtime", "args": []}
    assert cfg["runtimes"]["runsc"]["runtimeArgs"] == ["--network=none", "--oci-seccomp", "--platform=ptrace"]
    record = json.loads((daemon.parent / "mathsolver-runsc.json").read_text())
    assert (
        record["platform"] == "ptrace" and record["release"] == "20240729" and record["chosen_by"] == "RUNSC_PLATFORM"
    )
    log = calls.read_text().splitlines()
    assert log.count("systemctl restart docker") == 1
    # again: nothing changed, no restart
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert calls.read_text().splitlines().count("systemctl restart docker") == 1


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/bin/dpkg-query").exists(),
    reason="the install run needs root and dpkg (a Debian-family host)",
)
def test_systrap_is_refused_on_a_runsc_release_without_it(fake_host):
    env, daemon, calls = fake_host
    fake_runsc = Path(env["PATH"].split(":")[0]) / "runsc"
    fake_runsc.write_text(fake_runsc.read_text().replace("release-20240729.0", "0.0~20221219.0"))
    r = subprocess.run(
        ["bash", str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "RUNSC_PLATFORM": "systrap", "RUNSC_UPGRADE": "0"},
    )
    assert r.returncode == 1 and "runsc release 20221219 has no systrap platform" in r.stderr
    assert json.loads(daemon.read_text())["runtimes"].keys() == {"nvidia"}  # untouched
