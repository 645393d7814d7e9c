#!/usr/bin/env bash
# `make executor-image-report`: review report of the executor image (see scripts/executor_image_report.py):
# image digest, packages with versions, file list hash, seccomp profile, exact docker run flags, and the summary
# of both images' CycloneDX SBOMs. Writes the executor's SBOM to runs/bench/executor-sbom.cdx.json
# (scripts/executor_sbom.py) and, where the kit's vLLM image is built on this box, the vLLM image's to
# runs/bench/vllm-sbom.cdx.json (scripts/vllm_sbom.py; both schema-validated, one writer: scripts/sbom_writer.py),
# then runs/bench/executor-image-report.json, and prints it. Extra arguments go to the report script (e.g. --files
# for the full file list, --image TAG).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PY:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=$REPO/runs/bench
mkdir -p "$OUT"
image_args=()
for ((i = 1; i <= $#; i++)); do
    if [ "${!i}" = --image ]; then j=$((i + 1)); image_args=(--image "${!j}"); fi
done
"$PY" "$REPO/scripts/executor_sbom.py" --out "$OUT/executor-sbom.cdx.json" "${image_args[@]}"
sboms=(--sbom "$OUT/executor-sbom.cdx.json")
vllm_image=$("$PY" -c 'import json, sys; o = json.load(open(sys.argv[1]))["own"]; print(o["image"] + ":" + o["tag"])' \
    "$REPO/containers/vllm/image.lock.json")
if docker image inspect "$vllm_image" >/dev/null 2>&1; then
    "$PY" "$REPO/scripts/vllm_sbom.py" --image "$vllm_image" --out "$OUT/vllm-sbom.cdx.json" \
        --report "$OUT/vllm-image-report.json"
    sboms+=(--sbom "$OUT/vllm-sbom.cdx.json")
else
    echo "executor-image-report: $vllm_image is not built on this box (make vllm-image): the report has the executor's SBOM only" >&2
fi
"$PY" "$REPO/scripts/executor_image_report.py" --out "$OUT/executor-image-report.json" "${sboms[@]}" "$@"
cat "$OUT/executor-image-report.json"
