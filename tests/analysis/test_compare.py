"""`harness compare`: the paper's values and claims (harness/analysis/paper_values.json) against the .tex, and the
verdicts on hand-made result sets (tests/fixtures_comparison.py: the kit's own record, store, manifest, launcher
and executor types; correctness drawn to the paper's statistics) as a careful reader of the paper would give them,
reason named; on real Gold-Solve runs; on the committed CPU demo; on a small rehearsal (synthetic: compared
nowhere)."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.analysis.comparison import numbers as numbers_mod
from harness.analysis.comparison import tolerance as tol
from harness.analysis.comparison.values import number, paper_values, setting
from harness.arms.registry import ARMS
from harness.cli import main as cli
from harness.model.vllm import locks as vllm
from tests.conftest import require
from tests.fixtures_comparison import Q7, Q32, Targets, server_block

ROOT = Path(__file__).resolve().parents[2]
TEX = Path(os.environ.get("MATHSOLVER_PAPER_TEX") or ROOT.parent / "shared" / "paper" / "deterministic-math-solver.tex")
VALUES = ROOT / "harness" / "analysis" / "paper_values.json"
DRAWS = "1000"
T2 = "Table 2"


def _extractor():
    spec = importlib.util.spec_from_file_location("extract_paper_values", ROOT / "scripts" / "extract_paper_values.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tex() -> Path:
    require(TEX.is_file(), f"the paper's source is not beside the clone (or at MATHSOLVER_PAPER_TEX): {TEX}")
    return TEX


# ---- the values file against the .tex -----------------------------------------------------------------------
def test_values_file_is_what_the_tex_gives(tex):
    ext = _extractor()
    assert ext.render(ext.extract(tex)) == VALUES.read_text(encoding="utf-8")
    assert ext.main(["--tex", str(tex), "--out", str(VALUES), "--check"]) == 0


def test_every_value_and_claim_sits_on_its_line(tex):
    lines = tex.read_text(encoding="utf-8").split("\n")
    ext = _extractor()
    v = paper_values()
    for c in v["cells"]:
        assert c["raw"] in lines[c["line"] - 1], c["id"]
        text = ext.plain(c["raw"])
        if c["table"] == "tab:gaps":
            assert [ext.number(x) for x in re.findall(ext.NUM, text)] == [c["value"], c["lo"], c["hi"]], c["id"]
        else:
            assert ext.number(text) == c["value"], c["id"]
    for t in v["text_numbers"]:
        for n in t["numbers"]:
            assert n["raw"] in lines[n["line"] - 1] and ext.number(n["raw"]) == n["value"], (t["id"], n)
    whole = "\n".join(lines)
    for c in v["claims"]:  # each claim's anchor starts on its line
        first = c["raw"].split(" ")[0]
        assert first in lines[c["line"] - 1] or first in c["raw"], c["id"]
        assert c["raw"].replace(" ", "") in whole.replace("\n", "").replace(" ", ""), c["id"]
    counts = {t: sum(c["table"] == t for c in v["cells"]) for t in ("tab:ladder", "tab:gaps")}
    assert counts == {"tab:ladder": 38, "tab:gaps": 10}
    # the numbers the issue asked for: the permutation p-values and the rerun agreement, with their lines
    assert number("text:results:other-families-p#p_mistral") == {"value": 0.001, "digits": 3, "line": 271}
    assert number("text:results:other-families-p#p_phi")["value"] == 0.010
    assert (
        number("text:appendix:rerun-agreement#agree_7b")["value"],
        number("text:appendix:rerun-agreement#agree_32b")["value"],
    ) == (95.0, 99.8)
    assert number("text:limitations:audit-flags#replaced")["value"] == 4.0  # "four of them replaced"


def test_every_claim_names_numbers_the_file_holds():
    for c in paper_values()["claims"]:
        for ref in (c["check"].get("evidence") or {}).values():
            for r in ref if isinstance(ref, list) else [ref]:
                assert number(r)["line"] > 0, (c["id"], r)
    kinds = {c["check"]["kind"] for c in paper_values()["claims"]}
    assert kinds == {
        "interval",
        "sign",
        "order",
        "equals",
        "within_interval",
        "zero",
        "p_value",
        "range",
        "agreement",
        "at_most",
    }


@pytest.mark.parametrize(
    "old,new",
    [
        ("& \\textbf{75.31} &", "& \\textbf{75.21} &"),  # a Table 1 cell
        ("$+3.29$ $[-3.49, 10.38]$ & $+7.05$", "$+3.29$ $[-3.49, 10.39]$ & $+7.05$"),  # a Table 2 interval end
        ("reaches\n81.64\\%", "reaches\n81.65\\%"),  # a number in the prose
        ("5\\,s wall clock", "6\\,s wall clock"),  # a stated setting
        ("permutation $p<0.001$ and $p=0.010$", "permutation $p<0.001$ and $p=0.011$"),  # a p-value
        ("but is at 32B, clear of zero", "but is at 32B, near zero"),  # a claim's anchor
    ],
)
def test_a_one_word_change_in_the_tex_fails(tex, tmp_path, old, new):
    text = tex.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    bad = tmp_path / tex.name
    bad.write_text(text.replace(old, new), encoding="utf-8")
    assert _extractor().main(["--tex", str(bad), "--out", str(VALUES), "--check"]) in (1, 2)


def test_the_kits_arm_specs_and_serving_pins_are_the_papers_settings():
    """Token caps, note budgets and temperatures are read from the arm specs; they must be the paper's."""
    caps, budgets, temps = (
        setting("token-caps")["values"],
        setting("note-budgets")["values"],
        setting("temperatures")["values"],
    )
    assert ARMS["program-solve"].max_tokens == ARMS["program-solve-syntax"].max_tokens == caps["program-solve"]
    assert {ARMS[a].max_tokens for a in ("blind", "blind-vote", "blind-repair", "blind-repair-vote")} == {caps["blind"]}
    assert (ARMS["note-only"].note_words, ARMS["page-no-formula"].note_words) == (
        budgets["note_only"],
        budgets["page_no_formula"],
    )
    assert {ARMS[a].temperature for a in ARMS if ARMS[a].samples == 1 and not ARMS[a].extension} == {temps["greedy"]}
    assert {ARMS[a].temperature for a in ARMS if ARMS[a].samples > 1 and not ARMS[a].extension} == {temps["sampled"]}
    assert vllm.serving_flags("qwen2.5-7b")["dtype"] == "bfloat16"  # "Qwen2.5-7B-Instruct (bf16)"
    assert vllm.serving_flags("qwen2.5-32b-awq")["quantization"].startswith("awq")  # "-AWQ (4-bit)"
    assert vllm.serving_flags("qwen2.5-7b")["tensor_parallel_size"] == setting("tensor-parallel")["values"]["tp"]


