#!/usr/bin/env bash
# CPU demo: a real model (Qwen2.5-Coder-0.5B-Instruct GGUF, llama-cpp-python on 127.0.0.1) runs the
# paper's main arms end to end on the bundled slice, then writes per-case results and a summary.
#
#   Gold-Solve library   every row of the bundled slice (no model)
#   Open-book arithmetic, Program-Solve, Blind Program-Solve
#                        the DEMO_CASES (default 8) bundled rows with the shortest notes, seed 42
#
# Usage: scripts/demo.sh [--out DIR]          (default results/cpu-demo)
# Env:   DEMO_CASES (8), DEMO_SEEDS (42), DEMO_PORT (8090), EXECUTOR_BACKEND (auto: the container
#        executor where docker+runsc work, else the process backend; recorded in the manifest).
# The server is stopped on exit, whatever happens. Rerunning resumes (done rows are skipped).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="results/cpu-demo"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    *) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
  esac
done
CASES="${DEMO_CASES:-8}"
SEEDS="${DEMO_SEEDS:-42}"
export MODEL_SERVER_PORT="${DEMO_PORT:-8090}"
export MODEL_SERVER_STATE="$(mktemp -d)"
BACKEND="${EXECUTOR_BACKEND:-auto}"
HARNESS="$ROOT/.venv/bin/harness"
BASE_URL="http://127.0.0.1:$MODEL_SERVER_PORT/v1"
start=$(date +%s)

mkdir -p "$OUT"
scripts/fetch-model.sh
cleanup() {
  scripts/model-server.sh stop >/dev/null 2>&1 || true
  cp "$MODEL_SERVER_STATE/server-$MODEL_SERVER_PORT.log" "$OUT/model-server.log" 2>/dev/null || true
  rm -rf "$MODEL_SERVER_STATE"
}
trap cleanup EXIT INT TERM
scripts/model-server.sh start
.venv/bin/python -m harness.model.serving describe --base-url "$BASE_URL" > "$OUT/server.json"

echo "== Gold-Solve library on the bundled slice (no model)"
"$HARNESS" run --arm gold-lib --dataset bundled-test --seeds "$SEEDS" --out "$OUT" --no-progress

echo "== Open-book arithmetic, Program-Solve, Blind Program-Solve: $CASES shortest-note cases, seeds $SEEDS"
"$HARNESS" run --arm open-book --arm program-solve --arm blind --dataset bundled-test --shortest --limit "$CASES" \
  --seeds "$SEEDS" --base-url "$BASE_URL" --server-profile llama.cpp --executor-backend "$BACKEND" --out "$OUT" \
  --server-info "$OUT/server.json"

cleanup
trap - EXIT INT TERM
wall=$(( $(date +%s) - start ))

"$HARNESS" score --results "$OUT" --markdown "$OUT/summary.md" >/dev/null
{
  echo
  echo "Demo wall time: ${wall} s on $(nproc) cores ($(date -u +%Y-%m-%dT%H:%M:%SZ)); executor backend requested: $BACKEND."
  echo "Model: Qwen2.5-Coder-0.5B-Instruct GGUF via llama-cpp-python (see server.json); greedy, repeat_penalty 1.0."
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
echo "per-case results: $OUT/<model>/<arm>/seed<seed>.jsonl; manifests: $OUT/manifest-*.json"
