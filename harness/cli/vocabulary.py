"""The option vocabulary every running command shares (`harness run`, `harness reproduce`, `harness shard`,
`harness serve plan`): one spelling per option, one parser per value, each default stated once.

    --arms a,b          (also --arm a --arm b, or both mixed: every value is split at commas and spaces)
    --seeds 42-46       (also 42,43 or 42: harness.core.seeds.parse_seeds)

The defaults live where the thing they default lives: the paper's seeds in harness.core.seeds.PAPER_SEEDS (a
reproduction runs all five, `harness run` the first alone), the arms `all` in the registry's meaning of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click

from harness.core import seeds as core_seeds
from harness.reproduce.config import split_names

__all__ = ["arm_names", "arms_option", "parse_seeds_value", "seeds_option"]


def parse_seeds_value(text: str) -> list[int]:
    """A --seeds value: harness.core.seeds.parse_seeds, its problem reported as a bad --seeds value."""
    try:
        return core_seeds.parse_seeds(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--seeds") from None


def seeds_option(default: tuple[int, ...], help_text: str) -> Callable[[Any], Any]:
    """The --seeds option, its default written in the --seeds spelling of `default`; the command receives the text
    (parsed by parse_seeds_value where the command builds its request)."""
    return click.option(
        "--seeds",
        default=core_seeds.seeds_text(default),
        show_default=True,
        help=f"{help_text} Seeds: 42-46, or 42,43.",
    )


def arm_names(values: Iterable[str]) -> tuple[str, ...]:
    """('a,b', 'c') -> ('a', 'b', 'c'): the names of every --arm/--arms value, in order, each once."""
    return tuple(dict.fromkeys(n for v in values for n in split_names(v)))


def arms_option(dest: str, default: str | None, help_text: str) -> Callable[[Any], Any]:
    """--arms (also --arm), repeatable, each value split at commas: the command receives a tuple of names under
    `dest` (`default` when none is given; None: required)."""

    def callback(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
        names = arm_names(value)
        if not names and default is None:
            raise click.BadParameter("name at least one arm (or 'all')", param_hint="--arms")
        return names or arm_names([default or ""])

    return click.option(
        "--arms",
        "--arm",
        dest,
        multiple=True,
        callback=callback,
        help=help_text
        + " Comma-separated, or repeated (--arm a --arm b)."
        + (f" [default: {default}]" if default else ""),
    )
