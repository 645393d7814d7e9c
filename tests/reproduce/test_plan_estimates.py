"""The dry run's estimates say "unknown" where nothing is known, label every assumption (token means measured on
the 0.5B CPU model are not H100 measurements), and give disk and download totals."""

from __future__ import annotations

import json

from harness.model.cpu_models import CPU_MODEL
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.plan import build_plan, format_plan
from tests.records import record_json as record


def _plan(tmp_path, results_root, **kw):
    cfg = ReproduceConfig(dataset="bundled-test", seeds=[42, 43], out=tmp_path / "out", **kw)
    return build_plan(cfg, results_root=results_root)


def test_an_external_server_has_an_unknown_time_not_zero(tmp_path):
    plan = _plan(
        tmp_path,
        tmp_path / "none",
        arms=["note-only", "program-solve"],
        launcher="external",
        base_url="http://127.0.0.1:9/v1",
        models=["my-model"],
    )
    assert plan.requests_all_models.max > 0
    assert plan.estimate_s is None and plan.models[0].estimate_s is None
    text = format_plan(plan)
    assert "Estimated time, all models: unknown (no throughput assumption for my-model under launcher external)" in text
    assert "0 min" not in text and "Downloads: 0 B - weights: my-model 0 B" in text


def test_measured_token_means_name_the_model_they_were_measured_on(tmp_path):
    root = tmp_path / "stored"
    f = root / "qwen2.5-coder-0.5b-instruct" / "open-book" / "seed42.jsonl"
    f.parent.mkdir(parents=True)
    rec = record(
        model="qwen2.5-coder-0.5b-instruct",
        arm="open-book",
        seed=42,
        calculator_id=2,
        key="k",
        case_id="2-1",
        outcome="answered",
        correct=True,
        scorer="paper",
        request=[{}],
        tokens={"prompt": 600, "completion": 13},
    )
    f.write_text(json.dumps(rec) + "\n")
    plan = _plan(tmp_path, root, arms=["open-book", "blind"], models=["qwen2.5-7b"])
    tok = {a.arm: a.tokens_per_request for a in plan.arms}
    assert tok["open-book"].measured_on == ("qwen2.5-coder-0.5b-instruct",)
    text = format_plan(plan)
    row = next(line for line in text.splitlines() if line.strip().startswith("open-book"))
    assert row.endswith("measured on qwen2.5-coder-0.5b-instruct")
    assert "(assumed to hold for the planned models" in text
    assert "assumption: stated assumptions for the dry-run time estimate, not measured by this kit" in text


def test_the_dry_run_gives_disk_and_download_totals(tmp_path):
    plan = _plan(
        tmp_path,
        tmp_path / "none",
        arms=["open-book", "gold-lib"],
        launcher="llama-cpp",
        models=["qwen2.5-coder-0.5b-instruct"],
    )
    assert plan.downloads.total_bytes == CPU_MODEL["gguf_bytes"]
    disk = plan.disk.results_bytes
    assert disk > 2 * 110 * 2000  # two seeds of 110 cases, two arms, at least the record fields each
    text = format_plan(plan)
    assert "Downloads: 491.4 MB - weights: qwen2.5-coder-0.5b-instruct 491.4 MB" in text
    assert "Disk for results: about " in text and "estimated at 2000 bytes of fields" in text
    vllm = _plan(tmp_path, tmp_path / "none", arms=["open-book"], models=["qwen2.5-7b"])
    assert vllm.downloads.total_bytes is None  # the weights' size is not recorded
    wheels = vllm.downloads.image_bytes  # the kit's image: its wheels, measured
    assert wheels == __import__("harness.model.vllm.locks", fromlist=["x"]).own_image()["build"]["download_bytes"]
    assert (
        f"Downloads: unknown (at least {wheels / 1e9:.1f} GB) - weights: qwen2.5-7b unknown; server image "
        f"{wheels / 1e9:.1f} GB (the wheels make vllm-image downloads)"
    ) in format_plan(vllm)
