"""One option vocabulary (issue 49, item 2).

`harness run`, `harness reproduce`, `harness shard` and `harness serve plan` take the same spellings
(harness/cli/vocabulary.py), and the seeds' default is stated once (harness.core.seeds.PAPER_SEEDS). On main before
this change `harness run` took `--arm` repeated and reproduce `--arms a,b` only, the reproduction lived under
`harness serve`, and the five seeds were written in scripts/reproduce.sh, cli/serve.py and run/manifest.py."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main as cli
from harness.cli.vocabulary import arm_names
from harness.core.seeds import PAPER_SEEDS, parse_seeds, seeds_text
from harness.run.manifest import ReproduceSettings

ROOT = Path(__file__).resolve().parents[2]
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=12)


@settings(deadline=None)  # a loaded machine is not a failure
@given(st.lists(st.lists(NAME, min_size=1, max_size=4), min_size=1, max_size=4))
def test_repeated_and_comma_separated_arms_mean_the_same(groups):
    """--arm a --arm b, --arms a,b and any mix name the same arms, in order, each once."""
    flat = [n for g in groups for n in g]
    assert arm_names([",".join(g) for g in groups]) == arm_names(flat) == tuple(dict.fromkeys(flat))
    assert arm_names([" , ".join(flat)]) == tuple(dict.fromkeys(flat))


@settings(deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=20))
def test_the_seeds_spelling_reads_back_as_the_same_seeds(seeds):
    assert parse_seeds(seeds_text(seeds)) == sorted(set(seeds))


def test_the_seeds_default_is_stated_once():
    assert ReproduceSettings().seeds == PAPER_SEEDS
    for command, default in ((["reproduce"], seeds_text(PAPER_SEEDS)), (["run"], str(PAPER_SEEDS[0]))):
        out = CliRunner().invoke(cli, [*command, "--help"], terminal_width=200).output
        assert "--arms, --arm" in out, command
        assert f"[default: {default}]" in out.split("--seeds", 1)[1].split("--", 1)[0], command
    for module in (ROOT / "harness" / "cli").glob("*.py"):  # no command states a seeds default of its own
        assert 'default="42' not in module.read_text(), module
    assert "SEEDS:-4" not in (ROOT / "scripts" / "reproduce.sh").read_text()  # main had ${SEEDS:-42-46}


def test_reproduce_is_a_top_level_command_and_no_longer_under_serve():
    res = CliRunner().invoke(cli, ["serve", "reproduce", "--help"])
    assert res.exit_code != 0 and "No such command 'reproduce'" in res.output
    assert CliRunner().invoke(cli, ["reproduce", "--help"]).exit_code == 0


def _plan(*args: str) -> dict:
    res = CliRunner().invoke(
        cli, ["serve", "plan", "--models", "qwen2.5-7b", "--dataset", "bundled-test", "--json", *args]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_the_plan_reads_both_spellings_of_the_arms_alike():
    one = _plan("--arms", "blind,open-book", "--seeds", "42,43")
    other = _plan("--arm", "blind", "--arm", "open-book", "--seeds", "42-43")
    assert one == other
    assert {a["arm"] for a in one["arms"]} >= {"blind", "open-book"}
