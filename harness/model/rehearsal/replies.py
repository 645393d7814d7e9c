"""The rehearsal's reply script: a pure function from (rehearsal seed, request body, answer key, reply form) to the
reply a real model might give, in the shapes real models produce (the shape tables below). Nothing here does I/O but
reading the answer key's dataset file; the HTTP server (harness.model.rehearsal.server) serves these replies.

Reply shapes, by the reply form the request asks for (REPLY_FORM_HEADER, sent by the kit's client):
- program and repair: a program computing the answer ("correct"), a wrong program, one that raises, one the static
  policy rejects, one that hits the sandbox's memory rlimit, one that burns CPU until the executor's clock stops it
  (rare: each costs ~4-5 s of executor time), one returning the wrong kind, a reply without code, a reply cut at the
  token limit inside its code block (finish_reason "length");
- reply: `Final answer:` with the gold or a wrong value, `Final answer:` without a readable value, a JSON reply, a
  `\\boxed{}` reply, a reply cut at the token limit, a reply with no final-answer line;
- extract: a JSON object of the case's variables (its gold entities), a JSON object with a variable missing, prose
  without JSON, a truncated object;
- tree: a valid tree evaluating to the gold or a wrong value, a tree using a variable listed as missing, an unknown
  operator, prose without JSON.
"Correct" needs the gold value: with an answer key (a dataset CSV in the benchmark schema) the case is found by the
note's first words and the question (or, for extraction, the calculator name) in the prompt; without one, or when
the case is not found, a number is invented.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from harness.core.canonical_json import canonical_json
from harness.data.dataset import load_dataset

NOTE_KEY_WORDS = 20


# --- deterministic choice ------------------------------------------------------------------------------


class Draw:
    """A stream of uniform numbers in [0, 1) from sha256(seed, label, request identity, index)."""

    def __init__(self, *parts: Any):
        self._base = hashlib.sha256(canonical_json(list(parts)).encode()).digest()
        self._i = 0

    def u(self) -> float:
        h = hashlib.sha256(self._base + self._i.to_bytes(4, "big")).digest()
        self._i += 1
        return int.from_bytes(h[:8], "big") / 2.0**64

    def pick(self, table: list[tuple[str, float]]) -> str:
        """A label from [(label, weight), ...] (weights need not sum to 1)."""
        total = sum(w for _, w in table)
        x = self.u() * total
        for label, w in table:
            x -= w
            if x < 0:
                return label
        return table[-1][0]


# --- the answer key: find the case a prompt is about ------------------------------------------------------


def _note_key(note: str) -> str:
    return " ".join(note.split()[:NOTE_KEY_WORDS])


_NOTE = re.compile(r"^Patient note: (.*)", re.M | re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_EXTRACT_NAME = re.compile(r"^Extract from the patient note the values needed to compute the (.*)\.$", re.M)


@dataclass
class CaseInfo:
    calculator_id: int
    calculator_name: str
    output_type: str
    gold_value: Any
    entities: dict


class AnswerKey:
    """Cases of a dataset file indexed by (first note words, question) and (first note words, calculator)."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = str(path) if path else None
        self.by_question: dict[tuple[str, str], CaseInfo] = {}
        self.by_calculator: dict[tuple[str, str], CaseInfo] = {}
        if path:
            for c in load_dataset(path).cases:
                info = CaseInfo(c.calculator_id, c.calculator_name, c.output_type, c.gold_value, dict(c.entities))
                nk = _note_key(c.note)
                self.by_question.setdefault((nk, c.question.strip().splitlines()[0].strip()), info)
                self.by_calculator.setdefault((nk, c.calculator_name.strip()), info)

    def __len__(self) -> int:
        return len(self.by_question)

    def find(self, prompt: str) -> CaseInfo | None:
        m = _NOTE.search(prompt)
        if not m:
            return None
        words = m.group(1).split()[:NOTE_KEY_WORDS]
        name = _EXTRACT_NAME.search(prompt)
        q = None if name else _QUESTION.search(prompt, m.start())
        if name is not None:
            index, second = self.by_calculator, name.group(1).strip()
        elif q is not None:
            index, second = self.by_question, q.group(1).strip()
        else:
            return None
        # a note shorter than NOTE_KEY_WORDS is followed by the rest of the prompt: try shorter prefixes
        for k in range(len(words), 0, -1):
            hit = index.get((" ".join(words[:k]), second))
            if hit is not None:
                return hit
        return None


# --- reply shapes ------------------------------------------------------------------------------------------

