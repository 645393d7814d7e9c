#!/usr/bin/env python3
"""Compare two rehearsal result trees by record content, ignoring the fields that measure time or transport
(harness.reproduce.rehearsal.compare's VOLATILE_FIELDS / EXECUTOR_VOLATILE, clock outcomes folded) and
`dataset_path` (each rehearsal writes its case CSV under its own --out).

    python scripts/compare_rehearsal_records.py OUT_A OUT_B     (two `make rehearse OUT=...` directories)
"""
import json, sys
from pathlib import Path
from harness.reproduce.rehearsal import compare as C
def canon(side):
    out = {}
    for p in sorted(Path(side, 'results').rglob('*.jsonl')):
        for ln in open(p):
            if ln.strip():
                r = json.loads(ln)
                r.pop('dataset_path', None)
                out[r['key']] = C.canonical_record(r)
    return out
a, b = canon(sys.argv[1]), canon(sys.argv[2])
same = sum(1 for k in a if k in b and a[k] == b[k])
diff = [k for k in a if k in b and a[k] != b[k]]
print(f"{len(a)} vs {len(b)} records; identical by content: {same}; differing: {len([k for k in a if k in b and a[k] != b[k]])}; only one side: {len(set(a) ^ set(b))}")
sys.exit(0 if not diff and set(a) == set(b) else 1)