# ---- the tolerance -------------------------------------------------------------------------------------------
def test_the_papers_own_rerun_lies_within_the_tolerance_derived_from_its_agreement():
    rows = {r["model"]: r for r in tol.paper_rerun_check()}
    assert rows["7B"]["moved"] == pytest.approx(0.14) and rows["32B"]["moved"] == pytest.approx(0.04)
    assert rows["7B"]["half_width"] == pytest.approx(1.96 * 100 * (0.05 / 2200) ** 0.5, rel=1e-3)  # 0.93
    assert rows["32B"]["half_width"] == pytest.approx(1.96 * 100 * (0.002 / 2200) ** 0.5, rel=1e-3)  # 0.19
    assert all(r["moved"] < r["half_width"] for r in rows.values())
    # a 2.3-point move at n = 1,100 x 5 is about 4x the 7B half-width (0.59), far beyond it (issue 32)
    assert 2.3 / (1.96 * tol.flip_sd(0.05, 5500)) > 3.5


def test_judge_reads_rerun_noise_then_sampling_uncertainty():
    t = tol.rerun(2, 0.30, "the paper's 7B rerun agreement")
    assert numbers_mod.judge(75.31, 2, 75.0, t, [])[0] == "reproduced"
    v, why = numbers_mod.judge(75.31, 2, 73.01, t, [], our_ci=(67.0, 79.0))
    assert v == "consistent" and "beyond rerun noise" in why and "holds the paper's value" in why
    assert numbers_mod.judge(75.31, 2, 60.0, t, [], our_ci=(55.0, 65.0))[0] == "discrepancy"
    v, why = numbers_mod.judge(3.29, 2, -3.40, t, [], paper_ci=(-3.49, 10.38), signed=True)
    assert v == "discrepancy" and why.startswith("sign reversed")
    v, why = numbers_mod.judge(
        7.05, 2, 0.60, t, [], paper_ci=(0.47, 14.60), signed=True, failed_claims=["interval clears zero: yours crosses"]
    )
    assert v == "discrepancy" and "claim did not hold" in why
    assert numbers_mod.judge(7.05, 2, 0.60, t, ["seeds 42, the paper's 42-46"])[0] == "not comparable"
    assert numbers_mod.judge(7.05, 2, None, t, [])[0] == "no result"