PROGRAM_SHAPES = [
    ("correct", 0.58),
    ("wrong", 0.12),
    ("raises", 0.07),
    ("static_policy", 0.05),
    ("sandbox_memory", 0.03),
    ("wrong_kind", 0.04),
    ("no_code", 0.07),
    ("truncated", 0.03),
    ("no_answer_var", 0.008),
    ("cpu_loop", 0.001),
]
REPAIR_SHAPES = [("correct", 0.6), ("wrong", 0.12), ("raises", 0.1), ("no_code", 0.1), ("wrong_kind", 0.08)]
REPLY_SHAPES = [
    ("final_correct", 0.46),
    ("final_wrong", 0.2),
    ("final_unreadable", 0.07),
    ("json", 0.08),
    ("boxed", 0.05),
    ("truncated", 0.06),
    ("no_final_line", 0.08),
]
EXTRACT_SHAPES = [("extraction", 0.7), ("extraction_missing", 0.1), ("no_json", 0.1), ("truncated", 0.1)]
TREE_SHAPES = [
    ("tree_correct", 0.55),
    ("tree_wrong", 0.15),
    ("tree_missing_var", 0.1),
    ("tree_bad_op", 0.07),
    ("no_json", 0.08),
    ("truncated", 0.05),
]
# Per-model skill: the share moved from the first ("correct") shape to the second, so the two rehearsal
# models differ the way two real models do.
MODEL_SKILL_SHIFT = {"rehearsal-alpha": 0.0, "rehearsal-beta": 0.12}


# The reply forms served (harness.arms.spec.REPLY_FORMS) and their shape tables.
SHAPES_BY_FORM = {
    "program": PROGRAM_SHAPES,
    "repair": REPAIR_SHAPES,
    "extract": EXTRACT_SHAPES,
    "tree": TREE_SHAPES,
    "reply": REPLY_SHAPES,
}


def _shifted(table: list[tuple[str, float]], shift: float) -> list[tuple[str, float]]:
    if not shift:
        return table
    (l0, w0), (l1, w1), *rest = table
    moved = min(w0, shift)
    return [(l0, w0 - moved), (l1, w1 + moved), *rest]


def _invented(draw: Draw) -> float:
    return round(1 + draw.u() * 150, 2)


def _wrong_number(gold: float, draw: Draw) -> float:
    factor = 1.25 + draw.u()
    return round(gold * factor + 1.0, 3)


def _value_text(value: Any) -> str:
    """A value as a model writes it on a final-answer line."""
    if isinstance(value, _dt.date):
        return value.strftime("%m/%d/%Y")
    if isinstance(value, tuple):
        return f"({value[0]} weeks, {value[1]} days)"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _wrong_value(value: Any, draw: Draw) -> Any:
    if isinstance(value, _dt.date):
        return value + _dt.timedelta(days=1 + int(draw.u() * 30))
    if isinstance(value, tuple):
        return (value[0] + 1 + int(draw.u() * 3), value[1])
    return _wrong_number(float(value), draw)


def _program_for(value: Any) -> str:
    if isinstance(value, _dt.date):
        return (
            "import datetime\n\n# dates built from their parts\n"
            f"answer = datetime.date({value.year}, {value.month}, {value.day})\n"
        )
    if isinstance(value, tuple):
        return f"weeks = {value[0]}\ndays = {value[1]}\nanswer = (weeks, days)\n"
    v = float(value)
    return f"import math\n\nresult = {v!r}\nanswer = round(result, 4)\n"


def _fence(code: str) -> str:
    return f"Here is the program.\n\n```python\n{code}```\n"


def program_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    """(text, finish_reason) for a program (or repair) reply shape."""
    if shape == "correct":
        return _fence(_program_for(gold)), "stop"
    if shape == "wrong":
        return _fence(_program_for(_wrong_value(gold, draw))), "stop"
    if shape == "raises":
        if draw.u() < 0.5:
            return _fence("total = 12\ncount = 0\nanswer = total / count\n"), "stop"
        return _fence("answer = weight_kg * 2\n"), "stop"
    if shape == "static_policy":
        return _fence("import os\n\nanswer = float(os.environ.get('VALUE', '1'))\n"), "stop"
    if shape == "sandbox_memory":
        return _fence("table = bytearray(1 << 32)\nanswer = len(table)\n"), "stop"
    if shape == "cpu_loop":
        return _fence("answer = sum(range(10 ** 12))\n"), "stop"
    if shape == "wrong_kind":
        return _fence(f"answer = 'about {_value_text(gold)}'\n"), "stop"
    if shape == "no_answer_var":
        return _fence(f"result = {_value_text(gold)!r}\nprint(result)\n"), "stop"
    if shape == "no_code":
        return (
            "I cannot compute this reliably without more information about the patient; "
            "please consult the relevant clinical guideline."
        ), "stop"
    if shape == "truncated":
        return "Here is the program.\n\n```python\nimport math\n\nweight = 70\nheight = (", "length"
    raise ValueError(shape)


def reply_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    steps = "Step 1: read the values from the note.\nStep 2: apply the formula.\n"
    if shape == "final_correct":
        return f"{steps}Final answer: {_value_text(gold)}", "stop"
    if shape == "final_wrong":
        return f"{steps}Final answer: {_value_text(_wrong_value(gold, draw))}", "stop"
    if shape == "final_unreadable":
        return f"{steps}Final answer: cannot be determined from the note", "stop"
    if shape == "json":
        return canonical_json({"step_by_step_thinking": "applied the formula", "answer": _value_text(gold)}), "stop"
    if shape == "boxed":
        return f"{steps}So the result is \\boxed{{{_value_text(gold)}}}.", "stop"
    if shape == "truncated":
        return "First, read the values from the note. Then apply the formula. The patient's weight is", "length"
    if shape == "no_final_line":
        return "The note does not give enough information to calculate this.", "stop"
    raise ValueError(shape)


