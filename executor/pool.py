"""Layer 6: a pool of long-lived executor containers (gVisor), driven over stdio.

Each worker is one ``docker run -i --rm --runtime=runsc ... IMAGE python3 -I -S -m
executor.supervisor`` process; the flags come from ``containers/executor/run-flags.txt`` (layer 5),
the supervisor inside forks a fresh child per program (layers 1-4). Requests and answers are the
JSON lines of the supervisor protocol (docs/ARCHITECTURE.md).

Guarantees:

* ``run(source)`` always returns a result dict (ExecResult fields); a container that dies, hangs
  past the pool deadline or breaks the protocol is removed, replaced, and the program is retried
  on a fresh container (``max_attempts`` in all). If the program killed its container on every
  attempt the result is ``CRASH``; if no container could be started it is ``INFRA_ERROR``.
* a container is recycled (stopped, replaced in the background) after ``recycle_after``
  programs and after any result in ``recycle_on`` (sandbox violations, crashes, infra errors).
* ``run_many`` spreads programs across the containers and keeps their order.
* missing docker, dockerd, runtime or image is a ``ContainerBackendUnavailable`` naming the fix;
  an image built from other executor sources than this checkout is refused (stale image).

Only the standard library and the docker CLI are used (no docker SDK): this package stays
stdlib-only.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import select
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from executor import policy
from executor.outcomes import Outcome

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
CONTAINER_DIR = REPO_ROOT / "containers" / "executor"
RUN_FLAGS_FILE = CONTAINER_DIR / "run-flags.txt"
SECCOMP_PROFILE = CONTAINER_DIR / "seccomp.json"
IMAGE_LOCK = CONTAINER_DIR / "image.lock"
IMAGE_NAME = "mathsolver-executor"
SUPERVISOR_COMMAND = ("python3", "-I", "-S", "-m", "executor.supervisor")
LABEL_SRC = "org.mathsolver.executor-src-sha256"
LABEL_ROOTFS = "org.mathsolver.rootfs-sha256"
RESULT_FIELDS = ("outcome", "answer", "kind", "stdout", "stderr", "stdout_truncated",
                 "stderr_truncated", "wall_ms", "cpu_ms", "exit_code", "signal", "error", "backend")
# Values for the run-flags.txt placeholders (besides seccomp_profile). pids: an idle runsc sandbox
# already holds ~63 host tasks (Sentry threads, ptrace stubs) and ~90 while working; 64 kills it.
DEFAULT_RUN_VALUES = {"runtime": "runsc", "memory": "512m", "pids_limit": 256, "tmpfs_size": "16m"}
DEFAULT_RECYCLE_ON = frozenset({Outcome.SANDBOX_VIOLATION.value, Outcome.CRASH.value,
                                Outcome.INFRA_ERROR.value})


class ContainerBackendUnavailable(RuntimeError):
    """docker, dockerd, the runsc runtime, the image or the run configuration is missing."""


class _ContainerFailure(Exception):
    """A container died, hung or broke the protocol (the program may be retried elsewhere)."""


def default_image() -> str:
    """The tag recorded by scripts/build-executor-image.sh in image.lock, else ``:latest``."""
    try:
        tag = json.loads(IMAGE_LOCK.read_text()).get("image")
        if isinstance(tag, str) and tag:
            return tag
    except (OSError, ValueError):
        pass
    return f"{IMAGE_NAME}:latest"


DEFAULT_IMAGE = default_image()


def executor_source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """Digest of the executor sources, computed exactly like the build script does:
    sha256 over ``sha256sum``-style lines "<hex>  executor/<file>.py" in C-sorted path order."""
    root = package_dir.parent
    files = sorted(p.relative_to(root).as_posix() for p in package_dir.rglob("*.py")
                   if "__pycache__" not in p.parts)
    lines = "".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def read_run_flags(path: Path = RUN_FLAGS_FILE, **values) -> list[str]:
    """The docker run flags of run-flags.txt with ``{placeholders}`` filled from ``values``."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ContainerBackendUnavailable(f"run flags file {path} unreadable: {exc}") from None
    flags = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            flags.append(line.format(**values))
        except KeyError as exc:
            raise ContainerBackendUnavailable(f"{path}:{n}: unknown placeholder {exc} in {line!r}") from None
    return flags


