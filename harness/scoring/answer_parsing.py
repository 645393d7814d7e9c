"""Reading answers out of model replies, for the `paper` scorer (see harness/scoring/paper.py).

Job: turn reply text into a typed value: the final-answer text of a reply, the first number in it,
the first calendar date in it, or the first gestational age in it, reduced to (weeks, days). Gold
strings as the benchmark files write them are parsed by harness/data/values.py. No scoring decisions
live here.

Final-answer text (the "final-answer line" of the paper), in order of precedence:

1. Only the text after the last ``</think>`` counts, when a reply has one.
2. JSON key: when the reply has a JSON-style answer key (``"answer":``, ``'answer':``, any case,
   spaces allowed before the colon, or a key ending in ``_answer`` / `` answer`` such as
   ``"final_answer":``), the final-answer text is the value of the LAST such key: the content of its
   quoted string (JSON escapes decoded), or, unquoted, the text up to the next ``,`` ``}`` or line
   end.
3. Boxed: else, when the reply has ``\\boxed{...}``, the content of the LAST one (braces balanced).
4. "Final answer" phrase: else, the final-answer line is the LAST line holding the words "final
   answer" (any case, markdown allowed: "**Final Answer**"), optionally followed by a parenthetical
   of at most 40 characters, then ``:``, ``=``, "is" or "was"; a heading line holding only "Final
   Answer" (e.g. ``### Final Answer``) counts too. The text is what follows the FIRST such phrase on
   that line; when that holds no letter or digit (``Final answer:`` or a heading alone), the next
   line with a letter or digit is used instead. The prompts of this kit ask every reply-scored arm
   to end with ``Final answer: <value>``, which this rule reads.
5. Answer phrase: else, the same with the word "answer" alone ("Answer: 5", "The answer is 5", a
   heading "Answer"). "To answer this, ..." is no answer phrase.
6. Otherwise the last line with a letter or digit.

Numbers (`first_number`): the first match in the final-answer text of an optional sign (``-``, ``+``
or the Unicode minus ``\u2212``, only when not glued to a preceding letter or digit, so "CKD-EPI"
or "3-4" carry no sign), digits with optional comma thousands separators in groups of exactly three
("1,234.5" is 1234.5; "4,5" is 4), an optional decimal part (".5" is 0.5), and an optional exponent
("1.2e3", "1.2E-3", "1.2 x 10^3", "1.2×10^3"). Units glued to the number are ignored ("70kg" is 70),
a percent sign is ignored (the value is read as written: "12.5%" is 12.5), fractions are not
evaluated ("3/4" is 3), and a decimal comma is not recognised ("25,2" is 25). ASCII digits only.

Dates (`first_date`): the first valid calendar day in the final-answer text written as
MM/DD/YYYY or MM-DD-YYYY (month first, as the benchmark's notes write; one- or two-digit month and
day), YYYY-MM-DD or YYYY/MM/DD, "January 5, 2021" / "Jan. 5th 2021", or "5 January 2021" /
"5th of Jan 2021". Years must have four digits. Slash dates are never read day-first: "25/12/2021" is
not a date. Impossible days ("02/30/2021") are skipped.

Gestational ages (`first_weeks_days`): the first of, in the final-answer text, a tuple or list
"(4, 2)", "[4, 2]", "('4 weeks', '2 days')"; a phrase "4 weeks and 2 days", "4 weeks, 2 days",
"4 wk 2 d", "4w2d"; obstetric "4+2"; then, only when none of those occurs, "4 weeks" alone (4, 0)
or "30 days" alone (0, 30), reduced to (4, 2); then a bare pair "4, 2" that is the whole text. At the same start the
longer form wins. Counts must be whole, non-negative numbers ("4.5 weeks" is not read). The result
is reduced: total days = 7 * weeks + days, giving (total // 7, total % 7), so "4 weeks 9 days" is
(5, 2).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re

from harness.data.values import MONTHS

__all__ = [
    "final_answer_text",
    "first_date",
    "first_number",
    "first_weeks_days",
    "reduce_weeks_days",
]

# ----------------------------------------------------------------------------- final-answer text

_THINK_END = "</think>"
_ALNUM = re.compile(r"[A-Za-z0-9]")
# A JSON-style key that is or ends in "answer", quoted with " or ', followed by a colon.
_JSON_KEY = re.compile(r"""(["'])[A-Za-z_ ]*?(?<![A-Za-z])answer\1\s*:\s*""", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")
_PHRASE_TAIL = r"(?![A-Za-z])[\s*_\"']*(?:\([^()\n]{0,40}\)[\s*_\"']*)?(?::|=|\bis\b|\bwas\b)"
# (phrase, heading) pairs: first the "final answer" forms, then any "answer" form.
_PHRASE_TIERS = (
    (
        "final_answer_phrase",
        re.compile(r"(?<![A-Za-z])final[\s_*]+answer" + _PHRASE_TAIL, re.IGNORECASE),
        re.compile(r"^[\W_]*final\s+answer[\W_]*$", re.IGNORECASE),
    ),
    (
        "answer_phrase",
        re.compile(r"(?<![A-Za-z])answer" + _PHRASE_TAIL, re.IGNORECASE),
        re.compile(r"^[\W_]*answer[\W_]*$", re.IGNORECASE),
    ),
)


def final_answer_text(reply: str) -> tuple[str, str]:
    """Return (text, rule) for a reply: the final-answer text and which rule found it
    ("json_key", "boxed", "final_answer_phrase", "answer_phrase", "last_line" or "empty"). See the
    module docstring."""
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str, got {type(reply).__name__}")
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    if _THINK_END in text:
        text = text.rsplit(_THINK_END, 1)[1]

    keys = list(_JSON_KEY.finditer(text))
    if keys:
        return _json_value(text, keys[-1].end()), "json_key"

    boxes = list(_BOXED.finditer(text))
    if boxes:
        return _braced(text, boxes[-1].end()), "boxed"

    lines = text.split("\n")
    for rule, phrase, heading in _PHRASE_TIERS:
        for i in range(len(lines) - 1, -1, -1):
            m = phrase.search(lines[i]) or heading.search(lines[i])
            if m is None:
                continue
            rest = lines[i][m.end() :]
            if _ALNUM.search(rest):
                return rest.strip(), rule
            for later in lines[i + 1 :]:
                if _ALNUM.search(later):
                    return later.strip(), rule
            return "", rule

    for line in reversed(lines):
        if _ALNUM.search(line):
            return line.strip(), "last_line"
    return "", "empty"


def _json_value(text: str, start: int) -> str:
    """The value starting at `start`: a quoted string's content (JSON escapes such as \\u2212
    decoded), else the text up to the next , } or newline."""
    if start < len(text) and text[start] in "\"'":
        quote = text[start]
        i = start + 1
        while i < len(text) and text[i] != quote:
            i += 2 if text[i] == "\\" else 1
        raw = text[start + 1 : i]
        try:
            body = raw if quote == '"' else raw.replace('"', '\\"')
            return json.loads('"' + body + '"').strip()
        except ValueError:
            return re.sub(r"\\(.)", r"\1", raw).strip()
    m = _UNQUOTED.match(text, start)
    assert m is not None  # the pattern matches the empty string
    return m.group(0).strip()


_UNQUOTED = re.compile(r"[^,}\n]*")


def _braced(text: str, start: int) -> str:
    """Content from `start` up to the brace closing the one just before it (unclosed: to the end)."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i].strip()
    return text[start:].strip()


# ----------------------------------------------------------------------------- numbers

_NUMBER = re.compile(
    r"(?P<sign>(?<![A-Za-z0-9])[-+\u2212])?"
    r"(?P<mant>(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]+)?|\.[0-9]+)"
    r"(?P<exp>[eE][-+]?[0-9]+|\s*[x×]\s*10\s*\^\s*(?P<exp10>[-+]?[0-9]+))?"
)


def first_number(text: str) -> float | None:
    """The first number in `text` (rules in the module docstring), or None when there is none or it
    is not finite."""
    m = _NUMBER.search(text)
    if m is None:
        return None
    mant = m.group("mant").replace(",", "")
    sign = -1.0 if m.group("sign") in ("-", "\u2212") else 1.0
    exp = m.group("exp")
    try:
        if exp is None:
            value = float(mant)
        elif m.group("exp10") is not None:
            value = float(mant) * 10.0 ** int(m.group("exp10"))
        else:
            value = float(mant + exp)
    except OverflowError:
        return None
    value *= sign
    return value if math.isfinite(value) else None


# ----------------------------------------------------------------------------- dates

_MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_DATE_FORMS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"(?<![0-9])([0-9]{1,2})([/-])([0-9]{1,2})\2([0-9]{4})(?![0-9])"), "mdy"),
    (re.compile(r"(?<![0-9])([0-9]{4})([/-])([0-9]{1,2})\2([0-9]{1,2})(?![0-9])"), "ymd"),
    (
        re.compile(rf"(?<![A-Za-z])({_MONTH_ALT})\.?\s+([0-9]{{1,2}}){_ORD},?\s+([0-9]{{4}})(?![0-9])", re.IGNORECASE),
        "name_dy",
    ),
    (
        re.compile(
            rf"(?<![0-9])([0-9]{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH_ALT})\.?,?\s+([0-9]{{4}})(?![0-9])", re.IGNORECASE
        ),
        "d_name_y",
    ),
)


def _date_of(form: str, m: re.Match) -> dt.date | None:
    try:
        if form == "mdy":
            return dt.date(int(m.group(4)), int(m.group(1)), int(m.group(3)))
        if form == "ymd":
            return dt.date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
        if form == "name_dy":
            return dt.date(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)))
        return dt.date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
    except ValueError:
        return None


def first_date(text: str) -> dt.date | None:
    """The first valid calendar day written in `text` (forms in the module docstring), or None."""
    found: list[tuple[int, dt.date]] = []
    for pattern, form in _DATE_FORMS:
        for m in pattern.finditer(text):
            day = _date_of(form, m)
            if day is not None:
                found.append((m.start(), day))
                break
    return min(found, key=lambda t: t[0])[1] if found else None


# ----------------------------------------------------------------------------- gestational age

# Atomic groups keep the readers linear on long digit and whitespace runs without changing a match: a digit
# given back by [0-9]+ (or a space given back by \s*) could only be followed by what cannot start with a digit
# (or is absorbed again by the [\s'"]* after it), so backtracking into them never finds another match.
_N = r"(?<![0-9.])((?>[0-9]+))(?![0-9]*\.[0-9])"
_WK = r"(?:weeks?|wks?|w)"
_DY = r"(?:days?|d)"
_Q = r"""[\s'"]*"""
_PAIR_FORMS = (
    re.compile(rf"[(\[]{_Q}{_N}(?>\s*)(?:{_WK})?{_Q},{_Q}{_N}(?>\s*)(?:{_DY})?{_Q}[)\]]", re.IGNORECASE),
    re.compile(rf"{_N}\s*{_WK}(?![A-Za-z])[\s,;]*(?:and\s+|\+\s*)?{_N}\s*{_DY}(?![A-Za-z])", re.IGNORECASE),
    re.compile(rf"{_N}\s*\+\s*([0-6])(?![0-9.])"),
)
_WEEKS_ONLY = re.compile(rf"{_N}\s*(?:weeks?|wks?)(?![A-Za-z])", re.IGNORECASE)
_DAYS_ONLY = re.compile(rf"{_N}\s*days?(?![A-Za-z])", re.IGNORECASE)
_BARE_PAIR = re.compile(r"""^[\s'"*`]*([0-9]+)\s*,\s*([0-9]+)[\s'"*`.]*$""")


def reduce_weeks_days(weeks: int, days: int) -> tuple[int, int]:
    """(weeks, days) with days folded into whole weeks: 7 * weeks + days -> (total // 7, total % 7)."""
    total = 7 * int(weeks) + int(days)
    return divmod(total, 7)


def first_weeks_days(text: str) -> tuple[int, int] | None:
    """The first gestational age in `text`, reduced to (weeks, days), or None (rules in the module
    docstring)."""
    best: tuple[int, int, tuple[int, int]] | None = None  # (start, -length, value)
    for pattern in _PAIR_FORMS:
        m = pattern.search(text)
        if m is not None:
            cand = (m.start(), -(m.end() - m.start()), (int(m.group(1)), int(m.group(2))))
            best = cand if best is None or cand[:2] < best[:2] else best
    if best is None:
        for pattern, as_weeks in ((_WEEKS_ONLY, True), (_DAYS_ONLY, False)):
            m = pattern.search(text)
            if m is not None:
                n = int(m.group(1))
                cand = (m.start(), 0, (n, 0) if as_weeks else (0, n))
                best = cand if best is None or cand[:2] < best[:2] else best
    if best is None:
        m = _BARE_PAIR.match(text)
        if m is not None:
            best = (0, 0, (int(m.group(1)), int(m.group(2))))
    return None if best is None else reduce_weeks_days(*best[2])
