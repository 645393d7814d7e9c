"""The paper's values (harness/analysis/paper_values.json) against the .tex, and `harness compare` on real
Gold-Solve runs (one-shot split: compared; the committed dev-row results: not comparable) and on a small
rehearsal (synthetic: never compared)."""
from __future__ import annotations

import csv
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.analysis.compare import SYNTHETIC, ledger_rows, paper_values
from harness.cli import main as cli
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
TEX = ROOT.parent / "shared" / "paper" / "deterministic-math-solver.tex"
VALUES = ROOT / "harness" / "analysis" / "paper_values.json"


def _extractor():
    spec = importlib.util.spec_from_file_location("extract_paper_values", ROOT / "scripts" / "extract_paper_values.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tex() -> Path:
    require(TEX.is_file(), f"the paper's source is not beside the clone: {TEX}")
    return TEX


def test_values_file_is_what_the_tex_gives(tex):
    ext = _extractor()
    assert ext.render(ext.extract(tex)) == VALUES.read_text(encoding="utf-8")
    assert ext.main(["--tex", str(tex), "--out", str(VALUES), "--check"]) == 0


def test_every_value_sits_on_its_line(tex):
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
    for cl in v["claims"]:
        for n in cl["numbers"]:
            assert n["raw"] in lines[n["line"] - 1] and ext.number(n["raw"]) == n["value"], (cl["id"], n)
    # Table 1: 8 arms x 4 + lower block 2 x 3; Table 2: 5 comparisons x 2 models
    counts = {t: sum(c["table"] == t for c in v["cells"]) for t in ("tab:ladder", "tab:gaps")}
    assert counts == {"tab:ladder": 38, "tab:gaps": 10}
    assert {x["table"] for x in v["left_out"]} >= {"tab:s1-ladders", "tab:s5-paired", "tab:s14-settings"}


@pytest.mark.parametrize("old,new", [
    ("& \\textbf{75.31} &", "& \\textbf{75.21} &"),                  # a Table 1 cell
    ("$+3.29$ $[-3.49, 10.38]$ & $+7.05$", "$+3.29$ $[-3.49, 10.39]$ & $+7.05$"),  # a Table 2 interval end
    ("Phi-3.5-mini-instruct & 57.13", "Phi-3.5-mini-instruct & 57.18"),  # Table 1, lower block
    ("reaches\n81.64\\%", "reaches\n81.65\\%"),                        # a claim in the prose
    ("5\\,s wall clock", "6\\,s wall clock"),                          # a stated setting
])
def test_a_one_digit_change_in_the_tex_fails(tex, tmp_path, old, new):
    text = tex.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    bad = tmp_path / tex.name
    bad.write_text(text.replace(old, new), encoding="utf-8")
    assert _extractor().main(["--tex", str(bad), "--out", str(VALUES), "--check"]) == 1
    # not only the file's sha256: the value itself differs from the committed one
    fresh, committed = _extractor().extract(bad), json.loads(VALUES.read_text(encoding="utf-8"))
    del fresh["source"], committed["source"]
    assert fresh != committed


def test_a_shifted_line_fails(tex, tmp_path):
    bad = tmp_path / tex.name
    bad.write_text("% one more line\n" + tex.read_text(encoding="utf-8"), encoding="utf-8")
    assert _extractor().main(["--tex", str(bad), "--out", str(VALUES), "--check"]) == 1


def _run(args):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return res.output


def _rows(out: Path) -> list[dict]:
    with open(out / "comparison.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_gold_solve_on_the_one_shot_split_is_compared_for_real(tmp_path):
    root = tmp_path / "results"
    _run(["run", "--arm", "gold-lib", "--dataset", "one-shot", "--seeds", "42-46", "--out", str(root), "--no-progress"])
    text = _run(["compare", "--results", str(root), "--out", str(tmp_path / "cmp"), "--draws", "200"])
    rows = [r for r in _rows(tmp_path / "cmp") if r["ours"]]
    gold = [r for r in rows if r["source"] == "Table 1"]
    assert len(gold) == 4 and all(r["verdict"] == "inside" for r in gold), gold
    assert {(r["paper"], r["ours"]) for r in gold} == {("100.00", "100.00"), ("40.00", "40.00")}
    count = [r for r in rows if r["unit"] == "cases"]
    assert count and all(r["verdict"].startswith("not comparable: the paper's count is of 1,100") for r in count)
    assert count[0]["ours"] == "22.00" or count[0]["ours"] == "22"
    assert "inside 7" in text and (tmp_path / "cmp" / "comparison.png").stat().st_size > 10_000


def test_committed_gold_solve_results_are_dev_rows_not_comparable(tmp_path):
    _run(["compare", "--results", str(ROOT / "results" / "gold-solve"), "--out", str(tmp_path), "--draws", "200"])
    rows = [r for r in _rows(tmp_path) if r["ours"]]
    assert rows and all(r["verdict"].startswith("not comparable: ") for r in rows)
    assert all("dev rows" in r["verdict"] for r in rows if r["unit"] == "%")
    assert all(r["difference"] != "" for r in rows)  # the arithmetic is shown
    md = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "| Dataset |" in md and "MISMATCH: bundled-test is not the paper's split/revision" in md


def test_rehearsal_records_are_never_compared(tmp_path):
    """A small rehearsal: the rehearsal server (scripted fake), two seeds, the matched pair and the library."""
    from harness.data.dataset import load_dataset
    from tests.fixtures_rehearsal import running_rehearsal_server

    root = tmp_path / "runs" / "rehearsal" / "results"
    with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
        _run(["run", "--arm", "open-book", "--arm", "program-solve", "--arm", "gold-lib", "--dataset", "bundled-test",
              "--seeds", "42,43", "--base-url", server.base_url, "--model", "rehearsal-alpha", "--server-profile",
              "plain", "--executor-backend", "process", "--out", str(root), "--no-progress", "--concurrency", "8"])
    text = _run(["compare", "--results", str(root), "--draws", "200"])
    out = root / "comparison"
    rows = _rows(out)
    model_rows = [r for r in rows if r["ours"] and r["model"].startswith("rehearsal-")]
    assert len(model_rows) >= 20
    for r in model_rows:
        assert r["verdict"].startswith(f"not comparable: {SYNTHETIC}"), r
        assert float(r["difference"]) == pytest.approx(float(r["ours"]) - float(r["paper"]), abs=0.011)
    gaps = [r for r in model_rows if r["source"] == "Table 2"]
    assert gaps and all(r["tolerance"].startswith("paper's 95% cluster CI [") for r in gaps)
    assert not any(r["verdict"] in ("inside", "outside") for r in rows)
    assert "settings: " in text and "Models" in text
    ledger = {r["setting"]: r["status"] for r in csv.DictReader(open(out / "comparison-ledger.csv", encoding="utf-8"))}
    assert ledger["Models"] == "MISMATCH: rehearsal-alpha is not a checkpoint of the paper"
    assert ledger["Seeds"] == "MISMATCH: seeds 44, 45, 46 missing"
    assert ledger["Executor memory (MB)"] == "matches"


def test_ledger_names_each_mismatch():
    man = {"dataset": {"name": "verified", "n_cases": 1100, "revision": "5488179abc"}, "seeds": [42, 43, 44, 45, 46],
           "model": {"id": "Qwen/Qwen2.5-32B-Instruct", "revision": "abc"},
           "server": {"command": ["vllm", "serve", "--tensor-parallel-size", "4"]},
           "executor": {"limits": {"address_space_bytes": 512 * 2**20, "wall_seconds": 5.0}},
           "arms": {"program-solve": {"needs_model": True, "temperature": 0.0, "max_tokens": 1024, "samples": 1},
                    "blind-vote": {"needs_model": True, "temperature": 0.0, "max_tokens": 1024, "samples": 5},
                    "note-only": {"needs_model": True, "temperature": 0.0, "max_tokens": 512, "note_words": 120}}}
    got = {r["setting"]: r["status"] for r in ledger_rows([man], 10_000)}
    assert got["Dataset"] == "matches" and got["Seeds"] == "matches" and got["Note budgets (words)"] == "matches"
    assert got["Models"] == "MISMATCH: Qwen/Qwen2.5-32B-Instruct is not a checkpoint of the paper"
    assert got["Tensor parallelism"] == "MISMATCH: tensor parallel 4"
    assert got["Temperatures"] == "MISMATCH: arms blind-vote differ"
    assert got["Output-token caps"] == "MISMATCH: arms program-solve differ"
    assert got["Executor memory (MB)"] == "MISMATCH: 512 MB"
    assert got["Executor wall clock (s)"] == "matches"


def test_cpu_demo_small_model_is_not_compared(tmp_path):
    out = _run(["compare", "--results", str(ROOT / "results" / "cpu-demo"), "--out", str(tmp_path), "--draws", "200"])
    rows = [r for r in _rows(tmp_path) if r["ours"] and r["model"] == "qwen2.5-coder-1.5b-instruct"]
    assert rows and all("different model (qwen2.5-coder-1.5b-instruct, not " in r["verdict"] for r in rows)
    assert all(r["verdict"].startswith("not comparable: ") and "fewer seeds (1 of 5)" in r["verdict"] for r in rows)
    assert "Models" in out.split("differ", 1)[1].split("\n", 1)[0]


def test_verdict_uses_the_papers_interval_and_rounds_ours_to_the_printed_digits():
    from harness.analysis.compare import _band, _row

    band = _band(3.29, "gap", 1100, 2, -3.49, 10.38)
    assert band[2] == "paper's 95% cluster CI [-3.49, 10.38]"
    assert _row("t", "w", 1, "x", 3.29, 2, 10.384, 1100, band, [], "m", "pp")["verdict"] == "inside"
    assert _row("t", "w", 1, "x", 3.29, 2, 10.386, 1100, band, [], "m", "pp")["verdict"] == "outside"
    assert _row("t", "w", 1, "x", 3.29, 2, -4.0, 1100, band, [], "m", "pp")["verdict"] == "outside"
    r = _row("t", "w", 1, "x", 3.29, 2, 50.0, 1100, band, ["fewer seeds (2 of 5)"], "m", "pp")
    assert r["verdict"] == "not comparable: fewer seeds (2 of 5)" and r["difference"] == pytest.approx(46.71)
    assert _row("t", "w", 1, "x", 3.29, 2, None, 0, band, [], "m", "pp")["verdict"] == "no result"
    lo, hi, text = _band(40.0, "construction", 1100, 2)
    assert (lo, hi) == pytest.approx((39.995, 40.005)) and text.startswith("\u00b10.005 rounding")
    lo, hi, text = _band(75.31, "accuracy", 1100, 2)  # 1.96 * sqrt(p(1-p)/n) + 0.005
    assert hi - 75.31 == pytest.approx(100 * 1.96 * (0.7531 * 0.2469 / 1100) ** 0.5 + 0.005)


def test_make_reproduce_outputs_write_the_comparison_with_the_report(tmp_path):
    """`make reproduce` (serve reproduce -> pipeline.outputs) writes OUT/comparison/ and the report's section."""
    from harness.reproduce.reproduction import outputs

    root = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "gold-solve", root, ignore=shutil.ignore_patterns("tables"))
    done = outputs(root, draws=200, echo=lambda s: None)
    assert done["comparison"] == str(root / "comparison" / "comparison.md")
    assert (root / "comparison" / "comparison.csv").is_file() and (root / "comparison" / "comparison.png").is_file()
    page = (root / "report.html").read_text(encoding="utf-8")
    assert "Did it reproduce?" in page and "not comparable: dev rows" in page
