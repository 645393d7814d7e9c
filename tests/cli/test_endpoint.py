"""A new user's endpoint: `harness run` sends the API key from OPENAI_API_KEY (or the variable --api-key-env
names) and never records it, says 401/403 for what they are, and defaults to the plain server profile (no
repeat_penalty, which strict OpenAI-compatible servers reject). Against the scripted FAKE model server of
harness.model.rehearsal.server.ScriptedServer, demanding a key as an OpenAI server does."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import main
from harness.model.rehearsal.server import ScriptedServer


def _run(url, out, *extra, env=None):
    return CliRunner(env=env).invoke(
        main,
        [
            "run",
            "--arm",
            "note-only",
            "--dataset",
            "bundled-test",
            "--limit",
            "2",
            "--seeds",
            "42",
            "--base-url",
            url,
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ],
    )


def test_key_from_a_named_variable_is_sent_and_never_recorded_fake_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([], api_key="sk-user-789") as srv:
        r = _run(srv.url, tmp_path / "res", "--api-key-env", "MY_ENDPOINT_KEY", env={"MY_ENDPOINT_KEY": "sk-user-789"})
    assert r.exit_code == 0, r.output
    assert srv.auth and set(srv.auth) == {"Bearer sk-user-789"}
    written = "".join(p.read_text(errors="replace") for p in (tmp_path / "res").rglob("*") if p.is_file())
    assert "sk-user-789" not in written and "2 new" in r.output


def test_missing_key_is_reported_as_401_not_as_a_wrong_url_fake_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([], api_key="sk-user-789") as srv:
        r = _run(srv.url, tmp_path / "res")
    assert r.exit_code == 1
    assert "GET /models answered 401 Unauthorized: the server wants an API key and none was sent" in r.output
    assert "--base-url must be" not in r.output
    assert not list((tmp_path / "res").glob("**/*.jsonl"))


def test_named_variable_unset_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    r = _run("http://127.0.0.1:9/v1", tmp_path / "res", "--api-key-env", "NO_SUCH_KEY_VAR")
    assert r.exit_code == 2 and "environment variable NO_SUCH_KEY_VAR is not set" in r.output


def test_default_profile_is_plain_fake_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([]) as srv:
        r = _run(srv.url, tmp_path / "res")
    assert r.exit_code == 0, r.output
    assert srv.requests and all("repeat_penalty" not in b for b in srv.requests)
    with ScriptedServer([]) as srv:
        r = _run(srv.url, tmp_path / "res2", "--server-profile", "llama.cpp")
    assert r.exit_code == 0 and all(b["repeat_penalty"] == 1.0 for b in srv.requests)


def test_readme_shows_the_profile_the_key_and_how_to_build_dev():
    from harness.core.paths import REPO_ROOT

    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    runs = [blk for blk in text.split("```") if "--base-url http://127.0.0.1:8000/v1" in blk]
    assert runs and all("--server-profile vllm" in blk for blk in runs)  # the vLLM examples name their profile
    assert "OPENAI_API_KEY" in text and "--api-key-env" in text
    assert "harness data build-dev --source test_data.csv" in text and "../shared/data" not in text


def test_external_launcher_preflight_sends_the_key_and_names_a_401_fake_server(monkeypatch):
    from harness.model.launchers import launcher_kind
    from harness.model.serving import LaunchOptions

    kind = launcher_kind("external")
    with ScriptedServer([], api_key="sk-ext") as srv:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        options = LaunchOptions(dataset="bundled-test", base_url=srv.url)
        (server, _dataset) = kind.preflight(["scripted-model"], options)
        assert not server.ok and "401 Unauthorized: the server wants an API key" in server.detail
        monkeypatch.setenv("OPENAI_API_KEY", "sk-ext")
        (server, _dataset) = kind.preflight(["scripted-model"], options)
        assert server.ok, server.detail


def test_a_users_endpoint_is_described_in_the_run_manifest_by_what_it_answers_fake_server(tmp_path, monkeypatch):
    """No --server-info: the run manifest's server is what the endpoint said about itself. The scripted FAKE has no
    GET /version and lists its model without `owned_by: vllm`, so it is not recorded as vLLM, even under the vllm
    profile: nothing is guessed from the profile or the URL."""
    from harness.run.manifest import read_manifests

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer([]) as srv:
        r = _run(srv.url, tmp_path / "res", "--server-profile", "vllm")
    assert r.exit_code == 0, r.output
    (found,) = read_manifests(tmp_path / "res", kind="run")
    server = found.manifest.server
    assert server.launcher == "external" and server.base_url == srv.url and server.model_id == "scripted-model"
    assert server.server is None and server.server_version is None and server.facts["version_answer"] is None
    assert server.served_model.id == "scripted-model"
