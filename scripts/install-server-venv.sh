#!/usr/bin/env bash
# The CPU model server's virtualenv (.venv-server): llama.cpp's server as the prebuilt xllamacpp wheel
# (requirements-demo.lock, hash-locked, --only-binary: nothing is compiled), then a start-up check that the wheel
# loads. The wheel links GCC's OpenMP runtime (libgomp.so.1), which a bare Debian 12 or Ubuntu lacks: it is
# installed from the distribution (libgomp1) when missing and this runs as root, else the one command is printed.
#
#   bash scripts/install-server-venv.sh PYTHON_CHECK_ARGS...   (make server-venv; the args go to check-python.sh)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
LOG_NAME=server-venv
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-common.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=.venv-server
py=$(bash scripts/check-python.sh "$@")
[ -x "$VENV/bin/python" ] || "$py" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --only-binary=:all: --require-hashes -r requirements-demo.lock
loads() { "$VENV/bin/python" -c "import xllamacpp" 2>"$1"; }
err=$(mktemp)
if ! loads "$err"; then
    if grep -q "libgomp.so.1" "$err"; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
            log "the server wheel needs GCC's OpenMP runtime (libgomp.so.1), not on this host: installing libgomp1"
            install_missing libgomp1
        else
            die "the server wheel needs GCC's OpenMP runtime (libgomp.so.1): run sudo apt-get install -y libgomp1, then make server-venv"
        fi
    fi
    loads "$err" || { cat "$err" >&2; die "xllamacpp does not load in $VENV (the error above)"; }
fi
rm -f "$err"
log "ready: $VENV ($("$VENV/bin/python" -c 'import importlib.metadata as m; print("xllamacpp", m.version("xllamacpp"))'))"