# ---- hand-made result sets ------------------------------------------------------------------------------------
def _run(args):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return res.output


def _compare(root: Path, out: Path, *extra) -> tuple[list[dict], list[dict], str]:
    _run(["compare", "--results", str(root), "--out", str(out), "--draws", DRAWS, *extra])
    with open(out / "comparison.csv", newline="", encoding="utf-8") as fh:
        nums = list(csv.DictReader(fh))
    with open(out / "comparison-claims.csv", newline="", encoding="utf-8") as fh:
        claims = list(csv.DictReader(fh))
    return nums, claims, (out / "comparison.md").read_text(encoding="utf-8")


def _lead(md: str) -> str:
    """comparison.md's opening: one sentence per model, before the 'Paper:' line."""
    return md.split("\n\nPaper: ")[0]


def _num(rows, source, where_start, model) -> dict:
    got = [r for r in rows if r["source"] == source and r["where"].startswith(where_start) and r["model"] == model]
    assert len(got) == 1, (source, where_start, model, got)
    return got[0]


def _claim(rows, ident, model=None) -> dict:
    got = [r for r in rows if r["id"] == f"claim:{ident}" and (model is None or r["model"] == model)]
    assert len(got) == 1, (ident, model, got)
    return got[0]


def _ps_ob(model):
    return f"Program-Solve \u2212 Open-book arithmetic | {'7B' if model == Q7 else '32B'}"


@pytest.fixture
def faithful(hand_made, verified_pins, tmp_path):
    return _compare(hand_made("faithful"), tmp_path / "cmp")


def test_a_faithful_rerun_reproduces_and_its_claims_hold(faithful):
    nums, claims, md = faithful
    judged = [r for r in nums if r["verdict"] not in ("no result",)]
    assert len(judged) >= 40
    comparable = [r for r in judged if r["verdict"] != "not comparable"]
    assert comparable and all(r["verdict"] == "reproduced" for r in comparable), [
        (r["where"], r["verdict"], r["why"]) for r in comparable if r["verdict"] != "reproduced"
    ]
    # the only numbers not compared are on the kit's own reading of the audit groups (not the paper's calculators)
    assert all("the kit's audit groups" in r["why"] for r in judged if r["verdict"] == "not comparable")
    table1 = _num(nums, "Table 1", "Program-Solve | Qwen2.5-7B Full", Q7)
    assert table1["n"] == "1,100 \u00d7 5" and table1["ours_lo"] and float(table1["tolerance"]) < 1.0
    assert "rerun agreement 95%" in table1["tolerance_source"]
    checked = [c for c in claims if c["verdict"] not in ("no result",)]
    # every claim whose inputs these results hold holds; the set has three of the paper's 19 arms, so a claim over
    # arms or members it lacks is not comparable and names them (issue 41, class 4), never a bare "held"
    lacking = {c["id"] for c in checked if c["lacks"]}
    assert all(
        c["verdict"] == "held" for c in checked if "the kit's audit groups" not in c["why"] and not c["lacks"]
    ), [(c["id"], c["model"], c["why"]) for c in checked if c["verdict"] not in ("held", "not comparable")]
    assert {c["id"] for c in checked if c["verdict"] == "held"} == {
        "claim:matched-7b",
        "claim:matched-32b",
        "claim:library-lead-7b",
        "claim:library-lead-32b",
        "claim:library-where-both-answer-7b",
        "claim:library-where-both-answer-32b",
        "claim:library-exact",
        "claim:fallback-interval-7b",
        "claim:fallback-interval-32b",
        "claim:open-book-always-answers-7b",
        "claim:open-book-always-answers-32b",
    }
    assert lacking == {
        "claim:gold-first-above-all-7b",
        "claim:gold-first-above-all-32b",
        "claim:audit-robust-7b",
        "claim:audit-robust-32b",
        "claim:icc-library",
        "claim:ess-library",
        "claim:ess-arithmetic",
        "claim:seed-agreement-greedy",
        "claim:truncation-any",
        "claim:truncation-32b",
        "claim:truncation-never-correct",
    }
    for c in checked:
        if c["lacks"]:
            assert c["verdict"] == "not comparable" and c["why"].startswith(f"these results lack {c['lacks']}"), c
    gold_first = _claim(claims, "gold-first-above-all-32b")  # the paper's deciding margin is over an arm not run
    assert "blind" in gold_first["lacks"] and "program-solve-syntax" in gold_first["lacks"]
    lead = _lead(md)
    assert "**Qwen/Qwen2.5-32B-Instruct-AWQ**: Held: At 32B, Program-Solve is more accurate" in lead
    assert "Numbers: 19 reproduced of 19 comparable" in lead and "Did not hold" not in lead
    assert "The stronger per-case check was not possible" in md


