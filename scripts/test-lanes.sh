#!/usr/bin/env bash
# `make test`: the whole suite, in its lanes (tests/lanes.py). A test's lane follows from the real components its
# fixtures use (tests/conftest.py marks it): `unit` (none) runs under pytest-xdist, one worker per core; `docker`,
# `slurm`, `model` and `vllm` each run in one pytest process (the model and vLLM lanes share their one server).
# The plan says which lanes run at the same time: groups run one after another, the lanes of a group ("model+vllm")
# start together. Every lane runs even when an earlier one failed; then the counts and wall time of every lane,
# and the overall line CI looks for, are printed (python -m tests.lanes report), and the status is 1 when any lane
# failed or did not run.
#
# Each lane writes its JUnit file (per-test durations) to TEST_OUT (default runs/tests), and the report
# TEST_OUT/lanes.json (the lanes, the slowest tests, seconds per file) and one line of TEST_OUT/history.jsonl per
# run: what the plan is decided from. Beside each lane's wall time the report gives the share of the machine's
# CPU time that was busy while it ran (/proc/stat: the lane's own use when it runs alone, containers and SLURM jobs
# included; its group's when it shares the machine): a lane that leaves a core idle alone is one worth pairing.
#
# Env: TEST_OUT (runs/tests), TEST_WORKERS (the unit lane's xdist workers: the usable cores), TEST_LANES (the lanes
#      to run, default all of them in tests/lanes.py's order), TEST_PLAN (the groups, e.g. "unit docker+slurm
#      model+vllm"; default PLAN below: every lane must appear once; lanes not in TEST_LANES are left out),
#      PYTEST_ARGS (more pytest options for every lane).
cd "$(dirname "$0")/.."
. scripts/lib/errexit.sh
LOG_NAME=test-lanes
PYTEST=.venv/bin/pytest
OUT=${TEST_OUT:-runs/tests}
WORKERS=${TEST_WORKERS:-$(nproc)}
KNOWN=" $(.venv/bin/python -m tests.lanes names) "
# The default plan, from the lanes' busy shares measured alone (docs/ARCHITECTURE.md, "Test lanes"): the unit lane
# keeps both cores busy by itself; the docker, slurm, model and vllm lanes each leave about a quarter to a third of
# the machine idle (a server decoding on one core, runsc waiting on dockerd, SLURM polling), so they run in pairs.
PLAN="unit docker+slurm model+vllm"
read -r -a LANES <<< "${TEST_LANES:-$KNOWN}"
plan=${TEST_PLAN:-$PLAN}
read -r -a GROUPS_ <<< "$plan"
planned=" "
for group in "${GROUPS_[@]}"; do
    for lane in ${group//+/ }; do   # a misspelt or repeated lane is refused before anything runs
        case "$KNOWN" in *" $lane "*) ;; *) echo "test-lanes: unknown lane $lane in TEST_PLAN (the lanes:$KNOWN)" >&2; exit 2 ;; esac
        case "$planned" in *" $lane "*) echo "test-lanes: lane $lane is twice in TEST_PLAN ($plan)" >&2; exit 2 ;; esac
        planned+="$lane "
    done
done
for lane in "${LANES[@]}"; do
    case "$KNOWN" in *" $lane "*) ;; *) echo "test-lanes: unknown lane $lane (the lanes:$KNOWN)" >&2; exit 2 ;; esac
    case "$planned" in *" $lane "*) ;; *) echo "test-lanes: lane $lane is in no group of TEST_PLAN ($plan)" >&2; exit 2 ;; esac
done
read -r -a EXTRA <<< "${PYTEST_ARGS:-}"
# Bytecode is written even where the environment turns it off (PYTHONDONTWRITEBYTECODE, set on the kit's CI
# machines): without it every pytest process of every lane (and each xdist worker) re-rewrote and recompiled all
# 2,813 tests' modules at collection, about 5 CPU-s each; the __pycache__ folders are git-ignored build outputs.
unset PYTHONDONTWRITEBYTECODE
mkdir -p "$OUT"
rm -f "$OUT"/*.xml "$OUT"/lane-*.json "$OUT"/lane-*.log
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s%N)

seconds_since() {   # seconds_since START_NS -> seconds with one decimal
    local ds=$(( ($(date +%s%N) - $1) / 100000000 ))
    echo "$(( ds / 10 )).$(( ds % 10 ))"
}

cpu_jiffies() {     # "BUSY TOTAL": the machine's CPU time so far, all cores (/proc/stat)
    local _cpu user nice system idle iowait irq softirq steal _rest
    read -r _cpu user nice system idle iowait irq softirq steal _rest < /proc/stat
    echo "$(( user + nice + system + irq + softirq + steal )) $(( user + nice + system + idle + iowait + irq + softirq + steal ))"
}

run_lane() {   # run_lane LANE [PYTEST OPTIONS...]: the lane's pytest; its status, wall time and the machine's busy
               # share in OUT/lane-LANE.json
    local lane=$1 status=0 workers=1 started busy0 total0 busy1 total1
    shift
    [ "$lane" = unit ] && workers=$WORKERS
    echo "== lane $lane: $(if [ "$workers" -gt 1 ]; then echo "pytest-xdist, $workers workers"; else echo serial; fi)" \
         "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    started=$(date +%s%N)
    read -r busy0 total0 <<< "$(cpu_jiffies)"
    "$PYTEST" -q -p no:cacheprovider --lane "$lane" --junitxml="$OUT/$lane.xml" --durations=15 "$@" \
        ${EXTRA[@]+"${EXTRA[@]}"} tests || status=$?
    read -r busy1 total1 <<< "$(cpu_jiffies)"
    printf '{"lane": "%s", "exit_status": %d, "wall_s": %s, "workers": %d, "machine_busy_pct": %d}\n' \
        "$lane" "$status" "$(seconds_since "$started")" "$workers" \
        "$(( (busy1 - busy0) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1) ))" > "$OUT/lane-$lane.json"
    return 0
}

selected() { case " ${LANES[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

start_lane() {   # start_lane LANE: run it (the unit lane under xdist when it has more than one worker)
    if [ "$1" = unit ] && [ "$WORKERS" -gt 1 ]; then
        # loadscope: a module's (and class's) tests stay on one worker, so its module fixtures are built once
        run_lane unit -n "$WORKERS" --dist loadscope
    else
        run_lane "$1"
    fi
}

for group in "${GROUPS_[@]}"; do
    members=()
    for lane in ${group//+/ }; do selected "$lane" && members+=("$lane"); done
    [ ${#members[@]} -gt 0 ] || continue
    [ ${#members[@]} -eq 1 ] || echo "== lanes ${members[*]}: at the same time; ${members[*]:1} printed when they end"
    pids=()
    for lane in "${members[@]:1}"; do   # the group's other lanes, each into its log
        start_lane "$lane" > "$OUT/lane-$lane.log" 2>&1 &
        pids+=($!)
    done
    start_lane "${members[0]}"          # the first in the foreground, its output as it comes
    [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" || true
    for lane in "${members[@]:1}"; do cat "$OUT/lane-$lane.log"; done
done
wall=$(seconds_since "$t0")
.venv/bin/python -m tests.lanes report "$OUT" --wall "$wall" --load "$load_start" --lanes "${LANES[*]}"
