"""An arm is one file (issue 49, item 3): the analysis and the reproduce step read the arm registry
(harness.arms.registry: Display, PaperRole, Gap and the functions over them) and never name an arm themselves.

The rule, checked over every module of harness/analysis and harness/reproduce: no string constant in the code equals
a registered arm's name or one of its aliases. It reads the parsed source (`ast`), so
- comments never count, and neither do docstrings (a module's, class's or function's first statement when it is a
  string): prose may name arms ("the blind arm is drawn open");
- every other string constant counts, wherever it stands: a tuple of names, a dict key, a default argument, a
  comparison (`arm == "blind"`), a subscript (`row["blind"]`: a key that happens to spell an arm's name counts too,
  rename it), an f-string's literal part when it is exactly a name;
- a constant that contains a name among other text ("hybrid:gold-first+program-solve", "open-book arithmetic")
  does not count: only whole-string equality.
A literal that is genuinely not about an arm would go in ALLOWED below, with its file and the reason; there is none.

On main before this change (328bac3) the test failed with 97 literals in nine files (tables/gaps.py 24,
comparison/numbers.py 24, stats/synthetic_records.py 16, demo_summary.py 13, tables/ladder.py 8, figures.py 4,
tables/audit.py 4, stats/families.py 2, comparison/claims.py 2)."""

from __future__ import annotations

import ast
from pathlib import Path

import harness
from harness.arms.registry import ALIASES, BUILTIN_ARMS

HARNESS = Path(harness.__file__).resolve().parent
SCANNED = ("analysis", "reproduce")
# (path relative to harness/, literal) -> why it is not about an arm. Empty: every literal found is a finding.
ALLOWED: dict[tuple[str, str], str] = {}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.add(id(body[0].value))
    return out


def arm_literals(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, literal) of every string constant in `source` equal to one of `names`, docstrings left out."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
        if id(node) not in docs
    ]
    return sorted(found)


def _names() -> set[str]:
    return set(BUILTIN_ARMS) | set(ALIASES)


def test_the_rule_reads_code_not_prose():
    src = '''"""The blind arm: "blind" in a docstring is prose."""
# "blind" in a comment
X = ("blind", "program-solve")
def f(arm, row):
    """"open-book" here is prose too."""
    return arm == "open-book" or row["gold-solve"] or f"{arm}" == "hybrid:gold-first+program-solve"
'''
    assert arm_literals(src, _names()) == [(3, "blind"), (3, "program-solve"), (6, "gold-solve"), (6, "open-book")]


def test_no_module_of_analysis_or_reproduce_names_an_arm():
    names = _names()
    findings = []
    for sub in SCANNED:
        for path in sorted((HARNESS / sub).rglob("*.py")):
            rel = path.relative_to(HARNESS).as_posix()
            for line, value in arm_literals(path.read_text(encoding="utf-8"), names):
                if (rel, value) not in ALLOWED:
                    findings.append(f"harness/{rel}:{line}: {value!r}")
    assert not findings, (
        f"{len(findings)} arm name(s) written as literals; declare what the code needs of the arm in its registry "
        "entry (harness/arms/registry.py: Display, PaperRole, Gap) and read it from there:\n" + "\n".join(findings)
    )


def test_allowed_entries_are_still_there():
    """An ALLOWED entry whose literal is gone is stale."""
    names = _names()
    for (rel, value), why in ALLOWED.items():
        assert why
        assert value in {v for _, v in arm_literals((HARNESS / rel).read_text(encoding="utf-8"), names)}, rel
