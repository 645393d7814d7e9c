"""Prompt templates and builders shared by every arm, and the extraction of programs from replies.

Job: turn a Case (plus, for some arms, a worked example, the formula text or the library's variable
list) into the chat messages of one request, exactly and reproducibly. Templates are module
constants; `TEMPLATES` maps a name to its text and `template_hashes()` gives the sha256 of each for
the run manifest. Snapshot tests (tests/snapshots/) pin the built prompts on real rows.

Choices where the paper is silent (written down here, referred to from harness.arms.registry):
- Every request has the same short system message; the case goes in one user message.
- A note budget of N words keeps the first N whitespace-separated words, joined by single spaces;
  "whole note" is the note text unchanged.
- The gold variable block lists the row's Relevant Entities, one `- name: value unit` line each, in
  the file's order.
- Reply-scored arms end with the line `Final answer: <value>` (the paper scorer reads the first number
  on the final-answer line). The worked example shows that line too.
- Program arms state the executor's contract: the program assigns its result to `answer` (a number,
  a `datetime.date`, or a `(weeks, days)` tuple of ints) and may import only math, datetime, time and
  calendar.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.data.dataset import Case

SYSTEM = "You are a careful assistant for clinical calculations."

ANSWER_FORMAT = (
    'End your reply with one line of the form "Final answer: <value>", where <value> is a number, '
    "a date written MM/DD/YYYY, or a gestational age written (weeks, days)."
)

# --- Note only (one-shot) ---------------------------------------------------------------------
NOTE_ONLY = """\
Calculate what the question asks for from the patient note. Think step by step, then give the result.
{answer_format}

Here is a worked example.
Example patient note: {ex_note}
Example question: {ex_question}
Example step-by-step solution: {ex_explanation}
Final answer: {ex_answer}

Now the case to solve.
Patient note: {note}
{variables_section}Question: {question}"""

VARIABLES_SECTION = "Patient variables:\n{variables}\n"

# --- Page without formula / Open-book arithmetic (zero-shot chain of thought) ------------------
PAGE = """\
Calculate what the question asks for, using the calculator page below and the patient note.
{answer_format}

Calculator: {calculator_name}
{formula_section}Patient variables:
{variables}

Patient note: {note}

Question: {question}

Let's think step by step."""

FORMULA_SECTION = "Formula:\n{formula}\n"

# --- Program-Solve / Blind Program-Solve --------------------------------------------------------
PROGRAM_CONTRACT = (
    "The program may import only the math, datetime, time and calendar modules and reads no input. "
    "It must store its result in a variable named `answer` (printing it is not enough): a number, a "
    "`datetime.date` for a date, or a tuple `(weeks, days)` of two integers for a gestational age."
)

SYNTAX_LINES = (
    "Variable names must be valid Python identifiers: lowercase words joined by underscores, never the "
    "name of the calculation.\n"
    "The notes write dates as month/day/year: build each date from its three numbers yourself and add or "
    "subtract days with the standard datetime library."
)

RETURN_ONE_BLOCK = "Return one Python code block."

PROGRAM = """\
Write a Python program that computes what the question asks for, for this patient.

Calculator: {calculator_name}
Formula:
{formula}

Patient variables:
{variables}

Patient note: {note}

Question: {question}

{contract}
{syntax_section}{return_block}"""

BLIND_PROGRAM = """\
Write a Python program that computes what the question asks for, for this patient. Take every value \
the calculation needs from the patient note.

Patient note: {note}

Question: {question}

{contract}
{syntax_section}{return_block}"""

REPAIR = """\
Running your program did not return a value. The executor reported:
{error}

Write the corrected program. {return_block}"""

NO_PROGRAM_ERROR = "no Python code block was found in the reply"

# --- Extract-Solve library ------------------------------------------------------------------------
EXTRACT = """\
Extract from the patient note the values needed to compute the {calculator_name}.

Patient note: {note}

Reply with one JSON object and nothing else, with exactly these keys:
{variable_lines}
Give numbers as numbers in the unit named, true/false for yes/no findings, dates as "MM/DD/YYYY", \
and null for a value the note does not give."""

