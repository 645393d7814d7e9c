"""A GGUF file's header and key-value metadata, read from the file itself (standard library only).

The CPU demo's models arrive as byte ranges split across PyPI wheels; a sha256 proves the bytes are the pinned
ones, but not what they are. This reader says what they are from the file's own metadata (general.name,
general.architecture, general.size_label, general.file_type, the block count, the context length, the chat
template), so the identity a run records comes from content, not from a package or file name.

Layout (GGUF versions 2 and 3, little-endian; the spec in ggml's docs/gguf.md): magic b"GGUF", uint32 version,
uint64 tensor count, uint64 key-value count, then each pair as (string key, uint32 value type, value); a string
is a uint64 byte length and UTF-8 bytes; an array is (uint32 element type, uint64 count, elements). Arrays are
read past, and only their element type and length are kept (the tokenizer's vocabulary would be 150k strings).

    harness cpu-model inspect FILE.gguf      # prints the summary as JSON
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"
# value type -> struct format of one scalar (8 = string, 9 = array are read by hand)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# general.file_type (llama_ftype in llama.h) for the types a CPU demo GGUF is likely to carry
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    32: "BF16",
}
# the keys a summary reports (architecture-specific ones are looked up under general.architecture)
SUMMARY_KEYS = (
    "general.name",
    "general.basename",
    "general.finetune",
    "general.size_label",
    "general.architecture",
    "general.file_type",
    "general.quantization_version",
)


# a metadata value as read: a scalar, a string, or an array's {"array_of": element type, "length": count}
GGUFValue = int | float | bool | str | dict[str, int]


class GGUFError(ValueError):
    """The file is not a readable GGUF (the message names the file and what was wrong)."""


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path):
        self.fh, self.path = fh, path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise GGUFError(f"{self.path}: truncated GGUF header (wanted {n} bytes at offset {self.fh.tell()})")
        return data

    def scalar(self, fmt: str) -> int | float | bool:
        value: int | float | bool = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def uint(self, fmt: str) -> int:
        """An unsigned integer ("<I" uint32, "<Q" uint64): a length, a count, a type or a version."""
        value: int = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def string(self) -> str:
        n = self.uint("<Q")
        if n > 1 << 30:
            raise GGUFError(f"{self.path}: implausible string length {n} in the GGUF header")
        return self.take(n).decode("utf-8", errors="replace")

    def value(self, vtype: int) -> GGUFValue:
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            etype, count = self.uint("<I"), self.uint("<Q")
            if etype in _SCALARS:
                self.fh.seek(struct.calcsize(_SCALARS[etype]) * count, 1)
            elif etype == _STRING:
                for _ in range(count):
                    self.fh.seek(self.uint("<Q"), 1)
            else:
                raise GGUFError(f"{self.path}: unsupported GGUF array element type {etype}")
            return {"array_of": etype, "length": count}
        raise GGUFError(f"{self.path}: unknown GGUF value type {vtype}")


def read_metadata(path: str | Path) -> dict:
    """{"version", "tensor_count", "metadata": {key: value}} of a GGUF file; arrays as {"array_of", "length"}."""
    path = Path(path)
    with open(path, "rb") as fh:
        r = _Reader(fh, path)
        magic = fh.read(4)
        if magic != MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (first bytes {magic!r}, expected {MAGIC!r})")
        version = r.uint("<I")
        if version not in (2, 3):
            raise GGUFError(f"{path}: GGUF version {version} is not supported (2 and 3 are)")
        tensors, kv_count = r.uint("<Q"), r.uint("<Q")
        meta: dict[str, GGUFValue] = {}
        for _ in range(kv_count):
            key = r.string()
            meta[key] = r.value(r.uint("<I"))
    return {"version": version, "tensor_count": tensors, "metadata": meta}


def summary(path: str | Path) -> dict:
    """What the file says it is: the general.* identity keys, the file type by name, the architecture's block
    count and context length, and the chat template's sha256-free length (its presence matters: the server
    applies it)."""
    info = read_metadata(path)
    meta = info["metadata"]
    out = {k.split(".", 1)[1]: meta[k] for k in SUMMARY_KEYS if k in meta}
    if "file_type" in out:
        out["file_type_name"] = FILE_TYPES.get(out["file_type"], f"type {out['file_type']}")
    arch = meta.get("general.architecture")
    for key in ("block_count", "context_length", "embedding_length"):
        if f"{arch}.{key}" in meta:
            out[key] = meta[f"{arch}.{key}"]
    template = meta.get("tokenizer.chat_template")
    out["chat_template_chars"] = len(template) if isinstance(template, str) else None
    out["gguf_version"], out["tensor_count"] = info["version"], info["tensor_count"]
    return out
