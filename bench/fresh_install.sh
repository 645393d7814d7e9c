#!/usr/bin/env bash
# Time each install step of `make demo` on a machine that has never seen the kit: run inside a pristine Debian 12
# root (scripts/fresh-root.sh; `make bench-fresh-install` does it), one step after another, each timed on
# its own with the load average beside it. Prints one JSON object (runs/bench/fresh-install.json).
#
#   host-packages   `make host` (scripts/install-host.sh) on a bare bookworm: its apt steps (docker.io, mmdebstrap,
#                   debian-archive-keyring, libseccomp2, runsc from bookworm-backports) run for real; starting
#                   dockerd cannot happen in the root, so the script stops there (the step then checks the
#                   packages are installed). dockerd's start and the executor image are timed on the real machine.
#   setup           make setup (the project virtualenv, hash-locked)
#   server-venv     make server-venv (llama.cpp's server, prebuilt wheel)
#   model-demo      make model (the demo's GGUF: download, assemble, verify)
#   model-test      make test-model (the tests' GGUF)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export DEBIAN_FRONTEND=noninteractive
steps=()
step() {   # step NAME COMMAND...
  local name=$1; shift
  local load0 t0 t1 rc
  load0=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s%N)
  echo "bench-fresh-install: $name: $*" >&2
  rc=0
  "$@" >&2 || rc=$?
  t1=$(date +%s%N)
  steps+=("$(printf '{"step": "%s", "seconds": %s, "exit": %d, "load_before": "%s", "load_after": "%s"}' \
    "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" "$rc" "$load0" \
    "$(cut -d' ' -f1-3 /proc/loadavg)")")
  [ "$rc" -eq 0 ] || { echo "bench-fresh-install: $name failed ($rc)" >&2; finish; exit "$rc"; }
}
finish() {
  local IFS=,
  printf '{"machine": {"nproc": %d, "mem_gib": %d, "os": "%s"}, "date": "%s", "steps": [%s]}\n' "$(nproc)" \
    "$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1048576 ))" "$(. /etc/os-release; echo "$PRETTY_NAME")" \
    "$(date -u +%FT%TZ)" "${steps[*]}"
}
host_packages() {   # install-host.sh for real: its apt steps run; dockerd cannot start in the root, so it stops there
  RUNSC_PLATFORM=ptrace DOCKER_WAIT_S=1 DOCKERD_LOG=/tmp/dockerd.log bash scripts/install-host.sh \
    || echo "bench-fresh-install: install-host.sh stopped (dockerd cannot start in the root)"
  command -v dockerd && command -v runsc && command -v mmdebstrap   # the packages are there
}
step host-packages host_packages
step setup make setup
step server-venv make server-venv
step model-demo make model
step model-test make test-model
finish
