#!/usr/bin/env bash
# `make vllm-image-report`: the review report of the kit's vLLM serving image (scripts/vllm_sbom.py --report): the
# image (tag, id, rootfs sha256, labels), the wheel and deb locks it was built from, whether it is the recorded build,
# and its CycloneDX SBOM (Debian packages with the .debs' sha256, every wheel with the lock's hashes and its licence,
# vLLM/torch/CUDA versions). Writes runs/bench/vllm-sbom.cdx.json and runs/bench/vllm-image-report.json and prints
# the report. Arguments go to scripts/vllm_sbom.py (e.g. --image TAG).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PY:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
mkdir -p "$REPO/runs/bench"
"$PY" "$REPO/scripts/vllm_sbom.py" --out "$REPO/runs/bench/vllm-sbom.cdx.json" \
    --report "$REPO/runs/bench/vllm-image-report.json" "$@"
cat "$REPO/runs/bench/vllm-image-report.json"
