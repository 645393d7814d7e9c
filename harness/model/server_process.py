"""A model server the kit runs as a local process: the one helper behind every launcher that starts one (llama.cpp's
server, the vLLM CPU twin, the rehearsal fake; the H100 server runs in docker and is stopped by docker).

    process = ServerProcess(log_path)
    process.start(command, env=..., cwd=...)   # stdout and stderr appended to the log, stdin closed, own session
    process.exited()                           # its exit code once it has exited, else None
    process.stop()                             # the whole process group: SIGTERM, then SIGKILL after a grace period
    process.kill()                             # a crash: SIGKILL at once, no clean shutdown

The server runs in a session of its own, so stopping it stops what it started too (a server's workers, an
interpreter's children), and a Ctrl-C in the kit's terminal reaches the kit, which stops the server itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ServerProcess"]


@dataclass
class ServerProcess:
    """One local server process and its log (module docstring)."""

    log_path: Path
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)

    def start(self, command: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
        """Start `command` with its output appended to the log (the log's directory made); its pid. `env`: the
        whole environment (None: this process's)."""
        Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
        return self._proc.pid

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def started(self) -> bool:
        """Started by this helper and not yet stopped (it may have exited on its own)."""
        return self._proc is not None

    def exited(self) -> int | None:
        """The exit code once the process has exited; None while it runs (or when none was started)."""
        return self._proc.poll() if self._proc is not None else None

    def stop(self, grace_s: float = 15.0) -> bool:
        """Stop the process group (SIGTERM; SIGKILL when it has not exited after `grace_s`) and reap it; whether a
        process had been started."""
        proc, self._proc = self._proc, None
        if proc is None:
            return False
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=grace_s)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                self._kill_group(proc)
        return True

    def kill(self) -> None:
        """SIGKILL the process group at once (a crash: no clean shutdown) and reap it."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            self._kill_group(proc)

    @staticmethod
    def _kill_group(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=15)
