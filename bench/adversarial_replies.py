"""Adversarial replies of about 100 kB that made the answer readers quadratic (long digit runs, "1."
repeated, a digit then a long whitespace run, repeated JSON keys or "str(" with nothing to close them).
Shared by the property test (tests/scoring/test_scoring_robustness.py: every scorer returns a verdict)
and the timing benchmark (bench/scoring.py, `make bench-scoring`)."""

from __future__ import annotations

SIZE = 100_000


def adversarial_replies(n: int = SIZE) -> dict[str, str]:
    """{name: reply} of about `n` characters each."""
    return {
        "digits": "7" * n,
        "one-dot": "1." * (n // 2),
        "json-digits": '{"answer": "' + "7" * n + '"}',
        "json-one-dot": '{"answer": "' + "1." * (n // 2) + '"}',
        "final-digits": "Final answer: " + "7" * n,
        "comma-list": "1, " * (n // 3),
        "digit-then-spaces": "7" + " " * n + "x",
        "json-digit-then-spaces": '{"answer": "7' + " " * n + 'x"}',
        "paren-digit-then-spaces": "Final answer: (7" + " " * n,
        "weeks-then-spaces": "1 weeks" + " " * n + "x",
        "json-keys-unclosed": '{"answer": ' * (n // 11),
        "str-unclosed": '{"answer": "' + "str(" * (n // 4) + '"}',
        "str-flat-sum": '{"answer": "str(' + "1+" * (n // 2) + '1)"}',
        "minus-digits": "-7" * (n // 2),
        "percent-after-dots": "7." * (n // 2) + "%",
        "slashes": "1/1/" * (n // 4),
        "month-names": "Jan " * (n // 4),
        "answer-phrases": "answer: x\n" * (n // 10),
        "boxed-unclosed": "\\boxed{" * (n // 7),
    }
