#!/usr/bin/env bash
# The router arms at full size against the rehearsal server (a scripted FAKE model server: every
# record it feeds is synthetic and `harness verify` / `harness merge` refuse to mix it with real ones).
#
#   cases   the 1,100-case rehearsal set (55 calculators x 20 dev rows, rows reused with fresh case ids
#           where a calculator has fewer than 20; harness/reproduce/rehearsal/rehearsal_set.py)
#   arms    routed-gold, routed-blind and what table s20 compares them with: program-solve, blind, gold-lib
#   model   rehearsal-alpha; the container executor; concurrency 64 (make reproduce's max_num_seqs)
#   then    tables (s20 router summary, s21 risk-coverage) and the figures; wall times in OUT/timings.json
#
# Usage: scripts/rehearse-router.sh [--out DIR]     (default runs/router-rehearsal)
# Env:   SEEDS (42), PER_CALCULATOR (20), CONCURRENCY (64), EXECUTOR_BACKEND (container), DRAWS (2000)
source "$(dirname "${BASH_SOURCE[0]}")/lib/run-common.sh"
parse_out_option "runs/router-rehearsal" "$@"
SEEDS="${SEEDS:-42}"
PER_CALC="${PER_CALCULATOR:-20}"
CONCURRENCY="${CONCURRENCY:-64}"
BACKEND="${EXECUTOR_BACKEND:-container}"
DRAWS="${DRAWS:-2000}"
HARNESS="$ROOT/.venv/bin/harness"
PY="$ROOT/.venv/bin/python"
mkdir -p "$OUT"
CASES="$OUT/rehearsal-cases.csv"
"$PY" - "$CASES" "$PER_CALC" <<'PYSET'
import json, sys
from harness.reproduce.rehearsal.pipeline import _dev_csv
from harness.reproduce.rehearsal.rehearsal_set import build_rehearsal_set
info = build_rehearsal_set(_dev_csv(), sys.argv[1], int(sys.argv[2]))
print(json.dumps({k: info[k] for k in ("n_cases", "reused_rows", "source_sha256", "csv_sha256")}))
PYSET

PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$HARNESS" serve rehearsal --port "$PORT" --seed 7 --model rehearsal-alpha --answer-key "$CASES" \
  > "$OUT/rehearsal-server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
  sleep 0.2
done

t0=$(date +%s.%N)
"$HARNESS" run --arm routed-gold --arm routed-blind --arm program-solve --arm blind --arm gold-lib \
  --dataset "$CASES" --seeds "$SEEDS" --base-url "http://127.0.0.1:$PORT/v1" --model rehearsal-alpha \
  --server-profile vllm --executor-backend "$BACKEND" --concurrency "$CONCURRENCY" --timeout 10 \
  --no-cache --no-progress --out "$OUT/results"
t1=$(date +%s.%N)
kill $SERVER 2>/dev/null || true
trap - EXIT INT TERM
"$HARNESS" tables --results "$OUT/results" --out "$OUT/results/tables" --draws "$DRAWS"
t2=$(date +%s.%N)
"$HARNESS" figures --results "$OUT/results" --out "$OUT/results/figures" --draws "$DRAWS"
t3=$(date +%s.%N)
"$PY" - "$OUT" "$t0" "$t1" "$t2" "$t3" <<'PYT'
import json, sys
from pathlib import Path
out, t0, t1, t2, t3 = sys.argv[1], *map(float, sys.argv[2:])
records = sum(1 for p in Path(out, "results").glob("*/*/seed*.jsonl") for _ in p.open())
timing = {"run_s": round(t1 - t0, 1), "tables_s": round(t2 - t1, 1), "figures_s": round(t3 - t2, 1),
          "records": records}
Path(out, "timings.json").write_text(json.dumps(timing, indent=1) + "\n")
print(json.dumps(timing))
PYT
echo "router rehearsal: tables s20/s21 in $OUT/results/tables, figure in $OUT/results/figures"
