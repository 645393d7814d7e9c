"""Issue 41's six classes of flattering verdicts, one fixed case each (and the smaller items), on the hand-made sets of
tests/fixtures_comparison.py perturbed through the kit's own store, manifest and sums writers: an edited root, records
whose settings disagree with their manifest, one noisy seed, ordering claims over arms not run, p-values at their
Monte Carlo floor, a tolerance at the edge of its rounding. The generated cases are tests/analysis/
test_compare_properties.py; each counterexample it found is a case here."""

from __future__ import annotations

import csv
import dataclasses
import re

import pytest
from click.testing import CliRunner

from harness.analysis.comparison import compare_root
from harness.analysis.comparison import numbers as numbers_mod
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.claims import ClaimRows
from harness.arms.registry import ARMS
from harness.cli import main as cli
from harness.run.store import model_slug, results_path
from tests.fixtures_analysis import count_parses
from tests.fixtures_comparison import (
    MISTRAL,
    Q7,
    Q32,
    arm_for,
    copy_root,
    edit_run_manifest,
    read_records,
    replace_bytes,
    seal,
    set_correct,
    write_records_file,
)

DRAWS = 1000
T1_PS_7B = ("Table 1", "Program-Solve | Qwen2.5-7B Full")


def compare(root, out, draws=DRAWS):
    """comparison.csv and comparison-claims.csv as the user reads them, and the written files."""
    files = compare_root(root, out, draws=draws, seed=20260904, figure=False)
    with open(out / "comparison.csv", newline="", encoding="utf-8") as fh:
        nums = list(csv.DictReader(fh))
    with open(out / "comparison-claims.csv", newline="", encoding="utf-8") as fh:
        claims = list(csv.DictReader(fh))
    return nums, claims, files


def row(nums, source, where, model):
    got = [r for r in nums if r["source"] == source and r["where"].startswith(where) and r["model"] == model]
    assert len(got) == 1, (source, where, model)
    return got[0]


def claim(claims, ident, model):
    got = [c for c in claims if c["id"] == f"claim:{ident}" and c["model"] == model]
    assert len(got) == 1, (ident, model, got)
    return got[0]


@pytest.fixture
def faithful(hand_made, verified_pins):
    return hand_made("faithful")


@pytest.fixture
def faithful_cmp(faithful, tmp_path):
    return compare(faithful, tmp_path / "base")


# ---- 1. integrity first -----------------------------------------------------------------------------------------
def test_a_record_edited_after_it_was_written_is_not_comparable_naming_the_file(faithful, faithful_cmp, tmp_path):
    """Before: the edited set came out as the records said and `harness verify` alone named the file."""
    root = copy_root(faithful, tmp_path / "tampered")
    recs = read_records(root, Q7, "program-solve", 42)
    flipped = [set_correct(r, True) if not r["correct"] and i % 2 == 0 else r for i, r in enumerate(recs)]
    write_records_file(root, Q7, "program-solve", 42, flipped)  # the sums are left as written
    nums, claims, files = compare(root, tmp_path / "cmp")
    rel = f"{model_slug(Q7)}/program-solve/seed42.jsonl"
    acc = row(nums, *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable"
    assert f"changed after it was written: {rel} (its sha256 is not the one SHA256SUMS records)" in acc["why"]
    # exactly its numbers: the same model's open-book and every 32B number keep the faithful verdicts
    base = {(r["source"], r["where"], r["model"]): r["verdict"] for r in faithful_cmp[0]}
    for r in nums:
        touched = r["model"] == Q7 and "program-solve" in r["key"]
        if touched and r["verdict"] != "no result":
            assert r["verdict"] == "not comparable" and rel in r["why"], r
        elif not touched:
            assert r["verdict"] == base[(r["source"], r["where"], r["model"])], r
    assert claim(claims, "matched-7b", Q7)["verdict"] == "not comparable"
    assert claim(claims, "matched-32b", Q32)["verdict"] == "held"
    assert files.integrity.summary() == (
        f"integrity: 27 files read match {root.resolve() / 'SHA256SUMS'}; 1 read "
        "file(s) changed after they were written, their numbers not comparable: "
        f"{rel} (changed)"
    )


def test_a_root_without_sums_has_no_comparable_number_and_says_how_to_record_them(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "unsealed")
    (root / "SHA256SUMS").unlink()
    nums, claims, files = compare(root, tmp_path / "cmp")
    judged = [r for r in nums if r["verdict"] != "no result"]
    assert judged and all(r["verdict"] == "not comparable" for r in judged)
    assert all(
        f"no SHA256SUMS covers {root.resolve()}: nothing shows these files are as written" in r["why"]
        and "harness checksums update --results" in r["why"]
        for r in judged
    )
    assert {c["verdict"] for c in claims} <= {"not comparable", "no result"}


def test_sums_that_cannot_be_read_refuse_the_root_naming_file_and_line(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "bad-sums")
    lines = (root / "SHA256SUMS").read_text().splitlines()
    lines[3] = "not a sum line"
    replace_bytes(root / "SHA256SUMS", ("\n".join(lines) + "\n").encode())
    res = CliRunner().invoke(cli, ["compare", "--results", str(root), "--out", str(tmp_path / "o"), "--draws", "200"])
    assert res.exit_code == 1
    assert f"{root.resolve() / 'SHA256SUMS'}:4: not a '<sha256>  <path>' line" in res.output
    assert "the comparison reads the root's sums first" in res.output


def test_a_changed_file_that_no_longer_parses_is_refused_and_said_to_have_changed(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "broken")
    path = results_path(root, Q32, "open-book", 44)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] = ord("{")
    replace_bytes(path, bytes(data))
    res = CliRunner().invoke(cli, ["compare", "--results", str(root), "--out", str(tmp_path / "o"), "--draws", "200"])
    assert res.exit_code == 1
    assert str(path) in res.output
    assert f"changed after it was written: {model_slug(Q32)}/open-book/seed44.jsonl" in res.output


