"""Scoring: is a reply (or a typed value) correct for a case? Three scorers, named in every Score.

API (docs/ARCHITECTURE.md)::

    score_reply(reply_text, case, scorer="paper") -> Score(correct, parsed, reason, scorer)
    score_value(value, kind, case, scorer="paper") -> Score   # kind: "number" | "date" | "weeks_days"
    SCORERS  # {"paper", "medcalc", "medcalc_line"} -> scorer with .name, .description, .score_reply, .score_value

`case` is a harness.data.dataset.Case or anything with its attributes `output_type`, `gold_answer`,
`lower_limit`, `upper_limit` (strings as in the file), and optionally `calculator_id` and `case_id`
(`gold_value` is not read: both scorers parse the file's strings themselves); a mapping with those keys (or the results store's `gold` {answer, lower, upper}) works too
(`Gold.from_mapping`). A case that cannot be scored (unknown output type, unreadable gold or limit)
raises `ScoringError` naming the case and the field; so do an unknown scorer name or value kind. A
reply or value that cannot be read is not an error: it scores wrong, with the reason saying why.

`Score.reason` is "<code>: <detail>"; `Score.code` gives the code: `correct`, `wrong`, `no_number`,
`no_date`, `no_weeks_days` (nothing readable in the reply), `wrong_kind` (a value of another kind than
the case needs), `unreadable_value` (a value of the right kind that is malformed), `no_value` (None),
`official_error` (medcalc scorers only: the official code raises on this reply, which its run loop
records as Incorrect).

`paper` scorer (the paper's Scoring paragraph, Appendix):
    A numeric answer is the first number on the reply's final-answer line (defined precisely in
    harness/answer_parsing.py) and is correct when it lies in the benchmark's own interval, the
    file's [Lower Limit, Upper Limit]: gold +-5% for decimal outputs, and gold exactly for integer
    outputs, whose files set both limits to the gold. (When a row has no limits, decimal uses gold
    +-5% and integer the gold.) Bounds are compared with a relative slack of 1e-9 so binary
    floating-point noise in a computed value (2.9999999999999996 for 3) does not flip a decision. A
    reply with no parseable number scores wrong. Dates are parsed to a calendar day and must equal
    the gold day. Gestational ages (output type "weeks_days", or any row whose gold is written as a
    tuple) are reduced to (weeks, days) integers with days < 7 and must equal the gold exactly.
    Typed values (score_value) are checked by the same rules: "number" (int/float, finite, not bool),
    "date" ("YYYY-MM-DD" string or datetime.date), "weeks_days" ((weeks, days) tuple or list of
    whole non-negative numbers, reduced).

`medcalc` scorer: the official MedCalc-Bench evaluation (ncbi-nlp/MedCalc-Bench: `extract_answer` in
    evaluation/run.py, read at commit 25ec6a2, and `check_correctness` in evaluation/evaluate.py, read
    from a copy citing that file), re-implemented here without `eval`; the regular expressions below
    are the official ones, since the quirks live in them. Behaviour reproduced, with its quirks:
    * The rule is chosen by CALCULATOR ID, not output type: dates 13, 68; gestational age 69; integer
      4 15 16 17 18 20 21 25 27 28 29 32 33 36 43 45 48 51; decimal 2 3 5-11 19 22 23 24 26 30 31 38
      39 40 44 46 49 56-67. Any other id: the official check raises (Incorrect). When a case carries
      no calculator id, the rule follows its output type (our extension).
    * Answer text: the LAST match of ``[Aa]nswer":\\s*(.*?)\\}`` in the reply (``.`` stops at line
      ends, so a JSON object whose closing brace is on a later line yields nothing; a space before
      the colon yields nothing; a plain "Answer: 5" line yields nothing), stripped of whitespace and
      then of double quotes. No match, or the prompt placeholders
      "str(short_and_direct_answer_of_the_question)", "str(value which is the answer to the
      question)", "X.XX", give "Not Found".
    * Date: the answer text must START with M/D/YYYY (``^(0?[1-9]|1[0-2])/(0?[1-9]|[12][0-9]|3[01])/
      (\\d{4})``; trailing text ignored, ISO or month names fail); correct when it is the gold day;
      "N/A" or an impossible day (02/30) raises in strptime (Incorrect).
    * Gestational age: the regex ``\\(?["']?(\\d+)\\s*(weeks?)?["']?,?\\s*["']?(\\d+)\\s*(days?)?
      ["']?\\s*\\)?`` is searched in the answer text; no match raises (Incorrect), so "4 weeks and 2
      days" fails, while "12 weeks and 3 days" reads (1, 2) by splitting "12"; "Weeks" is case
      sensitive. The pair must equal the gold pair with no reduction ((4, 9) is not (5, 2)); a
      number with a leading zero ("04") makes the official eval raise (Incorrect).
    * Integer: "N out of" gives N; else a comma list "a, b, c" gives its COUNT of items; else the
      LAST number (``-?\\d+(\\.\\d+)?``). Correct when Python's round() of it (half to even:
      2.5 -> 2) equals the gold. A leading-zero integer ("07") makes eval raise (Incorrect).
    * Decimal: "str(<expr>)" in the answer text is evaluated after the official text substitutions
      (^ -> **, sqrt -> math.sqrt, and deletions of "weight", "height", units and EVERY letter "g"),
      text after "#" dropped and parentheses balanced; evaluation failure gives "N/A". Else the first
      number before "mL/min/1.73"; else the LAST number followed by "%", divided by 100 ("12.5%" is
      0.125); else the LAST number ("24.2 kg/m^2" reads 2; "1,234.5" reads 234.5; "1.5e3" reads 3).
      Correct when Lower Limit <= value <= Upper Limit. A leading-zero integer raises (Incorrect).
    * Any exception anywhere counts as Incorrect, as in the official run loop.
    This kit's reply arms are prompted to end with "Final answer: <value>", not the official JSON, so
    `medcalc` finds "Not Found" in their replies and scores them all wrong (faithfully). The third
    scorer, `medcalc_line`, is our adaptation for those replies: the official per-rule extraction
    and checks above, applied to the paper's final-answer text (harness/answer_parsing.py) instead of
    the JSON answer field; typed values score exactly as under `medcalc`.
    Uncertain / deliberately different: the official code evaluates "str(...)" expressions with
    Python's eval (builtins disabled, min/pow/round/abs/int/float/math/numpy available); we evaluate
    a safe subset (literals, arithmetic, comparisons, and/or, if-else, tuples/lists, calls of
    min/pow/round/abs/int/float and of common math/numpy functions; arithmetic on numbers only), and
    anything outside it (or an integer power/shift of over a million bits) gives "N/A" where the
    official code might compute a value; numpy functions are computed with their math equivalents. MedCalc-Bench Verified's own
    scripts were not reproduced. For typed values (score_value) the
    value is rendered as the official extractor would have produced it (str(number), "MM/DD/YYYY",
    "(weeks, days)") and only the official check is applied.
"""
from __future__ import annotations

