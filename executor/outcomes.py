"""The closed set of executor outcomes, their precedence, and the paper's taxonomy.

Precedence (when more than one thing went wrong, the earliest in this list wins):

1. INFRA_ERROR       the executor itself failed (supervisor died, bad request, a child killed by
                     SIGKILL from outside); retried by the API, never scored.
   PERSISTENT_INFRA_ERROR  decided by the pool, not the child: every attempt at this program
                     ended as an infrastructure failure while a control program right after ran
                     fine on the same pool, so the program is what breaks the sandbox. Scored (a
                     sandbox rejection), so a program cannot take itself out of the denominator.
2. REJECTED_STATIC   the AST policy refused the program; it never ran.
3. SANDBOX_VIOLATION the child was killed by seccomp (a forbidden system call) or tried to
                     forge the result channel.
4. TIMEOUT_WALL      the parent killed the child at the wall-clock limit.
5. CPU_LIMIT         the child hit RLIMIT_CPU (SIGXCPU / SIGKILL at the hard limit).
6. MEMORY_LIMIT      MemoryError escaped the program (RLIMIT_AS).
7. OUTPUT_LIMIT      the program wrote more than the output-flood limit.
8. LINE_CAP          the program executed more lines than the cap.
9. CRASH             the child ended without a result for any other reason (signal, early exit).
10. PROGRAM_ERROR    the program raised (including a SyntaxError or an unset ``answer``).
11. BAD_RETURN_KIND  ``answer`` is not a finite number, a date or a (weeks, days) tuple of ints.
12. OK               ``answer`` has a valid kind.

The child stops at the first of 2, 6, 7, 8, 10, 11, 12 it meets, the parent only overrides it
with 1, 3, 4, 5 or 9, which are decided from how the child ended; so precedence is also the
order of the checks.
"""

from __future__ import annotations

import enum


class Outcome(str, enum.Enum):
    """Closed outcome enum; values are the strings used in JSON."""

    OK = "OK"
    PROGRAM_ERROR = "PROGRAM_ERROR"
    REJECTED_STATIC = "REJECTED_STATIC"
    SANDBOX_VIOLATION = "SANDBOX_VIOLATION"
    TIMEOUT_WALL = "TIMEOUT_WALL"
    CPU_LIMIT = "CPU_LIMIT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    LINE_CAP = "LINE_CAP"
    BAD_RETURN_KIND = "BAD_RETURN_KIND"
    CRASH = "CRASH"
    INFRA_ERROR = "INFRA_ERROR"
    PERSISTENT_INFRA_ERROR = "PERSISTENT_INFRA_ERROR"

    def __str__(self) -> str:  # json and f-strings show the plain value
        return self.value


PRECEDENCE: tuple[Outcome, ...] = (
    Outcome.INFRA_ERROR,
    Outcome.PERSISTENT_INFRA_ERROR,
    Outcome.REJECTED_STATIC,
    Outcome.SANDBOX_VIOLATION,
    Outcome.TIMEOUT_WALL,
    Outcome.CPU_LIMIT,
    Outcome.MEMORY_LIMIT,
    Outcome.OUTPUT_LIMIT,
    Outcome.LINE_CAP,
    Outcome.CRASH,
    Outcome.PROGRAM_ERROR,
    Outcome.BAD_RETURN_KIND,
    Outcome.OK,
)

# The paper's outcome taxonomy for program arms (results-store `outcome` field). "no_program" is
# decided by the solver before the executor is called and "unreadable_value" by the scorer after
# an OK; INFRA_ERROR has no entry because it is retried and never scored.
TAXONOMY: dict[Outcome, str] = {
    Outcome.OK: "answered",
    Outcome.REJECTED_STATIC: "sandbox_rejection",
    Outcome.SANDBOX_VIOLATION: "sandbox_rejection",
    Outcome.PERSISTENT_INFRA_ERROR: "sandbox_rejection",
    Outcome.PROGRAM_ERROR: "raised_error",
    Outcome.TIMEOUT_WALL: "raised_error",
    Outcome.CPU_LIMIT: "raised_error",
    Outcome.MEMORY_LIMIT: "raised_error",
    Outcome.OUTPUT_LIMIT: "raised_error",
    Outcome.LINE_CAP: "raised_error",
    Outcome.CRASH: "raised_error",
    Outcome.BAD_RETURN_KIND: "wrong_return_kind",
}

RETRIED: frozenset[Outcome] = frozenset({Outcome.INFRA_ERROR})


def parse_outcome(value: str | Outcome) -> Outcome:
    """Outcome from its string; a clear error for anything outside the closed set."""
    try:
        return Outcome(value)
    except ValueError:
        raise ValueError(f"unknown executor outcome {value!r}; known: {', '.join(o.value for o in Outcome)}") from None


def taxonomy(outcome: str | Outcome) -> str:
    """Paper taxonomy label for an outcome; ValueError for INFRA_ERROR (never scored)."""
    o = parse_outcome(outcome)
    if o not in TAXONOMY:
        raise ValueError(f"{o.value} is an infrastructure failure: retry it, never score it")
    return TAXONOMY[o]


def stronger(a: Outcome, b: Outcome) -> Outcome:
    """The outcome that wins under PRECEDENCE."""
    return a if PRECEDENCE.index(a) <= PRECEDENCE.index(b) else b
