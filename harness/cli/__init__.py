"""`harness` command line: one Click group; each subcommand is a thin command in a module of this package.

Commands are declared in SUBCOMMANDS, in the order `harness --help` lists them, and imported when they are
invoked (or listed, for `--help`): `harness run` loads the runner, not the statistics, the figures' plotting
library or the comparison's distributions (about 1.5 CPU-s of imports saved on every invocation). A module that
does not import, or that no longer holds the declared command, is an ImportError naming the declaration, never a
silently absent command (tests/cli/test_cli_commands.py loads every declaration).
"""

from __future__ import annotations

import importlib

import click

from harness.cli.errors import FriendlyGroup

# name -> (module, attribute): the one list of the CLI's commands, in `harness --help`'s order
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "data": ("harness.cli.data", "data"),  # data fetch | pin | build-dev | check | list | show
    # the paper's runs: every model, arm and seed, then statistics, tables, report (make reproduce)
    "reproduce": ("harness.cli.serve", "reproduce_cmd"),
    "run": ("harness.cli.run", "run"),  # arms over a dataset, one block of a reproduction
    "score": ("harness.cli.run", "score"),  # rescore stored replies
    "formulas": ("harness.cli.formulas", "formulas"),  # formula catalogue check
    "export": ("harness.cli.results", "export"),  # results -> parquet / csv
    "checksums": ("harness.cli.results", "checksums"),  # sha256 sums of result files
    "verify": ("harness.cli.results", "verify"),  # checksums + rescoring + table re-derivation (+ --signed-by)
    "sign": ("harness.cli.sign", "sign"),  # a result set's signed provenance (in-toto statement, DSSE, ed25519)
    "keygen": ("harness.cli.sign", "keygen"),  # a new ed25519 signing key
    "stats": ("harness.cli.stats", "stats"),
    "tables": ("harness.cli.stats", "tables"),
    "figures": ("harness.cli.stats", "figures"),
    "report": ("harness.cli.stats", "report"),
    "compare": ("harness.cli.compare", "compare"),  # the paper's numbers beside ours, a verdict per number
    "about": ("harness.cli.models", "about"),  # the opening paragraph of a result set
    "serve": ("harness.cli.serve", "serve"),  # model server launchers, preflight, reproduce plan
    "cpu-model": ("harness.cli.models", "cpu_model"),  # the CPU models: fetch, id, path, describe, estimate, slots
    "shard": ("harness.cli.shard", "shard"),  # shard plan | run | submit (SLURM array)
    "merge": ("harness.cli.shard", "merge"),  # shard directories -> one result set
}


def load_command(name: str) -> click.Command:
    """The command declared under `name` in SUBCOMMANDS, imported now; ImportError when its module or attribute
    is missing or holds another command."""
    module_name, attribute = SUBCOMMANDS[name]
    command = getattr(importlib.import_module(module_name), attribute, None)
    if not isinstance(command, click.Command) or command.name != name:
        raise ImportError(
            f"harness {name}: {module_name}.{attribute} is not the command {name!r} (harness.cli.SUBCOMMANDS)"
        )
    return command


class HarnessGroup(FriendlyGroup):
    """`harness`: its subcommands loaded from SUBCOMMANDS when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in SUBCOMMANDS else None


@click.group(cls=HarnessGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mathsolver-kit")
def main() -> None:
    """Reproducibility kit for 'Towards a Deterministic Math Solver for Clinical Language Models'."""
