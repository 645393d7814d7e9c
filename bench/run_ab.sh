#!/usr/bin/env bash
# A/B of `harness run` between two checkouts of the kit on one workload: the 1,100-case rehearsal set, arms
# note-only, open-book, extract-lib-recalled, program-solve, blind, seeds 42-46, container executor,
# concurrency 64, against a fresh rehearsal server per side (a scripted FAKE; synthetic records) with
# make rehearse's fault rates. Writes OUT/ab.json: per-arm wall spans, requests/s per kind, injected faults,
# and whether the two sides' records are identical by content (bench/compare.py).
#
# Usage: bench/run_ab.sh CHECKOUT_A CHECKOUT_B OUT      (each checkout with its own .venv: make setup)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
[ $# -eq 3 ] || { echo "usage: $0 CHECKOUT_A CHECKOUT_B OUT" >&2; exit 2; }
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); mkdir -p "$3"; OUT=$(cd "$3" && pwd)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv/bin/python"
CONVENTION=$("$ROOT/.venv/bin/harness" data rehearsal-set "$OUT/cases.csv" --per-calculator 20)
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for side in a b; do
  checkout=$([ $side = a ] && echo "$A" || echo "$B")
  rm -rf "$OUT/out-$side" "$OUT/faults-$side.jsonl"
  "$ROOT/.venv/bin/harness" serve rehearsal --port "$PORT" --seed 20261123 --model rehearsal-alpha \
    --answer-key "$OUT/cases.csv" --fault-5xx 0.002 --fault-slow 0.0003 --fault-drop 0.001 --slow-s 15 \
    --fault-log "$OUT/faults-$side.jsonl" > "$OUT/server-$side.log" 2>&1 &
  SERVER=$!
  "$ROOT/.venv/bin/harness" serve wait --base-url "http://127.0.0.1:$PORT/v1" --model rehearsal-alpha --timeout 60
  start=$(date +%s.%N)
  "$checkout/.venv/bin/harness" run --arm note-only --arm open-book --arm extract-lib-recalled --arm program-solve \
    --arm blind --dataset "$OUT/cases.csv" --seeds 42-46 --base-url "http://127.0.0.1:$PORT/v1" \
    --model rehearsal-alpha --server-profile vllm --out "$OUT/out-$side" --no-cache --no-progress --concurrency 64 \
    --executor-backend container --timeout 10 --convention "$CONVENTION" > "$OUT/log-$side" 2>&1
  end=$(date +%s.%N)
  kill $SERVER; wait $SERVER || true
  echo "$side ($checkout @ $(git -C "$checkout" rev-parse --short HEAD)): wall $(echo "$end - $start" | bc) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
cd "$ROOT" && "$PY" - "$OUT" "$A" "$B" <<'PY'
import json, subprocess, sys
from pathlib import Path
from bench.compare import content_checksums
from bench.rehearsal import arm_walls, count_records, request_rates
from harness.run.manifest import read_manifests
out = Path(sys.argv[1])
res = {}
for side, checkout in (("a", sys.argv[2]), ("b", sys.argv[3])):
    d = out / f"out-{side}"
    walls = arm_walls(f.manifest for f in read_manifests(d, kind="run"))
    counts = count_records(d)
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    res[side] = {"checkout": checkout, "commit": commit, "arm_wall_s": {a: round(w, 2) for a, w in walls.items()},
                 "requests": {a: v["requests"] for a, v in counts["by_arm"].items()}, **request_rates(counts, walls),
                 "faults_injected": sum(1 for _ in open(out / f"faults-{side}.jsonl"))}
res["records_identical"] = content_checksums(out / "out-a") == content_checksums(out / "out-b")
(out / "ab.json").write_text(json.dumps(res, indent=1) + "\n")
print(json.dumps(res, indent=1))
PY
