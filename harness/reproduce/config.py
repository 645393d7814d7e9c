"""What a reproduction runs: `ReproduceConfig` and the resolution of its names (models, arms, cases), and the
guard that keeps one results directory to one combination of server settings."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.arms.registry import ARMS, paper_arms
from harness.arms.spec import Arm
from harness.core.paths import REPO_ROOT
from harness.data.dataset import Case, Dataset
from harness.model.launchers import LAUNCHERS, launcher_kind
from harness.model.prerequisites import Check
from harness.model.serving import Launcher, LauncherSettingsError, LaunchOptions
from harness.reproduce.errors import ReproduceError
from harness.run.manifest import LaunchSettings, ManifestError, read_manifests
from harness.run.schedule import DEFAULT_ORDER, ORDERS
from harness.run.session import CaseSelectionError, pick_cases

ROOT = REPO_ROOT
PAPER_SEEDS = [42, 43, 44, 45, 46]
DEFAULT_OUT = ROOT / "results" / "reproduce"

__all__ = ["ROOT", "PAPER_SEEDS", "DEFAULT_OUT", "LAUNCHERS", "ReproduceError", "ReproduceConfig",
           "split_names", "resolve_arms", "model_arm_names", "OTHER_CHECKPOINT_ARMS",
           "PAPER_ARMS_BY_MODEL", "select_cases", "launch_settings",
           "check_same_settings", "config_dict", "preflight"]


@dataclass
class ReproduceConfig:
    launcher: str = "vllm"
    models: list[str] = field(default_factory=list)       # empty: the launcher's defaults
    arms: list[str] = field(default_factory=lambda: ["all"])
    seeds: list[int] = field(default_factory=lambda: list(PAPER_SEEDS))
    dataset: str = "verified"
    out: Path = DEFAULT_OUT
    generation_config: str = "auto"
    deterministic: bool = False
    limit: int | None = None
    shortest: bool = False
    all_cases: bool = False
    executor_backend: str = "auto"
    concurrency: int | None = None
    timeout: float = 900.0
    ready_timeout: float | None = None
    scorer: str = "paper"
    draws: int | None = None
    progress: bool = True
    convention: str | None = None   # unit convention; None: the dataset's own by content (harness.data.conventions)
    base_url: str | None = None           # the external launcher's server
    server_profile: str | None = None     # the external launcher's client profile [plain]
    sampling_seeds: bool = False          # vllm: sampled requests carry a derived seed (profile vllm-seeded)
    order: str = DEFAULT_ORDER            # the request order (harness.run.schedule): changes no record

    def __post_init__(self) -> None:
        try:
            self._check_launcher()
        except LauncherSettingsError as exc:
            raise ReproduceError(str(exc)) from None
        if not self.seeds:
            raise ReproduceError("no seeds given")
        if self.order not in ORDERS:
            raise ReproduceError(f"unknown request order {self.order!r}: one of {', '.join(ORDERS)}")
        if self.limit is not None and self.limit < 1:
            raise ReproduceError(f"--limit must be at least 1, not {self.limit}")
        self.out = Path(self.out)
        resolve_arms(self.arms)  # unknown names fail here, before anything runs

    def _check_launcher(self) -> None:
        """The launcher kind takes these settings and serves these models (its models resolved)."""
        kind = self.kind
        kind.check_config(base_url=self.base_url, deterministic=self.deterministic)
        self.models = kind.resolve_models(list(self.models))
        if self.sampling_seeds:
            if not kind.takes_sampling_seeds:
                takers = " or ".join(n for n, k in LAUNCHERS.items() if k.takes_sampling_seeds)
                raise LauncherSettingsError(f"--sampling-seeds (SAMPLING_SEEDS=1) is a {takers} launcher option; the "
                                            "external launcher takes --server-profile vllm-seeded")
            self.server_profile = "vllm-seeded"
        kind.check_models(self.models, deterministic=self.deterministic)

    @property
    def kind(self) -> type[Launcher]:
        """The launcher kind (its class) that serves this reproduction's models."""
        return launcher_kind(self.launcher)

    def launch_options(self, log_dir: Path | None = None) -> LaunchOptions:
        """What every model's launcher is built with (`log_dir`: where its server logs go)."""
        return LaunchOptions(generation_config=self.generation_config, deterministic=self.deterministic,
                             log_dir=Path(log_dir) if log_dir is not None else self.out / "server-logs",
                             dataset=self.dataset, base_url=self.base_url, server_profile=self.server_profile)


