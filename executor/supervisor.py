"""Long-lived fork server speaking JSON lines over stdin/stdout (used by BOTH backends).

How to start it (the same command on the host and inside the container)::

    python3 -I -S -B /path/to/executor/supervisor.py [--sys-path DIR]... [--limits JSON]
            [--backend-label process|container] [--unsafe-disable-layers LAYERS]

On the host (process backend) the file is run *by path*: ``-I`` ignores PYTHONPATH and the
current directory and ``-S`` skips site-packages, so ``-m executor.supervisor`` cannot find a
package that lives in a checkout. Run as a script, this file puts the directory that contains
the ``executor`` package at the front of ``sys.path`` itself, and ``--sys-path DIR`` adds the
directory holding the seccomp binding (``pyseccomp.py``, or Debian's ``seccomp`` module);
``supervisor_command()`` builds the whole host command line. In the container image the
``executor`` package and ``pyseccomp.py`` sit in the interpreter's own stdlib directory, so
``python3 -I -S -m executor.supervisor [ARGS]`` works there unchanged; a launcher gets ARGS from
``supervisor_args(limits=..., disabled_layers=..., backend_label="container")``. ``-B`` (no
.pyc writes) is recommended. Start it with an empty environment.

Protocol (docs/ARCHITECTURE.md): first line ``{"ready": true, "policy_hash", "selftest", ...}``
or ``{"ready": false, "error"}`` followed by exit status 1; then for each request line
``{"id": "<str>", "source": "<python>"}`` exactly one line ``{"id": ..., "result": {...}}``.
End of input ends the supervisor. One program runs at a time; a pool runs N supervisors.

Processes (SECURITY.md, "Process lifecycle"): this loop, and the zygote (``zygote.py``) forked
from it and executed at start-up (with the policy's hash secret and, where honoured, a fixed
address layout), before the loop imports pyseccomp. The zygote forks every program's child
ahead of demand (``--spares`` of them wait, already set up and warmed), passes the loop the
child's request and result pipes, and reaps it. Per program the loop takes a ready spare, sends
it a fresh nonce and the source, reads the result descriptor until EOF or the wall-clock
deadline (then SIGKILL), waits for the zygote's report of the child's exit status and CPU time
and classifies how it ended (``classify``). Each child runs exactly one program. The loop asks
for replacement spares after it wrote its reply, so that the fork overlaps the gap before the
next request. (Measured under gVisor, bench/executor.json and SECURITY.md: forking in the loop
itself put the fork and the copy-on-write faults it causes in the loop on the request path;
asking for the replacement when a spare is taken made the fork compete with the running child.)
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # run by path: make the package importable (see docstring)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse
import collections
import gc
import json
import select
import signal
import socket
import time

from executor import policy, zygote
from executor.child import EXIT_RESULT_WRITE_FAILED, weeks_days_problem
from executor.outcomes import Outcome
from executor.result import make_result, reply_mac

# names for the type checker only: the loop imports no typing (as child.py and zygote.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

LAYER_SWITCH_ENV = "EXECUTOR_UNSAFE_DISABLE_LAYERS"
TESTING_ENV = "EXECUTOR_TESTING"
CANARY_ENV = "EXECUTOR_TEST_CANARY"
CHILD_OUTCOMES = frozenset(
    {
        Outcome.OK,
        Outcome.PROGRAM_ERROR,
        Outcome.REJECTED_STATIC,
        Outcome.MEMORY_LIMIT,
        Outcome.OUTPUT_LIMIT,
        Outcome.LINE_CAP,
        Outcome.BAD_RETURN_KIND,
        Outcome.INFRA_ERROR,
    }
)
DEFAULT_SPARES = 2  # children kept forked ahead per supervisor (measured: bench/executor.json)
ZYGOTE_START_SECONDS = 120.0  # how long the loop waits for the zygote to answer


def disabled_layers_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The test-only layer switch. UNSAFE: ``EXECUTOR_UNSAFE_DISABLE_LAYERS=static,builtins``
    turns layers off, and is honoured ONLY when ``EXECUTOR_TESTING=1`` is also set (otherwise
    it is an error, so a stray variable cannot weaken a real run silently)."""
    env = os.environ if environ is None else environ
    raw = env.get(LAYER_SWITCH_ENV, "").strip()
    if not raw:
        return []
    if env.get(TESTING_ENV) != "1":
        raise RuntimeError(
            f"{LAYER_SWITCH_ENV} is set but {TESTING_ENV}=1 is not: refusing to weaken the sandbox outside tests"
        )
    layers = [x.strip() for x in raw.split(",") if x.strip()]
    unknown = [x for x in layers if x not in policy.LAYER_SWITCHES]
    if unknown:
        raise ValueError(f"{LAYER_SWITCH_ENV}: unknown layer(s) {unknown}; known: {list(policy.LAYER_SWITCHES)}")
    return layers


