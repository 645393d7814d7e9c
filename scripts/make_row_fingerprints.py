#!/usr/bin/env python3
"""Write harness/data/row_fingerprints.json: the per-row fingerprints of the known benchmark rows
(harness/data/row_fingerprints.py says what a fingerprint is; no row text is written).

Sets: every row of MedCalc-Bench v1.0 dataset/test_data.csv (ncbi-nlp/MedCalc-Bench at commit 5523b77, sha256
pinned below; unit convention medcalc-v1.0) and the bundled Verified one-shot split (convention exact).

Usage: .venv/bin/python scripts/make_row_fingerprints.py --v1 PATH/TO/test_data.csv [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.core.canonical_json import json_file_text
from harness.core.hashing import file_sha256
from harness.data.dataset import load_dataset
from harness.data.dev_split import V1_TEST_DATA_SHA256
from harness.data.row_fingerprints import FINGERPRINTS_FILE, fingerprints_of


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--v1", type=Path, required=True, help="MedCalc-Bench v1.0 dataset/test_data.csv")
    ap.add_argument("--out", type=Path, default=FINGERPRINTS_FILE)
    args = ap.parse_args(argv)
    if file_sha256(args.v1) != V1_TEST_DATA_SHA256:
        print(f"error: {args.v1}: sha256 is not the pinned v1.0 test_data.csv {V1_TEST_DATA_SHA256}", file=sys.stderr)
        return 1
    v1, one_shot = load_dataset(args.v1), load_dataset("one-shot")
    sets = [
        {
            "label": f"MedCalc-Bench v1.0 test split ({len(v1)} rows)",
            "convention": "medcalc-v1.0",
            "source": f"ncbi-nlp/MedCalc-Bench dataset/test_data.csv at 5523b77 (sha256 {V1_TEST_DATA_SHA256})",
            "rows": len(v1),
            "fingerprints": sorted(set(fingerprints_of(v1))),
        },
        {
            "label": f"MedCalc-Bench Verified one-shot split ({len(one_shot)} rows)",
            "convention": "exact",
            "source": f"nikhilk7153/MedCalc-Bench-Verified datasets/one_shot_data.csv at 0eb5960 (sha256 {one_shot.sha256})",
            "rows": len(one_shot),
            "fingerprints": sorted(set(fingerprints_of(one_shot))),
        },
    ]
    data = {
        "schema": 1,
        "about": "per-row fingerprints of the known MedCalc-Bench rows (harness/data/row_fingerprints.py); "
        "written by scripts/make_row_fingerprints.py; no row text",
        "sets": sets,
    }
    args.out.write_text(json_file_text(data, indent=1, sort_keys=False), encoding="utf-8")
    print(f"wrote {args.out}: " + ", ".join(f"{s['label']}: {len(s['fingerprints'])} fingerprints" for s in sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
