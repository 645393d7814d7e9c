"""The two worker kinds of the pool: one supervisor process each, spoken to over its stdio.

* ``ProcessWorker``: ``python3 -I -S -B executor/supervisor.py ...`` on this host, empty
  environment (the process backend: layers 1-4).
* ``ContainerWorker``: ``docker run -i --rm --runtime=runsc ... IMAGE python3 -I -S -m
  executor.supervisor ...`` (the container backend: layers 1-5).

Both speak the supervisor protocol (docs/ARCHITECTURE.md): a ready line, then one JSON reply per
request line. A worker that dies, hangs past the pool deadline, refuses to start or breaks the
protocol raises ``WorkerFailure``; the pool (``pool.WorkerPool``) then replaces it and retries.
"""

from __future__ import annotations

import hmac
import json
import os
import select
import subprocess
import tempfile
import time
import uuid
from typing import Any

from executor.result import reply_mac


class ExecutorUnavailable(RuntimeError):
    """The requested backend cannot run here (the message says why)."""


class WorkerFailure(Exception):
    """A worker died, hung, refused to start or broke the protocol (the program may be retried)."""


class ForgedReply(WorkerFailure):
    """A line on the supervisor's reply stream that the supervisor did not write for this
    request (bad JSON, another id, a missing or wrong MAC): the running program wrote into the
    protocol (e.g. through /proc/<supervisor>/fd/1). The program is a SANDBOX_VIOLATION and the
    worker, whose stream is no longer trustworthy, is killed."""


def _wait_fd(fd: int, events: int, timeout_s: float) -> bool:
    """poll() one descriptor (no FD_SETSIZE limit, unlike select); True when ready or closed."""
    p = select.poll()
    p.register(fd, events)
    return bool(p.poll(max(0, int(timeout_s * 1000)) or 1))


class SupervisorWorker:
    """One supervisor process behind a pipe pair: start, ready line, request/reply, stop."""

    kind = "?"

    def __init__(self, argv: list[str], start_timeout: float, name: str, **popen: Any) -> None:
        self.name = name
        self.programs = 0
        self.ready: dict[str, Any] = {}
        self._buf = bytearray()
        self._ids = 0
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0, **popen
        )
        os.set_blocking(self.proc.stdin.fileno(), False)  # writes are bounded by poll + deadline
        try:
            line = self._readline(time.monotonic() + start_timeout)
            msg = json.loads(line)
        except (WorkerFailure, ValueError) as exc:
            detail = self.stderr_tail()
            self.kill()
            raise WorkerFailure(
                f"{self.kind} supervisor did not become ready: {exc}" + (f"; it said: {detail}" if detail else "")
            ) from None
        if not isinstance(msg, dict) or msg.get("ready") is not True:
            self.kill()
            err = msg.get("error") if isinstance(msg, dict) else msg
            raise WorkerFailure(f"executor supervisor refused to start: {err}")
        self.ready = msg

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def _readline(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerFailure("no answer before the pool deadline")
            if not _wait_fd(fd, select.POLLIN, left):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerFailure(f"{self.kind} supervisor exited (status {self.proc.poll()})")
            self._buf += chunk

    def request(self, source: str, timeout: float) -> dict[str, Any]:
        """Send one program; the supervisor's result dict, or WorkerFailure."""
        self._ids += 1
        rid = str(self._ids)
        key = os.urandom(32).hex()
        line = json.dumps({"id": rid, "source": source, "key": key}).encode() + b"\n"
        deadline = time.monotonic() + timeout
        self._write_all(line, deadline)
        raw = self._readline(deadline)
        try:
            msg = json.loads(raw)
        except Exception:  # ValueError, RecursionError of a deeply nested line
            raise ForgedReply(f"a non-JSON line on the reply stream: {raw[:200]!r}") from None
        if (
            not isinstance(msg, dict)
            or msg.get("id") != rid
            or not isinstance(msg.get("result"), dict)
            or not isinstance(msg.get("mac"), str)
            or not hmac.compare_digest(msg["mac"], reply_mac(key, rid, msg["result"]))
        ):
            raise ForgedReply(f"a reply to request {rid} without its MAC: {raw[:200]!r}")
        result: dict[str, Any] = msg["result"]  # a JSON object, checked above
        return result

    def _write_all(self, data: bytes, deadline: float) -> None:
        """Write a request without blocking past the deadline (a hung supervisor stops reading,
        and a long program does not fit in the pipe buffer)."""
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerFailure("supervisor did not read the request before the pool deadline")
            if not _wait_fd(fd, select.POLLOUT, left):
                continue
            try:
                n = os.write(fd, view[:65536])
            except BlockingIOError:
                continue
            except OSError as exc:
                raise WorkerFailure(f"supervisor stdin closed: {exc}") from None
            view = view[n:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, grace: float = 5.0) -> None:
        """End of input stops the supervisor (and, for a container, the container)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
        self._cleanup()

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._cleanup()

    def _cleanup(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self._stderr):
            try:
                f.close()
            except (OSError, AttributeError):
                pass


class ProcessWorker(SupervisorWorker):
    """A supervisor on this host (layers 1-4)."""

    kind = "process"

    def __init__(self, command: list[str], start_timeout: float = 120.0):
        super().__init__(
            command, start_timeout, name=f"process-{uuid.uuid4().hex[:10]}", env={}, cwd="/", close_fds=True
        )


class ContainerWorker(SupervisorWorker):
    """One ``docker run -i`` process with a supervisor inside (layers 1-5)."""

    kind = "container"

    def __init__(self, docker: str, run_flags: list[str], image: str, command: list[str], start_timeout: float):
        self.docker = docker
        self.cpu: int | None = None
        name = f"mathsolver-exec-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        argv = [docker, "run", "-i", "--rm", f"--name={name}", *run_flags, image, *command]
        super().__init__(argv, start_timeout, name=name, start_new_session=True)

    def kill(self) -> None:
        """Remove the container itself (killing the docker client would leave it running)."""
        remove_container(self.docker, self.name)
        super().kill()


def remove_container(docker: str, name: str) -> None:
    try:
        subprocess.run([docker, "rm", "-f", name], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pass
