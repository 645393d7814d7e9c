#!/usr/bin/env bash
# `make test`: the whole suite, in its lanes (tests/lanes.py). A test's lane follows from the real components its
# fixtures use (tests/conftest.py marks it): `unit` (none) runs under pytest-xdist, one worker per core; `docker`,
# `slurm`, `model` and `vllm` run one after another, each in one pytest process (the model and vLLM lanes share
# their one server). Every lane runs even when an earlier one failed; then the counts and wall time of every lane,
# and the overall line CI looks for, are printed (python -m tests.lanes report), and the status is 1 when any lane
# failed or did not run.
#
# Each lane writes its JUnit file (per-test durations) to TEST_OUT (default runs/tests), and the report
# TEST_OUT/lanes.json (the lanes, the slowest tests, seconds per file) and one line of TEST_OUT/history.jsonl per
# run: what further splits are decided from.
#
# Env: TEST_OUT (runs/tests), TEST_WORKERS (the unit lane's xdist workers: the usable cores), TEST_LANES (the lanes
#      to run, default all of them in tests/lanes.py's order), PYTEST_ARGS (more pytest options for every lane).
cd "$(dirname "$0")/.."
. scripts/lib/errexit.sh
LOG_NAME=test-lanes
PYTEST=.venv/bin/pytest
OUT=${TEST_OUT:-runs/tests}
WORKERS=${TEST_WORKERS:-$(nproc)}
read -r -a LANES <<< "${TEST_LANES:-$(.venv/bin/python -m tests.lanes names)}"
for lane in "${LANES[@]}"; do   # a misspelt lane is refused before anything runs
    case " $(.venv/bin/python -m tests.lanes names) " in *" $lane "*) ;; *) echo "test-lanes: unknown lane $lane" >&2; exit 2 ;; esac
done
read -r -a EXTRA <<< "${PYTEST_ARGS:-}"
mkdir -p "$OUT"
rm -f "$OUT"/*.xml "$OUT"/lane-*.json
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s%N)

seconds_since() {   # seconds_since START_NS -> seconds with one decimal
    local ds=$(( ($(date +%s%N) - $1) / 100000000 ))
    echo "$(( ds / 10 )).$(( ds % 10 ))"
}

run_lane() {   # run_lane LANE [PYTEST OPTIONS...]: the lane's pytest, its status and wall time in OUT/lane-LANE.json
    local lane=$1 status=0 workers=1 started
    shift
    [ "$lane" = unit ] && workers=$WORKERS
    echo "== lane $lane: $(if [ "$workers" -gt 1 ]; then echo "pytest-xdist, $workers workers"; else echo serial; fi)" \
         "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    started=$(date +%s%N)
    "$PYTEST" -q -p no:cacheprovider --lane "$lane" --junitxml="$OUT/$lane.xml" --durations=15 "$@" \
        ${EXTRA[@]+"${EXTRA[@]}"} tests || status=$?
    printf '{"lane": "%s", "exit_status": %d, "wall_s": %s, "workers": %d}\n' "$lane" "$status" \
        "$(seconds_since "$started")" "$workers" > "$OUT/lane-$lane.json"
    return 0
}

for lane in "${LANES[@]}"; do
    if [ "$lane" = unit ] && [ "$WORKERS" -gt 1 ]; then
        # loadscope: a module's (and class's) tests stay on one worker, so its module fixtures are built once
        run_lane unit -n "$WORKERS" --dist loadscope
    else
        run_lane "$lane"
    fi
done
wall=$(seconds_since "$t0")
.venv/bin/python -m tests.lanes report "$OUT" --wall "$wall" --load "$load_start" --lanes "${LANES[*]}"
