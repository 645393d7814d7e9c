"""One run spec, one vocabulary (issue 49, item 2).

Every command that takes a run spec (`harness run`, `harness reproduce`, `harness shard plan|submit|run`,
`harness serve plan|smoke|preflight`) builds its shared options from one table (harness.cli.vocabulary.SPEC), whose
defaults are harness.run.manifest.ReproduceSettings' own. An option two of them take is declared alike (click type,
default, help) unless the table states the difference for that command (harness.cli.vocabulary.PER_COMMAND, each
with its reason), and every ReproduceSettings field is an option whose default is the field's.

On main before this change `harness run` declared its options in cli/run.py and the reproduction in cli/serve.py
and cli/shard.py, each with its own default and help: the first test found 24 undeclared differences (the help of
--all-cases, --arms, --base-url, --limit, --order, --shortest, --draws, --ready-timeout, ...; --concurrency's range
256 in one and 1024 in the other) and the second 39 defaults stated apart from ReproduceSettings (--timeout's 900.0
restated in three places; --seeds and --models passed as text, '42-46' and '', not the field's tuple; --arms' 'all'
stated in the option's callback)."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import click

from harness.cli import main as cli
from harness.cli.vocabulary import PER_COMMAND, key_of
from harness.run.manifest import ReproduceSettings

# The commands that take a run spec (their paths under `harness`).
COMMANDS = (
    "run",
    "reproduce",
    "shard plan",
    "shard submit",
    "shard run",
    "serve plan",
    "serve smoke",
    "serve preflight",
)
COMPARED = ("type", "default", "help")
# Options two of them take that are no part of the run spec: what the command prints, not what it runs.
NOT_THE_RUN_SPEC = {"--json": "shard plan writes the plan to the file given; serve plan and preflight print JSON"}
SETTINGS = {f.name: f.default for f in dataclasses.fields(ReproduceSettings)}


def command(path: str) -> click.Command:
    cmd: click.Command = cli
    for part in path.split():
        assert isinstance(cmd, click.Group), path
        found = cmd.get_command(click.Context(cmd), part)  # harness's commands are loaded when asked for
        assert found is not None, path
        cmd = found
    return cmd


def options(path: str) -> dict[str, click.Option]:
    """A command's options by their first spelling (`--arms`, `--dataset`), --help left out."""
    return {p.opts[0]: p for p in command(path).params if isinstance(p, click.Option) and p.name != "help"}


def declaration(option: click.Option) -> dict[str, Any]:
    return {"type": option.type.to_info_dict(), "default": option.default, "help": option.help}


def declared(path: str, flag: str) -> set[str]:
    """What the table says `path` declares differently for `flag`."""
    differs = PER_COMMAND.get(path, {}).get(key_of(flag) or "")
    return {a for a in COMPARED if differs is not None and a in differs.changes}


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def test_an_option_two_commands_take_is_declared_alike():
    taken: dict[str, dict[str, dict[str, Any]]] = {}
    for path in COMMANDS:
        for flag, option in options(path).items():
            taken.setdefault(flag, {})[path] = declaration(option)
    problems = []
    for flag, by_command in sorted(taken.items()):
        if flag in NOT_THE_RUN_SPEC:
            continue
        for attr in COMPARED:
            undeclared = any(
                da[attr] != db[attr] and attr not in declared(a, flag) | declared(b, flag)
                for (a, da), (b, db) in itertools.combinations(by_command.items(), 2)
            )
            if undeclared:
                values: dict[str, list[str]] = {}
                for path, d in by_command.items():
                    values.setdefault(short(d[attr]), []).append(path)
                problems.append(f"{flag} {attr}: " + "; ".join(f"{', '.join(p)}: {v}" for v, p in values.items()))
    assert not problems, f"{len(problems)} undeclared difference(s):\n" + "\n".join(problems)


def test_every_settings_field_is_an_option_with_the_fields_default():
    problems, seen = [], set()
    for path in COMMANDS:
        cmd = command(path)
        with click.Context(cmd) as ctx:
            for flag, option in options(path).items():
                name = key_of(flag) or option.name
                if name not in SETTINGS:
                    continue
                seen.add(name)
                if "default" in declared(path, flag):
                    continue
                implicit = option.is_flag and SETTINGS[name] is False  # a flag not given is False, stated by none
                if option.default is not SETTINGS[name] and not implicit:  # the field's own, not an equal restatement
                    problems.append(f"{path} {flag}: default {short(option.default)} is not ReproduceSettings.{name}'s")
                value = option.process_value(ctx, option.get_default(ctx))  # what the command receives
                if value != SETTINGS[name]:
                    problems.append(
                        f"{path} {flag}: receives {short(value)}, ReproduceSettings.{name} = {SETTINGS[name]!r}"
                    )
    assert not problems, f"{len(problems)} default(s) stated twice:\n" + "\n".join(problems)
    assert seen == set(SETTINGS), f"settings without an option: {sorted(set(SETTINGS) - seen)}"


def test_every_declared_difference_says_why():
    for path, table in PER_COMMAND.items():
        assert path in COMMANDS, path
        for key, differs in table.items():
            assert differs.why.strip(), (path, key)
            assert differs.changes, (path, key)
