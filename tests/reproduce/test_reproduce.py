"""`make reproduce`: the dry run (scripts/reproduce.sh DRY_RUN=1), refusal of unpinned models, and the
CI run of the SAME pipeline (`harness reproduce`) with the llama.cpp CPU launcher on a tiny slice.

Expected request counts are computed here from the Arm definitions (harness.arms.registry.ARMS), the library's
calculators and the dataset, never written down as numbers."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from harness.arms.registry import ARMS
from harness.calculators import LIBRARY
from harness.cli.serve import reproduce_cmd, serve
from harness.data import datahub
from harness.data.dataset import load_dataset
from harness.model.vllm import locks as vllm
from harness.reproduce.config import ReproduceConfig, ReproduceError
from harness.reproduce.plan import build_plan, read_plan
from harness.reproduce.reproduction import run_pipeline, verify_run
from harness.run.manifest import read_manifest, read_manifests
from tests.conftest import ROOT, require
from tests.records import record_json as record

SCRIPT = ROOT / "scripts" / "reproduce.sh"
HARNESS = ROOT / ".venv" / "bin" / "harness"
DATE_TYPES = ("date", "weeks_days")


def _env(tmp_path: Path, **extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "MODELS",
            "ARMS",
            "SEEDS",
            "DRY_RUN",
            "DETERMINISTIC",
            "GENERATION_CONFIG",
            "DATASET",
            "LIMIT",
            "LAUNCHER",
            "OUT",
        )
    }
    env["MATHSOLVER_DATA_DIR"] = str(tmp_path / "no-verified-here")  # a fresh clone has not fetched Verified
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _script(tmp_path: Path, **extra) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env=_env(tmp_path, **extra), cwd=ROOT, timeout=120
    )


def _verified_shape() -> dict:
    """Verified's published shape: the pinned row count over the bundled slice's calculators."""
    slice_ = load_dataset("bundled-test")
    calcs = slice_.calculator_ids()
    rows = int(datahub.entry("verified")["rows"])
    per = rows // len(calcs)
    dates = {c.calculator_id for c in slice_.cases if c.output_type in DATE_TYPES}
    return {"rows": rows, "per": per, "covered": per * len(set(calcs) & set(LIBRARY)), "dates": per * len(dates)}


def _arm_line(text: str, arm: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if re.match(rf"\s+{re.escape(arm)}\s", ln))
    return line.split()


def _num(s: str) -> int:
    return int(s.replace(",", ""))


# --------------------------------------------------------------------------- dry run


def test_dry_run_prints_pinned_digest_revisions_commands_and_request_counts(tmp_path):
    arms = "gold-lib,program-solve,extract-lib,formulate-tree,blind-vote,blind-repair-vote"
    r = _script(tmp_path, DRY_RUN=1, ARMS=arms, MODELS="all")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout
    image = json.loads((vllm.DEFAULT_VLLM_DIR / "image.lock.json").read_text())
    # the kit's own image, by its lock's sha256 and its content (the recorded build): no pin left to resolve
    own = image["own"]
    assert f"image: mathsolver-vllm:{own['lock_sha256'][:16]}  (vLLM 0.32.0, the kit's own)" in out
    assert f"lock:    requirements-vllm-gpu.lock sha256 {own['lock_sha256']}" in out
    assert f"content: rootfs sha256 {own['build']['rootfs_sha256']}, image id {own['build']['image_id']}" in out
    assert "not resolved" not in out and vllm.UNRESOLVED_DIGEST not in out
    assert "carries no CUDA forward-compatibility libraries" in out
    for key, e in json.loads((vllm.DEFAULT_VLLM_DIR / "models.lock.json").read_text())["models"].items():
        assert f"model {key}: {e['repo']} @ {e['revision']}" in out
        assert f"--model {e['repo']} --revision {e['revision']}" in out  # the exact docker run line
    assert out.count("  command: docker run --detach") == 4
    assert "--quantization awq_marlin" in out and "--tokenizer-mode mistral" in out
    seeds = 5
    v = _verified_shape()
    per_seed = {
        "gold-lib": (0, 0),
        "program-solve": (v["rows"], v["rows"]),
        "extract-lib": (v["covered"], v["covered"]),
        "formulate-tree": (v["rows"] - v["dates"], v["rows"] - v["dates"]),
        "blind-vote": (v["covered"] * ARMS["blind-vote"].samples,) * 2,
        "blind-repair-vote": (
            v["covered"] * ARMS["blind-repair-vote"].samples,
            v["covered"] * (ARMS["blind-repair-vote"].samples + ARMS["blind-repair-vote"].solver.repair_cap),
        ),
    }
    for arm, (lo, hi) in per_seed.items():
        cols = _arm_line(out, arm)
        shown = cols[3]
        want = f"{lo * seeds:,}" if lo == hi else f"{lo * seeds:,}..{hi * seeds:,}"
        assert shown == want, (arm, cols)
    assert _arm_line(out, "blind-vote")[1] == f"{v['covered']}c"  # the covered cases only
    assert _arm_line(out, "gold-lib")[2] == "0"
    assert re.search(r"Estimated time, all models: [\d.]+ (h|min) \.\. [\d.]+ (h|min)", out)
    assert "PROBLEM" not in out and "not fetched here" in out
    # upstream's image stays an option: its committed digest is not resolved yet, the plan shows the placeholder
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind", MODELS="qwen2.5-7b", VLLM_IMAGE="upstream")
    assert r.returncode == 0, r.stderr + r.stdout
    assert f"image: vllm/vllm-openai:{image['tag']}@{image['digest'] or vllm.UNRESOLVED_DIGEST}" in r.stdout
    assert "make pin-images WRITE=1" in r.stdout and "(or CUDA forward compatibility)" in r.stdout


def test_request_counts_change_with_ARMS_and_SEEDS(tmp_path):
    def total(**kw) -> tuple[int, int]:
        r = _script(tmp_path, DRY_RUN=1, **kw)
        assert r.returncode == 0, r.stderr
        lo, hi = re.search(r"^\s+total per model\s+([\d,]+)\.\.([\d,]+)", r.stdout, re.M).groups()
        return _num(lo), _num(hi)

    v = _verified_shape()
    blind = total(ARMS="blind")
    both = total(ARMS="blind,blind-repair")
    assert blind == (v["rows"] * 5,) * 2
    assert both == (blind[0] + v["covered"] * 5, blind[1] + v["covered"] * 2 * 5)
    assert total(ARMS="blind", SEEDS="42,43") == (v["rows"] * 2,) * 2
    assert total(ARMS="gold-lib") == (0, 0)
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind", MODELS="all")  # four models: four times one model's
    assert r.returncode == 0, r.stderr
    lo, hi = re.search(r"^\s+all 4 model\(s\)\s+([\d,]+)\.\.([\d,]+)", r.stdout, re.M).groups()
    assert (_num(lo), _num(hi)) == (blind[0] * 4, blind[1] * 4)


def test_plan_on_the_bundled_slice_counts_every_case(tmp_path):
    r = CliRunner().invoke(
        serve,
        [
            "plan",
            "--dataset",
            "bundled-test",
            "--seeds",
            "42,43",
            "--json",
            "--arms",
            "note-only,extract-lib,extract-lib-recalled,formulate-tree,blind-repair",
        ],
    )
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output)
    cases = load_dataset("bundled-test").cases
    lib = sum(c.calculator_id in LIBRARY for c in cases)
    nondate = sum(c.output_type not in DATE_TYPES for c in cases)
    rec = ARMS["extract-lib-recalled"].samples
    want = {
        "note-only": (len(cases), len(cases)),
        "extract-lib": (lib, lib),
        "extract-lib-recalled": (rec * len(cases), rec * len(cases) + lib),
        "formulate-tree": (nondate, nondate),
        "blind-repair": (lib, 2 * lib),
    }
    assert read_plan(plan) == read_plan(json.loads(json.dumps(plan)))  # the JSON is the typed plan's
    plan = read_plan(plan)
    got = {a.arm: (a.requests.min, a.requests.max) for a in plan.arms}
    assert got == {k: (lo * 2, hi * 2) for k, (lo, hi) in want.items()}
    assert plan.n_cases == len(cases) and not plan.dataset_stand_in
    assert [m.key for m in plan.models] == ["qwen2.5-7b", "qwen2.5-32b-awq"]
    est = [m.estimate_s for m in plan.models]
    assert all(0 < e.min <= e.max for e in est)
    assert plan.estimate_s.max == pytest.approx(sum(e.max for e in est))


def test_time_estimate_uses_measured_tokens_from_stored_results(tmp_path):
    root = tmp_path / "results"
    f = root / "some-model" / "program-solve" / "seed42.jsonl"
    f.parent.mkdir(parents=True)
    stored = {
        "model": "some-model",
        "arm": "program-solve",
        "seed": 42,
        "calculator_id": 2,
        "outcome": "answered",
        "correct": True,
        "scorer": "paper",
    }  # the store's required fields
    recs = [
        record(**stored, key="k1", case_id="2-1", request=[{}], tokens={"prompt": 900, "completion": 100}),
        record(**stored, key="k2", case_id="2-2", request=[{}, {}], tokens={"prompt": 2100, "completion": 500}),
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs) + '{"torn": ')  # a torn last line is skipped
    cfg = ReproduceConfig(arms=["program-solve", "blind"], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"])
    plan = build_plan(cfg, results_root=root)
    tok = {a.arm: a.tokens_per_request for a in plan.arms}
    assert tok["program-solve"].source == "measured"
    assert tok["program-solve"].prompt == pytest.approx(3000 / 3) and tok["program-solve"].completion == pytest.approx(
        200
    )
    assert tok["blind"].source == "estimated"
    tp = vllm.throughput_assumption("qwen2.5-7b")
    secs = (
        sum(
            a.requests.max
            * (
                a.tokens_per_request.prompt / tp["prefill_tokens_per_s"]
                + a.tokens_per_request.completion / tp["decode_tokens_per_s"]
            )
            for a in plan.arms
        )
        + tp["startup_s"]
    )
    assert plan.models[0].estimate_s.max == pytest.approx(secs)
    det = build_plan(
        ReproduceConfig(
            arms=["program-solve"], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"], deterministic=True
        ),
        results_root=root,
    )
    plain = build_plan(
        ReproduceConfig(arms=["program-solve"], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"]),
        results_root=root,
    )
    assert det.estimate_s.max > plain.estimate_s.max


def test_dry_run_passes_deterministic_and_generation_config_through(tmp_path):
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind", MODELS="qwen2.5-7b", DETERMINISTIC=1, GENERATION_CONFIG="vllm")
    assert r.returncode == 0, r.stderr
    cmd = next(ln for ln in r.stdout.splitlines() if "command: docker run" in ln)
    assert "-e VLLM_BATCH_INVARIANT=1" in cmd and "--no-enable-prefix-caching" in cmd
    assert "--attention-backend FLASH_ATTN" in cmd and "VLLM_ATTENTION_BACKEND" not in cmd  # a flag on 0.32.0
    assert "--generation-config vllm" in cmd and "deterministic:     on" in r.stdout
    default = _script(tmp_path, DRY_RUN=1, ARMS="blind", MODELS="qwen2.5-7b")
    assert "--generation-config auto" in default.stdout and "VLLM_BATCH_INVARIANT" not in default.stdout
    assert "is an assumption" in default.stdout and "only repetition_penalty" in default.stdout


def test_deterministic_dry_run_plans_all_four_models_each_with_its_batch_invariant_path(tmp_path):
    """`make reproduce DRY_RUN=1 DETERMINISTIC=1 MODELS=all`: on vLLM 0.32.0 no model is refused; each block says the
    release accepts the deterministic command and names its batch-invariant path in vLLM's source."""
    r = _script(tmp_path, DRY_RUN=1, DETERMINISTIC=1, MODELS="all")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "refused" not in r.stdout + r.stderr and "PROBLEM" not in r.stdout
    for key in ("qwen2.5-7b", "qwen2.5-32b-awq", "mistral-7b", "phi-3.5-mini"):
        block = r.stdout.split(f"model {key}:", 1)[1].split("\nmodel ", 1)[0]
        assert "-e VLLM_BATCH_INVARIANT=1" in block and "--attention-backend FLASH_ATTN" in block
        assert "--attention-config '{\"flash_attn_version\": 2}'" in block  # FA2, not SM90's FA3
        assert "-e VLLM_USE_FLASHINFER_SAMPLER=0" in block  # the sampler, explicit
        assert "  contract: vLLM 0.32.0 accepts this command" in block
        assert "  batch-invariant path (read from vLLM 0.32.0's source, not measured): " in block
        assert "FA2" in block or "FlashAttention 2 set explicitly (fa_utils.py:109-117" in block
    seven = r.stdout.split("model qwen2.5-7b:", 1)[1].split("\nmodel ", 1)[0]
    assert "fa_utils.py:109-117" in seven and "flash_attn.py:862-863" in seven and "fa_utils.py:98-101" in seven
    awq = r.stdout.split("model qwen2.5-32b-awq:", 1)[1].split("\nmodel ", 1)[0]
    assert "auto_awq.py:311-333" in awq and "PR #38670" in awq
    assert "has no resolved digest" not in r.stdout  # the kit's own image: nothing to resolve


