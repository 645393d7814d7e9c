"""`harness` command line: one Click group; each subcommand lives in the module that owns its job."""
from __future__ import annotations

import importlib

import click

from harness.cli_errors import FriendlyGroup

# (module, attribute) of every subcommand, in the order `harness --help` lists them.
SUBCOMMANDS = [
    ("harness.cli_data", "data"),          # data fetch | pin | check | show
    ("harness.cli_run", "run"),            # run one arm over a dataset
    ("harness.cli_run", "score"),          # rescore stored replies
    ("harness.cli_formulas", "formulas"),  # formula catalogue check
    ("harness.cli_results", "export"),     # results -> parquet / csv
    ("harness.cli_results", "checksums"),  # sha256 manifests of committed results
    ("harness.cli_results", "verify"),     # checksums + rescoring + table re-derivation
    ("harness.cli_stats", "stats"),
    ("harness.cli_stats", "tables"),
    ("harness.cli_stats", "figures"),
    ("harness.cli_stats", "report"),
    ("harness.cli_serve", "serve"),        # model server launchers, preflight, reproduce plan
]


@click.group(cls=FriendlyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mathsolver-kit")
def main() -> None:
    """Reproducibility kit for 'Towards a Deterministic Math Solver for Clinical Language Models'."""


def _register() -> None:
    for module_name, attr in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a part not built yet
            if exc.name != module_name:
                raise
            continue
        main.add_command(getattr(module, attr))


_register()