import ast
import datetime as dt
import math
import numbers
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.scoring.answer_parsing import (
    final_answer_text,
    first_date,
    first_number,
    first_weeks_days,
    looks_like_weeks_days,
    parse_gold_date,
    parse_gold_number,
    parse_gold_weeks_days,
    reduce_weeks_days,
)

__all__ = ["Score", "Gold", "ScoringError", "SCORERS", "score_reply", "score_value", "score_all", "gold_of"]

OUTPUT_TYPES = ("decimal", "integer", "date", "weeks_days")
VALUE_KINDS = ("number", "date", "weeks_days")
REL_SLACK = 1e-9


class ScoringError(ValueError):
    """A case, scorer name or value kind that cannot be scored; the message names the problem."""


@dataclass(frozen=True)
class Score:
    """One scoring decision. `parsed` is the value read (float, datetime.date or (weeks, days)) or
    None; `reason` is "<code>: <detail>"; `scorer` names the scorer that decided."""

    correct: bool
    parsed: Any
    reason: str
    scorer: str

    @property
    def code(self) -> str:
        return self.reason.split(":", 1)[0]

    def parsed_json(self) -> Any:
        """`parsed` as JSON: number, "YYYY-MM-DD", [weeks, days] or null."""
        p = self.parsed
        if isinstance(p, dt.date):
            return p.isoformat()
        if isinstance(p, tuple):
            return list(p)
        return p

    def to_dict(self) -> dict:
        return {"correct": self.correct, "parsed": self.parsed_json(), "reason": self.reason,
                "scorer": self.scorer}


# ----------------------------------------------------------------------------- the gold side


