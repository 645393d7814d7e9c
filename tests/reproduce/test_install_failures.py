"""The install path on a host without state, and install steps that fail say which step failed (issue 30).

- `install-host.sh --plan` with the host's own detection where dpkg has never heard of docker-ce (a bare Debian 12:
  `dpkg-query -W docker-ce` exits 1): it prints its plan (it used to end silently under `set -e`).
- A step made to fail on purpose (a FAKE `sed` or `dpkg-query` on PATH that fails) is named on stderr: script, line
  and command, through scripts/lib/errexit.sh's ERR trap.
- Every shell script of the kit starts with that trap (sourced directly or through scripts/lib/run-common.sh).
- scripts/check-python.sh: an interpreter below the locks' 3.11 is refused with the one command that fixes the host,
  or swapped for a newer python3.1x on PATH when PYTHON was left at its default.
The complete bare-machine run is .ci/fresh-root-stage (scripts/fresh-root.sh), which CI runs on every submission."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from harness.core.paths import REPO_ROOT

SCRIPTS = REPO_ROOT / "scripts"
DEBIAN_12 = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n'


def _exe(path: Path, body: str) -> Path:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _run(args, tmp_path, fakes: dict[str, str], **env) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in fakes.items():
        _exe(bin_dir / name, body)
    osr = tmp_path / "os-release"
    osr.write_text(DEBIAN_12)
    full_env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OS_RELEASE": str(osr), **env}
    for k in ("PLAN_DOCKER", "PLAN_RUNSC"):
        full_env.pop(k, None)
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env=full_env)


# what dpkg-query prints and returns for a package it has never heard of, as on a bare Debian 12
UNKNOWN_TO_DPKG = 'echo "dpkg-query: no packages found matching ${@: -1}" >&2\nexit 1\n'


def test_plan_on_a_host_whose_dpkg_never_heard_of_docker(tmp_path):
    r = _run(
        ["bash", str(SCRIPTS / "install-host.sh"), "--plan"],
        tmp_path,
        {"dpkg-query": UNKNOWN_TO_DPKG, "dockerd": "exit 1\n"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("install-host plan for debian 12 (bookworm)")
    # no dpkg package is installed; the fake dockerd found on PATH is kept, never replaced by docker.io
    assert re.search(r"docker: +keep the installed Docker \(dockerd ", r.stdout), r.stdout
    assert "ERROR" not in r.stderr


def test_a_failing_step_is_named_with_its_line_and_command(tmp_path):
    # sed fails: install-host reads the distribution with it, first thing
    r = _run(["bash", str(SCRIPTS / "install-host.sh"), "--plan"], tmp_path, {"sed": "exit 4\n"})
    assert r.returncode != 0
    m = re.search(r"^install-host: ERROR: install-host\.sh line (\d+): `(.+)` exited with status (\d+)", r.stderr, re.M)
    assert m, r.stderr
    line = (SCRIPTS / "install-host.sh").read_text().splitlines()[int(m.group(1)) - 1]
    # the line read with sed; a pipeline's statuses name the stage that failed (sed is the first)
    assert "sed" in line and m.group(3) == "4"
    assert re.search(r"\(pipeline statuses: 4 ", r.stderr) or "sed" in m.group(2), r.stderr


def test_a_failing_pipeline_names_every_stage_status(tmp_path):
    # the installer's own package check, with dpkg-query broken in another way (status 2): named, with the
    # statuses of the pipeline's stages, never a silent exit
    script = tmp_path / "step.sh"
    script.write_text(
        f'. {SCRIPTS}/lib/errexit.sh\nLOG_NAME=probe\nv=$(dpkg-query -W nosuch | sed s/a/b/)\necho "not reached"\n'
    )
    r = _run(["bash", str(script)], tmp_path, {"dpkg-query": "exit 2\n"})
    assert r.returncode == 2 and "not reached" not in r.stdout
    assert re.search(
        r"^probe: ERROR: step\.sh line 3: `sed s/a/b/` exited with status 2 \(pipeline statuses: 2 0\)$", r.stderr, re.M
    ), r.stderr


def test_handled_failures_stay_quiet(tmp_path):
    script = tmp_path / "handled.sh"
    script.write_text(
        f". {SCRIPTS}/lib/errexit.sh\nv=$(false) || echo handled\nif ! grep -q x /dev/null; then echo fine; fi\n"
    )
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["handled", "fine"] and r.stderr == ""


def test_every_kit_shell_script_starts_with_the_trap():
    scripts = (
        sorted(SCRIPTS.glob("*.sh"))
        + sorted((REPO_ROOT / "bench").glob("*.sh"))
        + [REPO_ROOT / ".ci" / "run", REPO_ROOT / ".ci" / "fresh-root-stage"]
    )
    missing = []
    for p in scripts:
        text = p.read_text()
        if "set -euo pipefail" in text or not re.search(r"^(\.|source) .*lib/(errexit|run-common)\.sh", text, re.M):
            missing.append(p.name)
    assert not missing, f"scripts without scripts/lib/errexit.sh: {missing}"
    # under pipefail `producer | head -n1` fails at random (SIGPIPE, 141) when head exits first: seen in
    # install-host.sh's `runsc --version | head -n1`; the scripts take a first line with `sed -n 1p`
    heads = [
        f"{p.name}:{i}"
        for p in scripts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\|\s*head\b", line) and not line.lstrip().startswith("#")
    ]
    assert not heads, f"pipes into head under pipefail: {heads}"
    assert re.search(r"^\. .*errexit\.sh", (SCRIPTS / "lib" / "run-common.sh").read_text(), re.M)


def _fake_python(path: Path, version: str) -> Path:
    # a FAKE interpreter that reports another version (the host has only 3.11); anything else goes to the real one
    major, minor, micro = version.split(".")
    return _exe(
        path,
        f"""case "$*" in
  *version_info\\[:3\\]*) echo {version} ;;
  *version_info\\ \\>=*) [ {minor} -ge 11 ] ;;
  *) exec {sys.executable} "$@" ;;
esac
""",
    )


def test_python_below_311_is_refused_with_the_one_command(tmp_path):
    py = _fake_python(tmp_path / "python3.10", "3.10.12")
    r = subprocess.run(
        ["bash", str(SCRIPTS / "check-python.sh"), "--explicit", str(py)], capture_output=True, text=True
    )
    assert r.returncode == 1 and r.stdout == ""
    assert "is Python 3.10.12; the kit's hash locks (numpy 2.4, contourpy 1.3.3) need Python >= 3.11" in r.stderr
    assert "Fix: " in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_default_python3_below_311_is_swapped_for_a_newer_one_on_path(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_python(bin_dir / "python3", "3.10.12")
    (bin_dir / "python3.11").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    r = subprocess.run(["bash", str(SCRIPTS / "check-python.sh"), "python3"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "python3.11" and "python3 is Python 3.10.12" in r.stderr
    # named explicitly, it is used or refused, never swapped
    r = subprocess.run(
        ["bash", str(SCRIPTS / "check-python.sh"), "--explicit", "python3"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 1 and "need Python >= 3.11" in r.stderr


def test_make_setup_stops_before_pip_on_an_old_python(tmp_path):
    py = _fake_python(tmp_path / "python3.10", "3.10.12")
    r = subprocess.run(["make", "-n", "-B", "setup", f"PYTHON={py}"], cwd=REPO_ROOT, capture_output=True, text=True)
    # the recipe runs check-python.sh with --explicit before `-m venv` and before any pip
    recipe = r.stdout
    assert "check-python.sh --explicit" in recipe and recipe.index("check-python.sh") < recipe.index("pip install")
