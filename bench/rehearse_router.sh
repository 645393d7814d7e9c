#!/usr/bin/env bash
# The router arms at full size against the rehearsal server (a scripted FAKE model server: every
# record it feeds is synthetic and `harness verify` / `harness merge` refuse to mix it with real ones).
#
#   cases   the 1,100-case rehearsal set (55 calculators x 20 dev rows, rows reused with fresh case ids
#           where a calculator has fewer than 20; harness/data/rehearsal_set.py), under the
#           unit convention of the rows it copies (medcalc-v1.0 for the v1.0 dev rows; its manifest says so)
#   arms    routed-gold, routed-blind and what table s20 compares them with: program-solve, blind, gold-lib
#   run     `harness reproduce --launcher rehearsal`: the kit's launcher starts the rehearsal server for
#           model rehearsal-alpha (the set as its answer key), runs the arms with the container executor at
#           concurrency 64 (make reproduce's max_num_seqs), stops it, then writes stats, tables (s20 router
#           summary, s21 risk-coverage), figures, report and checksums; wall times in OUT/timings.json
#
# Usage: bench/rehearse_router.sh [--out DIR]     (default runs/router-rehearsal), or make bench-router
# Env:   SEEDS (42), PER_CALCULATOR (20), CONCURRENCY (64), EXECUTOR_BACKEND (container), DRAWS (2000)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/run-common.sh"
parse_out_option "runs/router-rehearsal" "$@"
PER_CALC="${PER_CALCULATOR:-20}"
PY="$ROOT/.venv/bin/python"
mkdir -p "$OUT"
CASES="$OUT/rehearsal-cases.csv"
CONVENTION=$("$ROOT/.venv/bin/harness" data rehearsal-set "$CASES" --per-calculator "$PER_CALC")

t0=$(date +%s.%N)
"$ROOT/.venv/bin/harness" reproduce --launcher rehearsal --models rehearsal-alpha \
  --arms routed-gold,routed-blind,program-solve,blind,gold-lib --dataset "$CASES" --convention "$CONVENTION" \
  --seeds "${SEEDS:-42}" --executor-backend "${EXECUTOR_BACKEND:-container}" --concurrency "${CONCURRENCY:-64}" \
  --timeout 10 --draws "${DRAWS:-2000}" --no-progress --out "$OUT/results"
t1=$(date +%s.%N)
"$PY" - "$OUT" "$t0" "$t1" <<'PYT'
import json, sys
from pathlib import Path
from harness.run.store import iter_result_files, read_result_file
out, t0, t1 = sys.argv[1], *map(float, sys.argv[2:])
records = sum(1 for path in iter_result_files(Path(out, "results")) for _ in read_result_file(path))
timing = {"reproduce_s": round(t1 - t0, 1), "records": records,
          "note": "reproduce end to end: server start, run, stop, stats, tables, figures, report, checksums"}
Path(out, "timings.json").write_text(json.dumps(timing, indent=1) + "\n")
print(json.dumps(timing))
PYT
echo "router rehearsal: tables s20/s21 in $OUT/results/tables, figure in $OUT/results/figures"
