"""Issue 47: `harness compare` recomputes every field of a record the kit can recompute before it judges a number.

One case per class of the issue, each on the hand-made sets of tests/fixtures_comparison.py edited through the kit's
own store and with SHA256SUMS rewritten after the edit (so integrity passes and only recomputation can tell): a
flipped `correct` flag (one, and ninety), a seed file that is another seed's records with only `seed` changed, cases
outside the pinned split, a calculator missing and another doubled to keep 1,100 cases, records carrying their own
gold, requests sent at another temperature than the arm's config (greedy at 0.7, sampled at 0.0), a server that
answered as another model, rehearsal records relabelled as real, a split the kit cannot open, a claim that did not
hold reaching the numbers it rests on, and an interval from too few clusters. Each asserts that exactly the affected
numbers are not comparable (or not consistent), naming the file, the line and the field. And the differential test:
compare's rescoring (the analysis's one read, harness.analysis.stats.arrays) equals `harness verify`'s
(harness.verify.rescore) on every committed set and on generated ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.comparison.settings import RunSettings
from harness.analysis.results_analysis import analyse
from harness.analysis.stats.arrays import read_root
from harness.core.paths import REPO_ROOT
from harness.run.manifest import read_manifests
from harness.verify.rescore import rescore_tree
from tests.analysis.test_compare_classes import T1_PS_7B, claim, compare, row
from tests.fixtures_comparison import (
    Q7,
    Q32,
    Cases,
    Targets,
    copy_root,
    correctness,
    flip_flag,
    kit_key,
    read_records,
    seal,
    set_correct,
    write_manifests,
    write_records,
    write_records_file,
)

T1_OB_7B = ("Table 1", "Open-book arithmetic | Qwen2.5-7B Full")
T1_PS_32B = ("Table 1", "Program-Solve | Qwen2.5-32B Full")
PS_7B_FILE = "Qwen_Qwen2.5-7B-Instruct/program-solve/seed"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    """Every comparison here reads its files afresh (a cached view is one of the same bytes; here each is new)."""
    monkeypatch.setenv("HARNESS_ANALYSIS_CACHE", "off")


@pytest.fixture
def faithful(hand_made, verified_pins):
    return hand_made("faithful")


def _edit(root: Path, model: str, arm: str, seeds, edit) -> None:
    for seed in seeds:
        write_records_file(
            root, model, arm, seed, [edit(i, r) for i, r in enumerate(read_records(root, model, arm, seed))]
        )


def _only_ps_7b_moved(nums, why_has: list[str]) -> None:
    """Program-Solve 7B's numbers are not comparable naming each of `why_has`; Open-book 7B and the 32B ones keep
    their verdict (exactly the affected numbers)."""
    acc = row(nums, *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable", acc["why"][:400]
    for text in why_has:
        assert text in acc["why"], (text, acc["why"][:600])
    assert row(nums, *T1_OB_7B, Q7)["verdict"] == "reproduced"
    assert row(nums, *T1_PS_32B, Q32)["verdict"] == "reproduced"


# ---- 1. recompute before judging ---------------------------------------------------------------------------------
def test_one_flipped_correct_flag_makes_its_numbers_not_comparable_naming_file_line_field(faithful, tmp_path):
    """Before: the flag was taken as stored; a flipped one was judged on the flag."""
    root = copy_root(faithful, tmp_path / "flip1")
    _edit(root, Q7, "program-solve", [44], lambda i, r: flip_flag(r) if i == 6 else r)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    stored = str(read_records(root, Q7, "program-solve", 44)[6]["correct"]).lower()
    _only_ps_7b_moved(
        nums,
        [
            "recomputed correct: 1 record(s) state it otherwise than the kit recomputes it",
            f"{PS_7B_FILE}44.jsonl:7: correct stored {stored}, recomputed",
        ],
    )


def test_ninety_flipped_flags_that_would_reproduce_the_paper_are_not_comparable(faithful, tmp_path):
    """90 wrong answers stored as right: a run 1.6 pp short of the paper made to look like it (before: reproduced
    on the flags)."""
    root = copy_root(faithful, tmp_path / "flip90")
    for seed in (42, 43):
        recs = read_records(root, Q7, "program-solve", seed)
        wrong = [i for i, r in enumerate(recs) if not r["correct"] and r["outcome"] == "answered"][:45]
        write_records_file(
            root, Q7, "program-solve", seed, [flip_flag(r) if i in wrong else r for i, r in enumerate(recs)]
        )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(nums, ["recomputed correct: 90 record(s)", "correct stored true, recomputed false"])


def test_a_seed_file_that_is_another_seeds_records_is_not_a_new_seed(faithful, tmp_path):
    """Seed 46 replaced by seed 45's records with only `seed` changed (before: counted as a fifth seed)."""
    root = copy_root(faithful, tmp_path / "copyseed")
    write_records_file(
        root, Q7, "program-solve", 46, [{**r, "seed": 46} for r in read_records(root, Q7, "program-solve", 45)]
    )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(nums, ["recomputed key: 1,100 record(s)", f"{PS_7B_FILE}46.jsonl:1: key stored"])


