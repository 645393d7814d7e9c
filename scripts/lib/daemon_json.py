"""Add (or update) only the `runsc` runtime in a docker daemon.json, keeping everything else.

    python3 scripts/lib/daemon_json.py DAEMON_JSON RUNSC_PATH PLATFORM

Every other key survives as it was: other runtimes (the NVIDIA toolkit's `nvidia`), `default-runtime`, data-root,
log options. Exit 0: the file already said this (untouched); 10: it was written (dockerd must restart);
1: the file is not a JSON object (named, untouched). Used by scripts/install-host.sh; standard library only."""

from __future__ import annotations

import json
import os
import sys

RUNTIME_ARGS = ["--network=none", "--oci-seccomp"]  # no network stack in the sandbox; honour docker's seccomp


def merged(cfg: dict, runsc: str, platform: str) -> dict:
    out = dict(cfg)
    runtimes = dict(out.get("runtimes") or {})
    runtimes["runsc"] = {"path": runsc, "runtimeArgs": RUNTIME_ARGS + [f"--platform={platform}"]}
    out["runtimes"] = runtimes
    return out


def main(argv: list[str]) -> int:
    path, runsc, platform = argv
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    try:
        cfg = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        print(f"{path} is not valid JSON ({exc}); fix or remove it, then rerun", file=sys.stderr)
        return 1
    if not isinstance(cfg, dict) or not isinstance(cfg.get("runtimes", {}), dict):
        print(f"{path}: expected a JSON object whose 'runtimes' is an object", file=sys.stderr)
        return 1
    new = merged(cfg, runsc, platform)
    if new == cfg:
        return 0
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(json.dumps(new, indent=2) + "\n")
    os.replace(tmp, path)
    return 10


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