@pytest.fixture
def gap32_crosses(hand_made, verified_pins, tmp_path):
    t = Targets.paper()
    t.accuracy[(Q32, "program-solve")]["full"] = t.accuracy[(Q32, "open-book")]["full"] + 0.60
    return _compare(hand_made("gap32-crosses", targets=t), tmp_path / "cmp")


def test_a_32b_gap_whose_interval_crosses_zero_is_a_discrepancy_wherever_the_paper_prints_it(gap32_crosses):
    nums, claims, md = gap32_crosses
    claim = _claim(claims, "matched-32b")
    assert claim["verdict"] == "did not hold" and "crosses zero" in claim["why"]
    # the same gap, printed three times (Table 2, the abstract, the conclusion's rounded +7.1): one verdict
    rows = [
        r
        for r in nums
        if r["model"] == Q32
        and r["what"].startswith(("Program-Solve \u2212 Open-book", "program-solve \u2212 open-book"))
    ]
    assert len(rows) == 3, rows
    assert {r["verdict"] for r in rows} == {"discrepancy"}
    assert all("claim did not hold" in r["why"] for r in rows)
    assert float(_num(nums, T2, _ps_ob(Q32), Q32)["ours"]) == pytest.approx(0.60, abs=0.01)
    lead = _lead(md)
    assert "Did not hold: At 32B, Program-Solve is more accurate than Open-book arithmetic" in lead
    assert _claim(claims, "matched-7b")["verdict"] == "held"  # the 7B side is untouched


@pytest.fixture
def sign_reversed(hand_made, verified_pins, tmp_path):
    t = Targets.paper()
    t.accuracy[(Q7, "program-solve")]["full"] = t.accuracy[(Q7, "open-book")]["full"] - 3.40
    return _compare(hand_made("sign-reversed", targets=t), tmp_path / "cmp")


def test_a_sign_reversed_7b_gap_is_a_discrepancy_though_its_interval_still_crosses_zero(sign_reversed):
    nums, claims, md = sign_reversed
    gap = _num(nums, T2, _ps_ob(Q7), Q7)
    assert float(gap["ours"]) == pytest.approx(-3.40, abs=0.01)
    assert gap["verdict"] == "discrepancy" and gap["why"].startswith("sign reversed (the paper's +3.29, yours -3.40)")
    # what the paper claims at 7B (not reliably better) still holds, and the sentence says both
    assert _claim(claims, "matched-7b")["verdict"] == "held"
    assert "Program-Solve minus Open-book" not in _claim(claims, "matched-7b")["why"]
    lead = [s for s in _lead(md).split("\n") if s.startswith("**Qwen/Qwen2.5-7B")][0]
    assert "not reproduced: " in lead and "discrepancy" in lead


@pytest.fixture
def two_point_drop(hand_made, verified_pins, tmp_path):
    t = Targets.paper()
    t.accuracy[(Q7, "program-solve")]["full"] -= 2.3
    return _compare(hand_made("two-point-drop", targets=t), tmp_path / "cmp")


