"""Command line: ``executor run | selftest | seccomp-profile | policy``.

* ``executor run [--backend auto|process|container] [--runtime NAME] FILE|-`` prints one JSON object (the
  ExecResult fields of docs/ARCHITECTURE.md); exit status 0 whenever the executor worked, even
  if the program failed (the outcome says how), 2 for bad usage, 3 if the backend is unavailable.
* ``executor selftest [--backend ...] [--runtime NAME]`` starts the backend (whose supervisors run the canaries)
  and prints what was checked; exit 1 if it refused to start.
* ``executor seccomp-profile [-o PATH]`` writes the docker seccomp profile rendered from
  policy.py (containers/executor/seccomp.json is generated with this).
* ``executor policy`` prints the policy and its sha256.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from executor import policy
from executor.container_config import DEFAULT_RUN_VALUES


def _read_program(path: str) -> str:
    """The program's text, from a file or "-" (stdin), read as bytes and decoded as UTF-8 the same way for both,
    so the same bytes get the same message wherever they come from."""
    if path == "-":
        data, name = sys.stdin.buffer.read(), "standard input"
    else:
        p = Path(path)
        if not p.is_file():
            raise SystemExit(f"executor run: no such program file: {path}")
        data, name = p.read_bytes(), path
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SystemExit(f"executor run: {name} is not UTF-8 text ({exc})")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as a text-mode read gives


def _cmd_run(args: argparse.Namespace) -> int:
    from executor.api import Executor, ExecutorUnavailable

    source = _read_program(args.file)
    try:
        with Executor(backend=args.backend, workers=1, runtime=args.runtime) as ex:
            res = ex.run(source)
    except ExecutorUnavailable as exc:
        print(f"executor run: {exc}", file=sys.stderr)
        return 3
    print(json_line(res.to_dict()))
    return 0


# Characters that JSON may carry raw inside a string but that line-based readers take as a line
# break (Python's str.splitlines, JavaScript, many log tools): NEL, LINE SEPARATOR, PARAGRAPH
# SEPARATOR. The other line breaks (\n, \r, \v, \f, \x1c-\x1e) are control characters, which
# json.dumps escapes already.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_line(obj: object) -> str:
    """``obj`` as one line of JSON that stays one line for any line-based reader: UTF-8 text
    as it is, except the line-break characters JSON does not escape (issue 40)."""
    text = json.dumps(obj, ensure_ascii=False)
    for char, escape in _LINE_BREAKS.items():
        text = text.replace(char, escape)
    return text


def _cmd_selftest(args: argparse.Namespace) -> int:
    from executor.api import Executor, ExecutorUnavailable

    try:
        with Executor(backend=args.backend, workers=1, runtime=args.runtime) as ex:
            info = ex.describe()
    except ExecutorUnavailable as exc:
        print(json.dumps({"ok": False, "error": str(exc)}, indent=2))
        return 1
    print(
        json.dumps(
            {
                "ok": True,
                "backend": info["backend"],
                "backend_reason": info["backend_reason"],
                "policy_hash": info["policy_hash"],
                "runtime": info.get("runtime"),
                "seccomp": info.get("seccomp"),
                "selftest": info.get("selftest"),
            },
            indent=2,
        )
    )
    return 0


def _cmd_seccomp_profile(args: argparse.Namespace) -> int:
    text = policy.seccomp_profile_json()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _cmd_policy(args: argparse.Namespace) -> int:
    print(json.dumps({"policy_hash": policy.policy_hash(), "policy": policy.policy_dict()}, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="executor", description="Hardened executor for model-written programs.")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one program and print its result as JSON")
    run.add_argument("--backend", choices=["auto", "process", "container"], default="auto")
    run.add_argument(
        "--runtime",
        default=DEFAULT_RUN_VALUES["runtime"],
        help="docker runtime of the container backend (default: %(default)s)",
    )
    run.add_argument("file", help="program file, or - for standard input")
    run.set_defaults(func=_cmd_run)
    st = sub.add_parser("selftest", help="start the backend and report the start-up canaries")
    st.add_argument("--backend", choices=["auto", "process", "container"], default="auto")
    st.add_argument(
        "--runtime",
        default=DEFAULT_RUN_VALUES["runtime"],
        help="docker runtime of the container backend (default: %(default)s)",
    )
    st.set_defaults(func=_cmd_selftest)
    sp = sub.add_parser("seccomp-profile", help="print or write the docker seccomp profile")
    sp.add_argument("-o", "--output", default=None, help="write to this path instead of stdout")
    sp.set_defaults(func=_cmd_seccomp_profile)
    po = sub.add_parser("policy", help="print the policy and its hash")
    po.set_defaults(func=_cmd_policy)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)  # the subcommand's _cmd_* function
    return code


if __name__ == "__main__":
    sys.exit(main())
