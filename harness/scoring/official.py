"""The official MedCalc-Bench rules: the `medcalc` and `medcalc_line` scorers.

Source: ncbi-nlp/MedCalc-Bench, `extract_answer` in evaluation/run.py (read at commit 25ec6a2) and
`check_correctness` in evaluation/evaluate.py (read from a copy citing that file), re-implemented
here without `eval`; the regular expressions below are the official ones, since the quirks live in
them. Behaviour reproduced, with its quirks:

* The rule is chosen by CALCULATOR ID, not output type: dates 13, 68; gestational age 69; integer
  4 15 16 17 18 20 21 25 27 28 29 32 33 36 43 45 48 51; decimal 2 3 5-11 19 22 23 24 26 30 31 38
  39 40 44 46 49 56-67. Any other id: the official check raises (Incorrect). When a case carries no
  calculator id, the rule follows its output type (our extension).
* Calculator 69 (gestational age) follows the weeks/days rule only. The official code lists 69 both
  in its weeks/days list (``elif calid in [69]``) and at the end of its integer list (``elif calid in
  [4, 15, ..., 51, 69]``), in `extract_answer` and in `check_correctness` alike; in both functions the
  weeks/days test comes first in the same if/elif chain, so the integer listing of 69 is unreachable
  code and the integer rule never applies to 69. The data agree: every file the kit reads (the v1.0
  dev rows, the bundled slice, Verified's one-shot rows) writes 69's gold as a tuple "('W weeks',
  'D days')" (whatever its Output Type column says), which the integer check
  (``round(eval(answer)) == eval(gold)``) could never find equal. Hence `_WEEKS_IDS` holds 69 and
  `_INTEGER_IDS` does not (tests/scoring/test_scoring.py shows a reply the two rules decide apart).
* Answer text: the LAST match of ``[Aa]nswer":\\s*(.*?)\\}`` in the reply (``.`` stops at line ends,
  so a JSON object whose closing brace is on a later line yields nothing; a space before the colon
  yields nothing; a plain "Answer: 5" line yields nothing), stripped of whitespace and then of double
  quotes. No match, or the prompt placeholders "str(short_and_direct_answer_of_the_question)",
  "str(value which is the answer to the question)", "X.XX", give "Not Found".
* Date: the answer text must START with M/D/YYYY (``^(0?[1-9]|1[0-2])/(0?[1-9]|[12][0-9]|3[01])/
  (\\d{4})``; trailing text ignored, ISO or month names fail); correct when it is the gold day; "N/A"
  or an impossible day (02/30) raises in strptime (Incorrect).
* Gestational age: the regex ``\\(?["']?(\\d+)\\s*(weeks?)?["']?,?\\s*["']?(\\d+)\\s*(days?)?["']?\\s*\\)?``
  is searched in the answer text; no match raises (Incorrect), so "4 weeks and 2 days" fails, while
  "12 weeks and 3 days" reads (1, 2) by splitting "12"; "Weeks" is case sensitive. The pair must
  equal the gold pair with no reduction ((4, 9) is not (5, 2)); a number with a leading zero ("04")
  makes the official eval raise (Incorrect).
* Integer: "N out of" gives N; else a comma list "a, b, c" gives its COUNT of items; else the LAST
  number (``-?\\d+(\\.\\d+)?``). Correct when Python's round() of it (half to even: 2.5 -> 2) equals
  the gold. A leading-zero integer ("07") makes eval raise (Incorrect).
* Decimal: "str(<expr>)" in the answer text is evaluated after the official text substitutions (^ ->
  **, sqrt -> math.sqrt, and deletions of "weight", "height", units and EVERY letter "g"), text after
  "#" dropped and parentheses balanced; evaluation failure gives "N/A". Else the first number before
  "mL/min/1.73"; else the LAST number followed by "%", divided by 100 ("12.5%" is 0.125); else the
  LAST number ("24.2 kg/m^2" reads 2; "1,234.5" reads 234.5; "1.5e3" reads 3). Correct when Lower
  Limit <= value <= Upper Limit. A leading-zero integer raises (Incorrect).
* Any exception anywhere counts as Incorrect, as in the official run loop (which catches every
  exception of extract_answer + check_correctness); no reply makes a scorer here raise.

This kit's reply arms are prompted to end with "Final answer: <value>", not the official JSON, so
`medcalc` finds "Not Found" in their replies and scores them all wrong (faithfully). The third
scorer, `medcalc_line`, is our adaptation for those replies: the official per-rule extraction and
checks above, applied to the paper's final-answer text (harness/scoring/answer_parsing.py) instead of
the JSON answer field; typed values score exactly as under `medcalc`. For typed values
(score_value) the value is rendered as the official extractor would have produced it (str(number),
"MM/DD/YYYY", "(weeks, days)") and only the official check is applied.

Deliberately different: the official code evaluates "str(...)" expressions with Python's eval
(builtins disabled, min/pow/round/abs/int/float/math/np/numpy in scope). Here the same scope is
walked as an AST by harness/scoring/expression.py, never eval: every public math function, a
whitelist of numpy functions computed by numpy itself (np.power of an integer to a negative integer
raises, as in numpy: "N/A"), subscripts, lambdas, comprehensions and .real/.imag of numbers. Left out,
giving "N/A" where the official code might compute a value: other attribute access (methods of values,
dunder attributes), numpy functions off the whitelist, and results past the size guards (an integer
power or shift of over a million bits, factorial above 20,000, sequences over 100,000 items).
MedCalc-Bench Verified's own scripts were not reproduced.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from harness.scoring.answer_parsing import final_answer_text
from harness.scoring.expression import evaluate
from harness.scoring.gold import Gold
from harness.scoring.verdict import Score, short, typed_value

__all__ = [
    "OFFICIAL_SUBSTITUTIONS",
    "MedCalcScorer",
    "OfficialError",
    "line_answer_text",
    "official_answer_text",
    "official_check",
    "official_expression",
    "official_parse",
]

_DATE_IDS = frozenset({13, 68})
_WEEKS_IDS = frozenset({69})
# 69 is in _WEEKS_IDS only, not in _INTEGER_IDS although the official lists name it in both: the module docstring
# gives the evidence (the official if/elif tests the weeks/days list first, so its integer listing is unreachable).
_INTEGER_IDS = frozenset({4, 15, 16, 17, 18, 20, 21, 25, 27, 28, 29, 32, 33, 36, 43, 45, 48, 51})
_DECIMAL_IDS = frozenset(
    {
        2,
        3,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        19,
        22,
        23,
        24,
        26,
        30,
        31,
        38,
        39,
        40,
        44,
        46,
        49,
        56,
        57,
        58,
        59,
        60,
        61,
        62,
        63,
        64,
        65,
        66,
        67,
    }
)
_TYPE_BRANCH = {"date": "date", "weeks_days": "weeks_days", "integer": "integer", "decimal": "decimal"}

# Patterns of the official evaluation (facts about its behaviour, cited in the module docstring), as written there.
OFFICIAL_PATTERNS = {
    "answer": r'[Aa]nswer":\s*(.*?)\}',
    "date": r"^(0?[1-9]|1[0-2])\/(0?[1-9]|[12][0-9]|3[01])\/(\d{4})",
    "weeks": r"\(?[\"\']?(\d+)\s*(weeks?)?[\"\']?,?\s*[\"\']?(\d+)\s*(days?)?[\"\']?\s*\)?",
    "out_of": r"(\d+) out of",
    "list": r"-?\d+(, ?-?\d+)+",
    "number": r"(-?\d+(\.\d+)?)",
    "percent": r"(-?\d+(\.\d+)?)\%",
    "egfr": r"(-?\d+(\.\d+)?)\s*mL/min/1.73",
    "expr": r"str\((.*)\)",
}
# What runs: the same matches in linear time. Several official patterns are quadratic in the length of a
# digit or whitespace run (a search retries every start inside a run, each rescanning it; or two adjacent
# \s* split one run every way), so a 100 kB reply took minutes. Each rewrite below gives the same result
# in the way the official code uses it (search; findall for "percent"); tests/scoring/test_scoring_robustness.py
# compares them with the official patterns on random and adversarial text:
# * (?<!\d) before the first \d+: a search never finds a match starting inside a digit run, because one
#   starting at the run's first digit (or its minus sign) has the same tail and is found first (findall too
#   when a match ends in a non-digit, as "%" does: the next match then never starts inside a run).
# * (?>\s*) in "weeks": when the first \s* gives back whitespace, the optional tokens after it cannot match
#   whitespace and the second \s* takes it back; the state is one the greedy path already tried.
# * "answer" and "expr" (lazy/greedy ".*" up to a brace or parenthesis) are scanned by code: see
#   _answer_fields and _expr_body.
_OFF_DATE = re.compile(OFFICIAL_PATTERNS["date"])
_OFF_WEEKS = re.compile(r"\(?[\"\']?(\d+)(?>\s*)(weeks?)?[\"\']?,?\s*[\"\']?(\d+)\s*(days?)?[\"\']?\s*\)?")
_OFF_OUT_OF = re.compile(r"(?<!\d)(\d+) out of")
_OFF_LIST = re.compile(r"-?(?<!\d)\d+(, ?-?\d+)+")
_OFF_NUMBER = re.compile(OFFICIAL_PATTERNS["number"])
_OFF_PERCENT = re.compile(r"(-?(?<!\d)\d+(\.\d+)?)\%")
_OFF_EGFR = re.compile(r"(-?(?<!\d)\d+(\.\d+)?)\s*mL/min/1.73")
_OFF_ANSWER_KEY = re.compile(r'[Aa]nswer":\s*')
_OFF_PLACEHOLDERS = (
    "str(short_and_direct_answer_of_the_question)",
    "str(value which is the answer to the question)",
    "X.XX",
)


def _answer_fields(reply: str) -> list[str]:
    """re.findall(OFFICIAL_PATTERNS["answer"], reply) in linear time: after each key and its whitespace,
    the text up to the first "}" when one comes before the line ends (when it does not, no shorter
    whitespace helps: the lazy .*? cannot cross a line end); the next search starts after that "}", or one
    character after a key that matched nothing. The next "}" and line end are found once and reused."""
    out: list[str] = []
    brace = newline = -1
    pos = 0
    while (m := _OFF_ANSWER_KEY.search(reply, pos)) is not None:
        start = m.end()
        if brace < start:
            brace = reply.find("}", start)
            if brace < 0:
                return out  # no "}" anywhere after: nothing more can match
        if newline < start:
            newline = reply.find("\n", start)
            if newline < 0:
                newline = len(reply)
        if brace < newline:
            out.append(reply[start:brace])
            pos = brace + 1
        else:
            pos = m.start() + 1
    return out


def _expr_body(text: str) -> str | None:
    """re.search(OFFICIAL_PATTERNS["expr"], text).group(1) in linear time, or None: the first "str(" whose
    line holds a ")" after it, up to the LAST ")" of that line (the greedy .* stops at line ends). When a
    "str(" fails, every later one on its line fails too, so the search goes on from the next line."""
    p = text.find("str(")
    while p >= 0:
        end = text.find("\n", p)
        end = len(text) if end < 0 else end
        close = text.rfind(")", p + 4, end)
        if close >= 0:
            return text[p + 4 : close]
        p = text.find("str(", end)
    return None


OFFICIAL_SUBSTITUTIONS = (
    ("^", "**"),
    ("is odd", "% 2 == 1"),
    ("is even", "% 2 == 0"),
    ("sqrt", "math.sqrt"),
    (".math", ""),
    ("weight", ""),
    ("height", ""),
    ("mg/dl", ""),
    ("g/dl", ""),
    ("mmol/L", ""),
    ("kg", ""),
    ("g", ""),
    ("mEq/L", ""),
)


class OfficialError(Exception):
    """The official evaluation raises at this point; its run loop then records the row Incorrect."""


def _literal(text: str) -> Any:
    """Python-literal value of `text` (what the official eval gives for literals), OfficialError else."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, OverflowError) as exc:
        raise OfficialError(f"eval({short(text)}) raises {type(exc).__name__}") from None