def test_a_seed_field_its_file_name_contradicts_is_named(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "seedfield")
    _edit(
        root,
        Q7,
        "program-solve",
        [43],
        lambda i, r: {**r, "seed": 47, "key": kit_key({**r, "seed": 47})} if i == 0 else r,
    )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(nums, [f"{PS_7B_FILE}43.jsonl:1: seed stored 47, recomputed 43 (its file's name)"])


def test_cases_outside_the_pinned_split_are_named(faithful, tmp_path):
    """Before: cases were counted, never checked against the split."""
    root = copy_root(faithful, tmp_path / "outside")

    def outside(i, r):
        if i >= 10:
            return r
        r = {**r, "case_id": f"{r['calculator_id']}-{5000 + i}", "row_number": 5000 + i}
        return {**r, "key": kit_key(r)}

    _edit(root, Q7, "program-solve", [42, 43, 44, 45, 46], outside)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(
        nums,
        [
            "recomputed case_id: 50 record(s)",
            "case_id stored 2-5000, recomputed none: not a case of the split 'verified'",
        ],
    )


def test_a_missing_calculator_and_a_doubled_one_keeping_1100_cases_is_a_subset(faithful, tmp_path):
    """Calculator 2's 20 cases replaced by 20 more of calculator 3 (n stays 1,100): before, judged as the full
    set."""
    root = copy_root(faithful, tmp_path / "doubled")

    def doubled(i, r):
        if r["calculator_id"] != 2:
            return r
        r = {**r, "calculator_id": 3, "case_id": f"3-{9000 + i}", "row_number": 9000 + i}
        return {**r, "key": kit_key(r)}

    _edit(root, Q7, "program-solve", [42, 43, 44, 45, 46], doubled)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(
        nums,
        [
            "recomputed case_id: 100 record(s)",
            "case_id stored 3-9000, recomputed none",
            "a subset, not the paper's set: 54 of its 55 calculators at every seed (calculator 2 "
            "missing; calculator 3 has 40 cases, the paper 20; 1,100 cases)",
        ],
    )


def test_records_carrying_their_own_gold_are_judged_on_the_splits(faithful, tmp_path):
    """The record's gold set to the answer it gave (and scored right by it): before, judged on its own gold."""
    root = copy_root(faithful, tmp_path / "gold")

    def own_gold(i, r):
        if r["correct"] or r["answer_kind"] != "number" or i > 200:
            return r
        g = str(r["answer"])
        return {
            **r,
            "gold": {"answer": g, "lower": g, "upper": g},
            "correct": True,
            "scores": {**r["scores"], "paper": True},
        }

    _edit(root, Q7, "program-solve", [42], own_gold)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(nums, ["recomputed gold:", "recomputed correct:", "(the split's)"])


def test_greedy_requests_sent_at_0_7_are_not_comparable_though_manifest_and_config_agree(faithful, tmp_path):
    """The arm config hash and the manifest say 0.0; the requests went out at 0.7 (before: reproduced)."""
    root = copy_root(faithful, tmp_path / "hot-requests")
    _edit(
        root,
        Q7,
        "program-solve",
        [45],
        lambda i, r: {**r, "request": [{**q, "temperature": 0.7} for q in r["request"]]} if i >= 3 else r,
    )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(
        nums,
        [
            f"sampling (records' requests): {PS_7B_FILE}45.jsonl:4: request temperature 0.7, the "
            "program-solve arm's config in the run manifest states 0: records and manifest disagree"
        ],
    )


