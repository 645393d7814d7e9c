"""JSON as the kit writes it: one helper per use, so the bytes that keys, hashes and committed files depend on are
defined once.

* `canonical_json`: hashing (record keys, arm config hashes, response-cache keys): sorted keys, no whitespace,
  UTF-8 kept, non-JSON values as `str`.
* `record_line`: one results-store line: sorted keys, default separators, UTF-8 kept, newline-terminated.
* `json_file_text`: a JSON file (manifests, stats.json, pins, submission logs): indented, newline-terminated,
  sorted keys unless the file keeps its keys in the order written (`sort_keys=False`: the pins file, whose
  committed order is by hand).

Every JSON the kit hashes, compares or writes to a file goes through these (the executor keeps its own policy
hash: it imports nothing from the harness); JSON printed for a reader (`--json` output) need not.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def record_line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def json_file_text(obj: Any, indent: int = 2, *, sort_keys: bool = True) -> str:
    return json.dumps(obj, indent=indent, sort_keys=sort_keys, default=str) + "\n"