def _branch(gold: Gold) -> str:
    cid = gold.calculator_id
    if cid is None:
        return _TYPE_BRANCH["weeks_days" if gold.kind == "weeks_days" else gold.output_type]
    if cid in _DATE_IDS:
        return "date"
    if cid in _WEEKS_IDS:
        return "weeks_days"
    if cid in _INTEGER_IDS:
        return "integer"
    if cid in _DECIMAL_IDS:
        return "decimal"
    return "unknown"


def official_answer_text(reply: str) -> str:
    """The official extracted answer text: last ``answer": ...}`` value, stripped, or "Not Found"."""
    found = _answer_fields(reply)
    if not found:
        return "Not Found"
    text = found[-1].strip().strip('"')
    return "Not Found" if text in _OFF_PLACEHOLDERS else text


def line_answer_text(reply: str) -> str:
    """For the `medcalc_line` scorer: the paper's final-answer text, cleaned like the official answer
    text (whitespace and double quotes stripped, placeholders and nothing -> "Not Found")."""
    text = final_answer_text(reply)[0].strip().strip('"')
    return "Not Found" if not text or text in _OFF_PLACEHOLDERS else text


def official_parse(text: str, branch: str, reply: str = "") -> str:
    """The per-rule part of the official `extract_answer`, applied to an answer text."""
    if branch == "date":
        m = _OFF_DATE.search(text)
        return f"{int(m.group(1)):02}/{int(m.group(2)):02}/{m.group(3)}" if m else "N/A"
    if branch == "weeks_days":
        if _OFF_WEEKS.search(text) is None:
            raise OfficialError("gestational-age regex finds no match in the answer text (AttributeError)")
        cleaned = text.replace("[", "(").replace("]", ")").replace("'", "").replace('"', "")
        m = _OFF_WEEKS.search(cleaned)
        return f"({m.group(1)}, {m.group(3)})" if m else "N/A"
    if branch == "integer":
        m = _OFF_OUT_OF.search(text)
        if m:
            return m.group(1)
        m = _OFF_LIST.search(text)
        if m:
            return str(len(m.group(0).split(",")))
        nums = _OFF_NUMBER.findall(text)
        return nums[-1][0] if nums else "N/A"
    if branch == "decimal":
        body = _expr_body(text)
        if body is not None:
            value = official_expression(body)
        else:
            m = _OFF_EGFR.search(text)
            if m:
                value = _literal(m.group(1))
            else:
                pct = _OFF_PERCENT.findall(text)
                if pct:
                    value = _literal(pct[-1][0]) / 100
                else:
                    nums = _OFF_NUMBER.findall(text)
                    value = _literal(nums[-1][0]) if nums else "N/A"
        if isinstance(value, str) and value == "N/A":
            return value
        try:
            return str(value)
        except ValueError as exc:  # e.g. an int beyond Python's str-conversion digit limit
            raise OfficialError(f"str() of the evaluated answer raises: {exc}") from None
    return reply  # unknown calculator id: the official function hands back its input unchanged


