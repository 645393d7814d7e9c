"""sha256 of a file on disk (the one file-hash helper: datasets, sums files, run manifests)."""

from __future__ import annotations

import hashlib
import os


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