def test_canary_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The test harness's canary (``EXECUTOR_TEST_CANARY``, hex, honoured only with
    ``EXECUTOR_TESTING=1``), or "". A supervisor given one keeps it in its memory and starts
    every run's nonce with it, so the nonce (a secret of the supervisor and the child, which no
    program may read) carries a value the harness knows: any result that contains the canary
    read executor state (tests/adversarial/canaries.py). It weakens nothing: the nonce keeps
    its 128 random bits after the canary."""
    env = os.environ if environ is None else environ
    canary = env.get(CANARY_ENV, "").strip()
    if not canary:
        return ""
    if env.get(TESTING_ENV) != "1":
        raise RuntimeError(f"{CANARY_ENV} is set but {TESTING_ENV}=1 is not: a canary is for tests only")
    return checked_canary(canary, CANARY_ENV)


def checked_canary(canary: str, where: str) -> str:
    if not (len(canary) <= 64 and all(c in "0123456789abcdef" for c in canary)):
        raise ValueError(f"{where} must be at most 64 lowercase hex digits")
    return canary


def supervisor_script() -> str:
    """Path of this file (what a launcher runs with ``python3 -I -S``)."""
    return os.path.abspath(__file__)


def seccomp_binding_dir() -> str | None:
    """Directory of the seccomp binding importable in *this* interpreter, for ``--sys-path``."""
    for name in ("pyseccomp", "seccomp"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        if mod.__file__ is None:  # a namespace package of that name: no binding to hand over
            continue
        return os.path.dirname(os.path.abspath(mod.__file__))
    return None


def supervisor_args(
    limits: dict[str, int | float] | None = None,
    disabled_layers: Iterable[str] = (),
    backend_label: str = "process",
    sys_paths: Iterable[str] = (),
    spares: int | None = None,
    test_canary: str = "",
) -> list[str]:
    """Arguments after ``python3 -I -S <script>``."""
    args: list[str] = []
    if test_canary:
        args += ["--test-canary", test_canary]
    for p in sys_paths:
        args += ["--sys-path", p]
    if spares is not None:
        args += ["--spares", str(int(spares))]
    if limits:
        args += ["--limits", json.dumps(limits, sort_keys=True)]
    args += ["--backend-label", backend_label]
    if disabled_layers:
        args += ["--unsafe-disable-layers", ",".join(disabled_layers)]
    return args


def supervisor_command(python: str | None = None, **kwargs: Any) -> list[str]:
    """Full host command line for a local supervisor (process backend); ``kwargs`` are
    ``supervisor_args``'s."""
    binding = seccomp_binding_dir()
    sys_paths = kwargs.pop("sys_paths", None) or ([binding] if binding else [])
    return [
        python or sys.executable,
        "-I",
        "-S",
        "-B",
        supervisor_script(),
        *supervisor_args(sys_paths=sys_paths, **kwargs),
    ]


CHILD_MESSAGE_KEYS = frozenset(
    {
        "nonce",
        "outcome",
        "answer",
        "kind",
        "stdout",
        "stderr",
        "stdout_truncated",
        "stderr_truncated",
        "error",
        "addresses_masked",
    }
)


def _answer_problem(kind: object, answer: object) -> str | None:
    """Why ``answer`` is not a valid JSON answer of ``kind`` (child.check_answer's output)."""
    import datetime
    import math

    if kind == "number":
        if isinstance(answer, bool) or not isinstance(answer, (int, float)):
            return "number answer is not a number"
        if isinstance(answer, float) and not math.isfinite(answer):
            return "number answer is not finite"
        if isinstance(answer, int) and abs(answer) > 10**400:
            return "number answer is out of range"
        return None
    if kind == "date":
        if not isinstance(answer, str) or len(answer) != 10:
            return "date answer is not YYYY-MM-DD"
        try:
            datetime.date.fromisoformat(answer)
        except ValueError:
            return "date answer is not YYYY-MM-DD"
        return None
    if kind == "weeks_days":
        if (
            not isinstance(answer, list)
            or len(answer) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in answer)
        ):
            return "weeks_days answer is not two ints"
        if weeks_days_problem(*answer):
            return "weeks_days answer is not a (weeks, days) reading"
        return None
    return f"unknown answer kind {kind!r}"


