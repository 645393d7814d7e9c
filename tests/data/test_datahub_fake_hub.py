"""`harness data pin` / `fetch` logic against a fake Hugging Face hub served on 127.0.0.1 (no network).

The fake answers the real hub routes huggingface_hub uses (commit list with Link pagination, repo tree,
HEAD/GET resolve); the file it serves is a real Parquet conversion of the bundled one-shot split.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli.data import data
from harness.data import datahub
from harness.data.dataset import DatasetError, load_dataset
from harness.data.locations import BUNDLED_DIR
from harness.data.pins import verified_path

PAPER_REV = "5488179" + "a1" * 16 + "0"  # 40 hex, starts with the paper's prefix
OTHER_REVS = ["0eb5960" + "b2" * 16 + "1", "77c0d1e" + "c3" * 16 + "2", "5488180" + "d4" * 16 + "3"]
# a shard name with the hash suffix older `datasets` versions add: differs from the kit's default guess
TEST_FILE = "data/test-00000-of-00001-3f1a9c2b7d4e6f80.parquet"


@pytest.fixture(scope="module")
def split_bytes(tmp_path_factory) -> bytes:
    """Real rows (the 55 one-shot cases) as the hub's Parquet test shard, int64 ids like the hub's."""
    df = pd.read_csv(BUNDLED_DIR / "one_shot_verified.csv", dtype=str, keep_default_na=False)
    df["Row Number"] = df["Row Number"].astype("int64")
    df["Calculator ID"] = df["Calculator ID"].astype("int64")
    p = tmp_path_factory.mktemp("split") / "test.parquet"
    df.to_parquet(p, index=False)
    return p.read_bytes()


@pytest.fixture
def hub(fake_local_hub, split_bytes):
    for rev in OTHER_REVS[:2]:
        fake_local_hub.add_commit(rev, {"README.md": b"old", TEST_FILE: b"older bytes"})
    fake_local_hub.add_commit(
        PAPER_REV, {"README.md": b"card", TEST_FILE: split_bytes, "data/train-00000-of-00001.parquet": b"train"}
    )
    fake_local_hub.add_commit(OTHER_REVS[2], {"README.md": b"new", TEST_FILE: b"newer bytes"})
    return fake_local_hub


def test_pin_against_fake_local_hub_server_records_full_revision_and_sha(hub, pins_copy, tmp_path, split_bytes):
    out = tmp_path / "cache"
    result = CliRunner().invoke(
        data,
        ["pin", "--prefix", "5488179", "--endpoint", hub.endpoint, "--pins-file", str(pins_copy), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    e = json.loads(pins_copy.read_text())["datasets"]["verified"]
    assert e["revision"] == PAPER_REV
    assert e["filename"] == TEST_FILE != datahub.DEFAULT_VERIFIED_FILENAME  # found in the repo tree
    assert e["sha256"] == hashlib.sha256(split_bytes).hexdigest()
    assert e["rows"] == 55 and e["revision_prefix"] == "5488179" and e["status"] == "pinned"
    # commits were listed across pages and the file was fetched at the full revision
    assert sum(r.startswith("GET /api/datasets/") and "/commits/" in r for r in hub.requests) == 2
    assert f"GET /datasets/{hub.repo_id}/resolve/{PAPER_REV}/{TEST_FILE}" in hub.requests
    # the pinned copy loads as the 'verified' dataset with that pins file
    placed = verified_path(pins_file=pins_copy, data_dir=out)
    assert placed.read_bytes() == split_bytes
    ds = load_dataset(placed)
    assert len(ds) == 55 and {c.output_type for c in ds} == {"decimal", "integer", "date", "weeks_days"}


def test_pin_against_fake_local_hub_server_ambiguous_prefix_is_an_error(hub, pins_copy, tmp_path):
    before = pins_copy.read_text()
    with pytest.raises(datahub.DatahubError, match=r"ambiguous.*5488179a1.*5488180d4"):
        datahub.pin("54881", endpoint=hub.endpoint, pins_file=pins_copy, data_dir=tmp_path)
    assert pins_copy.read_text() == before


def test_pin_against_fake_local_hub_server_unknown_prefix_is_an_error(hub, pins_copy, tmp_path):
    result = CliRunner().invoke(
        data,
        [
            "pin",
            "--prefix",
            "deadbee",
            "--endpoint",
            hub.endpoint,
            "--pins-file",
            str(pins_copy),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code != 0
    assert "no commit matches prefix 'deadbee' among the 4 commits" in result.output


def test_pin_against_fake_local_hub_server_missing_file_names_it(hub, pins_copy, tmp_path):
    with pytest.raises(datahub.DatahubError, match=r"data/test-missing\.parquet.*" + PAPER_REV):
        datahub.pin(
            "5488179",
            endpoint=hub.endpoint,
            filename="data/test-missing.parquet",
            pins_file=pins_copy,
            data_dir=tmp_path,
        )


def _pin_entry(pins_file: Path, sha256: str) -> None:
    pins = json.loads(pins_file.read_text())
    pins["datasets"]["verified"].update(revision=PAPER_REV, filename=TEST_FILE, sha256=sha256, status="pinned")
    pins_file.write_text(json.dumps(pins))


def test_fetch_against_fake_local_hub_server_verifies_sha(hub, pins_copy, tmp_path, split_bytes, monkeypatch):
    _pin_entry(pins_copy, hashlib.sha256(split_bytes).hexdigest())
    out = tmp_path / "data"
    result = CliRunner().invoke(
        data,
        [
            "fetch",
            "--revision",
            "5488179",
            "--out",
            str(out),
            "--endpoint",
            hub.endpoint,
            "--pins-file",
            str(pins_copy),
        ],
    )
    assert result.exit_code == 0, result.output
    dest = out / "verified" / PAPER_REV / "test-00000-of-00001-3f1a9c2b7d4e6f80.parquet"
    assert dest.read_bytes() == split_bytes
    # the pinned name now resolves to the fetched file
    monkeypatch.setenv("MATHSOLVER_PINS_FILE", str(pins_copy))
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(out))
    ds = load_dataset("verified")
    assert ds.name == "verified" and ds.path == dest and len(ds) == 55
    # a second fetch finds the verified file in place and does not download again
    downloads = [r for r in hub.requests if r.startswith("GET /datasets/")]
    assert len(downloads) == 1
    assert datahub.fetch(out=out, endpoint=hub.endpoint, pins_file=pins_copy) == dest
    assert [r for r in hub.requests if r.startswith("GET /datasets/")] == downloads


def test_fetch_against_fake_local_hub_server_refuses_sha_mismatch(hub, pins_copy, tmp_path):
    _pin_entry(pins_copy, "0" * 64)
    out = tmp_path / "data"
    result = CliRunner().invoke(
        data, ["fetch", "--out", str(out), "--endpoint", hub.endpoint, "--pins-file", str(pins_copy)]
    )
    assert result.exit_code != 0
    assert "does not match the pinned " + "0" * 64 in result.output
    assert list(out.iterdir()) == []  # nothing kept: no file, no temp dir


def test_fetch_refuses_when_unpinned_without_network(pins_copy, tmp_path):
    # the shipped pins: prefix only, no revision/sha256
    result = CliRunner().invoke(data, ["fetch", "--out", str(tmp_path), "--pins-file", str(pins_copy)])
    assert result.exit_code != 0
    assert "refusing to fetch" in result.output and "5488179" in result.output
    assert "harness data pin" in result.output


def test_fetch_refuses_other_revision(pins_copy, tmp_path):
    _pin_entry(pins_copy, "1" * 64)
    with pytest.raises(datahub.DatahubError, match=r"refusing to fetch revision 0eb5960"):
        datahub.fetch(revision="0eb5960", out=tmp_path, pins_file=pins_copy)


def test_verified_name_when_pinned_but_not_fetched_says_run_fetch(pins_copy, tmp_path, monkeypatch):
    _pin_entry(pins_copy, "1" * 64)
    monkeypatch.setenv("MATHSOLVER_PINS_FILE", str(pins_copy))
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"run `harness data fetch`"):
        load_dataset("verified")
