"""The `rehearsal` launcher: the rehearsal server (a scripted FAKE) as a subprocess, started and stopped like a model
server (harness.model.serving.Launcher)."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.paths import REPO_ROOT
from harness.core.ports import free_port
from harness.data.dataset import DatasetError, load_dataset
from harness.model.prerequisites import Check
from harness.model.rehearsal.sources import DEFAULT_MODELS
from harness.model.server_info import ServerInfo, server_args_for_record
from harness.model.server_process import ServerProcess
from harness.model.serving import Launcher, LaunchOptions, Throughput, poll_models

if TYPE_CHECKING:  # the launcher reads its fields; importing the server costs start-up time
    from harness.model.rehearsal.server import Faults

ROOT = REPO_ROOT
REHEARSAL_SEED = 7  # the seed of a reproduction's rehearsal server (with the request body, it decides every reply)


@dataclass
class RehearsalLauncher(Launcher):
    """The rehearsal server (`harness serve rehearsal`, harness.model.rehearsal.server: a scripted FAKE, never a
    model) as a subprocess on 127.0.0.1, serving one synthetic model id (plus `extra_model_ids`); started and stopped
    like a model server, so `harness reproduce --launcher rehearsal`, SLURM array tasks and `make rehearse`
    rehearse the whole pipeline. Its model ids start with `rehearsal-`, so every record it feeds is labelled synthetic
    (harness.model.rehearsal.labels). `faults` (the server's own `Faults`: shares of attempts, and the delay of a slow
    reply) turns fault injection on; `kill()` is a crash (SIGKILL), for the kill-and-resume check."""

    name = "rehearsal"
    summary = "the rehearsal server, a scripted FAKE (synthetic records, never a model)"
    deterministic_refusal = "--deterministic is a vLLM option; the rehearsal server is a scripted fake"
    # it answers without generating: the time is the harness's and the executor's, not a model's
    stated_throughput = Throughput(
        1_000_000, 100_000, 1, "the rehearsal server is a scripted fake that answers at once (no generation)"
    )

    model_id: str = "rehearsal-alpha"
    port: int = 18461
    seed: int = 7
    answer_key: Path | None = None  # the dataset whose gold the "correct" reply shapes use
    log_path: Path = Path(tempfile.gettempdir()) / "mathsolver-rehearsal-server.log"
    # the H100 path's client profile with the reproducible-sampling option on (per-request seeds sent): the
    # rehearsal server answers by the request body, so without a seed a case's sampled votes would be copies
    server_profile: str = "vllm-seeded"
    python: Path = Path(sys.executable)
    extra_model_ids: tuple[str, ...] = ()
    faults: Faults | None = None  # slow_s: set it above the client's timeout
    fault_log: Path | None = None  # one JSON line per injected fault
    _process: ServerProcess | None = field(default=None, init=False, repr=False)

    # ---- the kind ----
    @classmethod
    def default_models(cls) -> list[str]:
        return list(DEFAULT_MODELS)

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> RehearsalLauncher:
        cls.check_config(base_url=options.base_url, deterministic=options.deterministic)
        try:
            answer_key = load_dataset(options.dataset).path  # "correct" reply shapes carry the case's gold
        except DatasetError:
            answer_key = None  # the plan of an unfetched dataset: it invents numbers
        return cls(
            model_id=key,
            port=free_port(),
            seed=REHEARSAL_SEED,
            answer_key=answer_key,
            log_path=Path(options.log_dir) / f"{key}.log",
        )

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """Nothing to install: the fake is part of the kit (`harness serve rehearsal`)."""
        return [
            Check(
                "rehearsal server (a scripted fake: synthetic output, never a model)",
                True,
                "harness serve rehearsal",
                "",
            )
        ]

    @classmethod
    def weights_bytes(cls, key: str) -> int | None:
        return 0

    # ---- one server ----
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def ready_file(self) -> Path:
        """Where the server writes its ready line (its own description of what it serves)."""
        return Path(self.log_path).with_suffix(".ready.json")

    def command(self) -> list[str]:
        cmd = [
            str(self.python),
            "-m",
            "harness.cli",
            "serve",
            "rehearsal",
            "--port",
            str(self.port),
            "--seed",
            str(self.seed),
        ]
        for m in (self.model_id, *self.extra_model_ids):
            cmd += ["--model", m]
        cmd += ["--answer-key", str(self.answer_key)] if self.answer_key else []
        if self.faults is not None:
            f = self.faults
            cmd += [
                "--fault-5xx",
                str(f.rate_5xx),
                "--fault-slow",
                str(f.rate_slow),
                "--fault-drop",
                str(f.rate_drop),
                "--slow-s",
                str(f.slow_s),
            ]
        cmd += ["--fault-log", str(self.fault_log)] if self.fault_log else []
        return cmd + ["--ready-file", str(self.ready_file)]

    def start(self) -> None:
        self.ready_file.unlink(missing_ok=True)
        self._process = ServerProcess(Path(self.log_path))
        self._process.start(self.command(), cwd=ROOT)

    def wait_ready(self, timeout: float = 300.0) -> None:
        for m in (self.model_id, *self.extra_model_ids):
            poll_models(self.base_url, m, timeout, process=self._process, log=Path(self.log_path), interval=0.1)

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()

    def kill(self) -> None:
        """SIGKILL the server (a crash: no clean shutdown), and reap it."""
        if self._process is not None:
            self._process.kill()

    def for_task(self, index: int) -> None:
        self.port = free_port()

    def served(self) -> dict | None:
        """The running server's own ready line (models, seed, answer key, fault rates), or None before it."""
        try:
            return json.loads(self.ready_file.read_text())
        except (OSError, ValueError):
            return None

    def faults_logged(self) -> list[dict]:
        """The faults the server injected so far (its --fault-log), oldest first."""
        if self.fault_log is None or not Path(self.fault_log).exists():
            return []
        return [json.loads(x) for x in Path(self.fault_log).read_text().splitlines() if x.strip()]

    def describe(self) -> ServerInfo:
        local = {
            "--ready-file": "<ready file>",
            "--fault-log": "<fault log>",
            **({"--answer-key": f"<{Path(self.answer_key).name}>"} if self.answer_key else {}),
        }
        return ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            server="rehearsal server (scripted fake, harness.model.rehearsal.server)",
            synthetic=True,
            command=tuple(self.command()),
            args=server_args_for_record(self.command()[5:], local),
            log=str(self.log_path),
            facts={
                "extra_model_ids": list(self.extra_model_ids),
                "seed": self.seed,
                "answer_key": str(self.answer_key) if self.answer_key else None,
                "served": self.served(),
            },
        )