def test_a_two_point_accuracy_drop_is_beyond_rerun_noise_not_reproduced(two_point_drop):
    nums, claims, _ = two_point_drop
    acc = _num(nums, "Table 1", "Program-Solve | Qwen2.5-7B Full", Q7)
    assert float(acc["difference"]) == pytest.approx(-2.3, abs=0.01)
    # ~0.6 pp is what a same-case rerun moves it by; 2.3 is beyond that, within the sampling uncertainty
    assert float(acc["tolerance"]) < 0.7
    assert acc["verdict"] == "consistent" and "something in the setting differs" in acc["why"]
    gap = _num(nums, T2, _ps_ob(Q7), Q7)
    assert gap["verdict"] == "consistent" and "within the paper's 95% interval [-3.49, 10.38]" in gap["why"]
    assert _num(nums, "Table 1", "Program-Solve | Qwen2.5-32B Full", Q32)["verdict"] == "reproduced"


def test_a_partial_run_gets_no_verdict_on_the_numbers_it_lacks(hand_made, verified_pins, tmp_path):
    root = hand_made("partial", keep_cases={(Q7, "program-solve"): 110})
    nums, claims, _ = _compare(root, tmp_path / "cmp")
    acc = _num(nums, "Table 1", "Program-Solve | Qwen2.5-7B Full", Q7)
    assert acc["verdict"] == "not comparable" and "110 of the paper's 1,100 cases at every seed" in acc["why"]
    assert acc["n"] == "110 \u00d7 5"
    gap = _num(nums, T2, _ps_ob(Q7), Q7)
    assert gap["verdict"] == "not comparable" and "110 of the paper's 1,100 cases" in gap["why"]
    # per number, not per result set: the full Open-book run of the same model and everything at 32B still count
    assert _num(nums, "Table 1", "Open-book arithmetic | Qwen2.5-7B Full", Q7)["verdict"] == "reproduced"
    assert _num(nums, T2, _ps_ob(Q32), Q32)["verdict"] == "reproduced"
    assert _claim(claims, "matched-7b")["verdict"] == "not comparable"


def test_a_one_seed_arm_beside_a_five_seed_arm_is_judged_on_its_paired_seeds(hand_made, verified_pins, tmp_path):
    root = hand_made("one-seed", keep_seeds={(Q7, "program-solve"): (42,)})
    nums, _, _ = _compare(root, tmp_path / "cmp")
    gap = _num(nums, T2, _ps_ob(Q7), Q7)
    assert gap["verdict"] == "not comparable" and "seeds 42, the paper's 42-46" in gap["why"]
    assert gap["n"] == "1,100 \u00d7 1"
    assert _num(nums, "Table 1", "Open-book arithmetic | Qwen2.5-7B Full", Q7)["verdict"] == "reproduced"


def _set(path: str, value):
    def edit(fields):
        node, keys = fields, path.split(".")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value(node[keys[-1]]) if callable(value) else value

    return edit


def _llama_cpp(fields):
    fields["server"] = {
        "launcher": "llama-cpp",
        "base_url": "http://127.0.0.1:8088/v1",
        "server": "llama-cpp-python",
        "model_id": "Qwen2.5-7B-Instruct",
        "server_profile": "llama.cpp",
    }