def test_a_sampled_arm_whose_requests_went_out_greedy_is_not_in_its_setting(
    tmp_path, verified_pins, executor_description
):
    """Blind vote (temperature 0.7, five samples) whose every request went out at 0.0: its setting is not comparable
    (the paper prints no number of it; its settings are what a number of it would rest on)."""
    cases = Cases()
    t = Targets.blind()
    cells = {k: v for k, v in correctness(cases, t).items() if k[0] == Q7}
    root = tmp_path / "vote" / "results"
    write_records(root, {(Q7, "blind-vote"): cells[(Q7, "blind")]}, cases, none_share={Q7: 0.0})
    write_manifests(root, cases, executor_description, models=(Q7,), arms=("blind-vote",))
    an = analyse(root, draws=100, seed=1)
    ok = RunSettings(read_manifests(root, kind="run"), an.data.files, None, an.data)
    assert not [r for r in ok.reasons(Q7, "blind-vote", "Qwen2.5-7B-Instruct") if "sampling" in r]
    for seed in (42, 43, 44, 45, 46):
        write_records_file(
            root,
            Q7,
            "blind-vote",
            seed,
            [
                {**r, "request": [{**q, "temperature": 0.0} for q in r["request"]]}
                for r in read_records(root, Q7, "blind-vote", seed)
            ],
        )
    an = analyse(root, draws=100, seed=1)
    got = RunSettings(read_manifests(root, kind="run"), an.data.files, None, an.data).reasons(
        Q7, "blind-vote", "Qwen2.5-7B-Instruct"
    )
    assert any(
        "sampling (records' requests): Qwen_Qwen2.5-7B-Instruct/blind-vote/seed42.jsonl:1: request "
        "temperature 0, the blind-vote arm's config in the run manifest states 0.7" in r
        for r in got
    ), got


def test_records_whose_server_answered_as_another_model_are_not_comparable(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "server-model")
    _edit(
        root,
        Q7,
        "program-solve",
        [42],
        lambda i, r: {**r, "server_model": "Qwen/Qwen2.5-72B-Instruct"} if i == 9 else r,
    )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(
        nums, [f"server model (records): the records state Qwen/Qwen2.5-72B-Instruct (e.g. {PS_7B_FILE}42.jsonl:10)"]
    )


def test_rehearsal_records_relabelled_as_real_are_recognised(faithful, tmp_path):
    """A rehearsal server's records with `synthetic` set false and the model renamed: record_kind still sees the
    rehearsal server (before: judged as real)."""
    root = copy_root(faithful, tmp_path / "relabelled")
    _edit(
        root,
        Q7,
        "program-solve",
        [42, 43, 44, 45, 46],
        lambda i, r: {**r, "server_model": "rehearsal-qwen2.5-7b", "synthetic": False},
    )
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    _only_ps_7b_moved(
        nums,
        [
            "recomputed synthetic: 5,500 record(s)",
            "synthetic stored false, recomputed true (a rehearsal server or model: rehearsal-qwen2.5-7b)",
        ],
    )