@dataclass(frozen=True)
class Gold:
    """What a scorer needs from a case. `kind` and `value` are derived and validated on creation."""

    output_type: str
    gold_answer: str
    lower_limit: str | None = None
    upper_limit: str | None = None
    calculator_id: int | None = None
    case_id: str = ""
    kind: str = field(init=False)  # "number" | "date" | "weeks_days"
    value: Any = field(init=False)

    def __post_init__(self) -> None:
        where = f"case {self.case_id!r}" if self.case_id else "case"
        if self.output_type not in OUTPUT_TYPES:
            raise ScoringError(f"{where}: unknown output_type {self.output_type!r}; expected one of {OUTPUT_TYPES}")
        if isinstance(self.gold_answer, (int, float)) and not isinstance(self.gold_answer, bool):
            object.__setattr__(self, "gold_answer", str(self.gold_answer))  # e.g. a typed Parquet cell
        if not isinstance(self.gold_answer, str) or not self.gold_answer.strip():
            raise ScoringError(f"{where}: gold_answer must be a non-empty string, got {self.gold_answer!r}")
        if self.calculator_id is not None:
            try:
                object.__setattr__(self, "calculator_id", int(self.calculator_id))
            except (TypeError, ValueError):
                raise ScoringError(f"{where}: calculator_id is not an integer: {self.calculator_id!r}") from None
        if self.output_type == "weeks_days" or looks_like_weeks_days(self.gold_answer):
            kind, parse = "weeks_days", parse_gold_weeks_days
        elif self.output_type == "date":
            kind, parse = "date", parse_gold_date
        else:
            kind, parse = "number", parse_gold_number
        try:
            value = parse(self.gold_answer)
        except ValueError as exc:
            raise ScoringError(f"{where}: unreadable gold_answer for output_type {self.output_type!r}: {exc}") from None
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "value", value)

    @classmethod
    def from_mapping(cls, m: Mapping) -> "Gold":
        """From a dict: keys output_type, gold_answer (or answer), lower_limit (or lower), upper_limit
        (or upper), calculator_id, case_id; a results-store record (gold nested under "gold") works."""
        g = m.get("gold") if isinstance(m.get("gold"), Mapping) else m
        answer = g.get("gold_answer", g.get("answer"))
        if "output_type" not in m or answer is None:
            raise ScoringError(f"case mapping needs output_type and gold_answer/answer; has keys {sorted(m)}")
        return cls(
            output_type=m["output_type"],
            gold_answer=answer,
            lower_limit=g.get("lower_limit", g.get("lower")),
            upper_limit=g.get("upper_limit", g.get("upper")),
            calculator_id=m.get("calculator_id"),
            case_id=str(m.get("case_id", "") or ""),
        )

    def interval(self) -> tuple[float, float]:
        """The benchmark's own interval for a numeric case (see the module docstring)."""
        where = f"case {self.case_id!r}" if self.case_id else "case"
        gold = self.value
        bounds = []
        for name, raw in (("lower_limit", self.lower_limit), ("upper_limit", self.upper_limit)):
            if raw is None or (isinstance(raw, float) and math.isnan(raw)) or str(raw).strip() == "":
                bounds.append(None)
                continue
            try:
                bounds.append(parse_gold_number(raw))
            except ValueError:
                raise ScoringError(f"{where}: unreadable {name} {raw!r} for a numeric output") from None
        default = sorted((gold * 0.95, gold * 1.05)) if self.output_type == "decimal" else (gold, gold)
        lo = default[0] if bounds[0] is None else bounds[0]
        hi = default[1] if bounds[1] is None else bounds[1]
        if lo > hi:
            raise ScoringError(f"{where}: lower_limit {lo} exceeds upper_limit {hi}")
        return lo, hi


def gold_of(case: Any) -> Gold:
    """The Gold of a Case-like object, a mapping, or a Gold (returned as is)."""
    if isinstance(case, Gold):
        return case
    if isinstance(case, Mapping):
        return Gold.from_mapping(case)
    missing = [a for a in ("output_type", "gold_answer") if not hasattr(case, a)]
    if missing:
        raise ScoringError(f"cannot score {type(case).__name__}: missing attribute(s) {missing}")
    case_id = getattr(case, "case_id", "") or ""
    return Gold(
        output_type=case.output_type,
        gold_answer=case.gold_answer,
        lower_limit=getattr(case, "lower_limit", None),
        upper_limit=getattr(case, "upper_limit", None),
        calculator_id=getattr(case, "calculator_id", None),
        case_id=str(case_id),
    )


def _short(text: str, n: int = 80) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= n else text[: n - 3] + "...")


# ----------------------------------------------------------------------------- paper scorer


