#!/usr/bin/env bash
# CPU demo: a real model (Qwen2.5-Coder-0.5B-Instruct GGUF, llama-cpp-python on 127.0.0.1) runs the
# paper's main arms end to end on the bundled slice, then writes per-case results and a summary.
#
#   Gold-Solve library   every row of the bundled slice (no model)
#   Open-book arithmetic, Program-Solve, Blind Program-Solve
#                        DEMO_CASES (default 8) bundled rows, seed 42, picked by `harness run --spread`:
#                        the shortest note of each calculator, calculators round-robin over the
#                        categories (dosage, physical, date, lab, diagnosis, severity, risk), so 8
#                        cases are 8 calculators from all 7 categories (harness/run/case_selection.py)
#
# Usage: scripts/demo.sh [--out DIR]          (default results/cpu-demo)
# Env:   DEMO_CASES (8), DEMO_SEEDS (42), DEMO_PORT (8090), EXECUTOR_BACKEND (auto: the container
#        executor where docker+runsc work, else the process backend; recorded in the manifest).
# The server is stopped on exit, whatever happens. Rerunning resumes (done rows are skipped).
source "$(dirname "${BASH_SOURCE[0]}")/lib/run-common.sh"
parse_out_option "results/cpu-demo" "$@"
CASES="${DEMO_CASES:-8}"
SEEDS="${DEMO_SEEDS:-42}"
export MODEL_SERVER_PORT="${DEMO_PORT:-8090}"
export MODEL_SERVER_STATE="$(mktemp -d)"
BACKEND="${EXECUTOR_BACKEND:-auto}"
HARNESS="$ROOT/.venv/bin/harness"
BASE_URL="http://127.0.0.1:$MODEL_SERVER_PORT/v1"
start=$(date +%s)

mkdir -p "$OUT"
start_model_server

echo "== Gold-Solve library on the bundled slice (no model)"
"$HARNESS" run --arm gold-lib --dataset bundled-test --seeds "$SEEDS" --out "$OUT" --no-progress

echo "== Open-book arithmetic, Program-Solve, Blind Program-Solve: $CASES cases (one per calculator, spread over categories), seeds $SEEDS"
"$HARNESS" run --arm open-book --arm program-solve --arm blind --dataset bundled-test --spread --limit "$CASES" \
  --seeds "$SEEDS" --base-url "$BASE_URL" --server-profile llama.cpp --executor-backend "$BACKEND" --out "$OUT" \
  --server-info "$OUT/server.json"

stop_model_server
wall=$(( $(date +%s) - start ))

# One paragraph that says what these figures are and are not; summary.md and the report start with it.
cat > "$OUT/about.md" <<ABOUT
What this is: a smoke run of the kit's real pipeline on a laptop-class CPU. A 0.5B model
(Qwen2.5-Coder-0.5B-Instruct, GGUF, llama-cpp-python) answers $CASES cases of the bundled 110-row slice,
one case from each of $CASES calculators spread over the benchmark's categories (the shortest note of each;
rule in harness/run/case_selection.py), at one seed ($SEEDS), through Open-book arithmetic, Program-Solve and
Blind Program-Solve; the Gold-Solve library (no model) answers all 110 rows. What this is not: the
paper's results. The paper runs Qwen2.5-7B/32B (and Mistral-7B, Phi-3.5-mini) on all 1,100 test cases at
five seeds on an H100 (make reproduce); a 0.5B model on a handful of cases says whether the kit works,
not how well the method works, and its accuracy is expected to be low.
ABOUT
"$HARNESS" score --results "$OUT" --markdown "$OUT/summary.body.md" >/dev/null
{ cat "$OUT/about.md"; echo; cat "$OUT/summary.body.md"; } > "$OUT/summary.md"
rm -f "$OUT/summary.body.md"
{
  echo
  echo "Demo wall time: ${wall} s on $(nproc) cores ($(date -u +%Y-%m-%dT%H:%M:%SZ)); executor backend requested: $BACKEND."
  echo "Model: Qwen2.5-Coder-0.5B-Instruct GGUF via llama-cpp-python (see server.json); greedy, repeat_penalty 1.0."
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
echo "per-case results: $OUT/<model>/<arm>/seed<seed>.jsonl; manifests: $OUT/manifest-*.json"
