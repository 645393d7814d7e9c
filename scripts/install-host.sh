#!/usr/bin/env bash
# Prepare a Debian bookworm host for the container executor backend (layers 5-6).
#
# Idempotent. Run as root (CI: `bash scripts/install-host.sh`). It:
#   1. apt-get installs docker.io, runsc (gVisor), mmdebstrap and libseccomp2 if any is missing;
#   2. writes /etc/docker/daemon.json declaring a runtime named `runsc` whose runtimeArgs are
#      `--network=none` (no network stack at all inside the sandbox) and `--oci-seccomp` (without it
#      runsc silently ignores `docker run --security-opt seccomp=...`);
#   3. starts dockerd in the background (there is no systemd here) with logs in
#      $DOCKERD_LOG (default /var/log/dockerd.log), restarting it when daemon.json changed, and waits
#      until `docker info` answers and lists the runsc runtime.
#
# Environment:
#   RUNSC_PLATFORM   optional gVisor platform (ptrace | kvm | systrap); default: runsc's own default
#                    (ptrace in the 20221219 Debian release). Recorded in daemon.json.
#   DOCKERD_LOG      dockerd log file (default /var/log/dockerd.log)
#   DOCKER_WAIT_S    seconds to wait for dockerd (default 60)
set -euo pipefail

DAEMON_JSON=/etc/docker/daemon.json
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
DOCKER_WAIT_S=${DOCKER_WAIT_S:-60}
PIDFILE=/var/run/docker.pid

LOG_NAME=install-host
# shellcheck source=scripts/lib/install-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-common.sh"

require_root "installs packages, writes $DAEMON_JSON, starts dockerd"

# --- 1. packages -----------------------------------------------------------------------------
install_missing docker.io runsc mmdebstrap libseccomp2
RUNSC=$(command -v runsc) || die "runsc not on PATH after install"
command -v dockerd >/dev/null || die "dockerd not on PATH after install"
command -v docker >/dev/null || die "docker CLI not on PATH after install"

# --- 2. daemon.json --------------------------------------------------------------------------
RUNTIME_ARGS='"--network=none", "--oci-seccomp"'
if [ -n "${RUNSC_PLATFORM:-}" ]; then
    case "$RUNSC_PLATFORM" in ptrace|kvm|systrap) ;; *) die "RUNSC_PLATFORM must be ptrace, kvm or systrap, got '$RUNSC_PLATFORM'";; esac
    RUNTIME_ARGS="$RUNTIME_ARGS, \"--platform=$RUNSC_PLATFORM\""
fi
desired=$(cat <<EOF
{
  "runtimes": {
    "runsc": {
      "path": "$RUNSC",
      "runtimeArgs": [$RUNTIME_ARGS]
    }
  }
}
EOF
)
mkdir -p /etc/docker
changed=0
if [ -f "$DAEMON_JSON" ]; then
    if [ "$(cat "$DAEMON_JSON")" != "$desired" ]; then
        # Keep whatever else an operator configured: merge our runtime into the existing file.
        merged=$(python3 - "$DAEMON_JSON" "$RUNSC" "${RUNSC_PLATFORM:-}" <<'PY'
import json, sys
path, runsc, platform = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    cfg = json.load(open(path))
except ValueError as e:
    sys.exit(f"{path} is not valid JSON: {e}")
args = ["--network=none", "--oci-seccomp"] + ([f"--platform={platform}"] if platform else [])
cfg.setdefault("runtimes", {})["runsc"] = {"path": runsc, "runtimeArgs": args}
print(json.dumps(cfg, indent=2))
PY
)
        if [ "$merged" != "$(cat "$DAEMON_JSON")" ]; then
            printf '%s\n' "$merged" > "$DAEMON_JSON.tmp" && mv "$DAEMON_JSON.tmp" "$DAEMON_JSON"
            changed=1
            log "updated runsc runtime in $DAEMON_JSON"
        fi
    fi
else
    printf '%s\n' "$desired" > "$DAEMON_JSON.tmp" && mv "$DAEMON_JSON.tmp" "$DAEMON_JSON"
    changed=1
    log "wrote $DAEMON_JSON"
fi

# --- 3. dockerd ------------------------------------------------------------------------------
dockerd_pid() { daemon_pid dockerd "$PIDFILE"; }

if pid=$(dockerd_pid); then
    if [ "$changed" -eq 1 ]; then
        log "daemon.json changed: restarting dockerd (pid $pid)"
        kill "$pid"
        for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$pid" 2>/dev/null && die "dockerd (pid $pid) did not stop within 30 s"
    else
        log "dockerd already running (pid $pid)"
    fi
fi
if ! dockerd_pid >/dev/null; then
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        systemctl restart docker
    else
        log "starting dockerd (log: $DOCKERD_LOG)"
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
    fi
fi

deadline=$((SECONDS + DOCKER_WAIT_S))
until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        tail -n 30 "$DOCKERD_LOG" >&2 || true
        die "dockerd did not answer 'docker info' within ${DOCKER_WAIT_S} s (log: $DOCKERD_LOG)"
    fi
    sleep 0.5
done
docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' \
    || die "dockerd is running but has no 'runsc' runtime; check $DAEMON_JSON and $DOCKERD_LOG"
log "ready: dockerd $(docker version --format '{{.Server.Version}}'), $("$RUNSC" --version | head -n1)"
