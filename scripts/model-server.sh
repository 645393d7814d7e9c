#!/usr/bin/env bash
# Start / stop / check the CPU model server (llama-cpp-python, OpenAI-compatible) on 127.0.0.1.
#
# Usage: scripts/model-server.sh start|stop|status|restart
#   start   assemble the GGUF if missing (scripts/fetch-model.sh), start the server in the background,
#           wait until /v1/models lists the model; prints the base URL.
#   stop    stop the server started by `start` (by its pid file only).
#   status  exit 0 if the server answers /v1/models with the model listed.
# Env: MODEL_SERVER_PORT (8088), MODEL_SERVER_CTX (8192), MODEL_SERVER_THREADS (cores),
#      MODEL_GGUF (models/qwen2.5-coder-0.5b-instruct.gguf), MODEL_ID (qwen2.5-coder-0.5b-instruct),
#      MODEL_SERVER_STATE (dir for pid and log; default /tmp/mathsolver-model-server-$UID).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${MODEL_SERVER_PORT:-8088}"
CTX="${MODEL_SERVER_CTX:-8192}"
THREADS="${MODEL_SERVER_THREADS:-$(nproc)}"
GGUF="${MODEL_GGUF:-$ROOT/models/qwen2.5-coder-0.5b-instruct.gguf}"
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
    [ -x "$SERVER_PY" ] || { echo "model-server: $SERVER_PY missing; run make setup (builds .venv-server)" >&2; exit 1; }
    [ -f "$GGUF" ] || "$ROOT/scripts/fetch-model.sh" "$GGUF"
    mkdir -p "$STATE"
    # The GGUF's own chat template is used (no --chat_format): the same template vLLM applies.
    setsid "$SERVER_PY" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL_ID" \
      --host 127.0.0.1 --port "$PORT" --n_ctx "$CTX" --n_threads "$THREADS" \
      >>"$LOG" 2>&1 </dev/null &
    echo $! > "$PIDFILE"
    if ! "$ROOT/.venv/bin/harness" serve wait --base-url "$BASE_URL" --model "$MODEL_ID" --timeout "${MODEL_SERVER_TIMEOUT:-300}"; then
      echo "model-server: not ready; last log lines:" >&2; tail -20 "$LOG" >&2
      "$0" stop || true
      exit 1
    fi
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
