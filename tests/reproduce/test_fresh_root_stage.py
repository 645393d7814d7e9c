"""CI's fresh-root stage (.ci/fresh-root-stage) can fail (issue 48): a `make setup` that fails inside the root fails
the stage, naming the step and the suite. Until issue 48 each step ran `make setup && ...; echo "... in N s"` under
errexit, where a failing command inside an `&&` list does not stop the shell: the stage reported Debian 13's
`make setup` passing while pip refused requirements-test.lock there.

The root itself (mmdebstrap, chroot: root only) is played by a runner given as FRESH_ROOT, which takes
fresh-root.sh's arguments and runs the step's command in a scratch kit whose `make` is a fake."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STAGE = REPO / ".ci" / "fresh-root-stage"
PIP_REFUSAL = (
    "ERROR: In --require-hashes mode, all requirements must have their versions pinned with ==. "
    "These do not:\n    pyyaml-ft>=8.0.0 (from libcst==1.9.0->-r requirements-test.lock (line 118))"
)

FAKE_ROOT = r"""#!/usr/bin/env bash
# fresh-root.sh's arguments: --suite SUITE -- COMMAND...
suite=bookworm
while [ "$1" != "--" ]; do [ "$1" = --suite ] && suite=$2; shift; done
shift
case "$suite" in bookworm) v=12 py=3.11 ;; trixie) v=13 py=3.13 ;; esac
if [ "$2" = scripts/install-host.sh ]; then
    echo "install-host plan for debian $v (plan only)"
    echo "  apt-get install docker.io (no Docker on this host)"
    echo "  python3 is $py: make setup uses it"
    exit 0
fi
cd "$FAKE_KIT" && PATH="$FAKE_KIT/bin:$PATH" FAKE_PY=$py exec "$@"
"""

FAKE_MAKE = r"""#!/usr/bin/env bash
# make TARGET: fails when TARGET is $FAKE_MAKE_FAILS (pip's refusal on stderr), else leaves what the target makes
if [ "$1" = "$FAKE_MAKE_FAILS" ]; then
    echo "$FAKE_REFUSAL" >&2
    echo "make: *** [Makefile:32: .venv/.locked] Error 1" >&2
    exit 2
fi
case "$1" in
    setup) mkdir -p .venv/bin
           printf '#!/bin/sh\necho "Python $FAKE_PY.5"\n' > .venv/bin/python
           printf '#!/bin/sh\nexit 0\n' > .venv/bin/harness; cp .venv/bin/harness .venv/bin/executor ;;
    server-venv|model) mkdir -p .venv-server/bin; printf '#!/bin/sh\nexit 0\n' > .venv-server/bin/python ;;
esac
chmod +x .venv/bin/* .venv-server/bin/* 2>/dev/null
exit 0
"""


@pytest.fixture
def fake_root(tmp_path):
    kit = tmp_path / "kit"
    (kit / "bin").mkdir(parents=True)
    shutil.copytree(REPO / "scripts" / "lib", kit / "scripts" / "lib")
    (kit / "bin" / "make").write_text(FAKE_MAKE)
    (kit / "bin" / "make").chmod(0o755)
    runner = tmp_path / "fake-fresh-root.sh"
    runner.write_text(FAKE_ROOT)

    def run(suites: str, fails: str = "") -> subprocess.CompletedProcess:
        env = {
            **os.environ,
            "FRESH_ROOT": str(runner),
            "FAKE_KIT": str(kit),
            "FRESH_SUITES": suites,
            "FAKE_MAKE_FAILS": fails,
            "FAKE_REFUSAL": PIP_REFUSAL,
        }
        return subprocess.run(["bash", str(STAGE)], capture_output=True, text=True, env=env, timeout=60)

    return run


def test_a_failing_make_setup_fails_the_stage_naming_the_suite_and_step(fake_root):
    r = fake_root("trixie", fails="setup")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "fresh-root-stage: FAILED (trixie): make setup, make server-venv (exit 2" in r.stderr
    assert "pyyaml-ft>=8.0.0" in r.stderr  # the step's tail: pip's own words
    assert "fresh-root-stage: passed" not in r.stdout
    assert "make setup in" not in r.stdout  # no time is reported for a step that failed


@pytest.mark.parametrize(
    "suite,step,fails",
    [
        ("bookworm", "make setup, make model", "setup"),
        ("bookworm", "make setup, make model", "model"),
        ("trixie", "make setup, make server-venv", "server-venv"),
    ],
)
def test_every_install_step_can_fail_the_stage(fake_root, suite, step, fails):
    r = fake_root(suite, fails=fails)
    assert r.returncode == 1 and f"fresh-root-stage: FAILED ({suite}): {step}" in r.stderr, r.stdout + r.stderr


def test_the_stage_passes_when_every_step_does_and_says_each_time(fake_root):
    r = fake_root("bookworm trixie")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "fresh-root-stage: passed"
    assert "(trixie) fresh-root-stage: make setup in " in r.stdout and "(Python 3.13.5)" in r.stdout
    assert "(trixie) fresh-root-stage: make server-venv in " in r.stdout
    assert "(bookworm) fresh-root-stage: make model (server venv + demo model) in " in r.stdout
