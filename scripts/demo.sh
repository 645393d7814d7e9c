#!/usr/bin/env bash
# CPU demo: a real model (by default Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, served by llama.cpp on
# 127.0.0.1) runs the paper's main arms end to end on the bundled slice, then writes per-case results and a
# summary whose opening paragraph (about.md) is written from this run's own records.
#
#   Gold-Solve library   every row of the bundled slice (no model)
#   Open-book arithmetic, Program-Solve, Blind Program-Solve
#                        DEMO_CASES (default 8) bundled rows, seed 42, picked by `harness run --spread`:
#                        the shortest note of each calculator, calculators round-robin over the
#                        categories (dosage, physical, date, lab, diagnosis, severity, risk), so 8
#                        cases are 8 calculators from all 7 categories (harness/run/case_selection.py)
#
# Usage: scripts/demo.sh [--out DIR]          (default results/cpu-demo)
# Env:   DEMO_MODEL (the `demo` role of harness/model/cpu_models.json; the tests use the `test` role's
#        0.5B model for speed), DEMO_CASES (8), DEMO_SEEDS (42), DEMO_PORT (8090),
#        DEMO_PARALLEL (llama.cpp server slots: requests decoded together, and cases in flight; default the
#        model's measured slot count, `harness cpu-model slots`, 1 until make bench-demo-slots has measured it;
#        each slot gets the 8192-token context of the committed demo's one slot),
#        EXECUTOR_BACKEND (auto: the container executor where docker+runsc work, else the process backend;
#        recorded in the manifest).
# The server is stopped on exit, whatever happens. Rerunning resumes (done rows are skipped).
source "$(dirname "${BASH_SOURCE[0]}")/lib/run-common.sh"
parse_out_option "results/cpu-demo" "$@"
CASES="${DEMO_CASES:-8}"
SEEDS="${DEMO_SEEDS:-42}"
export MODEL_ID="${DEMO_MODEL:-$("$ROOT/.venv/bin/harness" cpu-model id --role demo)}"
PARALLEL="${DEMO_PARALLEL:-$("$ROOT/.venv/bin/harness" cpu-model slots --model "$MODEL_ID")}"
export MODEL_SERVER_PORT="${DEMO_PORT:-8090}"
# llama.cpp shares its context among the slots: each keeps the 8192 tokens of one
export MODEL_SERVER_STATE="$(mktemp -d)" MODEL_SERVER_PARALLEL="$PARALLEL" MODEL_SERVER_CTX=$(( 8192 * PARALLEL ))
BACKEND="${EXECUTOR_BACKEND:-auto}"
HARNESS="$ROOT/.venv/bin/harness"
BASE_URL="http://127.0.0.1:$MODEL_SERVER_PORT/v1"
start=$(date +%s)

mkdir -p "$OUT"
start_model_server

echo "== Gold-Solve library on the bundled slice (no model)"
"$HARNESS" run --arms gold-lib --dataset bundled-test --seeds "$SEEDS" --out "$OUT" --no-progress

echo "== Open-book arithmetic, Program-Solve, Blind Program-Solve: $CASES cases (one per calculator, spread over categories), seeds $SEEDS"
"$ROOT/.venv/bin/harness" cpu-model estimate --model "$MODEL_ID" --cases "$CASES" --slots "$PARALLEL"
"$HARNESS" run --arms open-book,program-solve,blind --dataset bundled-test --spread --limit "$CASES" \
  --seeds "$SEEDS" --base-url "$BASE_URL" --server-profile llama.cpp --executor-backend "$BACKEND" --out "$OUT" \
  --concurrency "$PARALLEL" --server-info "$OUT/server.json"

stop_model_server
wall=$(( $(date +%s) - start ))

# The opening paragraph (what was run, what these figures show and what they do not), from this run's records;
# summary.md and the report start with it.
"$ROOT/.venv/bin/harness" about --results "$OUT" > "$OUT/about.md"
"$HARNESS" score --results "$OUT" --markdown "$OUT/summary.body.md" >/dev/null
{ cat "$OUT/about.md"; echo; cat "$OUT/summary.body.md"; } > "$OUT/summary.md"
rm -f "$OUT/summary.body.md"
{
  echo
  echo "Demo wall time: ${wall} s on $(nproc) cores ($(date -u +%Y-%m-%dT%H:%M:%SZ); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)); executor backend requested: $BACKEND."
  echo "Model: $MODEL_ID via llama.cpp's server (xllamacpp; see server.json), $PARALLEL slot(s); greedy, repeat_penalty 1.0."
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
echo "per-case results: $OUT/<model>/<arm>/seed<seed>.jsonl; run manifests: $OUT/manifest-<run id>.json"
