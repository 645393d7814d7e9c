"""Batched fsync in the results store: a SIGKILLed writer loses nothing it appended, a torn last line is
still cut on reopen, resume skips exactly the written keys, and sync/close really fsync."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import pytest

from harness.run.record import Record
from harness.run.store import ResultStore, TornLineWarning


def _rec(i: int) -> Record:
    return Record.from_dict(
        {
            "key": f"k{i}",
            "model": "m",
            "arm": "a",
            "seed": 1,
            "case_id": f"2-{i}",
            "calculator_id": 2,
            "outcome": "answered",
            "correct": True,
            "scorer": "paper",
            "reason": "x" * (i % 50),
            "record_schema": 2,
        }
    )


def test_sigkilled_writer_loses_no_appended_record(tmp_path):
    """A child appends 500 records with fsync batched to every 10,000 (never reached), then SIGKILLs itself
    before close: all 500 are on disk (each append is one write to an O_APPEND file)."""
    path = tmp_path / "seed1.jsonl"
    code = textwrap.dedent(f"""
        import os, signal
        from harness.run.store import ResultStore
        from tests.run.test_store_batched_sync import _rec
        s = ResultStore({str(path)!r}, sync_every=10_000, sync_interval_s=3600)
        for i in range(500):
            s.append(_rec(i))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=os.getcwd())
    assert proc.returncode == -signal.SIGKILL
    store = ResultStore(path)
    assert len(store.records) == 500 and store.done_keys == {f"k{i}" for i in range(500)}
    assert not store.dropped_torn_line


def test_torn_tail_after_batched_appends_is_cut_and_resume_continues(tmp_path):
    path = tmp_path / "seed1.jsonl"
    with ResultStore(path, sync_every=64, sync_interval_s=1.0) as s:
        for i in range(100):
            s.append(_rec(i))
    with open(path, "ab") as fh:
        fh.write(b'{"key": "k100", "model": "m", "ar')  # a write cut by a crash
    with pytest.warns(TornLineWarning):
        s2 = ResultStore(path, sync_every=64)
    assert len(s2.records) == 100
    assert not s2.append(_rec(5))  # done keys are skipped, never duplicated
    assert s2.append(_rec(100))
    s2.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s3 = ResultStore(path)
    assert [r.key for r in s3.records] == [f"k{i}" for i in range(101)]


def test_sync_policy_counts_and_close_syncs(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    s = ResultStore(tmp_path / "f.jsonl", sync_every=4, sync_interval_s=None)
    for i in range(10):
        s.append(_rec(i))
    assert len(synced) == 2  # after records 4 and 8
    s.close()
    assert len(synced) == 3  # the last 2 on close
    s.close()
    assert len(synced) == 3  # nothing pending: no fsync
    default = ResultStore(tmp_path / "g.jsonl")
    default.append(_rec(1))
    assert len(synced) == 4  # the default still syncs every record
    default.close()
    with pytest.raises(ValueError):
        ResultStore(tmp_path / "h.jsonl", sync_every=0)
