"""Results store: durable appends, torn-line recovery, resume without duplicates, export."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from harness.run.record import RECORD_FIELDS, REQUIRED_FIELDS, Record
from harness.run.store import (
    ResultStore,
    StoreError,
    TornLineWarning,
    export_results,
    iter_located_records,
    read_result_file,
    record_key,
    results_path,
    write_result_file,
)
from tests.records import record

WRITER = r"""
import sys, time
from harness.run.record import Record
from harness.run.store import ResultStore, record_key
path, n, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
store = ResultStore(path)
for i in range(n):
    key = record_key(model="m", arm="a", seed=42, case_id=f"c{i}")
    if key in store.done_keys:
        continue
    store.append(Record.from_dict({"key": key, "model": "m", "arm": "a", "seed": 42, "case_id": f"c{i}",
                  "calculator_id": i % 7, "outcome": "answered", "correct": i % 2 == 0, "scorer": "paper",
                  "replies": ["x" * 2000], "record_schema": 2}))
    time.sleep(delay)
"""


def make_record(i: int, **extra) -> dict:
    """Record i's JSON form (what a line holds)."""
    return record(**{"key": record_key(case_id=f"c{i}", seed=42), "case_id": f"c{i}", **extra}).to_dict()


def make(i: int, **extra) -> Record:
    """Record i, typed (what the store's writer takes)."""
    return record(**{"key": record_key(case_id=f"c{i}", seed=42), "case_id": f"c{i}", **extra})


def test_append_is_durable_and_resume_skips_done_keys(tmp_path):
    path = results_path(tmp_path, "Qwen/Qwen2.5-7B-Instruct", "program-solve", 42)
    assert path == tmp_path / "Qwen_Qwen2.5-7B-Instruct" / "program-solve" / "seed42.jsonl"
    store = ResultStore(path)
    assert store.append(make(1)) is True
    assert store.append(make(1)) is False  # same key: nothing written
    again = ResultStore(path)
    assert make_record(1)["key"] in again.done_keys
    assert again.append(make(1)) is False
    assert len(path.read_text().splitlines()) == 1


def test_sigkill_mid_run_then_resume_writes_every_record_exactly_once(tmp_path):
    path = tmp_path / "seed42.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "400", "0.005"], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= 40:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written_before = path.read_bytes().count(b"\n")
    assert 40 <= written_before < 400, "the writer must be killed mid-run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)  # a kill may or may not land mid-line
        subprocess.run([sys.executable, "-c", WRITER, str(path), "400", "0"], env=env, check=True)
    case_ids = [json.loads(line)["case_id"] for line in path.read_text().splitlines()]
    assert sorted(case_ids) == sorted(f"c{i}" for i in range(400))
    assert len(case_ids) == len(set(case_ids)) == 400


def test_torn_last_line_is_dropped_with_warning_and_complete_records_kept(tmp_path):
    path = tmp_path / "seed42.jsonl"
    store = ResultStore(path)
    for i in range(3):
        store.append(make(i))
    good = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(json.dumps(make_record(3)).encode()[:37])  # what a crash mid-write leaves
    with pytest.warns(TornLineWarning, match="incomplete last line"):
        resumed = ResultStore(path)
    assert resumed.dropped_torn_line
    assert path.read_bytes() == good
    assert len(resumed.records) == 3
    assert resumed.append(make(3)) is True
    assert [json.loads(x)["case_id"] for x in path.read_text().splitlines()] == ["c0", "c1", "c2", "c3"]


def test_corrupt_line_in_the_middle_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "seed42.jsonl"
    lines = [json.dumps(make_record(0)), "{not json", json.dumps(make_record(2))]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(StoreError, match=r"seed42.jsonl:2: corrupt record"):
        ResultStore(path)


