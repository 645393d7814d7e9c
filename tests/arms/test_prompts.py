"""Prompt building for every arm on real rows (snapshot files), and the reply readers.

Snapshots live in tests/arms/snapshots/<arm>.txt; regenerate after an intended prompt change with
UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/arms/test_prompts.py (and review the diff)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.arms import prompts
from harness.arms.families import choose_example
from harness.arms.registry import ARMS
from harness.arms.solvers import Context
from harness.data.dataset import load_dataset

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
# Real bundled rows: a library calculator with a short note (Target weight), a Cockcroft-Gault row,
# a gestational-age row (date case) and a point score outside the library (CHA2DS2-VASc).
CASE_IDS = ("61-968", "2-1", "69-1028", "4-41")


@pytest.fixture(scope="module")
def rows():
    ds = load_dataset("bundled-test")
    by_id = ds.by_case_id()
    missing = [c for c in CASE_IDS if c not in by_id]
    assert not missing, f"snapshot rows {missing} not in the bundled slice; choose rows that exist"
    return [by_id[c] for c in CASE_IDS], load_dataset("one-shot").cases


def render(messages: list[dict]) -> str:
    if not messages:
        return "(no request: the arm answers or abstains without the model)\n"
    return "".join(f"### {m['role']}\n{m['content']}\n" for m in messages)


def snapshot_text(arm, cases, one_shot) -> str:
    parts = [f"# arm {arm.name} ({arm.title}); seed 42\n"]
    for case in cases:
        msgs = Context(case=case, arm=arm, seed=42, one_shot=one_shot).prompt().messages if arm.prompt else []
        parts.append(f"\n======== case {case.case_id} ({case.calculator_name})\n{render(msgs)}")
    if arm.solver.config().get("repair"):
        first = Context(case=cases[0], arm=arm, seed=42, one_shot=one_shot).prompt().messages
        turn = prompts.build_repair(first, "```python\nx = 1\n```", "the program did not assign a value to `answer`")
        parts.append(f"\n======== repair turn for case {cases[0].case_id}\n{render(turn[-2:])}")
    return "".join(parts)


@pytest.mark.parametrize("arm_name", sorted(ARMS))
def test_prompt_snapshot(arm_name, rows):
    cases, one_shot = rows
    text = snapshot_text(ARMS[arm_name], cases, one_shot)
    path = SNAPSHOTS / f"{arm_name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing snapshot {path}; create it with UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(), f"prompt for {arm_name} changed; review and regenerate with UPDATE_SNAPSHOTS=1"


def test_note_budgets_and_inputs_follow_the_paper(rows):
    cases, one_shot = rows
    case = (
        next(c for c in cases if len(c.note.split()) > 250) if any(len(c.note.split()) > 250 for c in cases) else None
    )
    dev = load_dataset("bundled-test").cases
    long_case = case or max(dev, key=lambda c: len(c.note.split()))
    assert len(long_case.note.split()) > 250

    def user(name):
        return (
            ARMS[name]
            .build(Context(case=long_case, arm=ARMS[name], seed=42, one_shot=one_shot))
            .messages[-1]["content"]
        )

    first_120 = " ".join(long_case.note.split()[:120])
    first_121 = " ".join(long_case.note.split()[:121])
    assert first_120 in user("note-only") and first_121 not in user("note-only")
    assert " ".join(long_case.note.split()[:250]) in user("page-no-formula")
    assert " ".join(long_case.note.split()[:251]) not in user("page-no-formula")
    for whole in ("open-book", "program-solve", "blind", "formulate-tree", "extract-lib-recalled"):
        if whole == "extract-lib-recalled":
            continue  # recalled samples use the Note-only prompt (120 words)
        assert long_case.note in user(whole), whole
    assert " ".join(long_case.note.split()[:251]) not in user("blind-250")
    # inputs: gold variables and formula where the paper gives them, nowhere else
    block = prompts.variable_block(long_case.entities)
    assert block in user("open-book") and block in user("program-solve") and block in user("page-no-formula")
    assert block in user("note-only-gold") and block not in user("note-only")
    assert block not in user("blind") and block not in user("formulate-tree")
    from harness.arms.spec import catalogue_formula_text

    formula = catalogue_formula_text(long_case.calculator_id)
    assert formula in user("open-book") and formula in user("program-solve")
    assert formula not in user("page-no-formula") and formula not in user("blind")
    assert long_case.calculator_name not in user("blind").split("Question:")[0]
    assert prompts.SYNTAX_LINES in user("program-solve-syntax") and prompts.SYNTAX_LINES not in user("program-solve")


def test_worked_example_cut_and_chosen_by_seed(rows):
    cases, one_shot = rows
    arm = ARMS["note-only"]
    ex = choose_example(arm, 42, cases[0], one_shot)
    assert len(ex.note.split()) <= 24 and len(ex.explanation.split()) <= 40
    picks = {choose_example(arm, s, cases[0], one_shot).case_id for s in range(42, 47)}
    assert len(picks) > 1, "the seed must move the example"
    assert choose_example(arm, 42, cases[0], one_shot) == ex
    fixed = {choose_example(ARMS["extract-lib-recalled"], s, cases[0], one_shot).case_id for s in range(42, 47)}
    assert fixed == {one_shot[0].case_id}
    with pytest.raises(ValueError, match="one-shot split"):
        choose_example(arm, 42, cases[0], [])


def test_first_words():
    assert prompts.first_words("a  b\nc d", 3) == "a b c"
    assert prompts.first_words("a  b", None) == "a  b"
    with pytest.raises(ValueError, match="word budget"):
        prompts.first_words("a", 0)


@pytest.mark.parametrize(
    "reply, program",
    [
        ("```python\nanswer = 1\n```", "answer = 1\n"),
        ("text\n```py\nx = 2\nanswer = x\n```\nmore", "x = 2\nanswer = x\n"),
        ("```\nanswer = 3\n```", "answer = 3\n"),  # untagged fence
        ("```python\nanswer = 1\n```\n```python\nprint(answer)\n```", "answer = 1\n"),  # last ASSIGNING block
        ("```python\nanswer = 1\n```\nfix:\n```python\nanswer = 2\n```", "answer = 2\n"),
        ("```python\nx = 5\n```", "x = 5\n"),  # no assignment: last block
        ("```bash\nls\n```", None),  # other languages ignored
        ("```python\nanswer = (1,", "answer = (1,\n"),  # open fence (truncated)
        ("answer = 4", "answer = 4\n"),  # bare program
        ("The answer is 4.", None),
        ("", None),
        ("```python\n\n```", None),
        ("~~~python\nanswer = 7\n~~~", "answer = 7\n"),
    ],
)
def test_extract_program(reply, program):
    assert prompts.extract_program(reply) == program


def test_extract_json_object():
    assert prompts.extract_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert prompts.extract_json_object('Here: {"a": {"b": 2}} done') == {"a": {"b": 2}}
    assert prompts.extract_json_object("no json") is None
    assert prompts.extract_json_object("[1, 2]") is None


def test_variable_block_real_entities(rows):
    cases, _ = rows
    block = prompts.variable_block(cases[1].entities)
    assert block.count("\n") + 1 == len(cases[1].entities)
    assert all(line.startswith("- ") for line in block.splitlines())


def test_template_hashes_cover_every_template():
    h = prompts.template_hashes()
    assert set(h) == set(prompts.TEMPLATES) and all(len(v) == 64 for v in h.values())
