"""The analysis reads each results file once per content: the fields statistics need are cached under the
file's sha256, so a later stage over the same bytes skips the JSON parsing, and any change to a file (an
appended record, an edited score, a torn last line) is read afresh. Records: the committed CPU-demo set
(the real 0.5B model through the real executor), copied to tmp_path so it can be edited."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest

from harness.analysis import results_analysis as step
from harness.analysis.results_analysis import analyse
from harness.analysis.stats import arrays
from harness.analysis.stats.arrays import CACHE_ENV, cache_dir, load_arrays
from harness.core.parallel import WORKERS_ENV
from harness.run.store import TornLineWarning
from tests.conftest import ROOT
from tests.fixtures_analysis import count_parses

DEMO = ROOT / "results" / "cpu-demo"


@pytest.fixture
def demo(tmp_path, monkeypatch):
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("tables", "report", "*.log"))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(WORKERS_ENV, "1")  # parse in this process, so the counting reader below sees it
    return root


def _parses(monkeypatch, module=arrays) -> list:
    """Every call of the store's per-file reader (what parses JSON) made from `module`."""
    return count_parses(monkeypatch, module)


def _same(a, b) -> bool:
    return (
        (a.models, a.arms, a.seeds, a.case_ids) == (b.models, b.arms, b.seeds, b.case_ids)
        and np.array_equal(a.correct, b.correct, equal_nan=True)
        and np.array_equal(a.outcome, b.outcome)
    )


def test_second_read_comes_from_the_cache_and_equals_the_first(demo, monkeypatch, tmp_path):
    calls = _parses(monkeypatch)
    first = load_arrays(demo)
    files = sorted(demo.glob("*/*/seed*.jsonl"))
    assert len(calls) == len(files) and len(list((tmp_path / "cache").rglob("*.json"))) == len(files)
    calls.clear()
    second = load_arrays(demo)
    assert calls == [] and _same(first, second)
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None
    assert _same(first, load_arrays(demo)) and len(calls) == len(files)


def test_a_changed_file_is_read_again(demo, monkeypatch):
    calls = _parses(monkeypatch)
    before = load_arrays(demo)
    path = demo / "qwen2.5-coder-1.5b-instruct" / "program-solve" / "seed42.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[0])
    flipped = {**rec, "correct": not rec["correct"], "outcome": "answered"}
    path.write_text(json.dumps(flipped) + "\n" + "".join(lines[1:]), encoding="utf-8")
    calls.clear()
    after = load_arrays(demo)
    assert calls == [path]  # only the edited file is parsed again
    m, a = after.m(rec["model"]), after.a("program-solve")
    i = after.case_ids.index(rec["case_id"])
    assert after.correct[m, a, 0, i] == (0.0 if rec["correct"] else 1.0)
    assert before.correct[m, a, 0, i] == (1.0 if rec["correct"] else 0.0)


def test_a_torn_last_line_warns_from_the_cache_too(demo, monkeypatch):
    path = demo / "qwen2.5-coder-1.5b-instruct" / "open-book" / "seed42.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"key": "torn", "mod')
    calls = _parses(monkeypatch)
    for _ in range(2):  # parsed, then cached: the warning both times
        with pytest.warns(TornLineWarning, match="incomplete last line"):
            load_arrays(demo)
    assert calls.count(path) == 1


def test_tables_from_a_cached_read_are_byte_identical(demo, monkeypatch, tmp_path):
    from harness.analysis.tables import build_all

    build_all(demo, tmp_path / "first", draws=200)
    calls = _parses(monkeypatch)
    build_all(demo, tmp_path / "second", draws=200)
    assert calls == []
    names = sorted(p.name for p in (tmp_path / "first").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "second").iterdir())
    for name in names:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name


def test_records_reads_only_the_arms_files(demo, monkeypatch):
    an = analyse(demo, draws=200)
    seen = _parses(monkeypatch, step)
    recs = an.records("program-solve")
    assert recs and {r.arm for r in recs} == {"program-solve"}
    assert seen and {p.parent.name for p in seen} == {"program-solve"}
    assert an.records("program-solve") == recs and len(seen) == len({*seen})  # read once per analysis
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert an.records("no-such-arm") == []


def test_worker_processes_give_the_same_arrays(demo, monkeypatch, tmp_path):
    """Parsing in two worker processes (cache off, then filling a fresh cache) gives the arrays one process gives."""
    one = load_arrays(demo)
    monkeypatch.setenv(WORKERS_ENV, "2")
    monkeypatch.setenv(CACHE_ENV, "off")
    assert _same(one, load_arrays(demo))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache2"))
    assert _same(one, load_arrays(demo)) and _same(one, load_arrays(demo))
    assert len(list((tmp_path / "cache2").rglob("*.json"))) == len(list(demo.glob("*/*/seed*.jsonl")))