# --- Formulate-Solve tree ---------------------------------------------------------------------------
FORMULATE = """\
Work out how to calculate what the question asks for from this patient note, but do not do the arithmetic.

Patient note: {note}

Question: {question}

Reply with one JSON object and nothing else, with these keys:
"calculation": the name of the calculation,
"formula": the formula on one line,
"variables": an object mapping each variable name to its numeric value from the note,
"missing": a list of the names of variables the note does not give,
"tree": an expression tree that computes the answer from the variables.
A tree node is a number, a variable name (a string), or an object {{"op": OP, "args": [node, ...]}} \
where OP is one of "+", "-", "*", "/", "^", "neg", "min", "max", "<", "<=", ">", ">=", "==", "!=", "if". \
Comparisons give 1 when true and 0 when false; "if" takes [condition, value_if_true, value_if_false]; \
"neg" takes one argument and "^" two (base, exponent).
Example: {{"op": "/", "args": [{{"op": "+", "args": ["a", "b"]}}, 2]}} computes (a + b) / 2."""

TEMPLATES: dict[str, str] = {
    "system": SYSTEM,
    "answer_format": ANSWER_FORMAT,
    "note_only": NOTE_ONLY,
    "variables_section": VARIABLES_SECTION,
    "page": PAGE,
    "formula_section": FORMULA_SECTION,
    "program_contract": PROGRAM_CONTRACT,
    "syntax_lines": SYNTAX_LINES,
    "return_one_block": RETURN_ONE_BLOCK,
    "program": PROGRAM,
    "blind_program": BLIND_PROGRAM,
    "repair": REPAIR,
    "no_program_error": NO_PROGRAM_ERROR,
    "extract": EXTRACT,
    "formulate": FORMULATE,
}


def template_hashes(names: Iterable[str] | None = None) -> dict[str, str]:
    """sha256 of each template's text (all, or the named ones), for the run manifest."""
    chosen = TEMPLATES if names is None else {n: TEMPLATES[n] for n in names}
    return {n: hashlib.sha256(t.encode()).hexdigest() for n, t in sorted(chosen.items())}


# --- building blocks ------------------------------------------------------------------------------------


def first_words(text: str, n: int | None) -> str:
    """The first n whitespace-separated words joined by single spaces; the text unchanged when n is None."""
    if n is None:
        return text
    if n < 1:
        raise ValueError(f"a word budget must be >= 1, got {n}")
    return " ".join(text.split()[:n])


def _fmt_value(value: Any) -> str:
    """[value, unit] (or any list, e.g. [drug, dose, unit]) as its items joined by spaces; else str()."""
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def variable_block(entities: dict) -> str:
    """The gold variable block: one `- name: value unit` line per Relevant Entity, file order."""
    if not isinstance(entities, dict) or not entities:
        return "- (none given)"
    return "\n".join(f"- {name}: {_fmt_value(value)}" for name, value in entities.items())