def test_a_record_the_reader_would_refuse_is_never_written(tmp_path):
    """Both writers check the line they are about to write with the store's reader (Record.from_dict): a Record
    built in code with a field of the wrong type is refused and nothing is written. The whole-file writer (a merge's
    output) then leaves neither the file nor its temporary file."""
    store = ResultStore(tmp_path / "seed1.jsonl")
    with pytest.raises(StoreError, match=r"wrong type: seed \(str, not int\)"):
        store.append(dataclasses.replace(make(0), seed="42"))
    with pytest.raises(StoreError, match=r"wrong type: correct \(NoneType, not bool\)"):
        store.append(dataclasses.replace(make(0), correct=None))
    assert not (tmp_path / "seed1.jsonl").exists() or (tmp_path / "seed1.jsonl").read_text() == ""

    whole = tmp_path / "merged" / "seed42.jsonl"
    with pytest.raises(StoreError, match=r"refusing to write to .*seed42.jsonl: .*wrong type: seed"):
        write_result_file(whole, [make(0), dataclasses.replace(make(1), seed="42")])
    assert list(whole.parent.iterdir()) == []
    assert write_result_file(whole, [make(0), make(1)]) == 2
    assert [r.key for r in read_result_file(whole)] == [make(0).key, make(1).key]
    assert list(whole.parent.iterdir()) == [whole]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"record_schema": 1}, "record schema 1, this kit reads schema 2"),
        ({"note": "x"}, "unknown record field"),
        ({"calculator_id": "2"}, r"record field\(s\) of the wrong type: calculator_id \(str, not int\)"),
    ],
)
def test_every_line_read_is_a_record_of_this_schema(tmp_path, change, message):
    """The store checks every line through Record.from_dict: a bad line is one error naming file and line,
    whoever reads it (resume, verify, analysis)."""
    path = results_path(tmp_path, "m", "a", 42)
    path.parent.mkdir(parents=True)
    lines = [make_record(0), make_record(1) | change, make_record(2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    for read in (ResultStore, read_result_file, lambda p: list(iter_located_records(tmp_path))):
        with pytest.raises(StoreError, match=rf"seed42.jsonl:2: {message}") as err:
            read(path)
        assert "\n" not in str(err.value)


def test_a_line_without_optional_fields_reads_as_a_whole_record(tmp_path):
    path = tmp_path / "seed42.jsonl"
    minimal = {k: v for k, v in make_record(0).items() if k in REQUIRED_FIELDS or k == "record_schema"}
    path.write_text(json.dumps(minimal) + "\n")
    (rec,) = read_result_file(path)
    assert tuple(rec.to_dict()) == RECORD_FIELDS and rec.request == [] and rec.synthetic is False


def test_record_key_depends_on_every_part():
    base = dict(model="m", arm="a", arm_config_hash="h", seed=42, dataset_sha256="d", case_id="2-1")
    keys = {record_key(**base)}
    for field in base:
        keys.add(record_key(**{**base, field: "other"}))
    assert len(keys) == len(base) + 1
    assert record_key(**base) == record_key(**dict(reversed(list(base.items()))))


def test_export_parquet_and_csv_round_trip(tmp_path):
    root = tmp_path / "results"
    for arm in ("open-book", "program-solve"):
        store = ResultStore(results_path(root, "m", arm, 42))
        for i in range(5):
            store.append(
                make(i, arm=arm, key=record_key(arm=arm, i=i), answer=[4, 2], tokens={"prompt": 10, "completion": 3})
            )
    pq = export_results(root, tmp_path / "all.parquet")
    csv = export_results(root, tmp_path / "all.csv")
    a, b = pd.read_parquet(pq), pd.read_csv(csv)
    assert len(a) == len(b) == 10
    assert set(a["arm"]) == {"open-book", "program-solve"}
    assert a["answer"].iloc[0] == "[4,2]" and int(a["prompt_tokens"].iloc[0]) == 10
    with pytest.raises(StoreError, match="parquet or .csv"):
        export_results(root, tmp_path / "all.xlsx")


def test_results_location_is_results_path_read_back(tmp_path):
    """The layout is built in one place (results_path) and read back in one place (results_location)."""
    from harness.run.store import ResultsLocation, results_location, results_path

    path = results_path(tmp_path, "Qwen/Qwen2.5-7B-Instruct", "open-book", 46)
    assert results_location(path) == ResultsLocation(tmp_path, "Qwen_Qwen2.5-7B-Instruct", "open-book", 46)
    for bad in ("seed.jsonl", "seedx.jsonl", "seed4.json", "seed-1.jsonl"):
        with pytest.raises(StoreError, match="not a results file name"):
            results_location(tmp_path / "m" / "a" / bad)
