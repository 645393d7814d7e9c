#!/usr/bin/env python3
"""Where one program's time goes in the executor: the probe behind ``make bench-executor``'s
``phases`` section. Standard library plus the executor package; runs on the host (the process
backend's conditions) and, fed on stdin to ``python3 -I -S -`` inside the executor image, under
runsc with the pool's flags (the container backend's conditions).

It forks children from a zygote-like process that built the real template (allowed modules
warmed, proxies, restricted builtins, the compiled seccomp filter, no_new_privs set once) and runs
``executor.child.run_child`` in each, the executor's own code path, passing a ``mark`` that
stamps ``CLOCK_MONOTONIC`` into a shared anonymous page at every phase boundary (no system call:
the stamps cost the same under ptrace as on the host). Phases, in order:

* ``fork``: ``fork()`` in the zygote until the child runs its first line;
* ``descriptors``: fd hygiene, empty environment, default signal handlers;
* ``rlimits``; ``warm``: the spare's fixed warm-up program, the disk finder removed, the
  seccomp call path prepared (the spare now waits; the probe hands it its program once it is
  warm, as the loop hands a ready spare);
* ``request``: the program written by the parent until the child has read it;
* ``check_compile``: the AST policy and ``compile``;
* ``seccomp``: the filter installed (``BpfFilter.load``);
* ``program``: the program under the line cap with the restricted builtins, up to ``finish``;
* ``result``: the result line serialised and written until the parent reads end of file (the
  child's ``_exit`` closes the pipe);
* ``reap``: end of file until ``wait4`` returns the child's status.

The request path of a ready spare is ``request`` + ... + ``reap``; ``fork`` ... ``warm`` happen
ahead of demand but still take a core. The fork floor (a bare interpreter's fork + ``_exit`` +
wait, before the executor is imported) and the zygote's own fork + ``_exit`` + wait are measured
in the same run. With ``--markers`` the child also makes one empty ``write`` to the result
descriptor at every boundary, so an ``strace -f`` of the probe splits each child's system calls
by phase (``bench/executor.py`` counts them). On the host, each child's minor page faults (its
copy-on-write faults after the fork, from ``wait4``) are reported too: under gVisor each one is
a round trip to the Sentry.

Output: one JSON object on stdout, ``{"phases": [...], "samples": {phase: [ms, ...]}, ...}``.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from executor.child import ChildTemplate

PROGRAMS = [  # the calculator-like mix of both benchmarks (bench/executor.py imports it)
    "weight_kg = 72.5\nheight_m = 1.78\nanswer = round(weight_kg / height_m ** 2, 2)\n",
    "import math\nscr, age = 1.1, 63\nk, a = 0.9, -0.302\n"
    "answer = round(142 * min(scr / k, 1) ** a * max(scr / k, 1) ** -1.2 * 0.9938 ** age, 1)\n",
    "import datetime\nlmp = datetime.date(2024, 3, 11)\nanswer = lmp + datetime.timedelta(days=280)\n",
    "import datetime\nlmp = datetime.date(2024, 1, 2)\ntoday = datetime.date(2024, 6, 20)\n"
    "days = (today - lmp).days\nanswer = (days // 7, days % 7)\n",
    "points = 0\nfor v, cut in ((38.5, 38), (112, 90), (24, 20)):\n    if v > cut:\n        points += 1\n"
    "answer = points\n",
    "na, glucose, bun = 138, 180, 20\nanswer = round(2 * na + glucose / 18 + bun / 2.8, 1)\n",
]
# stamp slots: parent before fork, child's first line, the child's phases, parent's end of file and wait
SLOTS = (
    "before_fork",
    "child_start",
    "descriptors",
    "rlimits",
    "warm",
    "request_sent",
    "request",
    "check_compile",
    "seccomp",
    "program",
    "eof",
    "reaped",
)
PHASES = (
    ("fork", "before_fork", "child_start"),
    ("descriptors", "child_start", "descriptors"),
    ("rlimits", "descriptors", "rlimits"),
    ("warm", "rlimits", "warm"),
    ("request", "request_sent", "request"),
    ("check_compile", "request", "check_compile"),
    ("seccomp", "check_compile", "seccomp"),
    ("program", "seccomp", "program"),
    ("result", "program", "eof"),
    ("reap", "eof", "reaped"),
)
REQUEST_PATH = ("request", "check_compile", "seccomp", "program", "result", "reap")
AHEAD_OF_DEMAND = ("fork", "descriptors", "rlimits", "warm")
MARKER_FD = 3  # executor.policy.RESULT_FD: the one descriptor the child's filter lets it write


def _fork_exit_wait(n: int) -> list[float]:
    """n x (fork, the child _exits at once, wait) from the calling process, in ms."""
    out: list[float] = []
    for _ in range(n):
        t0 = time.monotonic_ns()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        out.append(round((time.monotonic_ns() - t0) / 1e6, 4))
    return out


def _child_life(
    template: ChildTemplate,
    stamps: memoryview,
    slot: dict[str, int],
    res_w: int,
    req_r: int,
    devnull: int,
    markers: bool,
) -> None:
    """One spare child: ``child.run_child`` with a stamping ``mark``; never returns."""
    from executor import child

    def mark(name: str) -> None:
        stamps[slot[name]] = time.monotonic_ns()
        if markers:
            os.write(MARKER_FD, b"")

    try:
        stamps[slot["child_start"]] = time.monotonic_ns()
        child.run_child(template, res_w, req_r, devnull, mark)
    finally:
        os._exit(70)


def _zygote(n: int, bpf_hex: str, action: str, markers: bool, out_fd: int, floor: list[float]) -> None:
    from executor import child, policy
    from executor.seccomp_filter import BpfFilter

    flt = BpfFilter(bytes.fromhex(bpf_hex), action)
    flt.set_no_new_privs()  # as executor.zygote.Zygote does, once
    template = child.build_template(policy.policy_dict()["limits"], frozenset(), flt)
    devnull = os.open(os.devnull, os.O_RDWR)
    slot = {name: i for i, name in enumerate(SLOTS)}
    shared = mmap.mmap(-1, 8 * len(SLOTS))
    stamps = memoryview(shared).cast("q")
    samples: dict[str, list[float | None]] = {name: [] for name, _a, _b in PHASES}
    totals: dict[str, list[float]] = {"request_path": [], "ahead_of_demand": []}
    outcomes: dict[str, int] = {}
    faults: list[int] = []  # the child's minor page faults (wait4; the host counts copy-on-write faults)
    for i in range(n):
        for k in range(len(SLOTS)):
            stamps[k] = 0
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        stamps[slot["before_fork"]] = time.monotonic_ns()
        pid = os.fork()
        if pid == 0:
            os.close(req_w)
            os.close(res_r)
            _child_life(template, stamps, slot, res_w, req_r, devnull, markers)
        os.close(req_r)
        os.close(res_w)
        while not stamps[slot["warm"]]:  # a ready spare: handed its program only once warm
            time.sleep(0.0005)
        time.sleep(0.002)  # the spare is blocked in read(), as a ready one is
        source = PROGRAMS[i % len(PROGRAMS)]
        stamps[slot["request_sent"]] = time.monotonic_ns()
        os.write(req_w, os.urandom(16).hex().encode() + b"\n" + source.encode())
        os.close(req_w)
        data: list[bytes] = []
        poller = select.poll()
        poller.register(res_r, select.POLLIN | select.POLLHUP)
        while True:
            poller.poll()
            block = os.read(res_r, 65536)
            if not block:
                break
            data.append(block)
        stamps[slot["eof"]] = time.monotonic_ns()
        os.close(res_r)
        _pid, _status, usage = os.wait4(pid, 0)
        stamps[slot["reaped"]] = time.monotonic_ns()
        faults.append(usage.ru_minflt)
        line = b"".join(data).strip()
        outcome = json.loads(line)["outcome"] if line else "no result"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        values = {name: stamps[k] for name, k in slot.items()}
        for name, a, b in PHASES:
            samples[name].append(round((values[b] - values[a]) / 1e6, 4) if values[a] and values[b] else None)
        totals["request_path"].append(round((values["reaped"] - values["request_sent"]) / 1e6, 4))
        totals["ahead_of_demand"].append(round((values["warm"] - values["before_fork"]) / 1e6, 4))
    zygote_fork = _fork_exit_wait(max(10, n // 2))
    report = {
        "n": n,
        "fork_floor_ms": floor,
        "zygote_fork_exit_wait_ms": zygote_fork,
        "phases": [name for name, _a, _b in PHASES],
        "request_path": list(REQUEST_PATH),
        "ahead_of_demand": list(AHEAD_OF_DEMAND),
        "samples": samples,
        "totals": totals,
        "outcomes": outcomes,
        "child_minor_faults": faults,
        "markers": markers,
        "python": sys.version.split()[0],
    }
    payload = (json.dumps(report) + "\n").encode()
    while payload:
        payload = payload[os.write(out_fd, payload) :]


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 100
    markers = "--markers" in argv
    floor = _fork_exit_wait(max(10, n // 2))  # before the executor is imported
    out_r, out_w = os.pipe()
    cfg_r, cfg_w = os.pipe()
    pid = os.fork()  # the zygote is forked before pyseccomp is imported, as the supervisor does
    if pid == 0:
        code = 1
        try:
            os.close(out_r)
            os.close(cfg_w)
            with os.fdopen(cfg_r, "rb") as f:
                cfg = json.loads(f.read())
            _zygote(n, cfg["bpf"], cfg["action"], markers, out_w, floor)
            code = 0
        except BaseException as exc:  # report and die
            os.write(2, f"probe zygote: {type(exc).__name__}: {exc}\n".encode())
        os._exit(code)
    os.close(out_w)
    os.close(cfg_r)
    from executor import seccomp_filter

    probe, flt = seccomp_filter.probe_and_compile()
    if flt is None:
        print(f"probe: seccomp unusable: {probe}", file=sys.stderr)
        return 1
    with os.fdopen(cfg_w, "wb") as f:
        f.write(json.dumps({"bpf": flt.bpf.hex(), "action": flt.action}).encode())
    with os.fdopen(out_r, "rb") as f:
        out = f.read()
    _pid, status = os.waitpid(pid, 0)
    if status != 0 or not out:
        print(f"probe: the zygote failed (status {status})", file=sys.stderr)
        return 1
    sys.stdout.write(out.decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
