"""Plain CPython as the reference an executor result is compared with: what the paper's executor
ran each program in (a fresh ``__main__`` namespace, the full builtins), with the wall clock at
the policy's CLOCK_INSTANT (frozen by its own few lines below, not by the executor's code) and
limits like the executor's, so that a program that never ends ends here too.

``Reference`` starts one server process (``serve``, a single thread) that forks a fresh child per program: each program runs alone, in a temporary working
directory, with RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE = 0 and a wall-clock kill; output is
captured in memory. Only honest and grammar-made programs are run here, never the hostile ones
(they would act on this host).

A verdict is ``[outcome, detail]``: ``["OK", answer]``, ``["PROGRAM_ERROR", exception name]``,
``["PROGRAM_ERROR", "no answer"]``, ``["BAD_RETURN_KIND", None]`` or ``["LIMIT", what]``
(``"cpu"``, ``"memory"``, ``"wall"``, ``"crash"``). The answer's kind and JSON form come from
``executor.child.check_answer``, so the comparison is of what the program computes, not of
how the sandbox treats it.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMITS = {"cpu_seconds": 1, "wall_seconds": 10.0, "address_space_bytes": 512 * 1024 * 1024}


class Reference:
    """A client of the reference server; ``run(sources)`` -> one verdict per program."""

    def __init__(self, limits: dict | None = None):
        limits = {**LIMITS, **(limits or {})}
        code = (
            f"import sys; sys.path.insert(0, {str(REPO)!r}); "
            "from tests.adversarial.reference import serve; serve(__import__('json').loads(sys.argv[1]))"
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code, json.dumps(limits)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={},
        )

    def run(self, sources: list[str]) -> list[list]:
        out = []
        for source in sources:
            self._proc.stdin.write((json.dumps(source) + "\n").encode())
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
            if not line:
                raise RuntimeError("the reference server ended")
            out.append(json.loads(line))
        return out

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
        self._proc.stdout.close()

    def __enter__(self) -> Reference:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def plain_cpython(sources: list[str]) -> list[list]:
    """One verdict per program (a server started and stopped for the call)."""
    with Reference() as ref:
        return ref.run(sources)


# --- the server ----------------------------------------------------------------------------------


def _freeze_clock(instant: float) -> None:
    import datetime

    time.time = lambda: instant

    class FrozenDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(instant, tz)

        @classmethod
        def today(cls):
            return cls.fromtimestamp(instant)

        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(instant)

    datetime.datetime = FrozenDatetime


def _child(source: str, limits: dict, write_fd: int, directory: str) -> None:
    import contextlib
    import io

    from executor.child import check_answer

    resource.setrlimit(resource.RLIMIT_AS, (limits["address_space_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    os.chdir(directory)
    namespace = {"__name__": "__main__"}
    try:
        code = compile(source, "<program>", "exec", dont_inherit=True)  # not this module's __future__
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(code, namespace)
        if "answer" not in namespace:
            verdict = ["PROGRAM_ERROR", "no answer"]
        else:
            kind, value, _problem = check_answer(namespace["answer"])
            verdict = ["OK", value] if kind else ["BAD_RETURN_KIND", None]
    except MemoryError:
        verdict = ["LIMIT", "memory"]
    except BaseException as exc:
        verdict = ["PROGRAM_ERROR", type(exc).__name__]
    try:
        data = (json.dumps(verdict) + "\n").encode()
    except (ValueError, OverflowError):
        data = b'["OK", "unencodable"]\n'
    os.write(write_fd, data)
    os._exit(0)


def _one(source: str, limits: dict, directory: str) -> list:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child(source, limits, write_fd, directory)
        finally:
            os._exit(70)
    os.close(write_fd)
    deadline = time.monotonic() + limits["wall_seconds"]
    chunks, timed_out = [], False
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_fd], [], [], left)[0]:
            if time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                timed_out = True
                break
            continue
        block = os.read(read_fd, 65536)
        if not block:
            break
        chunks.append(block)
    os.close(read_fd)
    _pid, status = os.waitpid(pid, 0)
    if timed_out:
        return ["LIMIT", "wall"]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return ["LIMIT", "cpu" if sig in (signal.SIGXCPU, signal.SIGKILL) else "crash"]
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return ["LIMIT", "crash"]


def serve(limits: dict) -> None:
    """JSON lines: a program's source in, its verdict out, until end of input."""
    import datetime

    from executor import policy

    _freeze_clock(datetime.datetime.fromisoformat(policy.CLOCK_INSTANT).timestamp())
    with tempfile.TemporaryDirectory(prefix="reference-") as directory:
        for line in sys.stdin:
            verdict = _one(json.loads(line), limits, directory)
            sys.stdout.write(json.dumps(verdict) + "\n")
            sys.stdout.flush()