def _in_interval(x: float, lo: float, hi: float) -> bool:
    return lo - REL_SLACK * max(1.0, abs(lo)) <= x <= hi + REL_SLACK * max(1.0, abs(hi))


class PaperScorer:
    """The paper's rules (module docstring)."""

    name = "paper"
    description = ("first number on the final-answer line inside the benchmark interval (gold +-5% decimal, "
                   "gold exactly for integers); dates to the calendar day; gestational age as (weeks, days)")

    def _score(self, kind: str, parsed: Any, gold: Gold, where: str) -> Score:
        if kind == "number":
            lo, hi = gold.interval()
            ok = _in_interval(parsed, lo, hi)
            return Score(ok, parsed, f"{'correct' if ok else 'wrong'}: {parsed!r} {'in' if ok else 'not in'} "
                                     f"[{lo!r}, {hi!r}]{where}", self.name)
        if kind == "date":
            ok = parsed == gold.value
            return Score(ok, parsed, f"{'correct' if ok else 'wrong'}: {parsed.isoformat()} "
                                     f"{'==' if ok else '!='} gold {gold.value.isoformat()}{where}", self.name)
        want = reduce_weeks_days(*gold.value)
        ok = parsed == want
        return Score(ok, parsed, f"{'correct' if ok else 'wrong'}: {parsed} {'==' if ok else '!='} gold {want}{where}",
                     self.name)

    def score_reply(self, reply: str | None, gold: Gold) -> Score:
        text, rule = final_answer_text("" if reply is None else reply)
        where = f" (final-answer text {_short(text)} by {rule})"
        reader, code = {"number": (first_number, "no_number"), "date": (first_date, "no_date"),
                        "weeks_days": (first_weeks_days, "no_weeks_days")}[gold.kind]
        parsed = reader(text)
        if parsed is None:
            return Score(False, None, f"{code}: nothing readable as {gold.kind}{where}", self.name)
        return self._score(gold.kind, parsed, gold, where)

    def score_value(self, value: Any, kind: str, gold: Gold) -> Score:
        parsed, problem = _typed_value(value, kind)
        if problem:
            return Score(False, None, problem, self.name)
        if kind != gold.kind:
            return Score(False, parsed, f"wrong_kind: a {kind} value for a {gold.kind} case", self.name)
        return self._score(kind, parsed, gold, "")


def _typed_value(value: Any, kind: str) -> tuple[Any, str]:
    """(parsed, "") or (None, "<code>: why") for an executor/library value of a declared kind."""
    if kind not in VALUE_KINDS:
        raise ScoringError(f"unknown value kind {kind!r}; expected one of {VALUE_KINDS}")
    if value is None:
        return None, "no_value: the value is None"
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None, f"unreadable_value: a number must be an int or float, got {type(value).__name__}"
        v = int(value) if isinstance(value, numbers.Integral) else float(value)
        if not math.isfinite(v):
            return None, f"unreadable_value: not a finite number ({v!r})"
        return v, ""
    if kind == "date":
        if isinstance(value, dt.datetime):
            return value.date(), ""
        if isinstance(value, dt.date):
            return value, ""
        if isinstance(value, str):
            text = value.strip()
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
                return None, f"unreadable_value: date string {value!r} is not YYYY-MM-DD"
            try:
                return dt.date.fromisoformat(text), ""
            except ValueError as exc:
                return None, f"unreadable_value: date string {value!r}: {exc}"
        return None, f"unreadable_value: a date must be 'YYYY-MM-DD' or datetime.date, got {type(value).__name__}"
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return None, f"unreadable_value: gestational age must be a (weeks, days) pair, got {value!r}"
    parts = []
    for p in value:
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p) or p != int(p) or p < 0:
            return None, f"unreadable_value: weeks and days must be whole non-negative numbers, got {value!r}"
        parts.append(int(p))
    return reduce_weeks_days(*parts), ""


# ----------------------------------------------------------------------------- medcalc (official) scorer

_DATE_IDS = frozenset({13, 68})
_WEEKS_IDS = frozenset({69})
# 69 (gestational age) is weeks/days only: its gold answers are ('W weeks', 'D days') tuples in every split although its
# Output Type column says "integer"; `_branch` tests the weeks/days ids first, so listing it here too was dead.
_INTEGER_IDS = frozenset({4, 15, 16, 17, 18, 20, 21, 25, 27, 28, 29, 32, 33, 36, 43, 45, 48, 51})
_DECIMAL_IDS = frozenset({2, 3, 5, 6, 7, 8, 9, 10, 11, 19, 22, 23, 24, 26, 30, 31, 38, 39, 40, 44, 46, 49,
                          56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67})
