# Sourced by the run scripts (demo.sh, bench/formula_versions_demo.sh, bench/rehearse_router.sh): strict mode, the
# repository root as the working directory, and their one option, --out DIR.
#   source scripts/lib/run-common.sh; parse_out_option DEFAULT "$@"    # sets ROOT and OUT
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

parse_out_option() {
  OUT="$1"; shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) [ $# -ge 2 ] || { echo "usage: $0 [--out DIR]" >&2; exit 2; }; OUT="$2"; shift 2 ;;
      --out=*) OUT="${1#--out=}"; shift ;;
      *) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
    esac
  done
}

# The CPU model server (scripts/model-server.sh) for one script run, on $MODEL_SERVER_PORT with its state in
# $MODEL_SERVER_STATE: fetched and verified, started, described into OUT/server.json, and stopped on exit
# whatever happens (its log copied to OUT/model-server.log). stop_model_server stops it earlier.
stop_model_server() {
  scripts/model-server.sh stop >/dev/null 2>&1 || true
  cp "$MODEL_SERVER_STATE/server-$MODEL_SERVER_PORT.log" "$OUT/model-server.log" 2>/dev/null || true
  rm -rf "$MODEL_SERVER_STATE"
  trap - EXIT INT TERM
}

# MODEL_ID names the model (harness/model/cpu_models.json); the launcher's description goes to OUT/server.json.
start_model_server() {
  scripts/fetch-model.sh --model "$MODEL_ID"
  trap stop_model_server EXIT INT TERM
  MODEL_SERVER_INFO="$OUT/server.json" scripts/model-server.sh start
}