def official_check(answer: str, gold: Gold, branch: str) -> tuple[bool, Any]:
    """The official `check_correctness`: (correct, the compared value). Raises OfficialError where the
    official code raises."""
    if branch == "date":
        try:
            got = dt.datetime.strptime(answer, "%m/%d/%Y").date()
            want = dt.datetime.strptime(gold.gold_answer, "%m/%d/%Y").date()
        except (ValueError, TypeError) as exc:
            raise OfficialError(f"strptime raises: {exc}") from None
        return got == want, got
    if branch == "weeks_days":
        g = _OFF_WEEKS.search(gold.gold_answer)
        if g is None:
            raise OfficialError("gestational-age regex finds no match in the gold answer")
        m = _OFF_WEEKS.search(answer)
        if m is None:
            return False, None
        got = _literal(f"({m.group(1)}, {m.group(3)})")
        return got == _literal(f"({g.group(1)}, {g.group(3)})"), got
    if branch == "integer":
        raw = _literal(answer)
        try:
            got = round(raw)
        except (TypeError, ValueError, OverflowError) as exc:  # round(inf) / round(nan) raise
            raise OfficialError(f"round raises: {exc}") from None
        return got == _literal(gold.gold_answer), got
    if branch == "decimal":
        got = _literal(answer)
        lo, hi = _literal(str(gold.lower_limit)), _literal(str(gold.upper_limit))
        try:
            return bool(got >= lo and got <= hi), got
        except (TypeError, ValueError, OverflowError) as exc:
            raise OfficialError(f"comparison raises: {exc}") from None
    raise OfficialError(f"unknown calculator id {gold.calculator_id} (ValueError)")


