#!/usr/bin/env bash
# Debian packages the test suite uses besides docker/runsc: headless Chromium renders the HTML report;
# strace counts the executor child's system calls per phase (make bench-executor, tests/executor/test_executor_phases.py).
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v strace >/dev/null 2>&1 || missing+=(strace)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-tools: ${missing[*]} missing and not root; install the Debian packages '${missing[*]}' (the tests that need them skip)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v chromium >/dev/null && chromium --version
command -v strace >/dev/null && strace -V | sed -n 1p
