"""Extract the serving contract of a vLLM release from its own wheel, without importing it (no GPU, no torch).

    python scripts/extract_vllm_contract.py --version 0.12.0 [--wheel PATH] [-o containers/vllm/contract-0.12.0.json]

Without --wheel it runs `pip download --no-deps --only-binary :all: vllm==VERSION` into a temporary directory.
The wheel's sha256 is recorded. Everything is read from the release's Python source with `ast`:

- cli_flags: every `--flag` that `vllm serve` registers (vllm/engine/arg_utils.py `EngineArgs.add_cli_args`,
  vllm/entrypoints/openai/cli_args.py `FrontendArgs` and `make_arg_parser`). A flag registered as
  `group.add_argument("--x", **cfg_kwargs["field"])` takes its kind from the config dataclass field's annotation,
  classified in the order of arg_utils.py `get_kwargs` (bool -> `--x/--no-x`, Literal -> choices unless `str` is in
  the union, int, float, str ...). Literal aliases are resolved from module-level `Name = Literal[...]` anywhere in
  the package.
- env_vars: the keys of vllm/envs.py `environment_variables` plus every `os.getenv("VLLM_...")` /
  `os.environ.get(...)` / `os.environ[...]` read with a string literal elsewhere.
- batch_invariant: the attention backends `override_envs_for_invariance` accepts, and the quantization modules
  whose code consults `vllm_is_batch_invariant()` (a quantized GEMM in any other module bypasses the overrides).

Each entry names the file and line it came from. The kit's tests check every server command the plan can emit
against this file (tests/model/test_vllm_contract.py); re-pinning vLLM means regenerating it.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ARG_UTILS = "vllm/engine/arg_utils.py"
CLI_ARGS = "vllm/entrypoints/openai/cli_args.py"
ENVS = "vllm/envs.py"
BATCH_INVARIANT = "vllm/model_executor/layers/batch_invariant.py"
QUANT_DIR = "vllm/model_executor/layers/quantization/"
# get_kwargs (vllm/engine/arg_utils.py) parses these int fields with human_readable_int ("8k", "8K", "8192")
HUMAN_READABLE_INTS = {"max_model_len", "max_num_batched_tokens", "kv_cache_memory_bytes"}


class Source:
    """The .py files of a wheel, parsed on demand."""

    def __init__(self, wheel: Path):
        self.zip = zipfile.ZipFile(wheel)
        self.names = [n for n in self.zip.namelist() if n.startswith("vllm/") and n.endswith(".py")]
        self._trees: dict[str, ast.Module] = {}

    def text(self, name: str) -> str:
        return self.zip.read(name).decode()

    def tree(self, name: str) -> ast.Module:
        if name not in self._trees:
            self._trees[name] = ast.parse(self.text(name), filename=name)
        return self._trees[name]


def literal_aliases(src: Source) -> dict[str, tuple[list, str]]:
    """Module-level `Name = Literal[...]` (or `Name: TypeAlias = Literal[...]`) anywhere: name -> (options, where)."""
    out: dict[str, tuple[list, str]] = {}
    for name in src.names:
        if "Literal" not in src.text(name):
            continue
        for node in src.tree(name).body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if target and _is_literal(value):
                opts = _literal_options(value)
                if opts is not None:
                    out.setdefault(target, (opts, f"{name}:{node.lineno}"))
    return out


def _is_literal(node) -> bool:
    return isinstance(node, ast.Subscript) and (
        (isinstance(node.value, ast.Name) and node.value.id == "Literal")
        or (isinstance(node.value, ast.Attribute) and node.value.attr == "Literal"))


def _literal_options(node: ast.Subscript) -> list | None:
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    try:
        return [ast.literal_eval(e) for e in elts]
    except ValueError:
        return None


def _union_parts(node) -> list:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("SkipValidation",
                                                                                                 "Annotated"):
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _union_parts(inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_parts(node.left) + _union_parts(node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("Optional", "Union"):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [p for e in elts for p in _union_parts(e)] + ([ast.Constant(None)] if node.value.id == "Optional" else [])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        try:
            return _union_parts(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return [node]
    return [node]


def classify(annotation, aliases: dict) -> dict:
    """The argparse kind `get_kwargs` (vllm/engine/arg_utils.py) gives a field with this annotation."""
    parts = _union_parts(annotation)
    names = set()
    literal: list = []
    for p in parts:
        if _is_literal(p):
            literal += _literal_options(p) or []
            names.add("Literal")
        elif isinstance(p, ast.Name) and p.id in aliases:
            literal += aliases[p.id][0]
            names.add("Literal")
        elif isinstance(p, ast.Constant) and p.value is None:
            names.add("None")
        elif isinstance(p, ast.Name):
            names.add(p.id)
        elif isinstance(p, ast.Subscript) and isinstance(p.value, ast.Name):
            names.add(p.value.id)
        else:
            names.add(ast.unparse(p))
    optional = "None" in names
    if "bool" in names:
        return {"kind": "bool", "annotation": ast.unparse(annotation)}
    if "Literal" in names:
        opts = sorted(literal, key=str)
        if "str" in names:
            return {"kind": "str", "metavar": opts, "optional": optional, "annotation": ast.unparse(annotation)}
        return {"kind": type(opts[0]).__name__ if opts else "str", "choices": opts + (["None"] if optional else []),
                "optional": optional, "annotation": ast.unparse(annotation)}
    for kind in ("tuple", "list", "set"):
        if kind in names:
            return {"kind": kind, "nargs": "+", "optional": optional, "annotation": ast.unparse(annotation)}
    for kind in ("int", "float"):
        if kind in names:
            return {"kind": kind, "optional": optional, "annotation": ast.unparse(annotation)}
    if "dict" in names:
        return {"kind": "json_or_str", "optional": optional, "annotation": ast.unparse(annotation)}
    return {"kind": "str", "optional": optional, "annotation": ast.unparse(annotation)}


def dataclass_fields(src: Source, class_name: str) -> tuple[dict, str]:
    """Annotated fields of `class class_name` anywhere in the package: field -> (annotation node, where)."""
    for name in src.names:
        if f"class {class_name}" not in src.text(name):
            continue
        for node in ast.walk(src.tree(name)):
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                fields = {}
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        fields[stmt.target.id] = (stmt.annotation, f"{name}:{stmt.lineno}")
                return fields, f"{name}:{node.lineno}"
    raise SystemExit(f"class {class_name} not found in the wheel")


def _kwarg(call: ast.Call, key: str):
    return next((k.value for k in call.keywords if k.arg == key), None)


def cli_flags(src: Source, aliases: dict) -> dict:
    flags: dict[str, dict] = {}

    def add(options: list[str], spec: dict, where: str):
        long = [o for o in options if o.startswith("--")]
        if not long:
            return
        entry = {**spec, "aliases": [o for o in options if o != long[0]], "source": where}
        flags.setdefault(long[0], entry)
        if spec.get("kind") == "bool":
            flags.setdefault("--no-" + long[0][2:], {**entry, "negates": long[0]})

    def explicit(call: ast.Call) -> dict:
        action = _kwarg(call, "action")
        action_s = ast.unparse(action) if action is not None else ""
        if "BooleanOptionalAction" in action_s:
            return {"kind": "bool"}
        if action_s.strip("'\"") in ("store_true", "store_false"):
            return {"kind": "flag"}
        typ = _kwarg(call, "type")
        spec = {"kind": ast.unparse(typ) if typ is not None else "str"}
        choices = _kwarg(call, "choices")
        if choices is not None:
            try:
                spec["choices"] = list(ast.literal_eval(choices))
            except ValueError:
                spec["choices_expr"] = ast.unparse(choices)
        return spec

    for file in (ARG_UTILS, CLI_ARGS):
        tree = src.tree(file)
        kw_classes: dict[str, str] = {}  # model_kwargs -> ModelConfig
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Name) and node.value.func.id == "get_kwargs" and \
                    isinstance(node.targets[0], ast.Name) and isinstance(node.value.args[0], ast.Name):
                kw_classes[node.targets[0].id] = node.value.args[0].id
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            opts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            where = f"{file}:{node.lineno}"
            star = [k.value for k in node.keywords if k.arg is None]
            if star and isinstance(star[0], ast.Dict):  # **{**cfg_kwargs["field"], "default": None}
                star = [v for k, v in zip(star[0].keys, star[0].values) if k is None] or star
            if star and isinstance(star[0], ast.Subscript) and isinstance(star[0].value, ast.Name) \
                    and star[0].value.id in kw_classes:
                cls = kw_classes[star[0].value.id]
                field = ast.literal_eval(star[0].slice)
                fields, _ = dataclass_fields(src, cls)
                ann, field_where = fields[field]
                spec = {**classify(ann, aliases), "field": f"{cls}.{field}", "field_source": field_where}
                if field in HUMAN_READABLE_INTS:
                    spec["kind"] = "human_readable_int"
                override = explicit(node) if _kwarg(node, "action") is not None or _kwarg(node, "type") else None
                add(opts, override or spec, where)
            elif star and isinstance(star[0], ast.Name):
                # `for key, value in frontend_kwargs.items(): add_argument(f"--{key...}", **value)`: every field
                cls = kw_classes.get("frontend_kwargs", "FrontendArgs")
                fields, _ = dataclass_fields(src, cls)
                for field, (ann, field_where) in fields.items():
                    add(["--" + field.replace("_", "-")],
                        {**classify(ann, aliases), "field": f"{cls}.{field}", "field_source": field_where}, where)
            else:
                add(opts, explicit(node), where)
    return dict(sorted(flags.items()))


def positional(src: Source) -> list[dict]:
    out = []
    for node in ast.walk(src.tree(CLI_ARGS)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            names = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if names and not str(names[0]).startswith("-"):
                out.append({"name": names[0], "source": f"{CLI_ARGS}:{node.lineno}"})
    return out


def env_vars(src: Source) -> dict:
    out: dict[str, str] = {}
    for node in ast.walk(src.tree(ENVS)):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                node.target.id == "environment_variables" and isinstance(node.value, ast.Dict):
            for k in node.value.keys:
                if isinstance(k, ast.Constant):
                    out.setdefault(k.value, f"{ENVS}:{k.lineno}")
    for name in src.names:
        text = src.text(name)
        if "environ" not in text and "getenv" not in text:
            continue
        for node in ast.walk(src.tree(name)):
            key = None
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                f = ast.unparse(node.func)
                if f in ("os.getenv", "os.environ.get", "getenv", "environ.get"):
                    key = node.args[0].value
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ") \
                    and isinstance(node.slice, ast.Constant) and isinstance(node.ctx, ast.Load):
                key = node.slice.value
            if isinstance(key, str):
                out.setdefault(key, f"{name}:{node.lineno}")
    return dict(sorted(out.items()))


def batch_invariant(src: Source) -> dict:
    tree = src.tree(BATCH_INVARIANT)
    backends, where, env_where = None, None, None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "override_envs_for_invariance":
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and \
                        stmt.targets[0].id == "supported_backends":
                    backends, where = ast.literal_eval(stmt.value), f"{BATCH_INVARIANT}:{stmt.lineno}"
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "os.getenv" and \
                isinstance(node.args[0], ast.Constant) and node.args[0].value == "VLLM_BATCH_INVARIANT":
            env_where = f"{BATCH_INVARIANT}:{node.lineno}"
    if backends is None:
        raise SystemExit(f"{BATCH_INVARIANT}: override_envs_for_invariance has no supported_backends list")
    caller = next((f"{n}:{i + 1}" for n in src.names if n.startswith("vllm/v1/worker/")
                   for i, line in enumerate(src.text(n).splitlines()) if "init_batch_invariance()" in line
                   and "def " not in line), None)
    aware = {}
    for name in src.names:
        if name.startswith(QUANT_DIR) and name.count("/") == QUANT_DIR.count("/"):
            lines = [i + 1 for i, ln in enumerate(src.text(name).splitlines()) if "vllm_is_batch_invariant()" in ln]
            if lines:
                aware[Path(name).stem] = f"{name}:{lines[0]}"
    return {"env": "VLLM_BATCH_INVARIANT", "env_source": env_where, "attention_backends": backends,
            "attention_backends_source": where, "enforced_at": caller,
            "rule": "with VLLM_BATCH_INVARIANT set, the worker raises RuntimeError unless VLLM_ATTENTION_BACKEND "
                    "is one of attention_backends",
            "quantization_modules_aware": dict(sorted(aware.items())),
            "quantization_note": "only these quantization modules consult vllm_is_batch_invariant(); any other "
                                 "quantized GEMM (e.g. awq_marlin's ops.gptq_marlin_gemm) bypasses the "
                                 "batch-invariant overrides, so its outputs are not batch-invariant"}


def version_of(src: Source) -> str | None:
    for name in ("vllm/_version.py",):
        if name in src.names:
            for node in ast.walk(src.tree(name)):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") in ("__version__", "version")
                                                        for t in node.targets):
                    try:
                        return str(ast.literal_eval(node.value))
                    except ValueError:
                        pass
    return None


def extract(wheel: Path) -> dict:
    src = Source(wheel)
    aliases = literal_aliases(src)
    return {
        "_comment": "Generated by scripts/extract_vllm_contract.py from the vLLM wheel named below; do not edit. "
                    "tests/model/test_vllm_contract.py checks every server command of the plan against it.",
        "vllm_version": version_of(src),
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "entrypoint": "vllm serve (the vllm/vllm-openai image's entrypoint); the model is the positional model_tag "
                      "or --model",
        "positional": positional(src),
        "cli_flags": cli_flags(src, aliases),
        "env_vars": env_vars(src),
        "batch_invariant": batch_invariant(src),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default="0.12.0")
    p.add_argument("--wheel", type=Path, help="a downloaded vllm wheel (default: pip download it)")
    p.add_argument("-o", "--out", type=Path)
    a = p.parse_args(argv)
    out = a.out or Path(__file__).resolve().parents[1] / "containers" / "vllm" / f"contract-{a.version}.json"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = a.wheel
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                            f"vllm=={a.version}", "-d", tmp], check=True)
            wheel = next(Path(tmp).glob("vllm-*.whl"))
        contract = extract(wheel)
    if contract["vllm_version"] not in (None, a.version):
        raise SystemExit(f"{wheel}: its vllm/_version.py says {contract['vllm_version']}, not {a.version}")
    contract["vllm_version"] = a.version
    out.write_text(json.dumps(contract, indent=1, sort_keys=False) + "\n")
    print(f"{out}: {len(contract['cli_flags'])} flags, {len(contract['env_vars'])} env vars, "
          f"batch-invariant backends {contract['batch_invariant']['attention_backends']} "
          f"(wheel sha256 {contract['wheel_sha256'][:16]}...)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
