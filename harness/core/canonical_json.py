"""JSON as the kit writes it: one helper per use, so the bytes that keys, hashes and committed files depend on are
defined once.

* `canonical_json`: hashing (record keys, arm config hashes, response-cache keys): sorted keys, no whitespace,
  UTF-8 kept, non-JSON values as `str`.
* `record_line`: one results-store line: sorted keys, default separators, UTF-8 kept, newline-terminated.
* `json_file_text`: a JSON file (manifests, stats.json): sorted keys, indented, newline-terminated.
"""
from __future__ import annotations

import json
from typing import Any


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def record_line(record: dict) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def json_file_text(obj: Any, indent: int = 2) -> str:
    return json.dumps(obj, indent=indent, sort_keys=True, default=str) + "\n"