def split_names(text: str | None) -> list[str]:
    """'a,b c' -> ['a', 'b', 'c'] (commas or spaces)."""
    return [p for p in (text or "").replace(",", " ").split() if p]


# What ARMS=all runs for each model: the arms the paper reports for it. The paper's other checkpoints
# (Mistral-7B-Instruct-v0.3, Phi-3.5-mini-instruct) appear only with formula-given code, open-book arithmetic
# and the Extract-Solve library (its Table "ladder", "Other checkpoints", and section "Other families");
# a model not listed here (the Qwen models, CPU and rehearsal models) gets every paper arm.
OTHER_CHECKPOINT_ARMS = ("program-solve", "open-book", "extract-lib")
PAPER_ARMS_BY_MODEL: dict[str, tuple[str, ...]] = {"mistral-7b": OTHER_CHECKPOINT_ARMS,
                                                   "phi-3.5-mini": OTHER_CHECKPOINT_ARMS}


def _paper_arms() -> list[Arm]:
    return [ARMS[n] for n in paper_arms()]   # the extensions (routers) run by name only


def resolve_arms(names: list[str], model_key: str | None = None) -> list[Arm]:
    """The arms `names` means, for `model_key` (None: for the run as a whole, the union over its models).

    "all": the paper's arms for that model (PAPER_ARMS_BY_MODEL, else every paper arm); "every": every paper
    arm for every model; otherwise the named arms, for every model."""
    names = list(names or ["all"])
    if "every" in names:
        return _paper_arms()
    if "all" in names:
        subset = PAPER_ARMS_BY_MODEL.get(model_key) if model_key is not None else None
        if subset is None:
            return _paper_arms()
        return [a for a in _paper_arms() if a.name in subset or not a.needs_model]
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        raise ReproduceError(f"unknown arm(s): {', '.join(unknown)}; known: {', '.join(ARMS)} "
                             "(or 'all': the paper's arms for each model; 'every': every paper arm for every model)")
    return [ARMS[n] for n in dict.fromkeys(names)]


def model_arm_names(names: list[str], model_key: str) -> set[str]:
    """The names of the arms `model_key` runs with a model under `names` (see resolve_arms)."""
    return {a.name for a in resolve_arms(names, model_key) if a.needs_model}


def select_cases(dataset: Dataset, limit: int | None, shortest: bool) -> list[Case]:
    try:
        return pick_cases(dataset, (), (), limit, shortest)
    except CaseSelectionError as exc:
        raise ReproduceError(str(exc)) from None



def launch_settings(cfg: ReproduceConfig) -> LaunchSettings:
    """The settings that change what the server answers but are not part of a record's key (the key has the model,
    its revision and the client profile): one results directory holds one combination of them."""
    return LaunchSettings(cfg.launcher, cfg.generation_config, cfg.deterministic)


def check_same_settings(cfg: ReproduceConfig) -> None:
    """Refuse to resume into a results directory produced under other server settings (its records would be taken
    as done); a reproduce manifest there that cannot be read is an error naming it (ReproduceError)."""
    mine = launch_settings(cfg)
    try:
        found = read_manifests(cfg.out, kind="reproduce") if Path(cfg.out).is_dir() else []
    except ManifestError as exc:
        raise ReproduceError(str(exc)) from None
    for f in found:
        theirs = f.manifest.settings
        diff = {k: (getattr(theirs, k), getattr(mine, k)) for k in ("launcher", "generation_config", "deterministic")
                if getattr(theirs, k) != getattr(mine, k)}
        if diff:
            said = ", ".join(f"{k}={a!r} there, {b!r} now" for k, (a, b) in diff.items())
            raise ReproduceError(f"{cfg.out} holds results made under other server settings ({said}; see "
                                 f"{f.path.name}); give this run its own --out (OUT=) so the two are compared, not "
                                 "mixed")


def config_dict(cfg: ReproduceConfig) -> dict:
    d = asdict(cfg)
    d["out"] = str(cfg.out)
    return d


def preflight(cfg: ReproduceConfig) -> list[Check]:
    """The chosen launcher's preflight checks (what must be in place before anything starts)."""
    return cfg.kind.preflight(cfg.models, cfg.launch_options())
