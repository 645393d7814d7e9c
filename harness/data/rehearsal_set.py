"""The rehearsal case set: N cases per calculator from the MedCalc-Bench dev rows, with fresh case ids.

Rows are taken per calculator in file order; a calculator with fewer than N dev rows reuses its rows in
the same order (row k of the set is dev row k mod n). Every set row gets a fresh Row Number 1..55N, so case
ids (f"{calculator_id}-{row_number}") never collide with the dev file's; the provenance written next to
the CSV (`<csv>.provenance.json`) lists, for every new row number, the dev row it copies and whether it is a reuse.

The set is a new file (a new sha256), so it is not a known dataset; its rows keep their source's unit
convention, and the provenance says which (`convention`: the source's by content sha256, e.g. medcalc-v1.0 for
the v1.0 dev rows). The rehearsal runs with that convention given explicitly (`--convention`).

    harness data rehearsal-set OUT_CSV --per-calculator N
builds the set from the dev rows (the pinned name `dev`), prints the provenance's summary on stderr and the
set's convention on stdout (for scripts: `--convention "$(...)"`).
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections import defaultdict
from pathlib import Path

from harness.core.canonical_json import json_file_text
from harness.data.conventions import default_convention
from harness.data.dataset import COLUMNS, DatasetError, resolve

PROVENANCE_SUFFIX = ".provenance.json"  # beside the set's CSV: where each row comes from (not a run manifest)


class RehearsalSetError(ValueError):
    """The source file cannot give the requested set."""


def build_rehearsal_set(source: str | os.PathLike, out_csv: str | os.PathLike, per_calculator: int) -> dict:
    """Write the set CSV and its provenance, `<out_csv>.provenance.json`; return the provenance."""
    source, out_csv = Path(source), Path(out_csv)
    if per_calculator < 1:
        raise RehearsalSetError(f"per_calculator must be >= 1, got {per_calculator}")
    with open(source, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise RehearsalSetError(f"{source}: not in the benchmark schema, missing column(s) {', '.join(missing)}")
        rows = list(reader)
    by_calc: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        by_calc[int(row["Calculator ID"])].append(row)
    out_rows: list[dict[str, str]] = []
    provenance: list[dict[str, int | bool]] = []
    for calc_id in sorted(by_calc):
        src = by_calc[calc_id]
        for k in range(per_calculator):
            row = dict(src[k % len(src)])
            new_number = len(out_rows) + 1
            provenance.append(
                {
                    "row_number": new_number,
                    "calculator_id": calc_id,
                    "source_row_number": int(row["Row Number"]),
                    "reused": k >= len(src),
                }
            )
            row["Row Number"] = str(new_number)
            out_rows.append(row)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_csv.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS), extrasaction="ignore")
        w.writeheader()
        w.writerows(out_rows)
    os.replace(tmp, out_csv)
    short = {c: len(v) for c, v in by_calc.items() if len(v) < per_calculator}
    source_sha = hashlib.sha256(source.read_bytes()).hexdigest()
    convention = default_convention(source_sha)
    provenance_doc = {
        "kind": "rehearsal case set",
        "synthetic": True,
        "note": (
            "built from MedCalc-Bench dev rows for pipeline rehearsals only; rows are copied unchanged "
            "except Row Number, which is fresh (so are the case ids); calculators with fewer dev rows "
            "than per_calculator reuse their rows"
        ),
        "source": str(source),
        "source_sha256": source_sha,
        "convention": convention.name,
        "convention_reason": f"the source's: {convention.reason}",
        "csv": out_csv.name,
        "csv_sha256": hashlib.sha256(out_csv.read_bytes()).hexdigest(),
        "per_calculator": per_calculator,
        "calculators": len(by_calc),
        "n_cases": len(out_rows),
        "reused_rows": sum(p["reused"] for p in provenance),
        "calculators_with_reuse": {
            str(c): {"dev_rows": n, "reused": per_calculator - n} for c, n in sorted(short.items())
        },
        "rows": provenance,
    }
    Path(str(out_csv) + PROVENANCE_SUFFIX).write_text(
        json_file_text(provenance_doc, indent=1, sort_keys=False), encoding="utf-8"
    )
    return provenance_doc


def dev_rows_csv() -> Path:
    """The MedCalc-Bench v1.0 dev rows the set is built from (the pinned name `dev`, $MEDCALC_SHARED_DIR)."""
    try:
        return resolve("dev")[1]
    except DatasetError as exc:
        raise FileNotFoundError(f"the rehearsal set is built from the dev rows: {exc}") from None