_TYPE_BRANCH = {"date": "date", "weeks_days": "weeks_days", "integer": "integer", "decimal": "decimal"}

# Patterns of the official evaluation (facts about its behaviour, cited in the module docstring).
_OFF_ANSWER = re.compile(r'[Aa]nswer":\s*(.*?)\}')
_OFF_PLACEHOLDERS = ("str(short_and_direct_answer_of_the_question)", "str(value which is the answer to the question)",
                     "X.XX")
_OFF_DATE = re.compile(r"^(0?[1-9]|1[0-2])\/(0?[1-9]|[12][0-9]|3[01])\/(\d{4})")
_OFF_WEEKS = re.compile(r"\(?[\"\']?(\d+)\s*(weeks?)?[\"\']?,?\s*[\"\']?(\d+)\s*(days?)?[\"\']?\s*\)?")
_OFF_OUT_OF = re.compile(r"(\d+) out of")
_OFF_LIST = re.compile(r"-?\d+(, ?-?\d+)+")
_OFF_NUMBER = re.compile(r"(-?\d+(\.\d+)?)")
_OFF_PERCENT = re.compile(r"(-?\d+(\.\d+)?)\%")
_OFF_EGFR = re.compile(r"(-?\d+(\.\d+)?)\s*mL/min/1.73")
_OFF_EXPR = re.compile(r"str\((.*)\)")
_OFF_SUBSTITUTIONS = (("^", "**"), ("is odd", "% 2 == 1"), ("is even", "% 2 == 0"), ("sqrt", "math.sqrt"),
                      (".math", ""), ("weight", ""), ("height", ""), ("mg/dl", ""), ("g/dl", ""),
                      ("mmol/L", ""), ("kg", ""), ("g", ""), ("mEq/L", ""))


class OfficialError(Exception):
    """The official evaluation raises at this point; its run loop then records the row Incorrect."""


def _literal(text: str) -> Any:
    """Python-literal value of `text` (what the official eval gives for literals), OfficialError else."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise OfficialError(f"eval({text!r}) raises {type(exc).__name__}") from None


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
    found = _OFF_ANSWER.findall(reply)
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
        m = _OFF_EXPR.search(text)
        if m:
            value = _official_expression(m.group(1))
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
        except TypeError as exc:
            raise OfficialError(f"round raises: {exc}") from None
        return got == _literal(gold.gold_answer), got
    if branch == "decimal":
        got = _literal(answer)
        lo, hi = _literal(str(gold.lower_limit)), _literal(str(gold.upper_limit))
        try:
            return bool(got >= lo and got <= hi), got
        except TypeError as exc:
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
        return Score(ok, got, f"{'correct' if ok else 'wrong'}: official answer {shown} read as {got!r}, "
                              f"gold {gold.gold_answer!r} ({branch} rule)", self.name)

    def score_reply(self, reply: str | None, gold: Gold) -> Score:
        reply = "" if reply is None else reply
        branch = _branch(gold)
        text = self._answer_text(reply)
        try:
            answer = official_parse(text, branch, reply)
        except OfficialError as exc:
            return Score(False, None, f"official_error: {exc}; answer text {_short(text)}", self.name)
        return self._decide(answer, gold, branch, _short(answer))

    def score_value(self, value: Any, kind: str, gold: Gold) -> Score:
        parsed, problem = _typed_value(value, kind)
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


# ----------------------------------------------------------------------------- official str(...) expressions

_MATH_FUNCS: dict[str, Any] = {n: getattr(math, n) for n in (
    "sqrt", "exp", "log", "log10", "log2", "pow", "floor", "ceil", "fabs", "trunc", "sin", "cos", "tan",
    "atan", "asin", "acos", "hypot", "isclose", "pi", "e", "inf", "nan")}
_NP_FUNCS: dict[str, Any] = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log10": math.log10, "log2": math.log2,
    "power": math.pow, "floor": math.floor, "ceil": math.ceil, "abs": abs, "absolute": abs, "round": round,
    "pi": math.pi, "e": math.e,
}
_NAMES: dict[str, Any] = {"min": min, "pow": pow, "round": round, "abs": abs, "int": int, "float": float,
                          "math": _MATH_FUNCS, "np": _NP_FUNCS, "numpy": _NP_FUNCS}
_BINOPS: dict[type, Callable] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_UNOPS: dict[type, Callable] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                                ast.Invert: operator.invert}
_CMPOPS: dict[type, Callable] = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
                                 ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_MAX_BITS = 1_000_000


def _check_size(base: Any, exponent: Any) -> None:
    """Refuse an integer power or shift whose result would exceed _MAX_BITS bits."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if abs(base).bit_length() * exponent > _MAX_BITS:
            raise _Unsupported("result too large")


