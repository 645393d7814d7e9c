"""The CPU demo's opening paragraph is written from the run's records and server description: the counts, the
model's own name from its GGUF metadata, the cases a program got right where open-book arithmetic did not, and a
verdict sentence that follows the figures (more, tie, fewer), never a fixed text. On the committed demo too."""

from __future__ import annotations

import pytest

from harness.analysis.demo_summary import about_results, about_text
from harness.model.server_info import ServerInfo, Weights, read_server_info
from harness.run.manifest import run_manifests
from harness.run.store import iter_located_records
from tests.conftest import ROOT
from tests.records import record

SERVER = ServerInfo(
    launcher="llama-cpp",
    base_url="http://127.0.0.1:8090/v1",
    model_id="m",
    server_profile="llama.cpp",
    weights=Weights("0" * 64, "Qwen2.5 Coder 1.5B Instruct GGUF", "1.5B", "Q4_K_M"),
)


def rec(arm, case, correct, outcome="answered", answer=1.0, gold=2.0, model="m"):
    return record(
        arm=arm,
        case_id=case,
        correct=correct,
        outcome=outcome,
        answer=answer,
        model=model,
        seed=42,
        calculator_name=f"Calc {case}",
        gold={"answer": f"{gold:g}", "lower": None, "upper": None},
    )


def test_counts_model_name_and_the_cases_a_program_won():
    records = [
        rec("open-book", "1-1", False, answer=3.0, gold=2.0),
        rec("open-book", "2-2", True),
        rec("program-solve", "1-1", True, answer=2.0, gold=2.0),
        rec("program-solve", "2-2", True),
        rec("blind", "1-1", False, "raised_error", None),
        rec("blind", "2-2", False, "raised_error", None),
        rec("gold-lib", "1-1", True, model="library"),
        rec("gold-lib", "2-2", False, "abstained", None, model="library"),
    ]
    text = " ".join(about_text(records, SERVER).split())
    assert "Qwen2.5 Coder 1.5B Instruct GGUF (1.5B parameters, Q4_K_M; model id m)" in text
    assert "answered 2 cases of the bundled 110-row slice, one from each of 2 calculators" in text
    assert (
        "Open-book arithmetic 1/2 correct (of the others: 1 answered wrong); Program-Solve 2/2 correct; "
        "Blind Program-Solve 0/2 correct (of the others: 2 raised an error)"
    ) in text
    assert (
        "A program got right what the model's own arithmetic got wrong on 1 case(s): Calc 1-1 (program 2, "
        "open-book 3, gold 2)" in text
    )
    assert "Program-Solve answered more correctly than open-book arithmetic (2 vs 1)" in text
    assert "Gold-Solve library (no model) answered all 2 rows of the slice: 1 correct" in text
    assert "What they do not show: the paper's results" in text and "2 cases at one seed with a 1.5B model" in text


@pytest.mark.parametrize(
    "prog, book, verdict",
    [
        (True, True, "Program-Solve and open-book arithmetic tie (1 each)"),
        (False, True, "open-book arithmetic answered more correctly than Program-Solve (1 vs 0)"),
    ],
)
def test_the_verdict_follows_the_figures(prog, book, verdict):
    records = [rec("open-book", "1-1", book), rec("program-solve", "1-1", prog)]
    text = " ".join(about_text(records, SERVER).split())
    assert verdict in text and "the method the paper studies, working" not in text


def test_no_model_rows_is_an_error():
    with pytest.raises(ValueError, match="no records of the demo's model arms"):
        about_text([rec("gold-lib", "1-1", True, model="library")])


def test_committed_demo_paragraph_is_the_one_its_records_give():
    """results/cpu-demo/about.md is what this module writes from the stored records and server description."""
    demo = ROOT / "results" / "cpu-demo"
    records = [r for _, _, r in iter_located_records(demo)]
    (server,) = [m.server for m in run_manifests(demo) if m.server is not None]  # the model run's own
    assert server == read_server_info(demo / "server.json")  # what `harness serve start --server-info` wrote
    assert (demo / "about.md").read_text() == about_text(records, server) == about_results(demo)
    assert (demo / "summary.md").read_text().startswith((demo / "about.md").read_text())
