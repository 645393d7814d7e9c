"""The reproducibility ledger (s14/s14b) depends on the run settings only: one uninterrupted run and the
same run done in pieces (resumed with the seeds split over two `harness run` blocks, each leaving its own
run manifest) give byte-identical ledger tables.

Real components: the reproduce pipeline running the Gold-Solve library arm on the bundled slice, and the
committed CPU-demo manifests (the real 0.5B model through the real executor) for the model rows."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from harness.analysis.results_analysis import analyse
from harness.analysis.table_format import SECTION
from harness.analysis.tables import build_all
from harness.analysis.tables.ledger import table_s14
from harness.reproduce.config import ReproduceConfig
from harness.reproduce.reproduction import run_pipeline
from harness.run.manifest import read_manifests, write_manifest
from tests.conftest import ROOT

DRAWS = 200
DEMO = ROOT / "results" / "cpu-demo"


def _run(out: Path, seeds: list[int]) -> None:
    run_pipeline(
        ReproduceConfig(
            launcher="llama-cpp",
            arms=["gold-lib"],
            seeds=seeds,
            dataset="bundled-test",
            out=out,
            draws=DRAWS,
            progress=False,
        ),
        echo=lambda _: None,
    )


def _ledger(tables: Path) -> dict[str, bytes]:
    """s14/s14b in every format (s14b only when a run used the executor) and the index that lists them."""
    files = {p.name: p.read_bytes() for p in sorted(tables.glob("s14*")) + [tables / "index.md"]}
    assert {"s14.md", "s14.csv", "s14.tex", "index.md"} <= set(files)
    return files


def test_resumed_run_with_split_seeds_gives_the_single_runs_ledger(tmp_path):
    single, resumed = tmp_path / "single", tmp_path / "resumed"
    _run(single, [42, 43])
    _run(resumed, [43])  # the first block: seed 43 only
    _run(resumed, [42, 43])  # resumed: seed 42 is new, 43 is taken from the store
    one = sorted(single.glob("manifest-2*.json"))
    two = sorted(resumed.glob("manifest-2*.json"))
    assert len(one) == 1 and len(two) == 2
    assert [json.loads(p.read_text())["seeds"] for p in two] == [[43], [42, 43]]
    assert _ledger(single / "tables") == _ledger(resumed / "tables")
    rows = dict(r for r in table_s14(analyse(resumed, draws=DRAWS)).rows if r[0] != SECTION)
    assert rows["Seeds"] == "42, 43"


def _demo_copy(dst: Path) -> Path:
    shutil.copytree(DEMO, dst, ignore=shutil.ignore_patterns("tables", "report", "*.log"))
    return dst


def test_model_manifests_split_by_seed_and_port_give_the_same_ledger(tmp_path):
    """The CPU demo's model run as one manifest with seeds 42 and 43, against the same run as two manifests
    (seed 43 first, the resumed block's server on another port): same s14/s14b bytes."""
    whole, split = _demo_copy(tmp_path / "whole"), _demo_copy(tmp_path / "split")
    model_runs = [f for f in read_manifests(DEMO, kind="run") if f.manifest.uses_model]
    assert model_runs
    for f in model_runs:
        man = f.manifest
        write_manifest(whole, replace(man, seeds=(42, 43)))
        (split / f.path.name).unlink()
        cmd = list(man.server.command)
        cmd[cmd.index("--port") + 1] = "18123"
        later = replace(man, server=replace(man.server, command=tuple(cmd), base_url="http://127.0.0.1:18123/v1"))
        write_manifest(split, replace(man, seeds=(43,), run_id="0-first"))
        write_manifest(split, replace(later, seeds=(42,), run_id="1-second"))
    build_all(whole, whole / "tables", draws=DRAWS)
    build_all(split, split / "tables", draws=DRAWS)
    ledger = _ledger(whole / "tables")
    assert "s14b.md" in ledger and ledger == _ledger(split / "tables")
    rows = dict(r for r in table_s14(analyse(split, draws=DRAWS)).rows if r[0] != SECTION)
    # seeds are those with stored records (the demo stored seed 42), not what a manifest asked for (43 too)
    assert rows["Seeds"] == "42" and "--port" not in rows["Server flags"]
    assert "--ctx" in rows["Server flags"]
