# Shared by scripts/install-host.sh and scripts/install-slurm.sh (sourced, never run): logging, the root
# check, installing the Debian packages that are missing, and finding a daemon by its pid file.
# The sourcing script sets LOG_NAME (the prefix of its log lines) first.

log() { printf '%s: %s\n' "${LOG_NAME:?set LOG_NAME before sourcing install-common.sh}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

require_root() {  # require_root WHY
    [ "$(id -u)" -eq 0 ] || die "must run as root ($1)"
}

# install_missing [--no-daemon-start] PACKAGE...: apt-get install the packages dpkg does not list as
# installed. --no-daemon-start keeps the packages' init scripts from starting daemons during the install
# (a temporary /usr/sbin/policy-rc.d that exits 101), for scripts that start them with their own config.
install_missing() {
    local no_start=0 p had_policy rc=0
    if [ "${1:-}" = --no-daemon-start ]; then no_start=1; shift; fi
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "packages present: $*"
        return 0
    fi
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    had_policy=1
    if [ "$no_start" -eq 1 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
        had_policy=0
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
    fi
    apt-get install -y -q --no-install-recommends "${missing[@]}" || rc=$?
    [ "$had_policy" -eq 1 ] || rm -f /usr/sbin/policy-rc.d
    [ "$rc" -eq 0 ] || die "apt-get install ${missing[*]} failed"
}

daemon_pid() {  # daemon_pid NAME PIDFILE -> prints the pid when that daemon is alive
    local pid
    [ -f "$2" ] || return 1
    pid=$(cat "$2" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$1" ] || return 1
    echo "$pid"
}
