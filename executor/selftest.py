"""Start-up canaries: the supervisor refuses to start unless every one is contained.

Each canary is a program that tries something the sandbox must stop (read /etc/passwd, open a
socket, fork, exec, read the environment, busy-loop, allocate without bound) plus the outcomes
that count as "contained". They run twice: with every layer on, and with layers 1-2 (static
policy, builtins allow-list) turned off, so that layers 3-4 (rlimits, line cap, wall clock,
seccomp; numbering of policy.LAYERS) are shown to hold on their own on *this* kernel / gVisor
release at every start. Both runs use children forked by the supervisor's zygote, as programs do.
A clean program must also still give the right answer, or the sandbox is broken the other way.
"""

from __future__ import annotations

from dataclasses import dataclass

from executor.outcomes import Outcome

# names for the type checker only: the supervisor loads no typing (as in child.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from executor.supervisor import Supervisor

    class _Runs(Protocol):
        """What runs a canary: the supervisor, or its view with layers turned off."""

        def run(self, source: str) -> dict[str, Any]: ...


O = Outcome


@dataclass(frozen=True)
class Canary:
    name: str
    source: str
    contained: frozenset[Outcome]  # outcomes that mean "stopped"
    answer_must_be: object = "unset"  # for OK canaries: the only acceptable answer


_STOPPED = frozenset({O.REJECTED_STATIC, O.SANDBOX_VIOLATION, O.PROGRAM_ERROR})

CANARIES: tuple[Canary, ...] = (
    Canary("read_etc_passwd", "answer = len(open('/etc/passwd').read())\n", _STOPPED),
    # the child has no disk finder (child._stop_disk_imports); put back, it must meet seccomp
    Canary(
        "open_socket",
        "import sys\nsys.meta_path.append(sys.modules['_frozen_importlib_external'].PathFinder)\n"
        "import socket\ns = socket.socket()\nanswer = 1\n",
        _STOPPED,
    ),
    Canary("fork", "import os\nanswer = os.fork()\n", _STOPPED),
    Canary("exec", "import os\nos.execv('/bin/sh', ['sh', '-c', 'true'])\nanswer = 1\n", _STOPPED),
    Canary("read_environment", "import os\nanswer = len(os.environ)\n", _STOPPED | {O.OK}, answer_must_be=0),
    Canary("busy_loop", "while True:\n    pass\n", frozenset({O.LINE_CAP, O.CPU_LIMIT, O.TIMEOUT_WALL})),
    Canary("memory_bomb", "x = bytearray(8 * 1024 ** 3)\nanswer = 1\n", frozenset({O.MEMORY_LIMIT, O.CRASH})),
)
CLEAN = ("import math\nanswer = round(math.sqrt(16) + 1, 2)\n", 5.0)
# The memory calibration (issue 46, item 4), recorded with the canaries in describe(): the largest
# block a program can allocate here, by bisection to 64 KiB (``bytes(n)`` is calloc: no page is
# touched, so it costs a few system calls). With policy.ADDRESS_SPACE_ABOVE_RUNTIME it is about
# LIMITS["address_space_bytes"] on both backends; the manifest records what it was.
CALIBRATION = (
    "lo, hi = 0, 1 << 31\nwhile hi - lo > 1 << 16:\n    mid = (lo + hi) // 2\n    try:\n"
    "        b = bytes(mid)\n        del b\n        lo = mid\n    except Exception:\n        hi = mid\n"
    "answer = lo\n"
)


def _check(canary: Canary, result: dict[str, Any]) -> str | None:
    outcome = Outcome(result["outcome"])
    if outcome not in canary.contained:
        return f"{canary.name}: {outcome.value} ({result.get('error')})"
    if outcome is O.OK and result.get("answer") != canary.answer_must_be:
        return f"{canary.name}: answered {result.get('answer')!r}"
    return None


def run_selftest(supervisor: Supervisor) -> dict[str, Any]:
    """Run every canary with all layers on and with layers 1-2 off. Returns
    ``{"ok", "failed": [...], "results": {mode: {canary: outcome}}}``."""
    modes: dict[str, _Runs] = {
        "all_layers": supervisor,
        "os_layers_only": supervisor.with_layers_off({"static", "builtins"}),
    }
    failed: list[str] = []
    results: dict[str, object] = {}
    for mode, sup in modes.items():
        outcomes: dict[str, str] = {}
        results[mode] = outcomes
        for canary in CANARIES:
            res = sup.run(canary.source)
            outcomes[canary.name] = res["outcome"]
            problem = _check(canary, res)
            if problem:
                failed.append(f"[{mode}] {problem}")
    clean = supervisor.run(CLEAN[0])
    results["clean_program"] = clean["outcome"]
    calibration = supervisor.run(CALIBRATION)
    results["memory_calibration"] = {
        "largest_block_bytes": calibration.get("answer") if calibration["outcome"] == O.OK.value else None,
        "outcome": calibration["outcome"],
        "address_space_bytes": int(getattr(supervisor, "limits", {}).get("address_space_bytes", 0)),
    }
    if clean["outcome"] != O.OK.value or clean["answer"] != CLEAN[1]:
        failed.append(f"clean program: {clean['outcome']} {clean.get('answer')!r} ({clean.get('error')})")
    return {
        "ok": not failed,
        "failed": failed,
        "results": results,
        "seccomp": getattr(supervisor, "seccomp_probe", None),
    }