@pytest.mark.parametrize(
    "name,model,edit,affected,reason",
    [
        (
            "scorer",
            Q7,
            _set("scorer", "medcalc"),
            ("program-solve", "open-book"),
            "scorer medcalc, not paper (the paper's Scoring paragraph (.tex line 400))",
        ),
        (
            "convention",
            "library",
            _set("arms", lambda a: {"gold-lib": {**a["gold-lib"], "convention": "medcalc-v1.0"}}),
            ("gold-lib", "gold-first"),
            "unit convention medcalc-v1.0, not exact",
        ),  # the library and its hybrids
        (
            "formula-version",
            Q32,
            _set(
                "arms",
                lambda a: {**a, "program-solve": {**a["program-solve"], "formula_versions": {"9": "ckd-epi-2021"}}},
            ),
            ("program-solve",),
            "formula version {9: ckd-epi-2021}, not the benchmark's",
        ),
        (
            "quantization",
            Q32,
            _set("server.flags", lambda f: {**f, "quantization": "gptq_marlin"}),
            ("program-solve", "open-book"),
            "quantization gptq_marlin, not awq_marlin",
        ),
        (
            "dtype",
            Q7,
            _set("server.flags", lambda f: {**f, "dtype": "float16"}),
            ("program-solve", "open-book"),
            "dtype float16, not bfloat16",
        ),
        (
            "tensor-parallel",
            Q7,
            _set("server.flags", lambda f: {**f, "tensor_parallel_size": 2}),
            ("program-solve", "open-book"),
            "tensor parallelism 2, not 1",
        ),
        (
            "vllm-version",
            Q32,
            _set("server.server_version", "0.11.0"),
            ("program-solve", "open-book"),
            "vLLM version 0.11.0, not ",
        ),
        ("revision", Q7, _set("model.revision", "0" * 40), ("program-solve", "open-book"), "model revision 0000"),
        ("llama-cpp-alias", Q7, _llama_cpp, ("program-solve", "open-book"), "model server llama-cpp, not vllm"),
        (
            "token-cap",
            Q7,
            _set("arms", lambda a: {**a, "program-solve": {**a["program-solve"], "max_tokens": 1024}}),
            ("program-solve",),
            "output-token cap 1024, not 2048 (the kit's arm spec for program-solve; the paper, .tex line 382)",
        ),
        (
            "executor-memory",
            Q7,
            _set("executor.limits", lambda x: {**x, "address_space_bytes": 512 * 2**20}),
            ("program-solve",),
            "executor memory 512 MB, not 256 MB",
        ),
        (
            "no-server-recorded",
            Q32,
            _set("server", None),
            ("program-solve", "open-book"),
            "model server not recorded in the run manifest",
        ),
    ],
)
def test_a_setting_that_differs_makes_its_numbers_not_comparable_and_names_the_field(
    hand_made, verified_pins, tmp_path, name, model, edit, affected, reason
):
    root = hand_made(f"setting-{name}", manifests={model: edit})
    nums, claims, md = _compare(root, tmp_path / "cmp")
    hit = [r for r in nums if r["verdict"] == "not comparable" and reason in r["why"]]
    assert hit, [r["why"] for r in nums if r["verdict"] == "not comparable"][:3]
    who = "library (no model)" if model == "library" else model
    mine = [
        r
        for r in nums
        if r["model"] == who
        and r["verdict"] != "no result"
        and any(a in r["key"] for a in affected)
        and "the kit's audit groups" not in r["why"]
    ]
    assert mine and all(r["verdict"] == "not comparable" and reason in r["why"] for r in mine)
    others = [r for r in nums if r["verdict"] not in ("no result",) and not any(a in r["key"] for a in affected)]
    assert others and all(r["verdict"] in ("reproduced", "not comparable") and reason not in r["why"] for r in others)
    status = {r["setting"]: r["status"] for r in csv.DictReader(open(tmp_path / "cmp" / "comparison-ledger.csv"))}
    assert any(s.startswith(("differs for", "not recorded for")) for s in status.values())


def test_the_expected_vllm_version_is_read_from_the_image_lock(hand_made, verified_pins, tmp_path, monkeypatch):
    """The pinned release moves (0.12.0 -> a newer one): runs on the old one stop being comparable, runs recording
    the new one are."""
    pinned = vllm.image_lock()["vllm_version"]
    moved = tmp_path / "vllm"
    shutil.copytree(ROOT / "containers" / "vllm", moved)
    lock = json.loads((moved / "image.lock.json").read_text())
    lock["vllm_version"] = "0.99.0"
    (moved / "image.lock.json").write_text(json.dumps(lock))
    monkeypatch.setenv("MATHSOLVER_VLLM_DIR", str(moved))
    nums, _, _ = _compare(hand_made("faithful"), tmp_path / "old")
    assert _num(nums, T2, _ps_ob(Q32), Q32)["verdict"] == "not comparable"
    assert (
        f"vLLM version {pinned}, not 0.99.0 (containers/vllm/image.lock.json" in _num(nums, T2, _ps_ob(Q32), Q32)["why"]
    )
    root = hand_made("vllm-repinned", manifests={m: _set("server.server_version", "0.99.0") for m in (Q7, Q32)})
    nums, _, _ = _compare(root, tmp_path / "new")
    assert _num(nums, T2, _ps_ob(Q32), Q32)["verdict"] == "reproduced"