def messages(user: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Example:
    """A worked example from the one-shot split, already cut to its budgets."""

    case_id: str
    note: str
    question: str
    explanation: str
    answer: str


def make_example(case: Case, note_words: int = 24, explanation_words: int = 40) -> Example:
    """Cut a one-shot row to the paper's example budgets (note 24 words, explanation 40 words)."""
    return Example(
        case.case_id,
        first_words(case.note, note_words),
        case.question,
        first_words(case.explanation, explanation_words),
        str(case.gold_answer),
    )


# --- builders, one per prompt family ------------------------------------------------------------------


def build_note_only(
    case: Case, example: Example, *, note_words: int | None = 120, gold_variables: bool = False
) -> list[dict]:
    section = VARIABLES_SECTION.format(variables=variable_block(case.entities)) if gold_variables else ""
    return messages(
        NOTE_ONLY.format(
            answer_format=ANSWER_FORMAT,
            ex_note=example.note,
            ex_question=example.question,
            ex_explanation=example.explanation,
            ex_answer=example.answer,
            note=first_words(case.note, note_words),
            variables_section=section,
            question=case.question,
        )
    )


def build_page(case: Case, *, formula: str | None, note_words: int | None) -> list[dict]:
    """Page without formula (formula None, 250 words) and Open-book arithmetic (formula, whole note)."""
    section = FORMULA_SECTION.format(formula=formula) if formula is not None else ""
    return messages(
        PAGE.format(
            answer_format=ANSWER_FORMAT,
            calculator_name=case.calculator_name,
            formula_section=section,
            variables=variable_block(case.entities),
            note=first_words(case.note, note_words),
            question=case.question,
        )
    )


def build_program(case: Case, *, formula: str, syntax: bool = False, note_words: int | None = None) -> list[dict]:
    return messages(
        PROGRAM.format(
            calculator_name=case.calculator_name,
            formula=formula,
            variables=variable_block(case.entities),
            note=first_words(case.note, note_words),
            question=case.question,
            contract=PROGRAM_CONTRACT,
            syntax_section=(SYNTAX_LINES + "\n") if syntax else "",
            return_block=RETURN_ONE_BLOCK,
        )
    )


def build_blind_program(case: Case, *, syntax: bool = False, note_words: int | None = None) -> list[dict]:
    return messages(
        BLIND_PROGRAM.format(
            note=first_words(case.note, note_words),
            question=case.question,
            contract=PROGRAM_CONTRACT,
            syntax_section=(SYNTAX_LINES + "\n") if syntax else "",
            return_block=RETURN_ONE_BLOCK,
        )
    )


def build_repair(original: list[dict], reply: str, error: str) -> list[dict]:
    """The corrective turn: the original prompt, the previous reply, the executor's own error string."""
    return [
        *original,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": REPAIR.format(error=error.strip() or "(no message)", return_block=RETURN_ONE_BLOCK),
        },
    ]


def build_extract(case: Case, variables: list[tuple[str, str]], *, note_words: int | None = None) -> list[dict]:
    """`variables`: (key, description with unit) pairs, the inputs of the library function."""
    if not variables:
        raise ValueError(f"calculator {case.calculator_id} has no variables to extract")
    lines = "\n".join(f'"{key}": {desc}' for key, desc in variables)
    return messages(
        EXTRACT.format(
            calculator_name=case.calculator_name, note=first_words(case.note, note_words), variable_lines=lines
        )
    )


def build_formulate(case: Case, *, note_words: int | None = None) -> list[dict]:
    return messages(FORMULATE.format(note=first_words(case.note, note_words), question=case.question))


# --- reading replies -------------------------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
PYTHON_TAGS = {"python", "py", "python3", ""}


def _assigns_answer(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return re.search(r"^\s*answer\s*=", source, re.M) is not None
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id == "answer":
                    return True
    return False


def extract_program(reply: str) -> str | None:
    """The program in a reply, or None ("no program written").

    Rule: collect the fenced blocks (``` or ~~~; a fence left open, as in a reply cut at the token
    limit, runs to the end of the reply) whose info string is python, py, python3 or empty; blocks
    tagged with another language are ignored. Of those, take the LAST one that assigns `answer`, else
    the last one. With no fenced block at all, the whole reply is the program if it parses as Python
    and assigns `answer`. Blank programs count as none."""
    if not reply:
        return None
    blocks = [m.group(3) for m in _FENCE.finditer(reply) if m.group(2).lower() in PYTHON_TAGS]
    blocks = [b.strip("\n") for b in blocks if b.strip()]
    if blocks:
        with_answer = [b for b in blocks if _assigns_answer(b)]
        return (with_answer or blocks)[-1] + "\n"
    if "```" in reply or "~~~" in reply:
        return None
    try:
        ast.parse(reply)
    except SyntaxError:
        return None
    return reply.strip("\n") + "\n" if _assigns_answer(reply) else None


def extract_json_object(reply: str) -> dict | None:
    """The JSON object in a reply: a fenced ```json block if present, else the outermost {...} span;
    None when there is none or it does not parse to an object."""
    if not reply:
        return None
    m = re.search(r"```(?:json|JSON)?[ \t]*\n(.*?)```", reply, re.S)
    candidates = [m.group(1)] if m else []
    start, end = reply.find("{"), reply.rfind("}")
    if start != -1 and end > start:
        candidates.append(reply[start : end + 1])
    for text in candidates:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None
