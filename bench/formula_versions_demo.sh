#!/usr/bin/env bash
# Formula versions on the CPU model: what changes on the affected calculators when the current
# guideline replaces the benchmark's formula (issue: formula versions as explicit inputs).
#
#   Gold-Solve library   every dev row of the five versioned calculators, benchmark version and
#                        current-guideline version (no model)
#   Program-Solve        the shortest dev note of each versioned calculator (`harness run --spread`, the
#                        CPU demo's rule: harness/run/case_selection.py), seed 42, once with the
#                        benchmark's formula text and once with the
#                        current guideline's (the real CPU model, Qwen2.5-Coder-0.5B-Instruct GGUF)
#
# Versioned calculators and the versions chosen (harness/calculators/versions.toml; `harness formulas versions`):
#   3  CKD-EPI 2021 -> CKD-EPI 2009 (the benchmark is already the current one; this is the older option)
#   9  MDRD -> CKD-EPI 2021      23 MELD Na -> MELD 3.0      44 Friedewald -> Sampson
#   46 ATP III Framingham -> PREVENT
# A benchmark gold answer exists only for the benchmark's version: rows run at another version are
# also compared with the "library-derived reference" (the library's value from the gold variables),
# kept in its own column of table s22, never mixed with benchmark gold.
#
# Usage: bench/formula_versions_demo.sh [--out DIR]      (default runs/formula-versions), or make formula-versions
# Env:   DEMO_PORT (8091), EXECUTOR_BACKEND (auto), MODEL_ID (default: the 0.5B of harness/model/cpu_models.json's
#        role `test`, as this demo was measured with; the 1.5B demo model is MODEL_ID=qwen2.5-coder-1.5b-instruct)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/run-common.sh"
parse_out_option "runs/formula-versions" "$@"
export MODEL_SERVER_PORT="${DEMO_PORT:-8091}"
export MODEL_SERVER_STATE="$(mktemp -d)"
export MODEL_ID="${MODEL_ID:-$("$ROOT/.venv/bin/harness" cpu-model id --role test)}"
BACKEND="${EXECUTOR_BACKEND:-auto}"
HARNESS="$ROOT/.venv/bin/harness"
PY="$ROOT/.venv/bin/python"
BASE_URL="http://127.0.0.1:$MODEL_SERVER_PORT/v1"
CALCS=(3 9 23 44 46)
CURRENT=(--formula-version 3=ckd-epi-2009 --formula-version 9=ckd-epi-2021 --formula-version 23=meld-3.0
         --formula-version 44=sampson-2020 --formula-version 46=prevent-2023)
start=$(date +%s)
# One configuration per results file: the benchmark's versions and the current guidelines get a root each.
BENCH="$OUT/benchmark-versions"
GUIDE="$OUT/current-guidelines"
mkdir -p "$BENCH" "$GUIDE"

CALC_OPTS=()
for c in "${CALCS[@]}"; do CALC_OPTS+=(--calculator "$c"); done

echo "== Gold-Solve library on every dev row of calculators ${CALCS[*]}: benchmark versions, then current guidelines"
"$HARNESS" run --arm gold-lib --dataset dev "${CALC_OPTS[@]}" --seeds 42 --out "$BENCH" --no-progress
"$HARNESS" run --arm gold-lib --dataset dev "${CALC_OPTS[@]}" "${CURRENT[@]}" --seeds 42 --out "$GUIDE" --no-progress

start_model_server

echo "== Program-Solve on the CPU model, the shortest dev note of each of the ${#CALCS[@]} calculators: benchmark formula text, then current guidelines"
for root in "$BENCH" "$GUIDE"; do
  versions=(); [ "$root" = "$GUIDE" ] && versions=("${CURRENT[@]}")
  "$HARNESS" run --arm program-solve --dataset dev "${CALC_OPTS[@]}" --spread "${versions[@]}" --seeds 42 --base-url "$BASE_URL" \
    --server-profile llama.cpp --executor-backend "$BACKEND" --out "$root" --server-info "$OUT/server.json" --no-progress
done
stop_model_server

for root in "$BENCH" "$GUIDE"; do "$HARNESS" tables --results "$root" --out "$root/tables"; done
echo "formula-versions demo: $(( $(date +%s) - start )) s; table s22 in $GUIDE/tables/s22.md"