def message_problem(msg: dict[str, Any]) -> str | None:
    """Why a result line is not one the child writes (None when it is well formed)."""
    if set(msg) != CHILD_MESSAGE_KEYS:
        return "wrong keys"
    if msg["outcome"] not in {o.value for o in CHILD_OUTCOMES}:
        return "unknown outcome"
    for name in ("stdout", "stderr"):
        if not isinstance(msg[name], str):
            return f"{name} is not a string"
    for name in ("stdout_truncated", "stderr_truncated"):
        if not isinstance(msg[name], bool):
            return f"{name} is not a boolean"
    if msg["error"] is not None and not isinstance(msg["error"], str):
        return "error is not a string"
    masked = msg["addresses_masked"]
    if isinstance(masked, bool) or not isinstance(masked, int) or masked < 0:
        return "addresses_masked is not a count"
    if msg["outcome"] == Outcome.OK.value:
        return _answer_problem(msg["kind"], msg["answer"])
    if msg["answer"] is not None or msg["kind"] is not None:
        return "an answer on a non-OK outcome"
    return None


class ZygoteFailure(RuntimeError):
    """The zygote died or broke its protocol: this supervisor cannot serve any more programs."""


class Supervisor:
    """The request loop's state: limits, the zygote (``zygote.py``) and its ready spares.

    ``spares`` children are kept forked ahead (after start-up); the zygote forks a replacement
    as soon as one is taken, so a request waits for a fork only when requests arrive faster
    than the zygote can fork. Start-up (the self-test) asks for each child on demand."""

    def __init__(
        self,
        limits: dict[str, int | float] | None = None,
        disabled_layers: Iterable[str] = (),
        backend_label: str = "process",
        spares: int = DEFAULT_SPARES,
        test_canary: str = "",
    ) -> None:
        self.test_canary = test_canary  # test_canary_from_env: the start of every nonce
        self.policy = policy.policy_dict(limits)
        self.limits = self.policy["limits"]
        self.policy_hash = policy.policy_hash(limits)
        self.disabled_layers = frozenset(disabled_layers)
        self.backend_label = backend_label
        if not isinstance(spares, int) or spares < 1:
            raise ValueError(f"spares must be a positive integer, got {spares!r}")
        self.spares_target = spares
        self.broken: str | None = None
        self.address_layout: str | None = None  # "fixed" | "randomised", from the zygote's hello
        self._ready: dict[bytes, collections.deque[tuple[int, int, int]]] = {
            zygote.SPARE: collections.deque(),
            zygote.TEST_SPARE: collections.deque(),
        }
        self._asked = {zygote.SPARE: 0, zygote.TEST_SPARE: 0}
        self._exits: dict[int, tuple[int, float]] = {}
        self._discarded: set[int] = set()  # spares found dead before their program: exit not needed
        self._run_phase = False
        # The zygote is forked first, before this process imports pyseccomp (see seccomp_filter).
        self.zygote_pid, self.sock = zygote.start_zygote(self.limits, self.disabled_layers)
        self.seccomp_probe: dict[str, Any] = {"action": None, "disabled": True}
        bpf = None
        try:
            if "seccomp" not in self.disabled_layers:
                from executor import seccomp_filter

                self.seccomp_probe, bpf = seccomp_filter.probe_and_compile()
                if bpf is None:
                    raise RuntimeError(f"seccomp unusable: {self.seccomp_probe}")
            self.sock.send(
                json.dumps(
                    {"seccomp_bpf": bpf.bpf.hex() if bpf else None, "action": bpf.action if bpf else None}
                ).encode()
            )
        except OSError as exc:  # the zygote died before it read its configuration: say why
            said = self._zygote_last_words()
            self.close()
            raise ZygoteFailure(f"the zygote ended at start-up ({exc}){': ' + said if said else ''}") from None
        except BaseException:
            self.close()
            raise
        self._poller = select.poll()
        self._poller.register(self.sock.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        hello = None
        deadline = time.monotonic() + ZYGOTE_START_SECONDS
        while hello is None:
            msg = self._pump(deadline)
            if msg is None:
                raise ZygoteFailure(f"the zygote did not start within {ZYGOTE_START_SECONDS:.0f} s")
            hello = msg.get("hello")
        self.address_layout = hello["address_layout"]
        self.violation_signals = {signal.SIGSYS}
        if self.seccomp_probe.get("signal"):
            self.violation_signals.add(self.seccomp_probe["signal"])
        gc.freeze()

    # -- the zygote ------------------------------------------------------------------------------
    def _zygote_last_words(self) -> str:
        """The error the zygote sent before it ended, if any (start-up failures)."""
        try:
            self.sock.settimeout(1.0)
            msg = json.loads(self.sock.recv(zygote.MAX_MESSAGE) or b"{}")
            return str(msg.get("error", "")) if isinstance(msg, dict) else ""
        except (OSError, ValueError):
            return ""

    def _ask(self, kind: bytes, n: int = 1) -> None:
        if n > 0:
            self.sock.send(kind * n)
            self._asked[kind] += n

    def _pump(self, deadline: float) -> dict[str, Any] | None:
        """Wait for one message from the zygote (until ``deadline``: then None) and file it."""
        left = deadline - time.monotonic()
        if left <= 0 or not self._poller.poll(max(1, int(left * 1000))):
            return None
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, zygote.MAX_MESSAGE, 2)
        except OSError as exc:
            raise ZygoteFailure(f"zygote socket: {exc}") from None
        if not data:
            for fd in fds:
                os.close(fd)
            raise ZygoteFailure("the zygote exited")
        msg: dict[str, Any] = json.loads(data)  # the zygote's message (zygote.py, "Protocol")
        if "error" in msg:
            raise ZygoteFailure(msg["error"])
        if "spare" in msg:
            kind = msg["kind"].encode()
            self._asked[kind] -= 1
            if len(fds) != 2:
                raise ZygoteFailure(f"spare {msg['spare']} arrived with {len(fds)} descriptors")
            self._ready[kind].append((msg["spare"], fds[0], fds[1]))
        elif "exit" in msg:
            pid = msg["exit"]
            if pid in self._discarded:
                self._discarded.discard(pid)
                return msg
            self._exits[pid] = (msg["status"], msg["cpu_ms"])
            for kind, queue in self._ready.items():  # a spare that died waiting (killed from outside)
                for item in [x for x in queue if x[0] == pid]:
                    queue.remove(item)
                    os.close(item[1])
                    os.close(item[2])
                    self._exits.pop(pid, None)
                    self._top_up(kind)
        return msg

    def _top_up(self, kind: bytes) -> None:
        if self._run_phase and kind == zygote.SPARE:
            self._ask(kind, self.spares_target - len(self._ready[kind]) - self._asked[kind])

    def _take_spare(self, kind: bytes) -> tuple[int, int, int]:
        # file what the zygote already reported (a spare stopped or killed by the previous
        # program is dropped here, not handed the next one)
        while self._poller.poll(0):
            if self._pump(time.monotonic() + 1.0) is None:
                break
        deadline = time.monotonic() + ZYGOTE_START_SECONDS
        while not self._ready[kind]:
            if self._asked[kind] <= 0:
                self._ask(kind)
            if self._pump(deadline) is None:
                raise ZygoteFailure(f"no spare child within {ZYGOTE_START_SECONDS:.0f} s")
        return self._ready[kind].popleft()

    def replenish(self) -> None:
        """Ask the zygote for the spares used since the last call. The loop calls this after it
        wrote a reply, so that the fork overlaps the gap before the next request rather than
        the program that is running (measured: replenishing at take time doubled the latency)."""
        self._top_up(zygote.SPARE)

    def start_run_phase(self) -> None:
        """End of start-up: the zygote drops the weakened self-test template and forks the spares."""
        self.sock.send(zygote.RUN_PHASE)
        self._run_phase = True
        self.replenish()

    def with_layers_off(self, layers: Iterable[str]) -> _SelftestView:
        """Children with layers 1-2 also off, for the self-test canaries (start-up only)."""
        if frozenset(layers) != zygote.SELFTEST_LAYERS_OFF:
            raise ValueError(f"the self-test can only turn off {sorted(zygote.SELFTEST_LAYERS_OFF)}")
        return _SelftestView(self)

    def close(self) -> None:
        """Stop the zygote (it kills and reaps its children) and release the spares."""
        for queue in self._ready.values():
            while queue:
                _pid, req_w, res_r = queue.popleft()
                os.close(req_w)
                os.close(res_r)
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            os.waitpid(self.zygote_pid, 0)
        except ChildProcessError:
            pass

    # -- one program --------------------------------------------------------------------------
    def run(self, source: str, kind: bytes = zygote.SPARE) -> dict[str, Any]:
        if not isinstance(source, str):
            return self._result(Outcome.INFRA_ERROR, error="bad request: source must be a string")
        if self.broken:
            return self._result(Outcome.INFRA_ERROR, error=f"supervisor broken: {self.broken}")
        try:
            return self._run(source, kind)
        except ZygoteFailure as exc:
            self.broken = str(exc)
            return self._result(Outcome.INFRA_ERROR, error=f"zygote failed: {exc}")

    def _run(self, source: str, kind: bytes) -> dict[str, Any]:
        nonce = self.test_canary + os.urandom(16).hex()
        payload = nonce.encode() + b"\n" + source.encode("utf-8", "surrogatepass")
        wall = float(self.limits["wall_seconds"])
        cap = int(self.limits["result_bytes"])
        for _attempt in range(3):
            pid, req_w, res_r = self._take_spare(kind)
            start = time.monotonic()
            try:
                _write_all(req_w, payload)
            except OSError:  # the waiting spare died (e.g. killed from outside): take another
                os.close(req_w)
                os.close(res_r)
                if self._exits.pop(pid, None) is None:
                    self._discarded.add(pid)
                continue
            break
        else:
            raise ZygoteFailure("three spares in a row died before their program arrived")
        os.close(req_w)
        data, timed_out, overflow = self._read_result(res_r, pid, start + wall, cap)
        os.close(res_r)
        status, cpu_ms, killed = self._await_exit(pid, start + wall + 1.0)
        timed_out = timed_out or killed
        wall_ms = (time.monotonic() - start) * 1000.0
        return self.classify(data, nonce, status, timed_out, overflow, wall_ms, cpu_ms)

    def _await_exit(self, pid: int, deadline: float) -> tuple[int, float, bool]:
        """The child's exit status and CPU time, reported by the zygote. A child still running
        at ``deadline`` (it closed its result descriptor but kept going) is killed."""
        killed = False
        while pid not in self._exits:
            if not killed and time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                killed = True
                deadline = time.monotonic() + ZYGOTE_START_SECONDS
            if self._pump(deadline) is None and killed:
                raise ZygoteFailure(f"the zygote did not report child {pid} after SIGKILL")
        status, cpu_ms = self._exits.pop(pid)
        return status, cpu_ms, killed

    @staticmethod
    def _read_result(fd: int, pid: int, deadline: float, cap: int) -> tuple[bytes, bool, bool]:
        # poll, not select: select() is refused (EPERM) under runsc --oci-seccomp 20221219
        chunks: list[bytes] = []
        size = 0
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                return b"".join(chunks), True, False
            if not poller.poll(max(1, int(left * 1000))):
                continue
            block = os.read(fd, 65536)
            if not block:
                return b"".join(chunks), False, False
            chunks.append(block)
            size += len(block)
            if size > cap:
                os.kill(pid, signal.SIGKILL)
                return b"".join(chunks), False, True

    def classify(
        self,
        data: bytes,
        nonce: str,
        status: int,
        timed_out: bool,
        overflow: bool,
        wall_ms: float,
        cpu_ms: float | None,
    ) -> dict[str, Any]:
        """How the child ended -> result dict (see outcomes.py for the precedence)."""
        exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        common = {
            "wall_ms": round(wall_ms, 3),
            "cpu_ms": None if cpu_ms is None else round(cpu_ms, 3),
            "exit_code": exit_code,
            "signal": sig,
        }
        message, forged = self._parse_message(data, nonce)
        keep: dict[str, Any] = {
            k: message[k]
            for k in ("stdout", "stderr", "stdout_truncated", "stderr_truncated", "addresses_masked")
            if message and k in message
        }
        for name, limit in (("stdout", "stdout_chars"), ("stderr", "stderr_chars")):
            if len(keep.get(name, "")) > int(self.limits[limit]):  # only a forged line is longer
                keep[name] = keep[name][: int(self.limits[limit])]
                keep[f"{name}_truncated"] = True
        cpu_limit_ms = float(self.limits["cpu_seconds"]) * 1000.0
        if sig is not None and sig in self.violation_signals:
            return self._result(
                Outcome.SANDBOX_VIOLATION,
                error="the program made a forbidden system call and was stopped by the sandbox",
                **common,
                **keep,
            )
        if overflow:  # more than a child's line ever is (child.fit_result_line): not the executor's
            return self._result(
                Outcome.SANDBOX_VIOLATION, error="the program wrote to the executor's result channel", **common, **keep
            )
        if timed_out:
            return self._result(
                Outcome.TIMEOUT_WALL,
                error=f"the program ran longer than {self.limits['wall_seconds']} s (wall clock) and was stopped",
                **common,
            )
        # soft = hard: the kernel sends SIGKILL at the hard limit (SIGXCPU only if soft < hard).
        # rusage lags the scheduler's exact runtime by up to a few ticks, hence the 80 % margin.
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_ms is not None and cpu_ms >= 0.8 * cpu_limit_ms):
            return self._result(
                Outcome.CPU_LIMIT,
                error=f"the program used more than {self.limits['cpu_seconds']} s of CPU time and was stopped",
                **common,
            )
        if sig == signal.SIGKILL:  # not ours, not RLIMIT_CPU: an outside agent (OOM killer, operator)
            return self._result(
                Outcome.INFRA_ERROR, error="the child was killed from outside the sandbox (SIGKILL); retry", **common
            )
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            return self._result(Outcome.CRASH, error=f"the program crashed (signal {name})", **common, **keep)
        if forged and exit_code == EXIT_RESULT_WRITE_FAILED and not data.endswith(b"\n"):
            # the child's own finish failed between the first and the last byte of its line
            # (child._ChildRun.finish): a crash of the executor's code, not a forgery
            return self._result(Outcome.CRASH, error="the program ended while its result was being written", **common)
        if forged:
            return self._result(
                Outcome.SANDBOX_VIOLATION, error="the program wrote to the executor's result channel", **common, **keep
            )
        if message is None:
            return self._result(
                Outcome.CRASH, error=f"the program ended without a result (exit code {exit_code})", **common
            )
        outcome = Outcome(message["outcome"])
        return self._result(
            outcome,
            answer=message.get("answer"),
            kind=message.get("kind"),
            error=(message.get("error") or "")[: 4 * int(self.limits["error_chars"])] or None,
            **common,
            **keep,
        )

    @staticmethod
    def _parse_message(data: bytes, nonce: str) -> tuple[dict[str, Any] | None, bool]:
        """(message, forged): the one line carrying our nonce; anything else on the channel is
        a forgery attempt. The line is checked field by field at this boundary (a program with
        layers 1-2 off can write any bytes here): exactly the child's keys, each of its type, an
        answer that matches its kind. Nothing a line holds (a 100k-deep nesting included) can
        raise out of here."""
        lines = [ln for ln in data.split(b"\n") if ln.strip()]
        if not lines:
            return None, False
        good = []
        for ln in lines:
            try:
                msg = json.loads(ln)
            except Exception:  # ValueError, RecursionError (deep nesting), MemoryError ...
                return None, True
            if not isinstance(msg, dict) or msg.get("nonce") != nonce or message_problem(msg):
                return None, True
            good.append(msg)
        if len(good) != 1:
            return None, True
        return good[0], False

    def _result(self, outcome: Outcome, **fields: object) -> dict[str, Any]:
        return make_result(outcome, self.backend_label, address_layout=self.address_layout, **fields)

    def ready_info(self, selftest: dict[str, Any]) -> dict[str, Any]:
        return {
            "ready": True,
            "policy_hash": self.policy_hash,
            "selftest": selftest,
            "limits": self.limits,
            "disabled_layers": sorted(self.disabled_layers),
            "seccomp": self.seccomp_probe,
            "python": sys.version.split()[0],
            "address_layout": self.address_layout,
            "backend": self.backend_label,
            "spares": self.spares_target,
        }


