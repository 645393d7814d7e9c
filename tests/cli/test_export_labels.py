"""`harness export` keeps what the records say: the synthetic label, model revision, server profile, formula
version, reference, detail, reason and truncation, not only a fixed list of columns."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from harness.cli import main


def test_export_keeps_the_synthetic_label_and_every_recorded_field(tmp_path):
    root = tmp_path / "r"
    res = CliRunner().invoke(
        main,
        ["run", "--arm", "gold-lib", "--dataset", "bundled-test", "--limit", "3", "--out", str(root), "--no-progress"],
    )
    assert res.exit_code == 0, res.output
    path = root / "library" / "gold-lib" / "seed42.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    synthetic = root / "rehearsal-alpha" / "program-solve" / "seed42.jsonl"
    synthetic.parent.mkdir(parents=True)
    fake = dict(
        rows[0],
        model="rehearsal-alpha",
        arm="program-solve",
        synthetic=True,
        model_revision="rev-1",
        server_profile="vllm",
        formula_version={"2": "bmi"},
        reference="benchmark",
        truncated=[True],
    )
    synthetic.write_text(json.dumps(fake) + "\n")
    for suffix in ("csv", "parquet"):
        out = tmp_path / f"all.{suffix}"
        done = CliRunner().invoke(main, ["export", "--results", str(root), "--out", str(out)])
        assert done.exit_code == 0, done.output
        frame = pd.read_csv(out) if suffix == "csv" else pd.read_parquet(out)
        for column in (
            "synthetic",
            "model_revision",
            "server_profile",
            "formula_version",
            "reference",
            "detail",
            "reason",
            "truncated",
        ):
            assert column in frame.columns, (suffix, column)
        row = frame[frame["model"] == "rehearsal-alpha"].iloc[0]
        assert bool(row["synthetic"]) and row["server_profile"] == "vllm" and row["truncated"] == "[true]"
        assert row["formula_version"] == '{"2":"bmi"}'
        assert len(frame) == 4 and list(frame.columns[:3]) == ["key", "model", "arm"]
