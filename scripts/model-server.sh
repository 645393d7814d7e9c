#!/usr/bin/env bash
# Start / stop / check the CPU model server (llama.cpp's OpenAI-compatible server via xllamacpp,
# scripts/cpu_model_server.py) on 127.0.0.1. The command is built by harness.model.llama_cpp.LlamaCppLauncher,
# the same code the tests and `harness serve` use.
#
# Usage: scripts/model-server.sh start|stop|status|restart
#   start   assemble the GGUF if missing (scripts/fetch-model.sh), start the server in the background,
#           wait until /v1/models lists the model; prints the base URL.
#   stop    stop the server started by `start` (by its pid file only).
#   status  exit 0 if the server answers /v1/models with the model listed.
# Env: MODEL_SERVER_PORT (8088), MODEL_SERVER_CTX (8192), MODEL_SERVER_THREADS (cores),
#      MODEL_SERVER_PARALLEL (1: llama.cpp slots decoded together),
#      MODEL_ID (the tests' model, qwen2.5-coder-0.5b-instruct; any id of harness/model/cpu_models.json),
#      MODEL_GGUF (default: models/<that model's file>),
#      MODEL_SERVER_STATE (dir for pid and log; default /tmp/mathsolver-model-server-$UID),
#      MODEL_SERVER_INFO (start: write the launcher's description, the run manifest's `server`, to this file).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${MODEL_SERVER_PORT:-8088}"
CTX="${MODEL_SERVER_CTX:-8192}"
THREADS="${MODEL_SERVER_THREADS:-$(nproc)}"
PARALLEL="${MODEL_SERVER_PARALLEL:-1}"
MODEL_ID="${MODEL_ID:-qwen2.5-coder-0.5b-instruct}"
STATE="${MODEL_SERVER_STATE:-${TMPDIR:-/tmp}/mathsolver-model-server-$(id -u)}"
PIDFILE="$STATE/server-$PORT.pid"
LOG="$STATE/server-$PORT.log"
SERVER_PY="$ROOT/.venv-server/bin/python"
BASE_URL="http://127.0.0.1:$PORT/v1"

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

case "${1:-}" in
  start)
    if running; then echo "model-server: already running (pid $(cat "$PIDFILE")) at $BASE_URL"; exit 0; fi
    [ -x "$SERVER_PY" ] || { echo "model-server: $SERVER_PY missing; run make server-venv (makes .venv-server)" >&2; exit 1; }
    GGUF="${MODEL_GGUF:-$("$ROOT/.venv/bin/harness" cpu-model path --model "$MODEL_ID")}"
    [ -f "$GGUF" ] || "$ROOT/scripts/fetch-model.sh" --model "$MODEL_ID" "$GGUF"
    mkdir -p "$STATE"
    echo "model-server: starting $MODEL_ID on $BASE_URL (loading the model takes about 5-30 s)"
    "$ROOT/.venv/bin/harness" serve start --base-url "$BASE_URL" --model "$MODEL_ID" --gguf "$GGUF" \
      --n-ctx "$CTX" --threads "$THREADS" --parallel "$PARALLEL" --log "$LOG" --pidfile "$PIDFILE" \
      --timeout "${MODEL_SERVER_TIMEOUT:-300}" ${MODEL_SERVER_INFO:+--server-info "$MODEL_SERVER_INFO"} >/dev/null
    echo "$BASE_URL"
    ;;
  stop)
    if running; then
      pid="$(cat "$PIDFILE")"
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; }
      echo "model-server: stopped pid $pid"
    else
      echo "model-server: not running"
    fi
    rm -f "$PIDFILE"
    ;;
  status)
    "$ROOT/.venv/bin/harness" serve wait --base-url "$BASE_URL" --model "$MODEL_ID" --timeout 2 >/dev/null || exit 1
    ;;
  restart) "$0" stop; "$0" start ;;
  *) echo "usage: $0 start|stop|status|restart" >&2; exit 2 ;;
esac
