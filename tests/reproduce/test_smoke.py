"""`harness serve smoke` with the launchers CI has: the rehearsal server (a scripted FAKE) and the llama.cpp CPU
model server (the real model, when .venv-server and the GGUF are installed). The vllm launcher's smoke is in
tests/model/test_vllm_fake_docker.py (a fake docker)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from harness.cli.serve import serve
from harness.model.cpu_models import DEFAULT_GGUF
from harness.model.llama_cpp import DEFAULT_SERVER_PYTHON
from tests.fixtures_data import SMOKE_CASE, bundled_cases_csv


def test_smoke_with_the_rehearsal_launcher_checks_every_reply_form(tmp_path):
    r = CliRunner().invoke(
        serve,
        [
            "smoke",
            "--launcher",
            "rehearsal",
            "--models",
            "rehearsal-alpha",
            "--dataset",
            "bundled-test",
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    for form, arm in (("program", "program-solve"), ("reply", "note-only"), ("extract", "extract-lib")):
        assert f"[smoke rehearsal-alpha] {form} ({arm}): ok" in r.output
    assert "smoke: ok for rehearsal-alpha" in r.output


def test_smoke_refuses_before_starting_when_preflight_fails(tmp_path):
    r = CliRunner().invoke(
        serve, ["smoke", "--launcher", "llama-cpp", "--dataset", str(tmp_path / "none.csv"), "--out", str(tmp_path)]
    )
    assert r.exit_code == 2 and "smoke: not started, preflight failed" in r.output


@pytest.mark.model
@pytest.mark.skipif(
    not DEFAULT_SERVER_PYTHON.exists() or not DEFAULT_GGUF.exists(),
    reason="the CPU model server (.venv-server) or its GGUF is not installed: make model",
)
def test_smoke_with_the_llama_cpp_launcher(tmp_path):
    """The real model on one short covered case of the bundled slice (tests/fixtures_data.py SMOKE_CASE), at the
    arms' own token caps."""
    dataset = bundled_cases_csv(tmp_path / "smoke-case.csv", [SMOKE_CASE])
    r = CliRunner().invoke(
        serve, ["smoke", "--launcher", "llama-cpp", "--dataset", str(dataset), "--out", str(tmp_path)]
    )
    assert r.exit_code in (0, 1), r.output
    assert "[smoke qwen2.5-coder-0.5b-instruct] program (program-solve):" in r.output
    # a 0.5B model may fail to produce a parseable reply; the failure must then name the reply form
    if r.exit_code == 1:
        assert "reply:" in r.output
