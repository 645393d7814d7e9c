"""One run request: everything a run session needs, with the unit convention resolved once.

`harness run`, the reproduce pipeline (its blocks and its shards) and the rehearsal all build a RunRequest with
`RunRequest.build(...)`; that is the one place the convention is resolved (--convention, else the dataset's own by
content) and written into the config of the arms that depend on it. `run_session(request)` (harness.run.session)
runs it; `planned_keys(request, model=...)` is every record key it will write (the runner's own keys, so the
rehearsal's completeness count and the runner cannot disagree).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.arms.options import with_convention
from harness.arms.spec import Arm
from harness.data.conventions import ConventionChoice, resolve_convention
from harness.data.dataset import Case, Dataset
from harness.model.server_info import ServerInfo
from harness.run.progress import DEFAULT_INTERVAL_S
from harness.run.runner import RunSpec, planned_units
from harness.run.schedule import DEFAULT_ORDER, Order


def apply_convention(
    arms: Iterable[Arm], dataset: Dataset, convention: ConventionChoice | str | None
) -> tuple[list[Arm], ConventionChoice]:
    """(arms with their ``convention`` field set, the ConventionChoice in force) for a run on ``dataset``."""
    choice = convention if isinstance(convention, ConventionChoice) else resolve_convention(dataset, convention)
    return [with_convention(a, choice.name) for a in arms], choice


@dataclass(frozen=True)
class ModelTarget:
    """The model server a run talks to (none for model-free arms)."""

    base_url: str | None = None
    model: str | None = None  # None: the first id the server lists
    revision: str | None = None
    server_profile: str = "plain"
    timeout: float = 900.0
    api_key_env: str | None = None  # environment variable holding the API key (never recorded)
    cache_dir: Path | None = None  # None: no response cache
    server_info: ServerInfo | None = None  # the launcher's describe(), recorded in the run manifest


@dataclass(frozen=True)
class RunRequest:
    arms: tuple[Arm, ...]  # configured for `convention` (RunRequest.build)
    dataset: Dataset
    cases: tuple[Case, ...]
    seeds: tuple[int, ...]
    convention: ConventionChoice
    out_dir: Path
    target: ModelTarget = field(default_factory=ModelTarget)
    executor_backend: str = "auto"
    concurrency: int = 1
    scorer: str = "paper"
    all_cases: bool = False  # vote/repair levers on every case, not only the covered ones
    progress: bool = True
    progress_interval_s: float = DEFAULT_INTERVAL_S  # timed progress lines when the output is not a terminal
    order: Order = DEFAULT_ORDER  # the request order (harness.run.schedule); no record depends on it

    @classmethod
    def build(
        cls,
        arms: Sequence[Arm],
        dataset: Dataset,
        cases: Sequence[Case],
        seeds: Sequence[int],
        *,
        out_dir: str | Path,
        convention: ConventionChoice | str | None = None,
        **fields: Any,
    ) -> RunRequest:
        """The request, with the convention resolved and the arms configured for it (ValueError for an unknown
        convention name)."""
        configured, choice = apply_convention(arms, dataset, convention)
        return cls(
            tuple(configured), dataset, tuple(cases), tuple(int(s) for s in seeds), choice, Path(out_dir), **fields
        )

    def spec(self, model: str, *, server_profile: str | None, revision: str | None = None) -> RunSpec:
        """The runner's settings for this request against `model`."""
        return RunSpec(
            model=model,
            model_revision=revision,
            server_profile=server_profile,
            scorer=self.scorer,
            out_dir=self.out_dir,
            concurrency=self.concurrency,
            progress=self.progress,
            progress_interval_s=self.progress_interval_s,
            convention=self.convention.convention,
            order=self.order,
        )


def planned_keys(
    request: RunRequest, *, model: str, server_profile: str | None, revision: str | None = None
) -> set[str]:
    """Every record key the request writes against `model` (the runner's own plan: harness.run.runner.planned_units;
    model-free arms under the `library` model)."""
    spec = request.spec(model, server_profile=server_profile, revision=revision)
    return {
        key
        for unit in planned_units(
            list(request.arms), request.dataset, list(request.seeds), spec, list(request.cases), request.all_cases
        )
        for _case, key in unit.todo
    }


__all__ = ["ModelTarget", "RunRequest", "apply_convention", "planned_keys"]
