"""What a reproduction runs: `ReproduceConfig` (the settings as asked, checked as the value is made, and where it
writes), what its names mean, resolved once (`ReproduceConfig.resolve()` -> `Resolved`: the dataset's selected cases,
the arms, each model's arms), and the guard that keeps one results directory to one combination of server
settings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from harness.arms.registry import ARMS, paper_arms
from harness.arms.spec import Arm
from harness.core.paths import REPO_ROOT
from harness.data.dataset import Case, Dataset, DatasetError, load_dataset
from harness.model.launchers import LAUNCHERS, launcher_kind
from harness.model.prerequisites import Check
from harness.model.serving import Launcher, LauncherSettingsError, LaunchOptions
from harness.reproduce.errors import ReproduceError
from harness.run.manifest import LaunchSettings, ManifestError, ReproduceSettings, read_manifests
from harness.run.schedule import ORDERS
from harness.run.session import CaseSelectionError, pick_cases

ROOT = REPO_ROOT
PAPER_SEEDS = list(ReproduceSettings.seeds)
DEFAULT_OUT = ROOT / "results" / "reproduce"

__all__ = [
    "DEFAULT_OUT",
    "LAUNCHERS",
    "OTHER_CHECKPOINTS",
    "PAPER_SEEDS",
    "ROOT",
    "ReproduceConfig",
    "ReproduceError",
    "Resolved",
    "check_same_settings",
    "model_arm_names",
    "preflight",
    "resolve_arms",
    "select_cases",
    "split_names",
]


@dataclass(frozen=True)
class Resolved:
    """What a config's names mean, resolved once: the dataset, its selected cases, every arm of the run, and per
    model the names of the arms it runs with a model (ARMS=all: the paper's arms for that model)."""

    dataset: Dataset
    cases: tuple[Case, ...]
    arms: tuple[Arm, ...]
    model_arm_names: dict[str, frozenset[str]]

    @property
    def model_free(self) -> tuple[Arm, ...]:
        return tuple(a for a in self.arms if not a.needs_model)

    @property
    def with_model(self) -> tuple[Arm, ...]:
        return tuple(a for a in self.arms if a.needs_model)

    def arms_of(self, key: str | None, arms: tuple[Arm, ...] | None = None) -> tuple[Arm, ...]:
        """The arms model `key` runs (None: the model-free arms), taken from `arms` (the run's configured arms,
        harness.run.request.RunRequest.arms; default this value's)."""
        arms = self.arms if arms is None else arms
        if key is None:
            return tuple(a for a in arms if not a.needs_model)
        return tuple(a for a in arms if a.needs_model and a.name in self.model_arm_names[key])


@dataclass(frozen=True)
class ReproduceConfig(ReproduceSettings):
    """A reproduction's settings (harness.run.manifest.ReproduceSettings, checked here as the value is made: the
    launcher kind takes them and serves these models, which it resolves; the arms exist) and where it writes."""

    out: Path = DEFAULT_OUT
    progress: bool = True

    def __post_init__(self) -> None:
        for name in ("models", "arms", "seeds"):  # lists given by a caller, tuples as the type says
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        object.__setattr__(self, "out", Path(self.out))
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
        resolve_arms(self.arms)  # unknown names fail here, before anything runs

    def _check_launcher(self) -> None:
        """The launcher kind takes these settings and serves these models (its models resolved)."""
        kind = self.kind
        kind.check_config(base_url=self.base_url, deterministic=self.deterministic)
        object.__setattr__(self, "models", tuple(kind.resolve_models(list(self.models))))
        if self.sampling_seeds:
            if not kind.takes_sampling_seeds:
                takers = " or ".join(n for n, k in LAUNCHERS.items() if k.takes_sampling_seeds)
                raise LauncherSettingsError(
                    f"--sampling-seeds (SAMPLING_SEEDS=1) is a {takers} launcher option; the "
                    "external launcher takes --server-profile vllm-seeded"
                )
            object.__setattr__(self, "server_profile", "vllm-seeded")
        kind.check_models(list(self.models), deterministic=self.deterministic)

    @classmethod
    def of(cls, settings: ReproduceSettings, *, out: Path, progress: bool = True) -> ReproduceConfig:
        """The config of recorded settings (a shard plan's), written into `out`; checked again."""
        return cls(**{f.name: getattr(settings, f.name) for f in fields(ReproduceSettings)}, out=out, progress=progress)

    @property
    def settings(self) -> ReproduceSettings:
        """The settings alone (what the reproduce manifest and a shard plan record: not where it writes)."""
        return ReproduceSettings(**{f.name: getattr(self, f.name) for f in fields(ReproduceSettings)})

    @property
    def kind(self) -> type[Launcher]:
        """The launcher kind (its class) that serves this reproduction's models."""
        return launcher_kind(self.launcher)

    def launch_options(self, log_dir: Path | None = None) -> LaunchOptions:
        """What every model's launcher is built with (`log_dir`: where its server logs go)."""
        return LaunchOptions(
            generation_config=self.generation_config,
            deterministic=self.deterministic,
            log_dir=Path(log_dir) if log_dir is not None else self.out / "server-logs",
            dataset=self.dataset,
            base_url=self.base_url,
            server_profile=self.server_profile,
        )

    def launch_settings(self) -> LaunchSettings:
        """The settings that change what the server answers but are not part of a record's key (the key has the
        model, its revision and the client profile): one results directory holds one combination of them."""
        return LaunchSettings(self.launcher, self.generation_config, self.deterministic)

    def model_arm_names(self) -> dict[str, frozenset[str]]:
        """Per model key, the arms it runs with a model."""
        return {key: frozenset(model_arm_names(self.arms, key)) for key in self.models}

    def load_dataset(self) -> Dataset:
        try:
            return load_dataset(self.dataset)
        except DatasetError as exc:
            raise ReproduceError(f"dataset {self.dataset!r} is not available: {exc}") from None

    def resolve(self, dataset: Dataset | None = None) -> Resolved:
        """The dataset (loaded unless given), its selected cases, the arms and each model's arms (ReproduceError for a
        dataset that cannot be loaded or a selection that selects nothing)."""
        dataset = dataset if dataset is not None else self.load_dataset()
        return Resolved(
            dataset,
            tuple(select_cases(dataset, self.limit, self.shortest)),
            tuple(resolve_arms(self.arms)),
            self.model_arm_names(),
        )


def split_names(text: str | None) -> list[str]:
    """'a,b c' -> ['a', 'b', 'c'] (commas or spaces)."""
    return [p for p in (text or "").replace(",", " ").split() if p]


# The paper's other checkpoints (Mistral-7B-Instruct-v0.3, Phi-3.5-mini-instruct) appear only with the arms whose
# registry entry says so (PaperRole.other_checkpoints: formula-given code, open-book arithmetic and the Extract-Solve
# library; its Table "ladder", "Other checkpoints", and section "Other families"); every other model (the Qwen
# models, the CPU and rehearsal models) runs every paper arm.
OTHER_CHECKPOINTS = ("mistral-7b", "phi-3.5-mini")


def _paper_arms() -> list[Arm]:
    return [ARMS[n] for n in paper_arms()]  # the extensions (routers) run by name only


def resolve_arms(names: Iterable[str] | None, model_key: str | None = None) -> list[Arm]:
    """The arms `names` means, for `model_key` (None: for the run as a whole, the union over its models).

    "all": the paper's arms for that model (for OTHER_CHECKPOINTS the arms marked PaperRole.other_checkpoints,
    else every paper arm); "every": every paper
    arm for every model; otherwise the named arms, for every model."""
    names = list(names or ["all"])
    if "every" in names:
        return _paper_arms()
    if "all" in names:
        if model_key not in OTHER_CHECKPOINTS:
            return _paper_arms()
        return [a for a in _paper_arms() if a.paper.other_checkpoints or not a.needs_model]
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        raise ReproduceError(
            f"unknown arm(s): {', '.join(unknown)}; known: {', '.join(ARMS)} "
            "(or 'all': the paper's arms for each model; 'every': every paper arm for every model)"
        )
    return [ARMS[n] for n in dict.fromkeys(names)]


def model_arm_names(names: Iterable[str] | None, model_key: str) -> set[str]:
    """The names of the arms `model_key` runs with a model under `names` (see resolve_arms)."""
    return {a.name for a in resolve_arms(names, model_key) if a.needs_model}


def select_cases(dataset: Dataset, limit: int | None, shortest: bool) -> list[Case]:
    try:
        return pick_cases(dataset, (), (), limit, shortest)
    except CaseSelectionError as exc:
        raise ReproduceError(str(exc)) from None


def check_same_settings(cfg: ReproduceConfig) -> None:
    """Refuse to resume into a results directory produced under other server settings (its records would be taken
    as done); a reproduce manifest there that cannot be read is an error naming it (ReproduceError)."""
    mine = cfg.launch_settings()
    try:
        found = read_manifests(cfg.out, kind="reproduce") if Path(cfg.out).is_dir() else []
    except ManifestError as exc:
        raise ReproduceError(str(exc)) from None
    for f in found:
        theirs = f.manifest.settings
        diff = {
            k: (getattr(theirs, k), getattr(mine, k))
            for k in ("launcher", "generation_config", "deterministic")
            if getattr(theirs, k) != getattr(mine, k)
        }
        if diff:
            said = ", ".join(f"{k}={a!r} there, {b!r} now" for k, (a, b) in diff.items())
            raise ReproduceError(
                f"{cfg.out} holds results made under other server settings ({said}; see "
                f"{f.path.name}); give this run its own --out (OUT=) so the two are compared, not "
                "mixed"
            )


def preflight(cfg: ReproduceConfig) -> list[Check]:
    """The chosen launcher's preflight checks (what must be in place before anything starts)."""
    return cfg.kind.preflight(list(cfg.models), cfg.launch_options())
