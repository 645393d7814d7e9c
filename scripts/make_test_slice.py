#!/usr/bin/env python3
"""Write harness/data/test_slice.csv: the bundled test slice of MedCalc-Bench v1.0.

Selection rule (deterministic): from the shared dev file test_dev_v1.0.csv, keep for every calculator
the two rows with the lowest Row Number (a calculator with one row keeps it). Rows keep the source
file's order, columns and cell text; records are re-serialised with Python's csv module (minimal
quoting, "\\n" line ends), which reproduces the source file byte for byte (checked below), so the slice
is a verbatim subset of the source.

Usage: .venv/bin/python scripts/make_test_slice.py [--source FILE] [--out FILE] [--per-calculator N]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = (
    Path(os.environ.get("MEDCALC_SHARED_DIR", ROOT.parent / "shared" / "data" / "medcalc-bench")) / "test_dev_v1.0.csv"
)
DEFAULT_OUT = ROOT / "harness" / "data" / "test_slice.csv"


def serialise(rows: list[list[str]]) -> bytes:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def select(header: list[str], records: list[list[str]], per_calculator: int) -> list[list[str]]:
    """The `per_calculator` lowest Row Numbers of each Calculator ID, in source order."""
    rn, cid = header.index("Row Number"), header.index("Calculator ID")
    by_calc: dict[int, list[int]] = {}
    for rec in records:
        by_calc.setdefault(int(rec[cid]), []).append(int(rec[rn]))
    keep = {n for nums in by_calc.values() for n in sorted(nums)[:per_calculator]}
    return [rec for rec in records if int(rec[rn]) in keep]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--per-calculator", type=int, default=2)
    args = ap.parse_args(argv)
    raw = args.source.read_bytes()
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    if serialise(rows) != raw:
        print(f"error: {args.source}: csv round trip is not byte-identical; refusing to write a slice", file=sys.stderr)
        return 1
    header, records = rows[0], rows[1:]
    chosen = select(header, records, args.per_calculator)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(serialise([header, *chosen]))
    n_calc = len({r[header.index("Calculator ID")] for r in chosen})
    print(f"wrote {args.out}: {len(chosen)} rows, {n_calc} calculators (from {len(records)} rows of {args.source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