# ---- the per-case check ---------------------------------------------------------------------------------------
def _paper_cases(root: Path, out: Path, flip_every: int = 0) -> Path:
    """Per-case files as the paper's repository would hold them (the benchmark's Row Number and Calculator ID), made
    from a hand-made set's records; `flip_every`: every n-th row's correctness flipped."""
    from harness.run.store import iter_located_records

    out.mkdir()
    by: dict[tuple, list] = {}
    for _path, _line, rec in iter_located_records(root):
        if rec.arm == "program-solve":
            by.setdefault((rec.model, rec.arm), []).append(rec)
    for i, ((model, arm), recs) in enumerate(sorted(by.items())):
        with open(out / f"percase-{i}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["Row Number", "Calculator ID", "Model", "Arm", "Seed", "Correct", "Answer"])
            for k, r in enumerate(recs):
                ok = r.correct != (flip_every and k % flip_every == 0)
                w.writerow([r.row_number, r.calculator_id, model, "Program-Solve", r.seed, int(ok), ""])
    return out


def test_per_case_agreement_with_the_papers_files(hand_made, verified_pins, tmp_path):
    root = hand_made("faithful")
    same = _paper_cases(root, tmp_path / "same")
    out = _run(
        ["compare", "--results", str(root), "--out", str(tmp_path / "a"), "--draws", DRAWS, "--paper-cases", str(same)]
    )
    rows = list(csv.DictReader(open(tmp_path / "a" / "comparison-cases.csv")))
    assert len(rows) == 2 and all(r["verdict"] == "reproduced" and float(r["agree"]) == 100 for r in rows)
    assert "per case: reproduced 2" in out
    assert "The stronger per-case check was not possible" not in (tmp_path / "a" / "comparison.md").read_text()
    drifted = _paper_cases(root, tmp_path / "drifted", flip_every=10)  # 90% agreement: below a rerun's
    _run(
        [
            "compare",
            "--results",
            str(root),
            "--out",
            str(tmp_path / "b"),
            "--draws",
            DRAWS,
            "--paper-cases",
            str(drifted),
        ]
    )
    rows = {r["paper_model"]: r for r in csv.DictReader(open(tmp_path / "b" / "comparison-cases.csv"))}
    assert rows[Q32]["verdict"] == "discrepancy" and float(rows[Q32]["agree"]) == pytest.approx(90, abs=0.5)
    assert rows[Q7]["verdict"] == "discrepancy"


def test_a_per_case_file_without_the_benchmarks_columns_is_refused_by_name(hand_made, verified_pins, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cases.csv").write_text("row,calc,Model,Arm,Seed,Correct\n1,2,m,Program-Solve,42,1\n")
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            "--results",
            str(hand_made("faithful")),
            "--out",
            str(tmp_path / "o"),
            "--draws",
            DRAWS,
            "--paper-cases",
            str(bad),
        ],
    )
    assert res.exit_code != 0
    assert f"--paper-cases: {bad / 'cases.csv'}: missing column(s) Row Number, Calculator ID" in res.output
    (bad / "cases.csv").write_text("Row Number,Calculator ID,Model,Arm,Seed,Correct\n1,2,m,Chain of thought,42,1\n")
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            "--results",
            str(hand_made("faithful")),
            "--out",
            str(tmp_path / "o"),
            "--draws",
            DRAWS,
            "--paper-cases",
            str(bad),
        ],
    )
    assert f"{bad / 'cases.csv'}:2: unknown arm 'Chain of thought'" in res.output


# ---- real runs: Gold-Solve, the CPU demo, the rehearsal -------------------------------------------------------
def test_gold_solve_on_the_one_shot_split_holds_by_construction(tmp_path):
    root = tmp_path / "results"
    _run(["run", "--arm", "gold-lib", "--dataset", "one-shot", "--seeds", "42-46", "--out", str(root), "--no-progress"])
    _run(["checksums", "update", "--results", str(root)])  # what `make reproduce` writes after a run
    nums, claims, md = _compare(root, tmp_path / "cmp")
    gold = [r for r in nums if r["source"] == "Table 1" and r["verdict"] != "no result"]
    assert len(gold) == 4 and all(r["verdict"] == "reproduced" for r in gold), gold
    assert {(r["paper"], r["ours"]) for r in gold} == {("100.00", "100.00"), ("40.00", "40.00")}
    assert all("holds by construction" in r["tolerance_source"] for r in gold)
    count = [r for r in nums if r["unit"] == "cases"]
    assert count and all(
        r["verdict"] == "not comparable" and "55 of the paper's 1,100 cases" in r["why"] for r in count
    )
    assert _claim(claims, "library-exact")["verdict"] == "held"
    assert "**Gold-Solve library (no model)**: Held: The Gold-Solve library is exact" in md
    assert (tmp_path / "cmp" / "comparison.png").stat().st_size > 10_000