def test_a_deleted_and_an_added_results_file_are_named(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "moved")
    results_path(root, Q32, "program-solve", 46).unlink()
    extra = results_path(root, Q32, "open-book", 47)
    write_records_file(
        root, Q32, "open-book", 47, [{**r, "seed": 47} for r in read_records(root, Q32, "open-book", 46)]
    )
    nums, _, _ = compare(root, tmp_path / "cmp")
    ps = row(nums, "Table 1", "Program-Solve | Qwen2.5-32B Full", Q32)
    assert ps["verdict"] == "not comparable"
    assert f"{model_slug(Q32)}/program-solve/seed46.jsonl (listed in SHA256SUMS, now missing)" in ps["why"]
    ob = row(nums, "Table 1", "Open-book arithmetic | Qwen2.5-32B Full", Q32)
    assert f"{extra.relative_to(root)} (not in SHA256SUMS: added after it was written)" in ob["why"]


def test_a_changed_run_manifest_makes_the_numbers_it_covers_not_comparable(faithful, faithful_cmp, tmp_path):
    root = copy_root(faithful, tmp_path / "manifest")
    edit_run_manifest(root, Q32, lambda m: m["origin"].update(created_at="2027-01-02T00:00:00+00:00"))
    nums, _, _ = compare(root, tmp_path / "cmp")
    for r in nums:
        if r["model"] == Q32 and r["verdict"] != "no result":
            assert (
                r["verdict"] == "not comparable"
                and "manifest-" in r["why"]
                and "changed after it was written" in r["why"]
            ), r
    assert row(nums, *T1_PS_7B, Q7)["verdict"] == "reproduced"


def test_a_file_no_number_is_read_from_is_named_and_changes_no_verdict(faithful, faithful_cmp, tmp_path):
    root = copy_root(faithful, tmp_path / "notes")
    (root / "notes.txt").write_text("added after the sums\n")
    nums, claims, files = compare(root, tmp_path / "cmp")
    assert [r["verdict"] for r in nums] == [r["verdict"] for r in faithful_cmp[0]]
    assert "1 file(s) no number is read from differ (notes.txt (not listed)" in files.integrity.summary()


# ---- 2. settings from the records and the manifest -------------------------------------------------------------
def _records_under(root, model, arm, spec):
    """Rewrite the arm's records as made under `spec` (an Arm): its config hash and its requests' decoding."""
    for seed in (42, 43, 44, 45, 46):
        recs = read_records(root, model, arm, seed)
        write_records_file(
            root,
            model,
            arm,
            seed,
            [
                {
                    **r,
                    "arm_config_hash": spec.config_hash(),
                    "request": [
                        {**q, "temperature": spec.temperature, "max_tokens": spec.max_tokens} for q in r["request"]
                    ],
                }
                for r in recs
            ],
        )


