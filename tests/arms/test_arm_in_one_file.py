"""An arm is one file (issue 49, item 3): an arm defined only here, in this test file, and registered for the test's
duration (harness.arms.registry.registered), runs through `harness run` against the rehearsal server (a scripted
fake: its replies are synthetic), is scored, gets its declared comparison in the statistics and tables, and appears
in the report and in `harness verify`'s rescoring. Nothing else in the kit names it: its registry entry (the Arm
below) carries its prompt family, decoding, display, paper role and gap.

On main before this change the arm could run, but its comparison had to be added to
harness/analysis/stats/families.py (a second file), and the smoke step's and the other checkpoints' arm lists were
literals in harness/reproduce/ (smoke.REPLY_FORMS, config.PAPER_ARMS_BY_MODEL); the tables and figures that list
particular arms (s2, s3, s7, s8, s11, s15, Table 1's lower block, Figures 1b and 2), the CPU demo's paragraph and the
comparison with the paper named them in harness/analysis (tests/arms/test_no_arm_literals.py now forbids that)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.arms.registry import ARMS, other_checkpoint_arms, registered, smoke_probes
from harness.arms.spec import Decoding, Display, Gap, PaperRole
from harness.cli import main as cli
from harness.data.dataset import load_dataset
from tests.fixtures_rehearsal import rehearsal_run_args, running_rehearsal_server

WARM = ARMS["open-book"].replace(
    name="open-book-warm",
    title="Open-book arithmetic, warm",
    decoding=Decoding(temperature=0.3, max_tokens=1024),
    notes="a test arm defined in tests/arms/test_arm_in_one_file.py: open-book arithmetic at temperature 0.3",
    display=Display("Open-book arithmetic, warm (test arm)", "Arith. warm", 30),
    paper=PaperRole(
        gaps=(Gap("open-book", "secondary", "the same prompt at temperature 0.3", rank=99),),
        tables=("s11",),
        demo="the same prompt as open-book arithmetic, sampled at temperature 0.3",
    ),
)
LABEL = "Arith. warm \u2212 Arith."


def _run(args: list[str]) -> str:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return res.output


def test_a_renamed_copy_inherits_no_paper_role():
    """open-book's copy takes its own gaps only: open-book's own (two) are not duplicated under the copy's name."""
    bare = ARMS["open-book"].replace(name="open-book-copy")
    assert ARMS["open-book"].paper.gaps and ARMS["open-book"].paper.other_checkpoints
    assert bare.paper == PaperRole()
    with registered(bare):
        assert "open-book-copy" not in other_checkpoint_arms()
        from harness.analysis.stats.families import declared_comparisons

        assert not [c for c in declared_comparisons(list(ARMS)) if "open-book-copy" in (c.solver, c.reference)]


def test_an_arm_defined_in_a_test_file_runs_end_to_end(tmp_path):
    from harness.analysis.demo_summary import about_text
    from harness.analysis.stats.families import declared
    from harness.core.sums import write_own_sums
    from harness.reproduce.reproduction import outputs, verify_run
    from harness.run.store import read_result_file

    root = tmp_path / "results"
    with registered(WARM):
        assert ("open-book-warm", "open-book") in {(c.solver, c.reference) for c in declared("secondary")}
        assert "open-book-warm" not in {a for _, a in smoke_probes()}
        with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
            arms = ["open-book", "open-book-warm"]
            _run(rehearsal_run_args(server, root, arms, concurrency=4, extra=["--limit", "6"]))
        records = [
            json.loads(line)
            for line in (root / "rehearsal-alpha" / "open-book-warm" / "seed42.jsonl").read_text().splitlines()
        ]
        assert len(records) == 6
        assert all(r["arm"] == "open-book-warm" and isinstance(r["correct"], bool) for r in records)
        assert {q.get("temperature") for r in records for q in r["request"]} == {0.3}  # its own decoding was sent

        done = outputs(root, echo=lambda s: None)  # the default draws: verify re-derives the tables with them
        gaps = [g for g in json.loads((root / "stats.json").read_text())["gaps"] if g["solver"] == "open-book-warm"]
        assert [(g["reference"], g["family"]) for g in gaps] == [("open-book", "secondary")], gaps
        s5 = (root / "tables" / "s5.md").read_text(encoding="utf-8")  # every declared gap, by family
        assert [ln.split(" | ")[1:3] for ln in s5.splitlines() if LABEL in ln] == [["secondary", LABEL]]
        assert "| Open-book arithmetic, warm (test arm) |" in (root / "tables" / "s1.md").read_text(encoding="utf-8")
        # its paper role's table (accuracy by audit group) and the demo's paragraph, which read the registry too
        assert "| Open-book arithmetic, warm (test arm) |" in (root / "tables" / "s11.md").read_text(encoding="utf-8")
        about = " ".join(about_text([r for p in root.rglob("seed*.jsonl") for r in read_result_file(p)]).split())
        assert "Open-book arithmetic, warm (test arm) (the same prompt as open-book arithmetic, sampled" in about
        page = (root / "report.html").read_text(encoding="utf-8")
        assert LABEL in page and "Open-book arithmetic, warm (test arm)" in page
        assert done.report.endswith("report.html") and "s5" not in done.tables_omitted
        write_own_sums(root)  # as the pipeline's SumsOnExit does over the outputs
        report = verify_run(root)
        assert report.passed, report.problems


def test_its_roles_reach_the_tables_that_list_arms(tmp_path):
    """Without a server: a lever declared in the "levers" family is one of s2's arms, a gap declared for s3 is one of
    s3's columns, an arm whose paper role names s11 is one of its rows (synthetic records)."""
    from harness.analysis.results_analysis import analyse
    from harness.analysis.stats.synthetic_records import synthetic_records, write_records
    from harness.analysis.tables.audit import table_s11
    from harness.analysis.tables.gaps import table_s3
    from harness.analysis.tables.ladder import table_s2

    lever = ARMS["blind"].replace(
        name="blind-warm",
        title="Blind Program-Solve, warm",
        decoding=Decoding(temperature=0.3, max_tokens=1024),
        display=Display("Blind, warm (test arm)", "Blind warm", 31),
        paper=PaperRole(gaps=(Gap("blind", "levers", "warm", "impl", rank=9),), tables=("s11",)),
    )
    syntax = ARMS["program-solve"].replace(
        name="program-solve-warm",
        title="Program-Solve, warm",
        decoding=Decoding(temperature=0.3, max_tokens=2048),
        display=Display("Program-Solve, warm (test arm)", "Prog. warm", 32),
        paper=PaperRole(gaps=(Gap("program-solve", "syntax", "warm", rank=9, tables=("s3",)),)),
    )
    arms = ("open-book", "program-solve", "blind", "blind-warm", "program-solve-warm")
    with registered(lever, syntax):
        recs = synthetic_records(models=("synthetic/m",), arms=arms, seeds=(42, 43), sizes=(4, 3, 5), seed=3)
        an = analyse(write_records(tmp_path / "r", recs), draws=100, seed=1)
        assert [r[0] for r in table_s2(an).rows] == ["Blind Program-Solve", "Blind, warm (test arm)"]
        s3 = table_s3(an)
        assert s3.columns[-1] == "Prog. warm \u2212 Prog." and len(s3.rows) == 1
        assert "Blind, warm (test arm)" in {r[1] for r in table_s11(an).rows}