def _json_entities(entities: dict) -> dict:
    return json.loads(json.dumps(entities, default=str))


def extract_reply(shape: str, case: CaseInfo | None, draw: Draw, prompt: str) -> tuple[str, str]:
    keys = re.findall(r'^"([^"]+)": ', prompt, re.M)
    if case is not None and case.entities:
        obj = _json_entities(case.entities)
    else:
        obj = {k: round(draw.u() * 100, 1) for k in keys}
    if shape == "extraction":
        return canonical_json(obj), "stop"
    if shape == "extraction_missing":
        return canonical_json(dict.fromkeys(keys) or {"value": None}), "stop"
    if shape == "no_json":
        return "The note lists the patient's values in the history section.", "stop"
    if shape == "truncated":
        return canonical_json(obj)[:-1][: max(1, len(canonical_json(obj)) // 2)], "length"
    raise ValueError(shape)


def tree_reply(shape: str, gold: Any, draw: Draw) -> tuple[str, str]:
    value = float(gold) if isinstance(gold, (int, float)) else _invented(draw)
    base = {"calculation": "rehearsal calculation", "formula": "result = a * b", "missing": []}
    if shape == "tree_correct":
        obj = {**base, "variables": {"a": value, "b": 1}, "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_wrong":
        obj = {**base, "variables": {"a": value, "b": 1.5}, "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_missing_var":
        obj = {**base, "variables": {"a": value}, "missing": ["b"], "tree": {"op": "*", "args": ["a", "b"]}}
    elif shape == "tree_bad_op":
        obj = {**base, "variables": {"a": value, "b": 2}, "tree": {"op": "log", "args": ["a", "b"]}}
    elif shape == "no_json":
        return "The calculation multiplies the two values from the note.", "stop"
    elif shape == "truncated":
        text = canonical_json({**base, "variables": {"a": value, "b": 1}, "tree": {"op": "*", "args": ["a", "b"]}})
        return text[: len(text) // 2], "length"
    else:
        raise ValueError(shape)
    return "```json\n" + json.dumps(obj, indent=1) + "\n```", "stop"


@dataclass
class Reply:
    text: str
    finish_reason: str
    reply_form: str  # the form asked for (program, repair, extract, tree, reply)
    shape: str
    case_found: bool


# Which of the executor's two clocks stops a CPU-bound program (CPU_LIMIT at 4 s of CPU, TIMEOUT_WALL at
# 5 s of wall time) depends on the machine's load, and a repair turn quotes that message. The reply is
# drawn from the body with either message replaced by one token, so a repair after a clock limit gets the
# same reply whichever clock fired (the kill-and-resume comparison, bench/compare.py, does the same).
CLOCK_LIMIT_MESSAGE = re.compile(
    r"the program (?:ran longer than [\d.]+ s \(wall clock\)|used more than [\d.]+ s "
    r"of CPU time) and was stopped"
)


def clock_neutral(text: str) -> str:
    return CLOCK_LIMIT_MESSAGE.sub("<clock limit>", text)


def make_reply(seed: int, body: dict, answer_key: AnswerKey, reply_form: str) -> Reply:
    """The reply to a chat-completion body asking for `reply_form`: a pure function of (seed, body, answer key,
    form). ValueError for a form not served."""
    if reply_form not in SHAPES_BY_FORM:
        raise ValueError(f"reply form {reply_form!r} is not served; served forms: {', '.join(SHAPES_BY_FORM)}")
    messages = body.get("messages") or []
    model = str(body.get("model"))
    first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    case = answer_key.find(first_user) if len(answer_key) else None
    draw = Draw(seed, model, clock_neutral(canonical_json(body)) if reply_form == "repair" else canonical_json(body))
    gold = case.gold_value if case is not None else _invented(draw)
    shift = MODEL_SKILL_SHIFT.get(model, 0.05)
    if reply_form in ("program", "repair"):
        shape = draw.pick(_shifted(PROGRAM_SHAPES if reply_form == "program" else REPAIR_SHAPES, shift))
        text, finish = program_reply(shape, gold, draw)
    elif reply_form == "extract":
        shape = draw.pick(_shifted(EXTRACT_SHAPES, shift))
        text, finish = extract_reply(shape, case, draw, first_user)
    elif reply_form == "tree":
        shape = draw.pick(_shifted(TREE_SHAPES, shift))
        text, finish = tree_reply(shape, gold, draw)
    else:
        shape = draw.pick(_shifted(REPLY_SHAPES, shift))
        text, finish = reply_reply(shape, gold, draw)
    return Reply(text, finish, reply_form, shape, case is not None)
