"""`harness` command line: one Click group; each subcommand is a thin command in a module of this package.

Commands are registered statically, in the order `harness --help` lists them; a missing module is an
ImportError, never a silently absent command.
"""

from __future__ import annotations

import click

from harness.cli.compare import compare
from harness.cli.data import data
from harness.cli.errors import FriendlyGroup
from harness.cli.formulas import formulas
from harness.cli.models import about, cpu_model
from harness.cli.results import checksums, export, verify
from harness.cli.run import run, score
from harness.cli.serve import reproduce_cmd, serve
from harness.cli.shard import merge, shard
from harness.cli.sign import keygen, sign
from harness.cli.stats import figures, report, stats, tables


@click.group(cls=FriendlyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mathsolver-kit")
def main() -> None:
    """Reproducibility kit for 'Towards a Deterministic Math Solver for Clinical Language Models'."""


SUBCOMMANDS = (
    data,  # data fetch | pin | build-dev | check | list | show
    reproduce_cmd,  # the paper's runs: every model, arm and seed, then statistics, tables, report (make reproduce)
    run,  # arms over a dataset, one block of a reproduction
    score,  # rescore stored replies
    formulas,  # formula catalogue check
    export,  # results -> parquet / csv
    checksums,  # sha256 sums of result files
    verify,  # checksums + rescoring + table re-derivation (+ signatures: --signed-by)
    sign,  # a result set's signed provenance (in-toto statement, DSSE, ed25519)
    keygen,  # a new ed25519 signing key
    stats,
    tables,
    figures,
    report,
    compare,  # the paper's numbers beside ours, a verdict per number
    about,  # the opening paragraph of a result set
    serve,  # model server launchers, preflight, reproduce plan
    cpu_model,  # the CPU models: fetch, id, path, describe, estimate, slots, inspect
    shard,  # shard plan | run | submit (SLURM array)
    merge,  # shard directories -> one result set
)
for _command in SUBCOMMANDS:
    main.add_command(_command)
