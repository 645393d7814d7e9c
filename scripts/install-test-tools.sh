#!/usr/bin/env bash
# Debian packages the test suite uses besides docker/runsc: headless Chromium renders the HTML report.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-tools: chromium missing and not root; install the Debian package 'chromium' (the report test skips without it)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
