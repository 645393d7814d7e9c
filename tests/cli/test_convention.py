"""`--convention` on the commands that solve or score: the CLI says which convention applies and why, a v1.0
file under a neutral name gets v1.0 by content, an unknown file gets exact, an explicit option wins, the run
manifest and arm config record it, and a resumed run under another convention is refused."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from harness.arms.options import with_convention
from harness.arms.registry import get_arm
from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.run.manifest import run_manifests
from tests.fixtures_data import read_rows, write_rows

SLICE = REPO_ROOT / "harness" / "data" / "test_slice.csv"


def _invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _gold_rows(out):
    rows = [
        json.loads(x)
        for p in sorted(out.glob("library/gold-lib/seed*.jsonl"))
        for x in p.read_text(encoding="utf-8").splitlines()
    ]
    return rows


def _manifests(out):
    return run_manifests(out)


def test_run_under_a_neutral_name_uses_v1_by_content_and_records_it(tmp_path):
    """The issue's reproduction: the same v1.0 rows under a neutral file name. Gold-Solve on the whole slice
    is right on every covered row, the CLI says why, and the manifest records the convention."""
    neutral = tmp_path / "cases.csv"
    shutil.copyfile(SLICE, neutral)
    out = tmp_path / "res"
    r = _invoke(
        "run", "--arm", "gold-lib", "--dataset", str(neutral), "--seeds", "42", "--out", str(out), "--no-progress"
    )
    assert r.exit_code == 0, r.output
    assert "unit convention: medcalc-v1.0 (dataset content sha256 d653fe0b8328... is MedCalc-Bench v1.0" in r.output
    rows = _gold_rows(out)
    answered = [x for x in rows if x["outcome"] == "answered"]
    assert len(answered) == 44 and all(x["correct"] for x in answered)
    (m,) = _manifests(out)
    assert m.convention.name == "medcalc-v1.0" and m.convention.source == "dataset"
    # the arm config records the convention its answers were computed under, plainly
    assert m.arms["gold-lib"].convention == "medcalc-v1.0"
    assert m.arm_config_hashes["gold-lib"] == with_convention(get_arm("gold-lib"), "medcalc-v1.0").config_hash()


def test_committed_gold_solve_keys_are_todays():
    """results/gold-solve (the bundled v1.0 slice, its own convention): its arm config hash is today's for gold-lib
    under medcalc-v1.0, and every record carries it."""
    root = REPO_ROOT / "results" / "gold-solve"
    (m,) = run_manifests(root)
    today = with_convention(get_arm("gold-lib"), "medcalc-v1.0").config_hash()
    assert m.arm_config_hashes["gold-lib"] == today != get_arm("gold-lib").config_hash()
    keys = {
        json.loads(line)["arm_config_hash"]
        for p in root.glob("library/gold-lib/seed*.jsonl")
        for line in p.read_text().splitlines()
    }
    assert keys == {today}


def test_resumed_run_under_another_convention_is_refused(tmp_path):
    out = tmp_path / "res"
    first = _invoke(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42",
        "--out",
        str(out),
        "--no-progress",
        "--limit",
        "6",
    )
    assert first.exit_code == 0, first.output
    before = sorted(p.read_bytes() for p in out.glob("library/gold-lib/seed*.jsonl"))
    second = _invoke(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42",
        "--out",
        str(out),
        "--no-progress",
        "--limit",
        "6",
        "--convention",
        "exact",
    )
    assert second.exit_code != 0
    assert "made under unit convention 'medcalc-v1.0'" in second.output
    assert "cannot mix conventions" in second.output and "--convention medcalc-v1.0" in second.output
    assert sorted(p.read_bytes() for p in out.glob("library/gold-lib/seed*.jsonl")) == before  # nothing written
    # the explicit option matching the directory's convention resumes (nothing new to do)
    again = _invoke(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42",
        "--out",
        str(out),
        "--no-progress",
        "--limit",
        "6",
        "--convention",
        "medcalc-v1.0",
    )
    assert again.exit_code == 0 and "0 new, 6 resumed" in again.output


def test_explicit_option_wins_and_changes_the_arm_config(tmp_path):
    out = tmp_path / "res"
    r = _invoke(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        "bundled-test",
        "--seeds",
        "42",
        "--out",
        str(out),
        "--no-progress",
        "--convention",
        "exact",
        "--calculator",
        "44",
    )
    assert r.exit_code == 0, r.output
    assert "unit convention: exact (--convention exact; the dataset's own would be medcalc-v1.0)" in r.output
    (m,) = _manifests(out)
    assert m.arms["gold-lib"].convention == "exact"
    assert (
        m.arm_config_hashes["gold-lib"]
        == with_convention(get_arm("gold-lib"), "exact").config_hash()
        != with_convention(get_arm("gold-lib"), "medcalc-v1.0").config_hash()
    )
    # LDL row 44-513 has cholesterol in mmol/L: exact arithmetic misses v1.0's gold, as documented
    rows = {x["case_id"]: x for x in _gold_rows(out)}
    assert rows["44-513"]["correct"] is False
    score = _invoke("score", "--results", str(out), "--convention", "medcalc-v1.0")
    assert score.exit_code == 1 and "not --convention medcalc-v1.0" in score.output
    assert _invoke("score", "--results", str(out), "--convention", "exact").exit_code == 0


def test_unknown_file_gets_exact_and_the_cli_says_so(tmp_path):
    rows = read_rows(SLICE)
    for row in rows:  # content the kit does not know: every note edited
        row["Patient Note"] += " (edited)"
    edited = write_rows(tmp_path / "test_dev_v1.0.csv", rows)  # a v1.0 file name
    r = _invoke("formulas", "check", "--dataset", str(edited))
    assert "unit convention: exact (dataset content sha256" in r.output
    assert "is not a file the kit knows and no row is a known row; exact arithmetic" in r.output
    j = CliRunner().invoke(
        main, ["formulas", "check", "--dataset", str(edited), "--json", "--convention", "medcalc-v1.0"]
    )
    (rep,) = json.loads(j.stdout)
    assert rep["convention"]["name"] == "medcalc-v1.0" and rep["convention"]["source"] == "option"


def test_users_own_csv_of_v1_rows_gets_the_known_files_gold_solve(tmp_path, shared_data_dir):
    """The issue's reproduction: 374 v1.0 rows saved as the user's own CSV (reordered, re-saved by pandas).
    Gold-Solve on them must score every row as on the known dev file; under exact arithmetic (what a
    whole-file sha256 gave such a file) three rows come out wrong."""
    import pandas as pd

    dev = shared_data_dir / "test_dev_v1.0.csv"
    df = pd.read_csv(dev, dtype=str, keep_default_na=False).iloc[:374][::-1]
    mine = tmp_path / "my_rows.csv"
    df.to_csv(mine, index=False)
    runs = {}
    for name, data, extra in (("mine", mine, ()), ("known", dev, ()), ("exact", mine, ("--convention", "exact"))):
        out = tmp_path / name
        r = _invoke(
            "run",
            "--arm",
            "gold-lib",
            "--dataset",
            str(data),
            "--seeds",
            "42",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        )
        assert r.exit_code == 0, r.output
        runs[name] = {x["case_id"]: x["correct"] for x in _gold_rows(out)}
        if name == "mine":
            assert "unit convention: medcalc-v1.0 (374 of 374 rows are known rows of MedCalc-Bench v1.0" in r.output
    assert len(runs["mine"]) == 374
    assert runs["mine"] == {k: runs["known"][k] for k in runs["mine"]}
    assert sum(runs["mine"].values()) == 202 and sum(runs["exact"].values()) == 199


def test_every_solving_or_scoring_command_takes_the_option():
    for args in (["run"], ["score"], ["formulas", "check"], ["verify"], ["reproduce"], ["serve", "plan"]):
        r = CliRunner().invoke(main, [*args, "--help"])
        assert r.exit_code == 0, (args, r.output)
        assert "--convention [exact|medcalc-v1.0]" in r.output, args


def test_run_on_a_file_mixing_conventions_is_refused_before_anything_is_written(tmp_path):
    rows = read_rows(SLICE)[:6] + read_rows(REPO_ROOT / "harness" / "data" / "one_shot_verified.csv")[:4]
    for i, row in enumerate(rows):
        row["Row Number"] = str(i + 1)
    mixed = write_rows(tmp_path / "mixed.csv", rows)
    out = tmp_path / "res"
    r = CliRunner().invoke(
        main, ["run", "--arm", "gold-lib", "--dataset", str(mixed), "--seeds", "42", "--out", str(out), "--no-progress"]
    )
    assert r.exit_code == 1
    assert (
        f"Error: {mixed}: the rows mix unit conventions: 4 known exact rows, 6 known medcalc-v1.0 rows (of 10;"
        in r.output
    ), r.output
    assert not list(out.glob("**/*.jsonl"))
    ok = _invoke(
        "run",
        "--arm",
        "gold-lib",
        "--dataset",
        str(mixed),
        "--seeds",
        "42",
        "--out",
        str(out),
        "--no-progress",
        "--convention",
        "exact",
    )
    assert ok.exit_code == 0 and "the dataset's rows mix conventions (4 known exact rows" in ok.output