class _SelftestView:
    """``run`` on children with layers 1-2 off (``zygote.TEST_SPARE``): self-test canaries only."""

    def __init__(self, sup: Supervisor):
        self._sup = sup

    def run(self, source: str) -> dict[str, Any]:
        if self._sup._run_phase:
            raise RuntimeError("weakened children exist only during start-up")
        return self._sup.run(source, zygote.TEST_SPARE)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def handle_line(sup: Supervisor, line: bytes) -> dict[str, Any]:
    """One request line -> one response object (malformed requests get INFRA_ERROR)."""
    try:
        req = json.loads(line)
    except ValueError as exc:
        return {"id": None, "result": sup._result(Outcome.INFRA_ERROR, error=f"bad request: not JSON ({exc})")}
    if not isinstance(req, dict):
        return {"id": None, "result": sup._result(Outcome.INFRA_ERROR, error="bad request: not a JSON object")}
    rid = req.get("id")
    if not isinstance(rid, str):
        return {"id": None, "result": sup._result(Outcome.INFRA_ERROR, error="bad request: 'id' must be a string")}
    source = req.get("source")
    if not isinstance(source, str):
        return {"id": rid, "result": sup._result(Outcome.INFRA_ERROR, error="bad request: 'source' must be a string")}
    key = req.get("key")
    if not (isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
        return {"id": rid, "result": sup._result(Outcome.INFRA_ERROR, error="bad request: 'key' must be 64 hex digits")}
    try:
        result = sup.run(source)
    except Exception as exc:  # infrastructure, not the program
        result = sup._result(Outcome.INFRA_ERROR, error=f"supervisor error: {type(exc).__name__}: {exc}")
    return {"id": rid, "result": result, "mac": reply_mac(key, rid, result)}


def _write(obj: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(obj).encode() + b"\n")
    sys.stdout.buffer.flush()


KEPT_ENVIRONMENT = frozenset({"LC_CTYPE"})  # set by CPython itself (PEP 538 locale coercion)


def reexec_with_empty_environment() -> None:
    """Start again with an empty environment if this process was given one (docker gives the
    container's HOSTNAME, PATH, HOME, LANG). Clearing ``os.environ`` does not erase the copy
    the kernel keeps at the top of the stack, which /proc/<pid>/environ shows to any process
    that may read it (a child with seccomp off: layer 3 must not rest on layer 4)."""
    if set(os.environ) - KEPT_ENVIRONMENT:
        os.execve(sys.executable, sys.orig_argv, {})


def main(argv: Sequence[str] | None = None) -> int:
    reexec_with_empty_environment()
    ap = argparse.ArgumentParser(prog="executor-supervisor", description=__doc__.split("\n")[0])
    ap.add_argument("--sys-path", action="append", default=[], help="directory to import the seccomp binding from")
    ap.add_argument("--limits", default=None, help="JSON object of policy limit overrides")
    ap.add_argument("--backend-label", default="process", choices=["process", "container"])
    ap.add_argument("--unsafe-disable-layers", default="", help="TESTS ONLY: comma-separated layers to turn off")
    ap.add_argument("--spares", type=int, default=DEFAULT_SPARES, help="children kept forked ahead")
    ap.add_argument("--test-canary", default="", help="TESTS ONLY: hex every nonce starts with (test_canary_from_env)")
    args = ap.parse_args(argv)
    for p in reversed(args.sys_path):
        sys.path.insert(1, p)
    try:
        limits = json.loads(args.limits) if args.limits else None
        if limits is not None and not isinstance(limits, dict):
            raise ValueError("--limits must be a JSON object")
        layers = [x for x in args.unsafe_disable_layers.split(",") if x]
        bad = [x for x in layers if x not in policy.LAYER_SWITCHES]
        if bad:
            raise ValueError(f"unknown layer(s) {bad}; known: {list(policy.LAYER_SWITCHES)}")
        zygote.make_not_dumpable()
        sup = Supervisor(
            limits,
            layers,
            args.backend_label,
            spares=args.spares,
            test_canary=checked_canary(args.test_canary, "--test-canary"),
        )
        from executor import selftest

        if {"seccomp", "rlimits"} & set(layers):  # canaries would really fork/exec/read files
            report: dict[str, Any] = {
                "ok": True,
                "skipped": f"OS layers disabled for a test: {sorted(layers)}",
                "failed": [],
            }
        else:
            report = selftest.run_selftest(sup)
    except Exception as exc:
        _write({"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    if not report["ok"]:
        _write({"ready": False, "error": "self-test failed: " + "; ".join(report["failed"]), "selftest": report})
        return 1
    sup.start_run_phase()
    _write(sup.ready_info(report))
    stdin = sys.stdin.buffer
    try:
        while True:
            line = stdin.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            _write(handle_line(sup, line))
            sup.replenish()
            if sup.broken:  # the zygote is gone: exit so that the pool replaces this supervisor
                return 1
    finally:
        sup.close()


if __name__ == "__main__":
    sys.exit(main())