def test_sampling_seeds_is_an_explicit_option_recorded_in_the_plan(tmp_path):
    cfg = ReproduceConfig(arms=["program-solve"], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"])
    assert cfg.server_profile is None
    plan = build_plan(cfg)
    assert plan.models[0].server.info.server_profile == "vllm"
    seeded = ReproduceConfig(
        arms=["program-solve"], dataset="bundled-test", seeds=[42], models=["qwen2.5-7b"], sampling_seeds=True
    )
    assert build_plan(seeded).models[0].server.info.server_profile == "vllm-seeded"
    with pytest.raises(ReproduceError, match="vllm launcher option"):
        ReproduceConfig(launcher="rehearsal", sampling_seeds=True)


def test_bad_selectors_are_named(tmp_path):
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind,telepathy")
    assert r.returncode == 2 and "unknown arm(s): telepathy" in r.stderr
    r = _script(tmp_path, DRY_RUN=1, MODELS="gpt-5")
    assert r.returncode == 2 and "unknown model(s) for the vllm launcher: gpt-5" in r.stderr
    r = _script(tmp_path, DRY_RUN="maybe")
    assert r.returncode == 2 and "DRY_RUN must be 1 or 0" in r.stderr
    r = CliRunner().invoke(
        reproduce_cmd,
        [
            "--launcher",
            "llama-cpp",
            "--deterministic",
            "--dataset",
            "bundled-test",
            "--arms",
            "blind",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code != 0 and "--deterministic is a vLLM option" in r.output


# --------------------------------------------------------------------------- refusal


@pytest.fixture
def unpinned_lock(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "vllm"
    shutil.copytree(vllm.DEFAULT_VLLM_DIR, d)
    lock = json.loads((d / "models.lock.json").read_text())
    lock["models"]["qwen2.5-7b"]["revision"] = "main"
    (d / "models.lock.json").write_text(json.dumps(lock))
    monkeypatch.setenv("MATHSOLVER_VLLM_DIR", str(d))
    return d


def test_dry_run_flags_an_unpinned_model(unpinned_lock, tmp_path):
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind", MATHSOLVER_VLLM_DIR=unpinned_lock)
    assert r.returncode == 1
    assert "model qwen2.5-7b: Qwen/Qwen2.5-7B-Instruct @ main" in r.stdout
    assert "REFUSED" in r.stdout and "refuses to serve an unpinned model" in r.stdout
    assert "PROBLEM: qwen2.5-7b" in r.stdout
    assert (
        "model qwen2.5-32b-awq: Qwen/Qwen2.5-32B-Instruct-AWQ @ " + vllm.model_lock("qwen2.5-32b-awq")["revision"]
        in r.stdout
    )


def test_pipeline_refuses_to_serve_an_unpinned_model_before_starting_anything(unpinned_lock, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # had it tried docker, this would be a LaunchError
    cfg = ReproduceConfig(
        launcher="vllm",
        models=["qwen2.5-7b"],
        arms=["program-solve"],
        seeds=[42],
        dataset="bundled-test",
        out=tmp_path / "out",
        limit=1,
        progress=False,
    )
    with pytest.raises(vllm.PinError, match="refuses to serve an unpinned model"):
        run_pipeline(cfg, echo=lambda s: None)
    (found,) = read_manifests(tmp_path / "out", kind="reproduce")
    assert found.manifest.status == "failed" and "PinError" in found.manifest.error and found.manifest.blocks == ()
    assert not list((tmp_path / "out").glob("*/*/seed*.jsonl"))


def test_reproduce_command_refuses_to_start_when_preflight_fails(unpinned_lock, tmp_path):
    r = CliRunner().invoke(
        reproduce_cmd,
        [
            "--models",
            "qwen2.5-7b",
            "--dataset",
            "bundled-test",
            "--arms",
            "blind",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 2
    assert "[FAIL] model pinned: qwen2.5-7b" in r.output and "refusing to start: preflight failed" in r.output
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the CI pipeline (real CPU model)


def _require_cpu_server() -> None:
    from harness.model.cpu_models import DEFAULT_GGUF
    from harness.model.llama_cpp import DEFAULT_SERVER_PYTHON

    require(
        DEFAULT_SERVER_PYTHON.exists(),
        f"CPU model server virtualenv missing ({DEFAULT_SERVER_PYTHON}); make server-venv",
    )
    require(DEFAULT_GGUF.exists(), f"model GGUF missing ({DEFAULT_GGUF}); make model")
    require(HARNESS.exists(), f"{HARNESS} missing; make setup")


def _reproduce_cmd(out: Path) -> list[str]:
    return [
        str(HARNESS),
        "reproduce",
        "--launcher",
        "llama-cpp",
        "--dataset",
        "bundled-test",
        "--limit",
        "2",
        "--shortest",
        "--seeds",
        "42",
        "--arms",
        "gold-lib,program-solve",
        "--out",
        str(out),
        "--draws",
        "200",
        "--no-progress",
    ]


def _lines(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


@pytest.mark.model
def test_ci_pipeline_with_llama_cpp_launcher_writes_records_manifests_checksums_tables(tmp_path):
    _require_cpu_server()
    out = tmp_path / "out"
    r = subprocess.run(_reproduce_cmd(out), capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    from harness.model.cpu_models import CPU_MODEL, CPU_MODEL_ID

    prog = _lines(out / CPU_MODEL_ID / "program-solve" / "seed42.jsonl")
    gold = _lines(out / "library" / "gold-lib" / "seed42.jsonl")
    assert len(prog) == 2 and len(gold) == 2 and {p["case_id"] for p in prog} == {g["case_id"] for g in gold}
    assert all(p["model_revision"] == f"gguf-sha256:{CPU_MODEL['gguf_sha256']}" and p["replies"] for p in prog)
    assert all(p["server_profile"] == "llama.cpp" for p in prog)
    (found,) = read_manifests(out, kind="reproduce")
    man = found.manifest
    assert man.status == "complete" and man.settings.launcher == "llama-cpp"
    server = man.servers[0].info
    assert server.launcher == "llama-cpp" and server.model_id == CPU_MODEL_ID and server.command
    assert server.revision == prog[0]["model_revision"] and man.servers[0].stopped_at
    block = next(b for b in man.blocks if b.model == CPU_MODEL_ID)
    assert re.fullmatch(r"[0-9a-f]{64}", block.executor.policy_hash)
    assert all(read_manifest(out / b.run_manifest).kind == "run" for b in man.blocks)
    assert sorted(man.case_ids) == sorted(p["case_id"] for p in prog)
    assert (
        (out / "tables" / "index.md").is_file() and (out / "report.html").is_file() and (out / "stats.json").is_file()
    )
    sums = (out / "SHA256SUMS").read_text()
    assert f"{CPU_MODEL_ID}/program-solve/seed42.jsonl" in sums and "tables/index.md" in sums
    assert verify_run(out, tables=False).problems == []
    # the server was stopped: its port no longer answers
    port = re.search(r"--port (\d+)", r.stdout).group(1)
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)
    # the same command again resumes: nothing is re-run, nothing duplicated
    r2 = subprocess.run(_reproduce_cmd(out), capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r2.returncode == 0, r2.stdout[-3000:] + r2.stderr[-3000:]
    assert f"[{CPU_MODEL_ID}] every record is already in {out}: the server is not started" in r2.stdout
    assert "gold-lib seed 42: 2 cases, 0 new, 2 resumed" in r2.stdout
    assert _lines(out / CPU_MODEL_ID / "program-solve" / "seed42.jsonl") == prog
    assert verify_run(out, tables=False).problems == []


@pytest.mark.model
def test_interrupted_pipeline_stops_the_server_and_records_the_interruption(tmp_path):
    _require_cpu_server()
    out = tmp_path / "out"
    proc = subprocess.Popen(_reproduce_cmd(out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    port = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"starting llama-cpp server: .* --port (\d+)", line)
        if m:
            port = m.group(1)
        if port and "waiting up to" in line:
            break
    assert port, "the pipeline never started the server"
    url = f"http://127.0.0.1:{port}/v1/models"
    while time.monotonic() < deadline + 120:  # interrupt once the server answers (mid-run)
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        pytest.fail("the CPU server never answered")
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, rest
    assert "stopping the server" in rest and "record(s) kept in" in rest and "resume with:" in rest, rest
    (found,) = read_manifests(out, kind="reproduce")
    assert found.manifest.status == "interrupted"
    with pytest.raises(httpx.HTTPError):
        httpx.get(url, timeout=2)


def test_results_of_other_server_settings_are_never_resumed(tmp_path):
    """Deterministic mode and the generation config are not in a record's key: one OUT per setting."""
    out = tmp_path / "out"
    base = dict(
        launcher="llama-cpp",
        arms=["gold-lib"],
        seeds=[42],
        dataset="bundled-test",
        out=out,
        limit=2,
        progress=False,
        draws=100,
    )
    run_pipeline(ReproduceConfig(**base), echo=lambda s: None)  # gold-lib needs no server
    assert len(_lines(out / "library" / "gold-lib" / "seed42.jsonl")) == 2
    with pytest.raises(Exception, match=r"other server settings \(generation_config='auto' there, 'vllm' now"):
        run_pipeline(ReproduceConfig(**base, generation_config="vllm"), echo=lambda s: None)
    run_pipeline(ReproduceConfig(**base), echo=lambda s: None)  # same settings: resumes
    assert len(_lines(out / "library" / "gold-lib" / "seed42.jsonl")) == 2
    assert verify_run(out, tables=False).problems == []


def test_dry_run_prints_per_model_gvisor_driver_contract_and_the_smoke_step(tmp_path):
    r = _script(tmp_path, DRY_RUN=1, ARMS="blind", MODELS="qwen2.5-7b,phi-3.5-mini")
    assert r.returncode == 0, r.stderr
    for key in ("qwen2.5-7b", "phi-3.5-mini"):
        block = r.stdout.split(f"model {key}:", 1)[1].split("\nmodel ", 1)[0]
        assert "  gVisor:  " in block and "platform" in block
        assert "  driver:  >= 580.65.06 for the image's CUDA 13.0" in block
        assert "  contract: vLLM 0.32.0 accepts this command" in block
        assert "  requests: model, messages, temperature, max_tokens only" in block
        assert "  smoke:   first, `harness serve smoke`" in block
    assert "deviation, phi-3.5-mini: served at --max-model-len 8192" in r.stdout
    assert "PROBLEM" not in r.stdout
