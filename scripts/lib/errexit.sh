# Sourced first by every kit shell script (never run): strict mode, and a script that stops on an unexpected
# failure says where. Under `set -e` a failing command ends a script with its status and nothing else; the ERR
# trap below names the script, the line and the command first, e.g.
#   install-host: ERROR: install-host.sh line 93: `dpkg-query -W ... docker-ce` exited with status 1
# `set -E` carries the trap into functions, command substitutions and subshells: the innermost failing command
# is named, then each enclosing line of another shell process (a `v=$(f)` that failed because f did). Within one
# process only the first report is printed (a failing function also fails its call). Deliberate stops go through
# the scripts' own `die` (a message of their own, no trap). LOG_NAME, when the script sets it, prefixes the line.
# With pipefail, `producer | head -n1` fails at random when head exits before the producer has written everything
# (SIGPIPE, status 141): the scripts take a first line with `sed -n 1p`, which reads its whole input.
set -Eeuo pipefail
errexit_report() {  # errexit_report STATUS LINE COMMAND PIPESTATUS...
    local status=$1 line=$2 command=$3 file=${BASH_SOURCE[1]:-?}
    shift 3
    [ "${ERREXIT_REPORTED_IN:-}" != "$BASHPID" ] || return 0
    ERREXIT_REPORTED_IN=$BASHPID
    local stages=""
    [ $# -gt 1 ] && stages=" (pipeline statuses: $*)"
    printf '%s: ERROR: %s line %s: `%s` exited with status %s%s\n' \
        "${LOG_NAME:-$(basename "$0" .sh)}" "$(basename "$file")" "$line" "$command" "$status" "$stages" >&2
}
trap 'errexit_report $? $LINENO "$BASH_COMMAND" "${PIPESTATUS[@]}"' ERR
