"""What a model server is, as its launcher describes it (`Launcher.describe()`): one frozen type that the run
manifest, the reproduce and shard manifests, `harness serve start --server-info` and the ledger tables share.

A field a stage reads is typed here: the launcher kind, the served model id and what pins its weights, the server
and its version, the command as started and the server's own flags (`args`: no interpreter or docker wrapping,
no host or port, the model's local path replaced by what pins it, built once by the launcher, shown by table s14),
the resolved settings behind them (`flags`, compared against the paper's by harness.analysis.comparison), the
environment, the image, determinism, the vLLM contract the command was checked against, the sampling defaults the
server logged. What only a person reads (the image lock, GGUF metadata, GPU names, the fake's ready line) goes in
`facts`, keyed by name. `ServerInfo.from_json` refuses unknown fields, so a renamed field is a load error naming
the file that holds it, never a silent "not recorded" in a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.typed_json import TypedJsonError, from_json, to_json

__all__ = [
    "TRANSPORT_FLAGS",
    "ContractPin",
    "Determinism",
    "ServedModel",
    "ServerInfo",
    "ServerInfoError",
    "ServerSettings",
    "Weights",
    "read_server_info",
    "server_args_for_record",
]

# Flags that say where a server listens, not what it computes (a shard's server gets a free port).
TRANSPORT_FLAGS = ("--host", "--port")


class ServerInfoError(ValueError):
    """A server description that is not of this type; the message names the file."""


@dataclass(frozen=True)
class Determinism:
    """What a run may claim about batch invariance (vLLM's VLLM_BATCH_INVARIANT) and why."""

    batch_invariant: bool
    note: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ContractPin:
    """The vLLM release contract a server command was checked against (containers/vllm/contract-<version>.json)."""

    file: str | None
    vllm_version: str
    wheel: str | None = None
    wheel_sha256: str | None = None
    platform: str = "cuda"


@dataclass(frozen=True)
class Weights:
    """The weights a server serves as the file names itself (a GGUF's general.name, size label, file type) and the
    file's sha256; None where no single file pins them (a Hugging Face checkpoint: its revision does)."""

    sha256: str | None
    name: str | None = None
    size_label: str | None = None
    quantization: str | None = None


@dataclass(frozen=True)
class ServedModel:
    """The served model as an OpenAI-compatible server lists it at GET /v1/models: its id, and what vLLM adds (the
    weights it loaded, `root`; the context length, `max_model_len`; `owned_by`: "vllm")."""

    id: str
    root: str | None = None
    max_model_len: int | None = None
    owned_by: str | None = None


@dataclass(frozen=True)
class ServerSettings:
    """What changes a started server's answers besides the record key: the same in every shard of a run."""

    image: str | None
    flags: dict[str, Any]
    server_profile: str


@dataclass(frozen=True)
class ServerInfo:
    """One model server as its launcher describes it (module docstring)."""

    launcher: str  # the launcher kind (harness.model.launchers): vllm, vllm-cpu, ...
    base_url: str
    model_id: str  # the served model name
    server_profile: str  # the client profile its requests use (harness.model.client)
    server: str | None = None  # what answers: "vLLM", "llama.cpp server (xllamacpp)", the rehearsal fake
    server_version: str | None = None
    revision: str | None = None  # what pins the served weights (it goes into every record key); None: nothing
    weights: Weights | None = None  # the weights file served (a GGUF), as it names itself
    command: tuple[str, ...] = ()  # as started: interpreter or docker wrapping, local paths, port
    args: tuple[str, ...] = ()  # the server's own flags: no wrapping, host or port; local paths masked
    env: dict[str, str] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)  # the resolved settings behind `args` (no port)
    image: str | None = None  # the container image serving it (vLLM on an H100)
    model: dict | None = None  # the served weights' lock entry (models.lock.json, cpu_models.json)
    determinism: Determinism | None = None
    contract: ContractPin | None = None
    generation_config_meaning: str | None = None
    sampling_defaults_logged: dict | None = None  # what the server logged at start-up (None: nothing)
    sampling_defaults: dict[str, Any] = field(default_factory=dict)  # the fields it fills in for chat requests
    # the kernels a vLLM server said it chose at start-up (harness.model.vllm.logs.logged_kernels: attention backend,
    # FlashAttention version, sampler); None: not read (not vLLM, or not started)
    kernels_logged: dict | None = None
    served_model: ServedModel | None = None  # the served model as the server lists it (GET /v1/models)
    synthetic: bool = False  # the rehearsal fake: every record it feeds is synthetic
    log: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # launcher-specific facts no stage reads

    def settings(self) -> ServerSettings:
        return ServerSettings(self.image, dict(self.flags), self.server_profile)

    def to_json(self) -> dict:
        return to_json(self)

    @classmethod
    def from_json(cls, data: Any) -> ServerInfo:
        return from_json(cls, data)


def read_server_info(path: str | Path) -> ServerInfo:
    """A server description written by `harness serve start --server-info` (ServerInfoError naming the file)."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ServerInfoError(f"{path}: unreadable server description ({exc})") from None
    try:
        return ServerInfo.from_json(data)
    except TypedJsonError as exc:
        raise ServerInfoError(f"{path}: not a server description of this kit ({exc})") from None


def server_args_for_record(args: list[str], masked: dict[str, str] | None = None) -> tuple[str, ...]:
    """A server's own flags as the records show them: transport flags (host, port) and their values left out, the
    values of `masked` flags (a local model path) replaced by what they stand for."""
    masked = masked or {}
    out: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in TRANSPORT_FLAGS:
            skip = "=" not in a
            continue
        if name in masked and "=" not in a and i + 1 < len(args):
            out += [a, masked[name]]
            skip = True
            continue
        out.append(a)
    return tuple(out)