def test_records_of_a_split_the_kit_cannot_open_are_not_comparable_saying_which(faithful, tmp_path, monkeypatch):
    """The pinned split not downloaded: every number is not comparable, naming the split (before: judged on the
    stored flags)."""
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(tmp_path / "empty-cache"))
    nums, _, _ = compare(faithful, tmp_path / "cmp")
    acc = row(nums, *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable"
    assert (
        "split missing: Qwen_Qwen2.5-7B-Instruct/program-solve/seed42.jsonl names the split 'verified' (sha256 "
        in acc["why"]
        and "which the kit cannot open" in acc["why"]
        and "harness data fetch" in acc["why"]
    )
    assert {r["verdict"] for r in nums} <= {"not comparable", "no result"}


# ---- 3. claims flow into numbers; degenerate intervals -------------------------------------------------------------
def test_a_number_whose_claim_did_not_hold_is_not_consistent(hand_made, verified_pins, tmp_path):
    """Program-Solve 7B 4.5 pp better and Open-book 7B 4.5 pp worse than the paper: each accuracy within its own
    interval (before: "consistent", the claims intact), but the 7B gap's interval no longer crosses zero (matched-7b
    did not hold), and both accuracies rest on that claim."""
    t = Targets.paper()
    t.accuracy[(Q7, "program-solve")]["full"] += 4.5
    t.accuracy[(Q7, "open-book")]["full"] -= 4.5
    nums, claims, _ = compare(hand_made("gap-wider-7b", targets=t), tmp_path / "cmp")
    assert claim(claims, "matched-7b", Q7)["verdict"] == "did not hold"
    for where in (T1_PS_7B, T1_OB_7B):
        acc = row(nums, *where, Q7)
        assert float(acc["ours_lo"]) <= float(acc["paper"]) <= float(acc["ours_hi"])  # the interval holds it
        assert acc["verdict"] == "discrepancy", acc["why"][:400]
        assert acc["why"].startswith(
            "the paper's claim did not hold (At 7B, Program-Solve is not reliably more "
            "accurate than Open-book arithmetic"
        )
    assert row(nums, *T1_PS_32B, Q32)["verdict"] == "reproduced"


def test_an_interval_from_four_clusters_judges_nothing(hand_made, verified_pins, tmp_path):
    """Program-Solve 32B on the four replaced calculators at 70% where the paper has 90% (the lowest the set can draw
    with the 32B full-set value held; the issue's 50 vs 90 alike): its 4-cluster interval reaches past 90 (its upper
    end one calculator's accuracy), which before called it consistent."""
    t = Targets.paper()
    t.accuracy[(Q32, "program-solve")]["replaced"] = 70.0
    nums, _, _ = compare(hand_made("replaced-70", targets=t), tmp_path / "cmp")
    got = [r for r in nums if r["source"] == "text (limitations:replaced)" and r["where"].endswith("[ps_32b]")]
    assert len(got) == 1
    r = got[0]
    assert float(r["ours"]) == pytest.approx(70.0, abs=0.01)
    assert float(r["ours_lo"]) <= 90.0 <= float(r["ours_hi"])  # the interval holds the paper's value
    assert r["verdict"] == "discrepancy", r["why"]
    assert "rests on 4 calculator(s), fewer than the 10 a cluster bootstrap needs" in r["why"]


# ---- 4. the differential test: compare's rescoring is verify's --------------------------------------------------------  # noqa: E501
def _compare_rescored(root: Path) -> dict[tuple[str, int], bool | None]:
    _, files = read_root(root)
    return {
        (str(f.path.resolve()), line): (None if v < 0 else bool(v))
        for f in files
        for line, v in enumerate(f.recomputed.rescored, 1)
    }


def _verify_rescored(root: Path) -> dict[tuple[str, int], bool]:
    rows, _ = rescore_tree(root, keep=False)
    return {(str(Path(r.path).resolve()), r.line): r.correct for r in rows}


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO_ROOT / "results").iterdir() if p.is_dir()))
def test_compares_rescoring_is_verifys_on_every_committed_set(name):
    root = REPO_ROOT / "results" / name
    ours, theirs = _compare_rescored(root), _verify_rescored(root)
    assert ours and ours == theirs


def test_compares_rescoring_is_verifys_on_generated_sets(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "mixed")
    _edit(root, Q7, "program-solve", [42], lambda i, r: flip_flag(r) if i % 7 == 0 else r)
    _edit(root, Q32, "open-book", [43], lambda i, r: set_correct(r, not r["correct"]) if i % 5 == 0 else r)
    for each in (faithful, root):
        ours, theirs = _compare_rescored(each), _verify_rescored(each)
        assert len(ours) == 27_500 and ours == theirs
    flipped = [k for k in ours if f"{PS_7B_FILE}42.jsonl" in k[0] and k[1] % 7 == 1]
    assert len(flipped) == 158
    recs = read_records(root, Q7, "program-solve", 42)
    assert all(ours[k] != recs[k[1] - 1]["correct"] for k in flipped)  # the flags flipped, the rescoring not
