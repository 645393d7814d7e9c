"""bench/fullsize.py: the SYNTHETIC full-size copy of a result set is one the kit reads (every record through the
store's Record check), marked synthetic, its provenance in `detail`. Source: a real Gold-Solve run on the bundled
rows (no model), as a rehearsal's results beside its case set."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from bench.fullsize import synthesize
from harness.cli import main as cli
from harness.data.dataset import load_dataset
from harness.run.store import iter_result_files, read_result_file


def test_a_synthetic_fullsize_set_reads_through_the_store(tmp_path):
    source = tmp_path / "rehearsal"
    res = CliRunner().invoke(
        cli,
        [
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            "bundled-test",
            "--seeds",
            "42",
            "--limit",
            "12",
            "--out",
            str(source / "results"),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    shutil.copy(load_dataset("bundled-test").path, source / "rehearsal-cases.csv")
    info = synthesize(source, tmp_path / "fullsize", 300, [42, 43])
    files = list(iter_result_files(tmp_path / "fullsize" / "results"))
    records = [r for f in files for r in read_result_file(f)]  # each line checked as a Record
    assert info["records"] == len(records) > 0 and {r.seed for r in records} == {42, 43}
    assert all(r.synthetic and r.detail and r.detail["synthetic_fullsize"]["source_key"] for r in records)
