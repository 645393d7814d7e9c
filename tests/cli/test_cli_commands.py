"""The `harness` group loads a command's module when the command is asked for (harness/cli/__init__.py): every
declaration loads the command it names, `--help` lists them all in the declared order, and starting a command
does not import what only other commands need (scipy's distributions, matplotlib's pyplot).

The import check runs in a fresh interpreter, because this test process has long imported both; it looks at
sys.modules after the command's own module is loaded, the way `harness <command>` loads it."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from harness.cli import SUBCOMMANDS, load_command, main

HEAVY = ("scipy.stats", "matplotlib.pyplot")


def test_every_declared_command_loads_under_its_name():
    for name in SUBCOMMANDS:
        command = load_command(name)
        assert isinstance(command, click.Command) and command.name == name


def test_help_lists_every_command_in_the_declared_order():
    out = CliRunner().invoke(main, ["--help"]).output
    listed = [line.split()[0] for line in out.split("Commands:", 1)[1].splitlines() if line.startswith("  ")]
    assert listed == list(SUBCOMMANDS)


def test_a_declaration_naming_another_command_is_an_import_error(monkeypatch):
    monkeypatch.setitem(SUBCOMMANDS, "verify", ("harness.cli.results", "checksums"))
    with pytest.raises(ImportError, match="harness verify: harness.cli.results.checksums"):
        load_command("verify")
    monkeypatch.setitem(SUBCOMMANDS, "verify", ("harness.cli.results", "no_such_command"))
    with pytest.raises(ImportError, match="harness.cli.SUBCOMMANDS"):
        load_command("verify")


def _loaded_after(command: str) -> list[str]:
    code = (
        "import json, sys\n"
        "from harness.cli import load_command\n"
        f"load_command({command!r})\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("command", ["run", "verify", "checksums", "serve", "reproduce", "shard", "data", "sign"])
def test_starting_a_command_does_not_import_the_statistics_or_plotting_libraries(command):
    """On 49c32d3 every command imported both (harness.cli imported every command module, and cli/errors.py
    the statistics): about 1.4 CPU-s of imports on each `harness` invocation, 0.5 s now."""
    assert _loaded_after(command) == []
