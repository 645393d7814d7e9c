"""The pinned vLLM release's serving contract, read from its own source (containers/vllm/contract-<version>.json,
written by scripts/extract_vllm_contract.py from the wheel, sha256 recorded) and checked against a server command.

`check_server_command(args, env)` returns the problems a command would meet on that release: a flag it does not
register, a value outside a flag's type or choices, an environment variable it never reads, and the
batch-invariance rule (VLLM_BATCH_INVARIANT set without an allowed VLLM_ATTENTION_BACKEND raises RuntimeError
at worker start; a quantization method whose module never consults batch invariance is not batch-invariant).
An empty list means the release accepts the command as written."""
from __future__ import annotations

import json
import re
from pathlib import Path

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
        if kind == "int":
            int(value)
        elif kind == "float":
            float(value)
        elif kind == "human_readable_int" and not _HUMAN_INT.match(value):
            raise ValueError(value)
    except ValueError:
        return f"{value!r} is not a {kind}"
    return None


def check_server_command(contract: dict, args: list[str], env: dict[str, str]) -> list[str]:
    """Problems of `vllm serve ARGS` with ENV on the contract's release (empty: accepted)."""
    flags = contract["cli_flags"]
    by_alias = {a: name for name, spec in flags.items() for a in spec.get("aliases", [])}
    problems: list[str] = []
    i = 0
    seen: dict[str, str | None] = {}
    while i < len(args):
        tok = args[i]
        if not tok.startswith("-"):
            if i == 0 and contract.get("positional"):
                i += 1           # the positional model_tag
                continue
            problems.append(f"unexpected positional argument {tok!r}")
            i += 1
            continue
        name, _, inline = tok.partition("=")
        name = by_alias.get(name, name)
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
    if _truthy(env.get(bi["env"])):
        backend = env.get("VLLM_ATTENTION_BACKEND")
        if backend not in bi["attention_backends"]:
            problems.append(f"{bi['env']}=1 needs VLLM_ATTENTION_BACKEND in {bi['attention_backends']}, got "
                            f"{backend!r}: the worker raises RuntimeError at start ({bi['attention_backends_source']}, "
                            f"called from {bi['enforced_at']})")
        quant = seen.get("--quantization")
        if quant and quant != "None" and quant not in bi["quantization_modules_aware"]:
            problems.append(f"{bi['env']}=1 with --quantization {quant}: vLLM {contract['vllm_version']}'s {quant} "
                            "module never consults batch invariance, so the run would claim a determinism the "
                            "release does not give")
    return problems


def _truthy(value: str | None) -> bool:
    """As vLLM reads VLLM_BATCH_INVARIANT (batch_invariant.py `_read_vllm_batch_invariant`): int(value) != 0."""
    try:
        return value is not None and int(value) != 0
    except ValueError:
        return False
