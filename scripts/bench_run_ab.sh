#!/usr/bin/env bash
# A/B of `harness run` between two checkouts of the kit on one workload: the 1,100-case rehearsal set, arms
# note-only, open-book, extract-lib-recalled, program-solve, blind, seeds 42-46, container executor,
# concurrency 64, against a fresh rehearsal server per side (a scripted FAKE; synthetic records) with
# make rehearse's fault rates. Writes OUT/ab.json: per-arm wall spans, requests/s per kind, injected faults,
# and whether the two sides' records are identical by content (harness/reproduce/rehearsal/compare.py).
#
# Usage: scripts/bench_run_ab.sh CHECKOUT_A CHECKOUT_B OUT      (each checkout with its own .venv: make setup)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 CHECKOUT_A CHECKOUT_B OUT" >&2; exit 2; }
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); mkdir -p "$3"; OUT=$(cd "$3" && pwd)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv/bin/python"
"$PY" -c "
from harness.reproduce.rehearsal.rehearsal_set import build_rehearsal_set
from harness.reproduce.rehearsal.pipeline import _dev_csv
build_rehearsal_set(_dev_csv(), '$OUT/cases.csv', 20)"
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for side in a b; do
  checkout=$([ $side = a ] && echo "$A" || echo "$B")
  rm -rf "$OUT/out-$side" "$OUT/faults-$side.jsonl"
  "$ROOT/.venv/bin/harness" serve rehearsal --port "$PORT" --seed 20261123 --model rehearsal-alpha \
    --answer-key "$OUT/cases.csv" --fault-5xx 0.002 --fault-slow 0.0003 --fault-drop 0.001 --slow-s 15 \
    --fault-log "$OUT/faults-$side.jsonl" > "$OUT/server-$side.log" 2>&1 &
  SERVER=$!
  "$PY" -m harness.model.serving wait --base-url "http://127.0.0.1:$PORT/v1" --model rehearsal-alpha --timeout 60
  start=$(date +%s.%N)
  "$checkout/.venv/bin/harness" run --arm note-only --arm open-book --arm extract-lib-recalled --arm program-solve \
    --arm blind --dataset "$OUT/cases.csv" --seeds 42-46 --base-url "http://127.0.0.1:$PORT/v1" \
    --model rehearsal-alpha --server-profile vllm --out "$OUT/out-$side" --no-cache --no-progress --concurrency 64 \
    --executor-backend container --timeout 10 --convention medcalc-v1.0 > "$OUT/log-$side" 2>&1
  end=$(date +%s.%N)
  kill $SERVER; wait $SERVER || true
  echo "$side ($checkout @ $(git -C "$checkout" rev-parse --short HEAD)): wall $(echo "$end - $start" | bc) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
"$PY" - "$OUT" "$A" "$B" <<'PY'
import datetime as dt, json, subprocess, sys
from pathlib import Path
from harness.arms.registry import ARMS
from harness.reproduce.rehearsal.compare import content_checksums
from harness.run.store import iter_result_files, read_result_file
out = Path(sys.argv[1])
res = {}
for side, checkout in (("a", sys.argv[2]), ("b", sys.argv[3])):
    d = out / f"out-{side}"
    (m,) = [json.loads(p.read_text()) for p in d.glob("manifest-*.json")]
    spans = {}
    for s in m["summaries"]:
        if s.get("started_at"):        # a unit's slot span; units of one arm may overlap
            a, b = (dt.datetime.fromisoformat(s[k]).timestamp() for k in ("started_at", "finished_at"))
            lo, hi = spans.get(s["arm"], (a, b))
            spans[s["arm"]] = (min(lo, a), max(hi, b))
        else:                          # a kit whose units carry no times ran them one after another
            spans[s["arm"]] = (0.0, spans.get(s["arm"], (0.0, 0.0))[1] + s["wall_s"])
    req = {}
    for path in iter_result_files(d):
        for r in read_result_file(path):
            req[r["arm"]] = req.get(r["arm"], 0) + len(r.get("request") or [])
    kinds = {"program": [0, 0.0], "other": [0, 0.0]}
    for arm, (lo, hi) in spans.items():
        k = "program" if ARMS[arm].needs_executor else "other"
        kinds[k][0] += req.get(arm, 0)
        kinds[k][1] += hi - lo
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    res[side] = {"checkout": checkout, "commit": commit, "arm_wall_s": {a: round(hi - lo, 2) for a, (lo, hi) in spans.items()},
                 "requests": req, **{f"{k}_requests_per_s": round(n / w, 1) for k, (n, w) in kinds.items()},
                 "faults_injected": sum(1 for _ in open(out / f"faults-{side}.jsonl"))}
res["records_identical"] = content_checksums(out / "out-a") == content_checksums(out / "out-b")
(out / "ab.json").write_text(json.dumps(res, indent=1) + "\n")
print(json.dumps(res, indent=1))
PY