def test_records_made_at_another_temperature_than_their_manifest_are_not_comparable(faithful, tmp_path):
    """Before: the manifest alone was read, so records at 0.7 under a manifest stating 0.0 were judged as 0.0."""
    root = copy_root(faithful, tmp_path / "hot")
    spec = arm_for("program-solve")
    hot = dataclasses.replace(spec, decoding=dataclasses.replace(spec.decoding, temperature=0.7))
    _records_under(root, Q7, "program-solve", hot)
    seal(root)  # as the run wrote them: the integrity holds, the settings disagree
    nums, _, _ = compare(root, tmp_path / "cmp")
    acc = row(nums, *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable"
    assert f"arm config (records' arm_config_hash): the records state {hot.config_hash()[:12]}" in acc["why"]
    assert (
        "records and manifest disagree (the records' hash is the manifest's program-solve config with "
        "temperature 0.7)" in acc["why"]
    )
    assert row(nums, "Table 1", "Open-book arithmetic | Qwen2.5-7B Full", Q7)["verdict"] == "reproduced"


def test_records_and_manifest_both_at_another_temperature_name_the_papers_setting(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "both")
    spec = arm_for("program-solve")
    hot = dataclasses.replace(spec, decoding=dataclasses.replace(spec.decoding, temperature=0.7))
    _records_under(root, Q7, "program-solve", hot)

    def edit(m):
        m["arms"]["program-solve"]["temperature"] = 0.7
        m["arm_config_hashes"]["program-solve"] = hot.config_hash()

    edit_run_manifest(root, Q7, edit)
    seal(root)
    acc = row(compare(root, tmp_path / "cmp")[0], *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable" and "program-solve: temperature 0.7, not 0.0" in acc["why"]
    assert "records and manifest disagree" not in acc["why"]


# ---- 3. the user's seed spread never widens the tolerance -------------------------------------------------------
def _shift_seed(root, model, arm, seed, cases: int, to: bool):
    recs = read_records(root, model, arm, seed)
    moved, out = 0, []
    for r in recs:
        if moved < cases and r["correct"] != to and r["outcome"] == "answered":
            r, moved = set_correct(r, to), moved + 1
        out.append(r)
    write_records_file(root, model, arm, seed, out)


def test_one_bad_seed_is_reported_and_never_widens_the_tolerance(faithful, faithful_cmp, tmp_path):
    """Before: one seed 5 points off widened the tolerance about fivefold and the number reproduced."""
    root = copy_root(faithful, tmp_path / "bad-seed")
    _shift_seed(root, Q7, "program-solve", 44, 55, False)  # seed 44: 5 points lower (55 of 1,100 cases)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    before, after = row(faithful_cmp[0], *T1_PS_7B, Q7), row(nums, *T1_PS_7B, Q7)
    assert after["tolerance"] == before["tolerance"] == "0.60"
    assert after["verdict"] != "reproduced" and float(after["difference"]) == pytest.approx(-1.0, abs=0.01)
    assert "your seeds disagree more than the paper's reruns did (per-seed SD" in after["spread"]


def test_seeds_that_disagree_beyond_the_papers_reruns_do_not_reproduce_whatever_their_mean(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "noisy")
    _shift_seed(root, Q32, "program-solve", 43, 11, True)  # one seed 1 point up, another 1 point down:
    _shift_seed(root, Q32, "program-solve", 45, 11, False)  # the mean stays, the seeds disagree
    seal(root)
    acc = row(compare(root, tmp_path / "cmp")[0], "Table 1", "Program-Solve | Qwen2.5-32B Full", Q32)
    assert acc["difference"] == "0.00" and acc["verdict"] == "consistent"
    assert "is within rerun noise ±0.12 (the paper's 32B rerun agreement 99.8%" in acc["why"]
    assert "your seeds disagree more than the paper's reruns did" in acc["why"] and "not a reproduction" in acc["why"]


# ---- 4. every claim states the inputs it lacked -----------------------------------------------------------------
def test_an_ordering_claim_over_arms_not_run_is_never_a_bare_held(faithful_cmp):
    """Before: 'the Gold-first hybrid is above every single arm' held with 3 of the 8 arms run; at 32B the paper's
    deciding margin (0.11) is over + syntax, never run here."""
    c = claim(faithful_cmp[1], "gold-first-above-all-32b", Q32)
    assert c["verdict"] == "not comparable"
    assert c["lacks"] == "note-only; page-no-formula; extract-lib; program-solve-syntax; blind"
    assert c["why"].startswith(
        "these results lack note-only; page-no-formula; extract-lib; program-solve-syntax; "
        "blind (on what ran: yours is +"
    )


def test_an_ordering_claim_that_fails_on_what_ran_did_not_hold_whatever_it_lacks(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "ob-up")
    for seed in (42, 43, 44, 45, 46):  # open-book 20 points up at 7B: above the hybrid
        _shift_seed(root, Q7, "open-book", seed, 220, True)
    seal(root)
    c = claim(compare(root, tmp_path / "cmp")[1], "gold-first-above-all-7b", Q7)
    assert c["verdict"] == "did not hold" and "which cannot change that" in c["why"] and c["lacks"]


# ---- 5. p-value claims know their Monte Carlo floor -------------------------------------------------------------
def test_a_p_value_claim_at_its_monte_carlo_floor_is_undecided_and_says_how_many_flips(
    other_families, verified_pins, tmp_path
):
    """Before: with 1,000 flips a Holm-adjusted p < 0.001 cannot be reached and the claim read 'did not hold'."""
    _, claims, _ = compare(other_families, tmp_path / "few", draws=1000)
    c = claim(claims, "other-family-p-mistral", MISTRAL)
    assert c["verdict"] == "undecided" and c["lacks"] == ""  # the family member not run is within the bounds
    need = int(
        re.search(r"undecided at 1,000 sign flips \(at least ([\d,]+) needed\)", c["why"]).group(1).replace(",", "")
    )
    assert "the smallest p 1,000 flips can give after Holm over 3 comparisons is 0.0030" in c["why"]
    _, claims, _ = compare(other_families, tmp_path / "enough", draws=need)
    assert claim(claims, "other-family-p-mistral", MISTRAL)["verdict"] == "held"


def test_a_p_value_claim_needs_the_papers_direction(other_families, verified_pins, tmp_path):
    root = copy_root(other_families, tmp_path / "reversed")
    for seed in (42, 43, 44, 45, 46):  # Mistral's code route 20 points up: Phi-like sign
        _shift_seed(root, MISTRAL, "program-solve", seed, 220, True)
    seal(root)
    c = claim(compare(root, tmp_path / "cmp", draws=2000)[1], "other-family-p-mistral", MISTRAL)
    assert c["verdict"] == "did not hold" and "is not in the paper's direction (negative), whatever its p" in c["why"]


# ---- 6. one rounding --------------------------------------------------------------------------------------------
def test_the_tolerance_is_rounded_once_and_the_number_shown_is_the_number_used():
    """Before: the verdict compared with 0.596 and printed ±0.60, then called +0.60 beyond rerun noise ±0.60."""
    t = tol.tolerance(0.596, 0.3, 0.005, "the paper's 7B rerun agreement", 2)
    assert t.half_width == 0.60 and t.text().startswith("±0.60 ")
    verdict, why = numbers_mod.judge(75.31, 2, 75.91, t, [])
    assert verdict == "reproduced" and why.startswith("+0.60, within rerun noise ±0.60")
    verdict, why = numbers_mod.judge(75.31, 2, 75.92, t, [], our_ci=(70.0, 80.0))
    assert verdict == "consistent" and why.startswith("+0.61 is beyond rerun noise ±0.60")
    assert tol.round_half_up(0.585, 2) == 0.59 and tol.round_half_up(0.595, 2) == 0.60


def test_a_claim_margin_is_decided_as_shown(faithful_cmp):
    """A margin of -0.004 shows as 0.00 and is decided as 0.00; an interval end of 0.00 does not clear zero."""
    rows = ClaimRows.__new__(ClaimRows)
    rows.rows, rows.ctx = [], None
    spec = {"id": "claim:x", "line": 1, "says": "x", "headline": False, "check": {"kind": "interval"}}
    rows._decide(spec, "m", -0.004, 2.0, 0.5, "", "", [], said="s", strict=True)
    rows._decide(spec, "m", -0.004, 2.0, 0.5, "", "", [], said="s", strict=False)
    assert [(r["verdict"], r["margin"]) for r in rows.rows] == [("did not hold", 0.0), ("held", 0.0)]


# ---- the smaller items --------------------------------------------------------------------------------------------
def test_the_settings_summary_names_only_the_model_and_arm_a_setting_differs_for(hand_made, verified_pins, tmp_path):
    def cap(m):
        m["arms"]["program-solve"]["max_tokens"] = 1024

    root = hand_made("summary-cap", manifests={Q7: cap})
    res = CliRunner().invoke(cli, ["compare", "--results", str(root), "--out", str(tmp_path / "o"), "--draws", "200"])
    assert res.exit_code == 0, res.output
    line = next(s for s in res.output.splitlines() if s.startswith("settings: "))
    assert "output-token cap (Qwen2.5-7B program-solve)" in line
    assert "Qwen2.5-32B program-solve" not in line and "open-book" not in line.split("output-token cap")[1][:40]


def test_rows_with_no_result_claim_no_tolerance(faithful_cmp):
    empty = [r for r in faithful_cmp[0] if r["verdict"] == "no result"]
    assert empty and all(r["tolerance"] == "" and r["tolerance_source"] == "no result" for r in empty)
    assert not any("holds by construction" in r["tolerance_source"] for r in empty)


def test_every_claim_that_did_not_hold_reaches_the_models_lead_sentence(faithful, tmp_path):
    root = copy_root(faithful, tmp_path / "ob-none")
    recs = read_records(root, Q7, "open-book", 42)
    i = next(k for k, r in enumerate(recs) if not r["correct"])
    recs[i] = {**recs[i], "outcome": "no_program", "answer": None}
    write_records_file(root, Q7, "open-book", 42, recs)
    seal(root)
    _, claims, files = compare(root, tmp_path / "cmp")
    c = claim(claims, "open-book-always-answers-7b", Q7)
    assert c["verdict"] == "did not hold" and not ARMS["open-book"].extension
    lead = next(s for s in files.sentences if s.startswith(Q7))
    assert f"Did not hold: {c['says']} (line {c['line']}: 1 unanswered rows" in lead


# ---- speed: one read of every record ---------------------------------------------------------------------------
def test_compare_parses_every_results_file_once(faithful, tmp_path, monkeypatch):
    """Before: the truncation claims read every record a second time (an.records). Now the analysis's one read gives
    what the comparison reads of a record (harness.analysis.stats.arrays.record_facts, file_settings)."""
    from harness.analysis.stats.arrays import CACHE_ENV
    from harness.core.parallel import WORKERS_ENV

    monkeypatch.setenv(CACHE_ENV, "off")  # no cache: every file is parsed by this comparison
    monkeypatch.setenv(WORKERS_ENV, "1")  # in this process, where the counter sees it
    parsed = count_parses(monkeypatch)
    compare(faithful, tmp_path / "cmp")
    files = sorted(faithful.glob("*/*/seed*.jsonl"))
    assert sorted(parsed) == files


def test_a_headline_claim_a_partial_arm_set_cannot_check_is_named_in_the_lead(faithful, tmp_path):
    """A partial arm set (32B ran Program-Solve, not Open-book arithmetic): the headline claim it cannot check is said
    in the model's sentence, not left out of it."""
    import shutil

    root = copy_root(faithful, tmp_path / "partial")
    shutil.rmtree(results_path(root, Q32, "open-book", 42).parent)

    def edit(m):
        m["arms"].pop("open-book")
        m["arm_config_hashes"].pop("open-book")

    edit_run_manifest(root, Q32, edit)
    seal(root)
    _, claims, files = compare(root, tmp_path / "cmp")
    c = next(c for c in claims if c["id"] == "claim:matched-32b")
    assert c["verdict"] == "no result"
    lead = next(s for s in files.sentences if s.startswith(Q32))
    assert f"Not checked, these results lack the arms for it: {c['says']}" in lead


def test_a_users_own_vllm_endpoint_is_judged_on_the_version_it_reports(faithful, tmp_path):
    """A run against a user's own vLLM (the external launcher) records what the server answered (GET /version): an
    older release is a differing vLLM version, and the serving flags it could not record are "not recorded", never
    "differs"."""
    root = copy_root(faithful, tmp_path / "own")

    def own_endpoint(data):
        data["server"] = {
            "launcher": "external",
            "base_url": "http://127.0.0.1:8000/v1",
            "model_id": Q7,
            "server_profile": "vllm",
            "server": "vLLM",
            "server_version": "0.31.0",
            "revision": data["server"]["revision"],
        }

    edit_run_manifest(root, Q7, own_endpoint)
    seal(root)
    nums, _, _ = compare(root, tmp_path / "cmp")
    acc = row(nums, *T1_PS_7B, Q7)
    assert acc["verdict"] == "not comparable"
    assert "vLLM version 0.31.0, not 0.32.0" in acc["why"]
    assert "dtype not recorded" in acc["why"] or "not recorded in the run manifest" in acc["why"]
    assert "differs" not in acc["why"].split("vLLM version")[0]
