"""Canaries: secrets the test harness plants where no program may ever reach (issue 40).

An adversarial program, or one the generator made, has *escaped* when anything the executor
returns for it (output, answer, error) contains a secret, or when it touched a canary:

* ``memory``: a value in the supervisor's memory that also starts every run's nonce in the
  child's memory (``EXECUTOR_TEST_CANARY``, executor/supervisor.py ``test_canary_from_env``):
  reading the nonce, or anything of the executor's state that holds it, shows the canary;
* ``forged_answer``: the answer a forging program writes into the result channel (a program's
  own code never assigns it): a result carrying it is a verdict the program wrote itself;
* ``file``: a file on the host, outside the program's view, whose content is a secret; its
  access time is set before its change time, so that Linux's relatime marks any read of it;
* ``listener``: a TCP listener on 127.0.0.1; any connection to it is an escape;
* ``environment``: the harness process's environment variable (tests/fixtures_executor.py
  HOST_SECRET), which no program's environment may hold;
* ``host_path``: where the executor and the kit live on the host (the checkout, the virtual
  environment, the interpreter's standard library): none of it may show with every layer on.

``MARKER``-style placeholders in a program (``CANARY_FILE``, ``CANARY_PORT``,
``CANARY_FORGED_ANSWER``) are replaced by ``Canaries.substitute`` so that hostile programs aim at
the real canaries. Which checks apply depends on the layers that are on (``Configuration``): with
layers 1-2 off a program may read the nonce by design (SECURITY.md, residual: it only chooses its
own answer), with layer 2 off module reprs show the standard library's paths.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.fixtures_executor import HOST_SECRET, HOST_SECRET_NAME

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Configuration:
    """Which layers are on, and so which canaries must hold."""

    name: str
    disabled_layers: tuple[str, ...]
    memory: bool  # the nonce and the forged answer (layers 1 and 2 stop these; layer 1 alone must)
    host_paths: bool  # paths of the host in anything returned (layer 2 hides module paths)


ALL_LAYERS = Configuration("all_layers", (), memory=True, host_paths=True)
STATIC_ALONE = Configuration("static_alone", ("builtins",), memory=True, host_paths=False)
OS_LAYERS_ALONE = Configuration("os_layers_alone", ("static", "builtins"), memory=False, host_paths=False)
CONFIGURATIONS = {c.name: c for c in (ALL_LAYERS, STATIC_ALONE, OS_LAYERS_ALONE)}


class Canaries:
    """The planted secrets of one harness; ``close`` removes them."""

    def __init__(self, directory: str | None = None):
        self.memory = secrets.token_hex(8)
        self.forged_answer = int(secrets.token_hex(4), 16) | 1 << 40  # never a program's own
        self._dir = tempfile.mkdtemp(prefix="executor-canary-", dir=directory)
        self.file = os.path.join(self._dir, "secret.txt")
        self.file_secret = "canary-file-" + secrets.token_hex(8)
        with open(self.file, "w") as fh:
            fh.write(self.file_secret)
        os.utime(self.file, (0, os.stat(self.file).st_mtime))  # relatime: the next read moves it
        self._atime = os.stat(self.file).st_atime
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        os.environ[HOST_SECRET_NAME] = HOST_SECRET
        self.host_paths = tuple(
            sorted({str(REPO), sys.prefix, sysconfig.get_paths()["stdlib"], "/usr/lib/python3", "site-packages"})
        )

    # --- planting ----------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        """What an Executor must be started with to carry the memory canary (test-only switch)."""
        return {"EXECUTOR_TESTING": "1", "EXECUTOR_TEST_CANARY": self.memory}

    def substitute(self, source: str) -> str:
        """Aim a hostile program at the real canaries."""
        return (
            source.replace("CANARY_FILE", self.file)
            .replace("CANARY_PORT", str(self.port))
            .replace("CANARY_FORGED_ANSWER", str(self.forged_answer))
        )

    # --- checking -----------------------------------------------------------------------------
    def escapes(self, result, config: Configuration = ALL_LAYERS) -> list[str]:
        """What the program behind ``result`` reached: [] when nothing. Touches (a read of the
        file, a connection) are counted once: the next check starts afresh."""
        data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
        text = json.dumps(data, ensure_ascii=False)
        found = []
        if self.file_secret in text:
            found.append("the file canary's content")
        if HOST_SECRET in text:
            found.append("the harness's environment secret")
        if config.memory and self.memory in text:
            found.append("the memory canary (the run's nonce)")
        if config.memory and data.get("answer") == self.forged_answer:
            found.append("a forged verdict (the forged answer)")
        if config.host_paths:
            found += [f"the host path {p!r}" for p in self.host_paths if p in text]
        atime = os.stat(self.file).st_atime
        if atime != self._atime:
            found.append("a read of the file canary")
            os.utime(self.file, (0, os.stat(self.file).st_mtime))
            self._atime = os.stat(self.file).st_atime
        while True:
            try:
                conn, _addr = self.listener.accept()
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    break
                raise
            conn.close()
            found.append("a connection to the listener canary")
        return found

    def close(self) -> None:
        self.listener.close()
        for name in os.listdir(self._dir):
            os.remove(os.path.join(self._dir, name))
        os.rmdir(self._dir)
