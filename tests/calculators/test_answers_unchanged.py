"""Every dataset row gives bit-identical answers before and after the calculators were folded together (issue 21
item 3): the hand-written library (every calculator of IMPLEMENTED), the catalogue's literal implementations and
the coefficient-driven version functions (every implemented version), under both unit conventions, on the three
local files (the dev file, the bundled slice, the one-shot file).

The "before" answers are not re-implemented here: `answers_before_702e195.json` holds, per file, the sha256 of the
answer lines (`answer_lines` below) generated once with main's code at commit 702e195 (before the library's MDRD,
CKD-EPI 2021 and Friedewald became calls to the versioned functions). A float is written with repr(), so a
difference in the last bit changes the hash; an abstention or error is written as its class and message.
Regenerate (only on purpose, with the code the figures must match): `python -m
tests.calculators.test_answers_unchanged`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from harness.calculators import IMPLEMENTED
from harness.calculators.catalogue import literal_compute
from harness.calculators.versions import implemented_versions, library_reference
from harness.core.paths import REPO_ROOT
from harness.data.dataset import load_dataset

FIXTURE = Path(__file__).with_name("answers_before_702e195.json")
CONVENTIONS = ("exact", "medcalc-v1.0")
FILES = {"dev": "test_dev_v1.0.csv", "one-shot": "one_shot_verified.csv"}  # in the shared data directory
BUNDLED = REPO_ROOT / "harness" / "data" / "test_slice.csv"


def _outcome(fn) -> str:
    try:
        return repr(fn())
    except Exception as exc:  # noqa: BLE001 - an abstention or a conversion error is an answer too
        return f"{type(exc).__name__}: {exc}"


def answer_lines(path: Path):
    """One line per (row, implementation, convention): what the library, the catalogue text and every version
    function answer on the row's gold variables."""
    versions = implemented_versions()
    for case in load_dataset(str(path)).cases:
        cid = int(case.calculator_id)
        for conv in CONVENTIONS:
            calc = IMPLEMENTED.get(cid)
            if calc is not None:
                yield (
                    f"{case.case_id} library {conv} "
                    + _outcome(
                        lambda calc=calc, case=case, conv=conv: calc.compute(
                            **calc.from_entities(case.entities, convention=conv)
                        )
                    )
                )
            yield f"{case.case_id} catalogue {conv} " + _outcome(
                lambda cid=cid, case=case, conv=conv: literal_compute(cid, case.entities, conv)
            )
            for vcid, version in versions:
                if vcid == cid:
                    ref = library_reference(case, version, convention=conv)
                    yield f"{case.case_id} {version} {conv} {ref['value']!r} {ref['reason']}"


def answers_sha256(path: Path) -> tuple[str, int]:
    h, n = hashlib.sha256(), 0
    for line in answer_lines(path):
        h.update(line.encode() + b"\n")
        n += 1
    return h.hexdigest(), n


def _paths(shared: Path) -> dict[str, Path]:
    return {"bundled": BUNDLED, **{k: shared / name for k, name in FILES.items()}}


@pytest.mark.parametrize("label", ["dev", "bundled", "one-shot"])
def test_every_row_answers_as_before(label, shared_data_dir):
    before = json.loads(FIXTURE.read_text())["files"][label]
    digest, lines = answers_sha256(_paths(shared_data_dir)[label])
    assert lines == before["lines"]
    assert digest == before["sha256"], f"{label}: some answer changed (was {before['sha256'][:12]}...)"


if __name__ == "__main__":  # regenerate the fixture (see the module docstring)
    shared = Path(os.environ.get("MEDCALC_SHARED_DIR", REPO_ROOT.parent / "shared" / "data" / "medcalc-bench"))
    out = {
        "about": "sha256 of tests/calculators/test_answers_unchanged.answer_lines per file, generated with "
        "main's code at commit 702e195",
        "files": {},
    }
    for label, path in _paths(shared).items():
        digest, lines = answers_sha256(path)
        out["files"][label] = {"file": path.name, "sha256": digest, "lines": lines}
    FIXTURE.write_text(json.dumps(out, indent=2) + "\n")
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
