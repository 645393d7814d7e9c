"""The closed set of row outcomes: what became of one case in one arm, as stored in every record's `outcome`.

The executor's own outcomes (executor/outcomes.py) map onto these through `executor.outcomes.taxonomy`; the order
below is the order of the outcome columns in summaries and the code of each outcome in the statistics arrays
(`ROW_OUTCOMES.index`), so new outcomes go at the end.

    answered           the arm produced a value of the expected kind (it may still be wrong)
    abstained          the arm declined: a library outside its calculators, a tree it cannot evaluate, ...
    no_program         a program arm's reply held no program
    sandbox_rejection  the executor refused or stopped the program (static policy, seccomp, limits)
    raised_error       the program raised
    wrong_return_kind  the program's `answer` is not a number, date or (weeks, days)
    unreadable_value   a reply's value could not be read as the calculator's output type
    request_rejected   the model server refused one of the case's requests with a 4xx answer (e.g. prompt +
                       max_tokens over the served context): recorded, counted and named in the log, never retried
"""

from __future__ import annotations

import enum


class RowOutcome(enum.StrEnum):
    ANSWERED = "answered"
    ABSTAINED = "abstained"
    NO_PROGRAM = "no_program"
    SANDBOX_REJECTION = "sandbox_rejection"
    RAISED_ERROR = "raised_error"
    WRONG_RETURN_KIND = "wrong_return_kind"
    UNREADABLE_VALUE = "unreadable_value"
    REQUEST_REJECTED = "request_rejected"


# The values as plain strings, in column/code order (dict keys and JSON use these).
ROW_OUTCOMES: tuple[str, ...] = tuple(o.value for o in RowOutcome)