def default_run_flags() -> list[str]:
    """The flags a default ContainerPool uses (for reports, benchmarks and tests)."""
    return read_run_flags(RUN_FLAGS_FILE, **DEFAULT_RUN_VALUES, seccomp_profile=str(SECCOMP_PROFILE.resolve()))


def _wait_fd(fd: int, events: int, timeout_s: float) -> bool:
    """poll() one descriptor (no FD_SETSIZE limit, unlike select); True when it is ready or closed."""
    p = select.poll()
    p.register(fd, events)
    return bool(p.poll(max(0, int(timeout_s * 1000)) or 1))


def _docker(docker: str, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run([docker, *args], capture_output=True, text=True, timeout=timeout)


class _Container:
    """One running ``docker run -i`` process with a supervisor inside."""

    def __init__(self, docker: str, argv_head: list[str], image: str, command: list[str],
                 start_timeout: float):
        self.docker = docker
        self.name = f"mathsolver-exec-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.programs = 0
        self.cpu: int | None = None
        self.ready: dict = {}
        self._buf = bytearray()
        self._stderr = tempfile.TemporaryFile()
        argv = [docker, "run", "-i", "--rm", f"--name={self.name}", *argv_head, image, *command]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, bufsize=0, start_new_session=True)
        os.set_blocking(self.proc.stdin.fileno(), False)  # writes are bounded by select + deadline
        try:
            line = self._readline(time.monotonic() + start_timeout)
            msg = json.loads(line)
        except (_ContainerFailure, ValueError) as exc:
            detail = self.stderr_tail()
            self.kill()
            raise _ContainerFailure(f"container did not become ready: {exc}"
                                    + (f"; docker said: {detail}" if detail else "")) from None
        if not isinstance(msg, dict) or msg.get("ready") is not True:
            self.kill()
            err = msg.get("error") if isinstance(msg, dict) else msg
            raise _ContainerFailure(f"supervisor refused to start: {err}")
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
                del self._buf[:nl + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise _ContainerFailure("no answer before the pool deadline")
            if not _wait_fd(fd, select.POLLIN, left):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self.proc.poll()
                raise _ContainerFailure(f"container exited (docker run status {code})")
            self._buf += chunk

    def request(self, rid: str, source: str, timeout: float) -> dict:
        line = json.dumps({"id": rid, "source": source}).encode() + b"\n"
        deadline = time.monotonic() + timeout
        self._write_all(line, deadline)
        raw = self._readline(deadline)
        try:
            msg = json.loads(raw)
        except ValueError:
            raise _ContainerFailure(f"supervisor sent a non-JSON line: {raw[:200]!r}") from None
        if not isinstance(msg, dict) or msg.get("id") != rid or not isinstance(msg.get("result"), dict):
            raise _ContainerFailure(f"supervisor answer does not match request {rid}: {raw[:200]!r}")
        return msg["result"]

    def _write_all(self, data: bytes, deadline: float) -> None:
        """Write a request without ever blocking past the deadline (a hung supervisor stops
        reading, and a long program does not fit in the pipe buffer)."""
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _ContainerFailure("supervisor did not read the request before the pool deadline")
            if not _wait_fd(fd, select.POLLOUT, left):
                continue
            try:
                n = os.write(fd, view[:65536])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError) as exc:
                raise _ContainerFailure(f"container stdin closed: {exc}") from None
            view = view[n:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, grace: float = 5.0) -> None:
        """End of input stops the supervisor; the container then exits and is removed (--rm)."""
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
        """Remove the container itself (killing the docker client would leave it running)."""
        try:
            _docker(self.docker, "rm", "-f", self.name, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
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


class ContainerPool:
    """N long-lived executor containers; ``run``, ``run_many``, ``describe``, ``close``.

    Options (keyword): ``memory`` ("512m", also the memory+swap cap), ``pids_limit`` (256, >= 128),
    ``tmpfs_size`` ("16m"), ``recycle_after`` (programs per container, 500), ``recycle_on``
    (outcomes that retire a container), ``max_attempts`` (3), ``limits`` (policy limit overrides,
    passed to the supervisor), ``disabled_layers`` (TESTS ONLY, passed to the supervisor),
    ``runtime`` ("runsc"), ``docker`` (CLI path), ``seccomp_profile`` (path), ``run_flags_file``,
    ``start_timeout`` (s), ``request_timeout`` (s; default wall-clock limit + 15 s),
    ``check_image_source`` (refuse an image built from other executor sources; True),
    ``pin_cpus`` (give each container one CPU with ``--cpuset-cpus``, spread evenly; False).
    """

    def __init__(self, workers: int | None = None, image: str | None = None, *,
                 memory: str = DEFAULT_RUN_VALUES["memory"], pids_limit: int = DEFAULT_RUN_VALUES["pids_limit"],
                 tmpfs_size: str = DEFAULT_RUN_VALUES["tmpfs_size"],
                 recycle_after: int = 500, recycle_on=DEFAULT_RECYCLE_ON, max_attempts: int = 3,
                 limits: dict | None = None, disabled_layers=(), runtime: str = DEFAULT_RUN_VALUES["runtime"],
                 docker: str = "docker", seccomp_profile: str | os.PathLike | None = None,
                 run_flags_file: str | os.PathLike | None = None, start_timeout: float = 120.0,
                 request_timeout: float | None = None, check_image_source: bool = True,
                 pin_cpus: bool = False):
        if workers is None:
            workers = os.cpu_count() or 1
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        if not isinstance(recycle_after, int) or recycle_after < 1:
            raise ValueError(f"recycle_after must be a positive integer, got {recycle_after!r}")
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        if not isinstance(pids_limit, int) or pids_limit < 128:
            raise ValueError(f"pids_limit must be an integer >= 128 (64 kills a forking runsc sandbox), got {pids_limit!r}")
        self.workers = workers
        self.image = image or default_image()
        self.recycle_after = recycle_after
        self.recycle_on = frozenset(str(o) for o in recycle_on)
        self.max_attempts = max_attempts
        self.docker = docker
        self.runtime = runtime
        self.start_timeout = start_timeout
        effective = policy.policy_dict(limits)["limits"]  # validates the overrides
        self.request_timeout = request_timeout or float(effective["wall_seconds"]) + 15.0
        self.seccomp_profile = Path(seccomp_profile or SECCOMP_PROFILE).resolve()
        self.run_flags_file = Path(run_flags_file or RUN_FLAGS_FILE)
        self._docker_bin = self._preflight_docker()
        self._image_info = self._preflight_image(check_image_source)
        if not self.seccomp_profile.is_file():
            raise ContainerBackendUnavailable(f"seccomp profile {self.seccomp_profile} missing "
                                              "(render it with `executor seccomp-profile`)")
        self.run_flags = read_run_flags(self.run_flags_file, runtime=runtime, memory=memory,
                                        pids_limit=str(pids_limit), tmpfs_size=tmpfs_size,
                                        seccomp_profile=str(self.seccomp_profile))
        from executor.supervisor import supervisor_args
        self.command = [*SUPERVISOR_COMMAND, *supervisor_args(
            limits=limits, disabled_layers=tuple(disabled_layers), backend_label="container")]
        self.pin_cpus = bool(pin_cpus)
        self._cpus = sorted(os.sched_getaffinity(0))
        self._starting_cpus: list[int] = []
        self._ids = itertools.count(1)
        self._idle: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._live: set[_Container] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.stats = {"started": 0, "recycled": 0, "replaced": 0, "retried": 0}
        self._finalizer = weakref.finalize(self, _remove_all, self.docker, self._live)
        with ThreadPoolExecutor(max_workers=workers) as tp:
            futures = [tp.submit(self._start) for _ in range(workers)]
        errors = [f.exception() for f in futures if f.exception()]
        for f in futures:
            if not f.exception():
                self._idle.put(f.result())
        if errors:
            self.close()
            raise ContainerBackendUnavailable(f"executor container failed to start: {errors[0]}")
        self.ready_info = next(iter(self._live)).ready if self._live else {}

    # --- preflight ---------------------------------------------------------------------------
    def _preflight_docker(self) -> str:
        path = shutil.which(self.docker)
        if not path:
            raise ContainerBackendUnavailable(f"docker CLI {self.docker!r} not found on PATH "
                                              "(install the host with scripts/install-host.sh)")
        try:
            info = _docker(path, "info", "--format", "{{json .}}", timeout=30)
        except subprocess.TimeoutExpired:
            raise ContainerBackendUnavailable("dockerd did not answer `docker info` within 30 s") from None
        if info.returncode != 0:
            raise ContainerBackendUnavailable("dockerd not reachable (`docker info` failed: "
                                              f"{info.stderr.strip()[:300]}); start it with scripts/install-host.sh")
        data = json.loads(info.stdout)
        runtimes = data.get("Runtimes") or {}
        if self.runtime not in runtimes:
            raise ContainerBackendUnavailable(
                f"dockerd has no {self.runtime!r} runtime (has: {', '.join(sorted(runtimes))}); "
                "configure it with scripts/install-host.sh")
        self._docker_info = {"server_version": data.get("ServerVersion"),
                             "runtime": {"name": self.runtime, **runtimes[self.runtime]}}
        return path

    def _preflight_image(self, check_source: bool) -> dict:
        res = _docker(self._docker_bin, "image", "inspect", "--format", "{{json .}}", self.image)
        if res.returncode != 0:
            raise ContainerBackendUnavailable(f"executor image {self.image!r} not found: build it with "
                                              "scripts/build-executor-image.sh")
        data = json.loads(res.stdout)
        labels = (data.get("Config") or {}).get("Labels") or {}
        info = {"image": self.image, "image_id": data.get("Id"),
                "rootfs_sha256": labels.get(LABEL_ROOTFS),
                "layers": (data.get("RootFS") or {}).get("Layers"),
                "executor_src_sha256": labels.get(LABEL_SRC)}
        if check_source:
            image_src = labels.get(LABEL_SRC)
            if not image_src:
                raise ContainerBackendUnavailable(f"image {self.image!r} has no {LABEL_SRC} label: it was "
                                                  "not built by scripts/build-executor-image.sh")
            here = executor_source_digest()
            if image_src != here:
                raise ContainerBackendUnavailable(
                    f"image {self.image!r} is stale: built from executor sources {image_src[:12]}, "
                    f"this checkout has {here[:12]}; rebuild with scripts/build-executor-image.sh")
        return info

    # --- containers --------------------------------------------------------------------------
    def _pick_cpu(self) -> list[str]:
        """``--cpuset-cpus`` for a new container when pinning: the CPU with the fewest containers.
        (On the shared 2-core test machine pinning made no measurable difference, so it is off
        by default.)"""
        if not self.pin_cpus:
            return []
        with self._lock:
            used = [getattr(c, "cpu", None) for c in self._live] + list(self._starting_cpus)
            cpu = min(self._cpus, key=lambda k: (used.count(k), k))
            self._starting_cpus.append(cpu)
        return [f"--cpuset-cpus={cpu}"]

    def _start(self) -> _Container:
        pin = self._pick_cpu()
        try:
            c = _Container(self._docker_bin, self.run_flags + pin, self.image, self.command, self.start_timeout)
        finally:
            if pin:
                with self._lock:
                    self._starting_cpus.remove(int(pin[0].split("=", 1)[1]))
        c.cpu = int(pin[0].split("=", 1)[1]) if pin else None
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._live.add(c)
                self.stats["started"] += 1
        if closed:
            c.close()
            raise _ContainerFailure("pool closed")
        return c

    def _retire(self, c: _Container, kill: bool) -> None:
        with self._lock:
            self._live.discard(c)
        if kill:
            c.kill()
        else:
            c.close()

    def _replace_in_background(self, old: _Container | None, kill: bool) -> None:
        """Stop ``old`` and put a fresh container on the idle queue, off the caller's path."""
        def work():
            if old is not None:
                self._retire(old, kill)
            try:
                new = self._start()
            except _ContainerFailure as exc:
                self._idle.put(exc)  # the next caller sees the failure and retries the start
                return
            self._idle.put(new)
        t = threading.Thread(target=work, name="executor-pool-replace", daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _checkout(self) -> _Container:
        item = self._idle.get()
        if isinstance(item, _Container) and item.alive():
            return item
        if isinstance(item, _Container):  # died while idle
            self._retire(item, kill=True)
            self.stats["replaced"] += 1
        try:
            return self._start()
        except _ContainerFailure:
            self._idle.put(None)  # keep the slot: someone will try again
            raise

    # --- API ---------------------------------------------------------------------------------
    def run(self, source: str) -> dict:
        """Run one program; always returns a result dict (see the module docstring)."""
        if not isinstance(source, str):
            raise TypeError(f"program source must be str, got {type(source).__name__}")
        if self._closed:
            raise RuntimeError("ContainerPool is closed")
        died, start_errors = [], []
        for attempt in range(self.max_attempts):
            if attempt:
                self.stats["retried"] += 1
            try:
                c = self._checkout()
            except _ContainerFailure as exc:
                start_errors.append(str(exc))
                continue
            rid = str(next(self._ids))
            try:
                result = c.request(rid, source, self.request_timeout)
            except _ContainerFailure as exc:
                died.append(f"{exc}" + (f" [{c.stderr_tail(300)}]" if c.stderr_tail(300) else ""))
                self.stats["replaced"] += 1
                self._replace_in_background(c, kill=True)
                continue
            c.programs += 1
            if c.programs >= self.recycle_after or str(result.get("outcome")) in self.recycle_on:
                self.stats["recycled"] += 1
                self._replace_in_background(c, kill=False)
            else:
                self._idle.put(c)
            result.setdefault("backend", "container")
            return result
        if died:
            return _result(Outcome.CRASH, f"the sandbox container died while running this program "
                                          f"({len(died)} attempt(s)): {died[-1]}")
        return _result(Outcome.INFRA_ERROR, f"no executor container could be started: {start_errors[-1]}")

    def run_many(self, sources) -> list[dict]:
        """Run programs in parallel across the containers; results in input order."""
        sources = list(sources)
        for i, s in enumerate(sources):
            if not isinstance(s, str):
                raise TypeError(f"program source #{i} must be str, got {type(s).__name__}")
        if not sources:
            return []
        with ThreadPoolExecutor(max_workers=min(self.workers, len(sources))) as tp:
            return list(tp.map(self.run, sources))

    def describe(self) -> dict:
        """Everything a run manifest needs to identify the sandbox."""
        return {
            "backend": "container",
            **self._image_info,
            "runtime": self._docker_info["runtime"],
            "runsc_version": _runsc_version(self._docker_info["runtime"].get("path") or "runsc"),
            "docker_server_version": self._docker_info["server_version"],
            "run_flags": list(self.run_flags),
            "command": list(self.command),
            "seccomp_profile": str(self.seccomp_profile),
            "seccomp_profile_sha256": hashlib.sha256(self.seccomp_profile.read_bytes()).hexdigest(),
            "workers": self.workers,
            "recycle_after": self.recycle_after,
            "recycle_on": sorted(self.recycle_on),
            "pin_cpus": self.pin_cpus,
            "supervisor": {k: self.ready_info.get(k) for k in ("policy_hash", "seccomp", "python",
                                                             "limits", "disabled_layers")},
        }

    def close(self) -> None:
        """Stop every container (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = list(self._threads)
        for t in threads:
            t.join(timeout=self.start_timeout)
        with self._lock:
            live = list(self._live)
            self._live.clear()
        for c in live:
            c.close()
        self._finalizer.detach()

    def __enter__(self) -> "ContainerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _result(outcome: Outcome, error: str) -> dict:
    res = {k: None for k in RESULT_FIELDS}
    res.update(outcome=outcome.value, stdout="", stderr="", stdout_truncated=False,
               stderr_truncated=False, error=error, backend="container")
    return res


def _runsc_version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.splitlines()[0].strip() if out else None


def _remove_all(docker: str, live: set) -> None:
    """Last resort at interpreter exit: remove containers a caller forgot to close."""
    for c in list(live):
        try:
            _docker(docker, "rm", "-f", c.name, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
