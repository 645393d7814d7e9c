"""Fixtures for the dataset/datahub tests: real rows to build bad CSVs from, temp copies of the bundled
files, and `fake_local_hub`, a tiny HTTP server on 127.0.0.1 that answers the few Hugging Face hub routes
huggingface_hub calls for list_repo_commits, list_repo_files and hf_hub_download."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from harness.data.dataset import COLUMNS
from harness.data.locations import BUNDLED_DIR
from harness.data.pins import DEFAULT_PINS_FILE

REPO_ID = "nsk7153/MedCalc-Bench-Verified"


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a benchmark CSV as {column: text}, exactly as in the file."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> Path:
    """Write rows as a benchmark CSV (columns default to the 14 benchmark columns)."""
    cols = list(columns or COLUMNS)
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


# The case a real-model smoke test sends its three requests on: the bundled slice's shortest note the library covers
# (QTc Bazett, which extract-lib's prompt needs), so the replies are short at the arms' own token caps (the slice's
# first covered case, a 3,796-character note, drew a 1,350-token program: 4 minutes on the vLLM CPU twin).
SMOKE_CASE = "11-184"


def bundled_cases_csv(path: Path, case_ids: list[str]) -> Path:
    """The bundled slice's rows of `case_ids` (e.g. "11-184": Calculator ID 11, Row Number 184), unchanged, as a
    benchmark CSV a command can take as its --dataset."""
    wanted = {tuple(c.split("-", 1)) for c in case_ids}
    rows = [r for r in read_rows(BUNDLED_DIR / "test_slice.csv") if (r["Calculator ID"], r["Row Number"]) in wanted]
    assert len(rows) == len(wanted), f"not all of {case_ids} are in the bundled slice"
    return write_rows(path, rows)


@pytest.fixture(scope="session")
def one_shot_rows() -> list[dict[str, str]]:
    """The 55 real rows of the bundled Verified one-shot split."""
    return read_rows(BUNDLED_DIR / "one_shot_verified.csv")


@pytest.fixture
def bundled_copy(tmp_path: Path) -> Path:
    """A temp copy of harness/data (tests that alter bytes alter this copy, never the real files)."""
    d = tmp_path / "bundled"
    shutil.copytree(BUNDLED_DIR, d)
    return d


@pytest.fixture
def pins_copy(tmp_path: Path) -> Path:
    """A temp copy of checksums/datasets.json that a test may rewrite."""
    p = tmp_path / "pins" / "datasets.json"
    p.parent.mkdir()
    shutil.copyfile(DEFAULT_PINS_FILE, p)
    return p


# ---------------------------------------------------------------- fake hub


@dataclass
class FakeHub:
    """State of the fake hub: commits (newest first) and files per full revision."""

    endpoint: str = ""
    repo_id: str = REPO_ID
    commits: list[str] = field(default_factory=list)
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # revision -> path -> bytes
    requests: list[str] = field(default_factory=list)
    page_size: int = 2  # small, so the client has to follow Link pagination

    def add_commit(self, revision: str, files: dict[str, bytes]) -> None:
        self.commits.insert(0, revision)
        self.files[revision] = files


def _make_handler(hub: FakeHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, head: bool = False):
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, obj, headers: dict[str, str] | None = None, head: bool = False):
            h = {"Content-Type": "application/json", **(headers or {})}
            self._send(status, json.dumps(obj).encode(), h, head)

        def _not_found(self, what: str, head: bool, code: str = "EntryNotFound"):
            self._json(404, {"error": what}, {"X-Error-Code": code}, head)

        def _route(self, head: bool) -> None:
            url = urlparse(self.path)
            path = unquote(url.path)
            hub.requests.append(f"{self.command} {path}")
            api = f"/api/datasets/{hub.repo_id}/"
            resolve = f"/datasets/{hub.repo_id}/resolve/"
            if path.startswith(api + "commits/"):
                page = int(parse_qs(url.query).get("p", ["0"])[0])
                chunk = hub.commits[page * hub.page_size : (page + 1) * hub.page_size]
                items = [
                    {
                        "id": c,
                        "authors": [{"user": "nsk7153"}],
                        "date": "2025-06-01T00:00:00.000Z",
                        "title": f"commit {c[:7]}",
                        "message": "",
                    }
                    for c in chunk
                ]
                headers = {}
                if (page + 1) * hub.page_size < len(hub.commits):
                    headers["Link"] = f'<{hub.endpoint}{url.path}?p={page + 1}>; rel="next"'
                return self._json(200, items, headers, head)
            if path.startswith(api + "tree/"):
                rev = path[len(api + "tree/") :].split("/")[0]
                if rev not in hub.files:
                    return self._not_found("Revision not found", head, "RevisionNotFound")
                items = [
                    {"type": "file", "path": p, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                    for p, b in sorted(hub.files[rev].items())
                ]
                return self._json(200, items, None, head)
            if path.startswith(resolve):
                rev, _, filename = path[len(resolve) :].partition("/")
                if rev not in hub.files:
                    return self._not_found("Revision not found", head, "RevisionNotFound")
                body = hub.files[rev].get(filename)
                if body is None:
                    return self._json(
                        404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": rev}, head
                    )
                etag = '"' + hashlib.sha256(body).hexdigest() + '"'
                return self._send(
                    200, body, {"X-Repo-Commit": rev, "ETag": etag, "Content-Type": "application/octet-stream"}, head
                )
            return self._not_found(f"no route {path}", head, "RepoNotFound")

        def do_GET(self) -> None:
            self._route(head=False)

        def do_HEAD(self) -> None:
            self._route(head=True)

    return Handler


@pytest.fixture
def fake_local_hub(monkeypatch, tmp_path):
    """A fake Hugging Face hub on 127.0.0.1 (no network); yields FakeHub, shut down afterwards."""
    hub = FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(hub))
    hub.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="fake-hub", daemon=True)
    thread.start()
    # keep huggingface_hub away from the real hub, the user's token and cache
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