def test_committed_gold_solve_results_are_dev_rows_not_comparable(tmp_path):
    nums, claims, md = _compare(ROOT / "results" / "gold-solve", tmp_path)
    rows = [r for r in nums if r["ours"]]
    assert rows and all(r["verdict"] == "not comparable" and "dev rows" in r["why"] for r in rows)
    assert all(r["difference"] != "" for r in rows)  # the arithmetic is shown
    assert all(c["verdict"] in ("not comparable", "no result") for c in claims)


def test_cpu_demo_small_model_is_not_compared(tmp_path):
    out = _run(["compare", "--results", str(ROOT / "results" / "cpu-demo"), "--out", str(tmp_path), "--draws", DRAWS])
    nums = list(csv.DictReader(open(tmp_path / "comparison.csv")))
    rows = [r for r in nums if r["ours"] and r["model"] == "qwen2.5-coder-1.5b-instruct"]
    assert rows and all(r["verdict"] == "not comparable" for r in rows)
    assert all("different model (qwen2.5-coder-1.5b-instruct, not " in r["why"] for r in rows)
    assert all("seeds 42, the paper's 42-46" in r["why"] for r in rows)
    assert out.splitlines()[1] == f"integrity: 6 files read match {ROOT / 'checksums' / 'results.sha256'}"
    assert out.splitlines()[2].startswith("qwen2.5-coder-1.5b-instruct: Not comparable: ")


def test_rehearsal_records_are_never_compared(tmp_path):
    """A small rehearsal: the rehearsal server (scripted fake), two seeds, the matched pair and the library."""
    from harness.data.dataset import load_dataset
    from tests.fixtures_rehearsal import rehearsal_run_args, running_rehearsal_server

    root = tmp_path / "runs" / "rehearsal" / "results"
    with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
        arms = ["open-book", "program-solve", "gold-lib"]
        _run(rehearsal_run_args(server, root, arms, seeds="42,43", extra=["--executor-backend", "process"]))
    nums, claims, md = _compare(root, root / "comparison")
    model_rows = [r for r in nums if r["ours"] and r["model"].startswith("rehearsal-")]
    assert len(model_rows) >= 20
    assert all(r["verdict"] in ("not comparable", "no result") for r in nums)
    assert all(r["why"] == "synthetic (rehearsal records, never a model)" for r in nums if r["verdict"] != "no result")
    assert all(c["verdict"] in ("not comparable", "no result") for c in claims)
    for r in model_rows:
        assert float(r["difference"]) == pytest.approx(float(r["ours"]) - float(r["paper"]), abs=0.011)
    assert "reproduced" not in {r["verdict"] for r in nums} | {c["verdict"] for c in claims}


def test_report_and_make_reproduce_outputs_carry_the_comparison(tmp_path):
    """`make reproduce` (reproduce -> pipeline.outputs) writes OUT/comparison/ and the report's section."""
    from harness.reproduce.reproduction import outputs

    root = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "gold-solve", root, ignore=shutil.ignore_patterns("tables"))
    done = outputs(root, draws=200, echo=lambda s: None)
    assert done.comparison == str(root / "comparison" / "comparison.md")
    for name in ("comparison.csv", "comparison-claims.csv", "comparison-ledger.csv", "comparison.png"):
        assert (root / "comparison" / name).is_file(), name
    page = (root / "report.html").read_text(encoding="utf-8")
    assert "Did it reproduce?" in page and "not comparable: dev rows" in page
    assert "The stronger per-case check was not possible" in page
    section = page.split("Did it reproduce?", 1)[1]
    assert section.index("<b>Gold-Solve library (no model)</b>") < section.index("<table")


def test_server_block_is_what_make_reproduce_records():
    block = server_block(Q7)
    assert block.launcher == "vllm" and block.flags["dtype"] == "bfloat16" and "port" not in block.flags
    assert block.server_version == vllm.image_lock()["vllm_version"] and block.contract.vllm_version == "0.32.0"
    assert "--port" not in block.args and "--host" not in block.args and block.args[:2] == ("--model", Q7)