class _Unsupported(Exception):
    pass


def _official_expression(expr: str) -> Any:
    """Value of an official "str(<expr>)" answer after the official substitutions, or "N/A"."""
    for old, new in _OFF_SUBSTITUTIONS:
        expr = expr.replace(old, new)
    expr = expr.split("#")[0]
    opened, closed = expr.count("("), expr.count(")")
    if opened > closed:
        expr += ")" * (opened - closed)
    elif closed > opened:
        expr = "(" * (closed - opened) + expr
    try:
        return _eval_node(ast.parse(expr, mode="eval").body)
    except Exception:  # noqa: BLE001 - the official code maps every evaluation failure to "N/A"
        return "N/A"


def _eval_node(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in _NAMES:
            raise _Unsupported(node.id)
        return _NAMES[node.id]
    if isinstance(node, ast.Attribute):
        owner = _eval_node(node.value)
        if not isinstance(owner, dict) or node.attr not in owner:
            raise _Unsupported(node.attr)
        return owner[node.attr]
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_eval_node(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if not (isinstance(left, numbers.Number) and isinstance(right, numbers.Number)):
            raise _Unsupported("arithmetic on non-numbers")
        if isinstance(node.op, ast.Pow):
            _check_size(left, right)
        if isinstance(node.op, ast.LShift) and isinstance(right, int) and right > _MAX_BITS:
            raise _Unsupported("result too large")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
        return _UNOPS[type(node.op)](_eval_node(node.operand))
    if isinstance(node, ast.Compare) and all(type(o) in _CMPOPS for o in node.ops):
        left = _eval_node(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval_node(comp)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        value = None
        for v in node.values:
            value = _eval_node(v)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value
    if isinstance(node, ast.IfExp):
        return _eval_node(node.body) if _eval_node(node.test) else _eval_node(node.orelse)
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
        func = _eval_node(node.func)
        if not callable(func) or isinstance(func, dict):
            raise _Unsupported("call")
        args = [_eval_node(a) for a in node.args]
        kwargs = {k.arg: _eval_node(k.value) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise _Unsupported("**kwargs")
        if func is pow and len(args) >= 2:
            _check_size(args[0], args[1])
        return func(*args, **kwargs)
    raise _Unsupported(type(node).__name__)


# ----------------------------------------------------------------------------- public API

SCORERS: dict[str, Any] = {s.name: s for s in (
    PaperScorer(),
    MedCalcScorer("medcalc", "official MedCalc-Bench extract_answer + check_correctness, quirks included",
                  official_answer_text),
    MedCalcScorer("medcalc_line", "official MedCalc-Bench per-type extraction and checks applied to the paper's "
                  "final-answer text instead of the JSON answer field", line_answer_text),
)}


def _scorer(name: str):
    try:
        return SCORERS[name]
    except (KeyError, TypeError):
        raise ScoringError(f"unknown scorer {name!r}; known: {sorted(SCORERS)}") from None


def score_reply(reply_text: str | None, case: Any, scorer: str = "paper") -> Score:
    """Score a model reply for a case with the named scorer ("paper" or "medcalc")."""
    s = _scorer(scorer)
    if reply_text is not None and not isinstance(reply_text, str):
        raise ScoringError(f"reply_text must be a str or None, got {type(reply_text).__name__}")
    return s.score_reply(reply_text, gold_of(case))


def score_value(value: Any, kind: str, case: Any, scorer: str = "paper") -> Score:
    """Score a typed value (executor / library answer) of `kind` "number" | "date" | "weeks_days"."""
    s = _scorer(scorer)
    if kind not in VALUE_KINDS:
        raise ScoringError(f"unknown value kind {kind!r}; expected one of {VALUE_KINDS}")
    return s.score_value(value, kind, gold_of(case))


def score_all(case: Any, *, reply_text: str | None = None, value: Any = None, kind: str | None = None) -> dict[str, Score]:
    """Every scorer's Score for a reply (or, when `kind` is given, a typed value): {scorer name: Score}."""
    if kind is not None:
        return {name: score_value(value, kind, case, name) for name in SCORERS}
    return {name: score_reply(reply_text, case, name) for name in SCORERS}