class MedCalcScorer:
    """The official MedCalc-Bench rules (module docstring). `answer_text` picks the reply text the
    official per-rule extraction reads: the official JSON answer field, or (medcalc_line) the paper's
    final-answer text."""

    def __init__(self, name: str, description: str, answer_text: Callable[[str], str]) -> None:
        self.name, self.description, self._answer_text = name, description, answer_text

    def _decide(self, answer: str, gold: Gold, branch: str, shown: str) -> Score:
        if answer == "N/A":
            shown = "'N/A' (nothing extracted; the official check then raises or fails)"
        try:
            ok, got = official_check(answer, gold, branch)
        except OfficialError as exc:
            return Score(False, None, f"official_error: {exc}; official answer {shown}", self.name)
        return Score(
            ok,
            got,
            f"{'correct' if ok else 'wrong'}: official answer {shown} read as {got!r}, "
            f"gold {gold.gold_answer!r} ({branch} rule)",
            self.name,
        )

    def score_reply(self, reply: str | None, gold: Gold) -> Score:
        try:
            return self._score_reply(reply, gold)
        except Exception as exc:  # noqa: BLE001 - the official run loop scores any exception Incorrect
            return Score(False, None, f"official_error: {type(exc).__name__}: {short(str(exc))}", self.name)

    def _score_reply(self, reply: str | None, gold: Gold) -> Score:
        reply = "" if reply is None else reply
        branch = _branch(gold)
        text = self._answer_text(reply)
        try:
            answer = official_parse(text, branch, reply)
        except OfficialError as exc:
            return Score(False, None, f"official_error: {exc}; answer text {short(text)}", self.name)
        return self._decide(answer, gold, branch, short(answer))

    def score_value(self, value: Any, kind: str, gold: Gold) -> Score:
        parsed, problem = typed_value(value, kind)
        if problem:
            return Score(False, None, problem, self.name)
        branch = _branch(gold)
        need = {"date": "date", "weeks_days": "weeks_days", "integer": "number", "decimal": "number"}.get(branch)
        if need is not None and kind != need:
            return Score(False, None, f"wrong_kind: a {kind} value for the official {branch} rule", self.name)
        if kind == "date":
            answer = f"{parsed.month:02}/{parsed.day:02}/{parsed.year:04}"
        elif kind == "weeks_days":
            answer = f"({int(value[0])}, {int(value[1])})"  # the official check does not reduce
        else:
            answer = str(parsed)
        return self._decide(answer, gold, branch, repr(answer))


def official_expression(expr: str) -> Any:
    """Value of an official "str(<expr>)" answer after the official substitutions, or "N/A"."""
    for old, new in OFFICIAL_SUBSTITUTIONS:
        expr = expr.replace(old, new)
    expr = expr.split("#")[0]
    opened, closed = expr.count("("), expr.count(")")
    if opened > closed:
        expr += ")" * (opened - closed)
    elif closed > opened:
        expr = "(" * (closed - opened) + expr
    try:
        return evaluate(expr)
    except Exception:  # noqa: BLE001 - the official code maps every evaluation failure to "N/A"
        return "N/A"
