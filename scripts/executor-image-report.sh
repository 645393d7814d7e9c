#!/usr/bin/env bash
# `make executor-image-report`: review report of the executor image (see scripts/executor_image_report.py):
# image digest, packages with versions, file list hash, seccomp profile, exact docker run flags.
# Writes runs/bench/executor-image-report.json and prints it, and the CycloneDX SBOM of the image to
# runs/bench/executor-sbom.cdx.json (scripts/executor_sbom.py; schema-validated). Extra arguments go to
# the report script (e.g. --files for the full file list, --image TAG).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PY:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
mkdir -p "$REPO/runs/bench"
"$PY" "$REPO/scripts/executor_image_report.py" --out "$REPO/runs/bench/executor-image-report.json" "$@"
cat "$REPO/runs/bench/executor-image-report.json"
image_args=()
for ((i = 1; i <= $#; i++)); do
    if [ "${!i}" = --image ]; then j=$((i + 1)); image_args=(--image "${!j}"); fi
done
"$PY" "$REPO/scripts/executor_sbom.py" --out "$REPO/runs/bench/executor-sbom.cdx.json" "${image_args[@]}"
