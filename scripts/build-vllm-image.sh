#!/usr/bin/env bash
# Build the kit's own vLLM serving image offline from the two archives the kit trusts (Debian's and PyPI), the way
# the executor image is built (scripts/build-executor-image.sh): no registry pull, no Dockerfile.
#
#   1. download  every wheel of requirements-vllm-gpu.lock (vllm 0.32.0, torch 2.13.0 CUDA 13.0, triton,
#                flashinfer, the nvidia-* CUDA 13 wheels: ~197 wheels, ~4 GB) from PyPI with
#                `pip download --no-deps --require-hashes --only-binary :all:`; the vllm wheel fetched by
#                `make vllm-wheels` is reused (the same bytes the serving contract is read from)
#   (steps 2-4 are containers/vllm/recipe.sh, the recipe: what decides the image's bytes)
#   2. rootfs    mmdebstrap --variant=minbase Debian 12 with containers/vllm/packages.txt (Python 3.11, gcc, the C and
#                Python headers Triton compiles its launchers against, CA certificates), every .deb as locked in
#                containers/vllm/debs.lock (name, version, architecture, sha256; scripts/deb_lock.py): the mirror's
#                signed index is checked against the lock first (a package that moved on is refused, named with its
#                old and new version; RELOCK=1 rewrites the lock instead, naming the changes), the locked .debs are
#                kept in ~/.cache/mathsolver-kit/debs, and the root is resolved against exactly those
#   3. install   in that root, chrooted in a private mount namespace: python3 -m venv /opt/vllm, then
#                `pip install --no-index --no-deps --require-hashes --no-compile` of the lock from the downloaded
#                wheels (bind-mounted read-only), and `pip check`
#   4. import    a deterministic tar of the root (sorted names, clamped mtimes, numeric owners, no atime/ctime)
#                streamed into `docker import` (never written to disk), its sha256 taken on the way
#   5. check     the no-GPU checks of harness.model.vllm.image (`harness serve vllm-image check`): vllm and torch
#                import with the locked versions and CUDA 13.0, the server's parser takes the kit's exact commands,
#                ldd finds every shared library of vllm, torch and flashinfer but the driver's
#
# The image is named by the lock: mathsolver-vllm:<first 16 hex of requirements-vllm-gpu.lock's sha256>. Its labels
# carry the lock's sha256, the build inputs' sha256 (lock, packages.txt, recipe.sh, mirrors, SOURCE_DATE_EPOCH) and
# the rootfs tar's sha256 (= the image's one layer diff_id: its content). An image whose inputs label equals this
# checkout's is reused (`up to date`); --force rebuilds. Intermediates (wheels, rootfs) are removed at the end, also
# on failure (KEEP_WHEELS=1 keeps the wheels for another build).
#
# Usage: sudo scripts/build-vllm-image.sh [--force] [--write-lock] [--relock]
#        sudo scripts/build-vllm-image.sh --lock-only  # only (re)write containers/vllm/debs.lock (make deb-lock)
#        scripts/build-vllm-image.sh --inputs      # the inputs as JSON (tag, lock and inputs sha256); no root
#        scripts/build-vllm-image.sh --check-lock  # the lock resolves on PyPI with every hash (pip install --dry-run
#                                                  # --require-hashes: each wheel fetched and checked, nothing kept;
#                                                  # ~4 GB transient, ~2 min, ~45 CPU-s): what CI runs (make vllm-lock)
#   --write-lock   record this build in containers/vllm/image.lock.json `own.build` (the maintainers' build: image
#                  id, rootfs sha256, sizes, times); without it the build is compared with the recorded one
# Environment:
#   DEBIAN_MIRRORS     mmdebstrap mirror lines separated by |; default deb.debian.org bookworm, -updates, -security
#                      (the image's /etc/apt/sources.list; the .debs come from the lock and the cache)
#   RELOCK=1           resolve the Debian packages against the mirror again and rewrite debs.lock (--relock)
#   DEBS_OFFLINE=1     build from the cached locked .debs without asking the mirror; DEB_CACHE the cache's directory
#   SOURCE_DATE_EPOCH  timestamp clamped into the rootfs (default 1704067200 = 2024-01-01)
#   PYTHON             host interpreter with pip for the download (default .venv/bin/python, else python3)
#   PIP_INDEX          the index the wheels come from [https://pypi.org/simple]; the machine's pip configuration
#                      (extra indexes, find-links) is not read, so no other build of a package can slip in
#   VLLM_WHEEL_DIR     where `make vllm-wheels` put the vllm wheel [~/.cache/mathsolver-kit/vllm-wheels]
#   BUILD_DIR          scratch directory [/var/tmp/mathsolver-vllm-build]; needs ~13 GB (wheels + root) and
#                      Docker's data root ~9 GB more
#   KEEP_WHEELS=1      keep the downloaded wheels in BUILD_DIR/wheels; KEEP_OLD_IMAGES=1 keep other locks' images
#   BUILD_REPORT       where the build's measurements go as JSON [runs/bench/vllm-image.json]
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$REPO/containers/vllm
LOCK=$REPO/requirements-vllm-gpu.lock
PACKAGES=$HERE/packages.txt
DEBS_LOCK=$HERE/debs.lock
IMAGE_NAME=mathsolver-vllm
BUILD_DIR=${BUILD_DIR:-/var/tmp/mathsolver-vllm-build}
WHEEL_DIR=$BUILD_DIR/wheels
ROOT_DIR=$BUILD_DIR/rootfs
VLLM_WHEEL_DIR=${VLLM_WHEEL_DIR:-$HOME/.cache/mathsolver-kit/vllm-wheels}
PIP_INDEX=${PIP_INDEX:-https://pypi.org/simple}
BUILD_REPORT=${BUILD_REPORT:-$REPO/runs/bench/vllm-image.json}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1704067200}
DEBIAN_MIRRORS=${DEBIAN_MIRRORS:-"deb http://deb.debian.org/debian bookworm main|deb http://deb.debian.org/debian bookworm-updates main|deb http://deb.debian.org/debian-security bookworm-security main"}
LOG_NAME=build-vllm-image
log() { printf 'build-vllm-image: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

FORCE=0 WRITE_LOCK=0 INPUTS_ONLY=0 CHECK_LOCK=0 LOCK_ONLY=0
for a in "$@"; do
    case "$a" in
        --force) FORCE=1 ;;
        --relock) RELOCK=1 ;;
        --lock-only) LOCK_ONLY=1 ;;
        --write-lock) WRITE_LOCK=1 ;;
        --inputs) INPUTS_ONLY=1 ;;
        --check-lock) CHECK_LOCK=1 ;;
        *) echo "build-vllm-image: unknown argument '$a' (usage: $0 [--force] [--write-lock] | --inputs | --check-lock)" >&2; exit 2 ;;
    esac
done
# pip with the index named here and none of the machine's pip configuration (extra indexes, find-links, constraints)
pip_pypi() {  # pip_pypi SUBCOMMAND ARGS...
    env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL -u PIP_CONSTRAINT -u PIP_REQUIRE_VIRTUALENV \
        PIP_CONFIG_FILE=/dev/null "$PYTHON" -m pip "$1" --no-deps --require-hashes --only-binary :all: \
        --progress-bar off --index-url "$PIP_INDEX" "${@:2}"
}

# --- inputs: what names the image and what decides its bytes ------------------------------------------------------
[ -f "$LOCK" ] || die "$LOCK missing"
lock_sha=$(sha256sum "$LOCK" | cut -d' ' -f1)
tag="$IMAGE_NAME:${lock_sha:0:16}"
RECIPE=$HERE/recipe.sh
# shellcheck source=containers/vllm/recipe.sh
. "$RECIPE"
inputs() {  # the build's inputs digest (a relock rewrites debs.lock, one of them)
    { sha256sum "$LOCK" "$PACKAGES" "$RECIPE" | cut -d' ' -f1
      if [ -f "$DEBS_LOCK" ]; then sha256sum "$DEBS_LOCK" | cut -d' ' -f1; else echo "no debs.lock"; fi
      echo "$DEBIAN_MIRRORS"; echo "$SOURCE_DATE_EPOCH"; } | sha256sum | cut -d' ' -f1
}
inputs_sha=$(inputs)
debs_lock_sha=$( [ ! -f "$DEBS_LOCK" ] || sha256sum "$DEBS_LOCK" | cut -d' ' -f1)
vllm_pin=$(sed -n 's/^vllm==\([^ ]*\).*/\1/p' "$LOCK")
torch_pin=$(sed -n 's/^torch==\([^ ]*\).*/\1/p' "$LOCK")
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON=$REPO/.venv/bin/python; else PYTHON=python3; fi
fi
if [ "$CHECK_LOCK" -eq 1 ]; then
    t0=$(date +%s)
    report=$(mktemp)
    pip_pypi install --quiet --dry-run --ignore-installed --report "$report" -r "$LOCK" \
        || die "$(basename "$LOCK") does not resolve on $PIP_INDEX with its hashes (above)"
    n=$("$PYTHON" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["install"]))' "$report")
    rm -f "$report"
    log "$(basename "$LOCK") resolves on $PIP_INDEX: $n wheels, every sha256 as locked, in $(( $(date +%s) - t0 )) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
    exit 0
fi
if [ "$INPUTS_ONLY" -eq 1 ]; then
    printf '{"image": "%s", "tag": "%s", "lock": "%s", "lock_sha256": "%s", "inputs_sha256": "%s", "vllm": "%s", "torch": "%s", "packages": "%s", "debs_lock": "%s", "debs_lock_sha256": "%s", "source_date_epoch": %s}\n' \
        "$IMAGE_NAME" "${lock_sha:0:16}" "$(basename "$LOCK")" "$lock_sha" "$inputs_sha" "$vllm_pin" "$torch_pin" \
        "containers/vllm/$(basename "$PACKAGES")" "containers/vllm/$(basename "$DEBS_LOCK")" "$debs_lock_sha" \
        "$SOURCE_DATE_EPOCH"
    exit 0
fi

HARNESS=$REPO/.venv/bin/harness
[ -x "$HARNESS" ] || die "$HARNESS missing: run make setup first (the image checks are the kit's)"
label() { docker image inspect --format "{{index .Config.Labels \"$1\"}}" "$tag" 2>/dev/null || true; }
include=$(grep -v -e '^#' -e '^[[:space:]]*$' "$PACKAGES" | paste -sd, -)
if [ "$LOCK_ONLY" -eq 1 ]; then
    # shellcheck source=scripts/lib/image-host.sh
    . "$REPO/scripts/lib/image-host.sh"
    require_image_host
    mkdir -p "$BUILD_DIR"
    RELOCK=1 deb_layer vllm "$DEBS_LOCK" minbase "$include"
    rm -rf "$BUILD_DIR/debs-repo"
    exit 0
fi
[ -f "$DEBS_LOCK" ] || [ "${RELOCK:-0}" = 1 ] || die "$DEBS_LOCK missing: make deb-lock writes it"
if [ "$FORCE" -eq 0 ] && [ "${RELOCK:-0}" != 1 ] && command -v docker >/dev/null && [ "$(label org.mathsolver.inputs-sha256)" = "$inputs_sha" ]; then
    log "up to date: $tag ($(docker image inspect --format '{{.Id}}' "$tag"), inputs $inputs_sha); --force rebuilds"
    [ "$WRITE_LOCK" -eq 0 ] || "$HARNESS" serve vllm-image record --tag "$tag" --report "$BUILD_REPORT"
    exit 0
fi

# shellcheck source=scripts/lib/image-host.sh
. "$REPO/scripts/lib/image-host.sh"
require_image_host
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip (set PYTHON=...)"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
t_start=$(now)
load_start=$(loadavg)
free_start=$(df -B1 --output=avail "$(dirname "$BUILD_DIR")" | tail -n1 | tr -d ' ')

cleanup() {
    rm -rf --one-file-system "$ROOT_DIR"
    rm -rf "$BUILD_DIR/debs-repo" "$BUILD_DIR/sources.list"
    [ "${KEEP_WHEELS:-0}" = 1 ] || rm -rf "$WHEEL_DIR"
}
trap cleanup EXIT
rm -rf --one-file-system "$ROOT_DIR"
mkdir -p "$WHEEL_DIR"

# --- 1. download --------------------------------------------------------------------------------------------------
log "1/5 download: $(grep -c '^[a-z0-9]' "$LOCK") wheels of $(basename "$LOCK") from $PIP_INDEX (load $(loadavg))"
t0=$(now)
find_links=()
[ -d "$VLLM_WHEEL_DIR" ] && find_links=(--find-links "$VLLM_WHEEL_DIR")
pip_pypi download --quiet "${find_links[@]}" -d "$WHEEL_DIR" -r "$LOCK" || die "pip download of $(basename "$LOCK") failed"
t_download=$(secs "$t0" "$(now)")
n_wheels=$(find "$WHEEL_DIR" -name '*.whl' | wc -l)
download_bytes=$(du -sb "$WHEEL_DIR" | cut -f1)
vllm_wheel=$(find "$WHEEL_DIR" -name "vllm-$vllm_pin-*.whl" | sed -n 1p)
[ -n "$vllm_wheel" ] || die "no vllm $vllm_pin wheel among the downloads"
vllm_wheel_sha=$(sha256sum "$vllm_wheel" | cut -d' ' -f1)
log "downloaded $n_wheels wheels, $download_bytes bytes in $t_download s; $(basename "$vllm_wheel") sha256 $vllm_wheel_sha"

# --- 2. rootfs ----------------------------------------------------------------------------------------------------
log "2/5 rootfs: the locked Debian packages ($(basename "$DEBS_LOCK")), then mmdebstrap --variant=minbase bookworm + $include (load $(loadavg))"
t0=$(now)
deb_layer vllm "$DEBS_LOCK" minbase "$include"
inputs_sha=$(inputs)   # a relock rewrote the lock
deb_sources_list > "$BUILD_DIR/sources.list"
recipe_rootfs "$ROOT_DIR" "$include" "$DEB_REPO" "$BUILD_DIR/sources.list"
"$PYTHON" "$REPO/scripts/deb_lock.py" installed --lock "$DEBS_LOCK" --status "$ROOT_DIR/var/lib/dpkg/status" \
    || die "the root does not hold exactly the packages of $DEBS_LOCK (above)"
rm -rf "$BUILD_DIR/debs-repo"
t_rootfs=$(secs "$t0" "$(now)")
debian_bytes=$(du -sb "$ROOT_DIR" | cut -f1)

# --- 3. install ---------------------------------------------------------------------------------------------------
log "3/5 install: /opt/vllm from the hash-locked wheels (load $(loadavg))"
t0=$(now)
recipe_install "$ROOT_DIR" "$WHEEL_DIR" "$LOCK" || die "installing the wheels into the image root failed"
t_install=$(secs "$t0" "$(now)")
[ "${KEEP_WHEELS:-0}" = 1 ] || rm -rf "$WHEEL_DIR"
installed_bytes=$(du -sb "$ROOT_DIR" | cut -f1)
venv_bytes=$(du -sb "$ROOT_DIR/opt/vllm" | cut -f1)
log "installed in $t_install s: root $installed_bytes bytes ($venv_bytes in /opt/vllm)"

# --- 4. deterministic tar -> docker import ------------------------------------------------------------------------
# imported under a candidate name; the image's own name only once the checks passed (an image under that name is
# "up to date" for the next build)
candidate="$IMAGE_NAME:candidate-${lock_sha:0:16}"
log "4/5 import: deterministic tar of the root -> docker import $candidate (load $(loadavg))"
t0=$(now)
sha_file=$BUILD_DIR/rootfs.sha256
rm -f "$sha_file"
image_id=$(recipe_tar "$ROOT_DIR" \
    | tee >(sha256sum | cut -d' ' -f1 > "$sha_file") \
    | docker import "${RECIPE_CONFIG[@]}" \
        --change "LABEL org.mathsolver.lock=$(basename "$LOCK")" \
        --change "LABEL org.mathsolver.lock-sha256=$lock_sha" \
        --change "LABEL org.mathsolver.inputs-sha256=$inputs_sha" \
        --change "LABEL org.mathsolver.vllm=$vllm_pin" \
        --change "LABEL org.mathsolver.torch=$torch_pin" \
        --change "LABEL org.mathsolver.vllm-wheel-sha256=$vllm_wheel_sha" \
        --change "LABEL org.mathsolver.debs-lock-sha256=$DEB_LOCK_SHA256" \
        --message "mathsolver vLLM $vllm_pin serving image, lock sha256 $lock_sha" \
        - "$candidate")
for _ in $(seq 1 300); do [ -s "$sha_file" ] && break; sleep 0.1; done   # the tee's sha256sum may finish last
rootfs_sha=$(cat "$sha_file")
rm -f "$sha_file"
t_import=$(secs "$t0" "$(now)")
rm -rf --one-file-system "$ROOT_DIR"
layer=$(docker image inspect --format '{{index .RootFS.Layers 0}}' "$candidate")
[ "$layer" = "sha256:$rootfs_sha" ] || die "docker's layer $layer is not the tar that was streamed (sha256:$rootfs_sha)"
image_bytes=$(docker image inspect --format '{{.Size}}' "$candidate")
log "imported $image_id (layer $layer, $image_bytes bytes) in $t_import s"

# --- 5. the no-GPU checks and the record ---------------------------------------------------------------------------
log "5/5 check: imports, the server's parser on the kit's commands, ldd (load $(loadavg))"
t0=$(now)
mkdir -p "$(dirname "$BUILD_REPORT")"
checks=$BUILD_DIR/checks.json
"$HARNESS" serve vllm-image check --tag "$candidate" --json > "$checks" \
    || { cat "$checks" >&2; die "the image checks failed (above); the image stays as $candidate for a look"; }
old_id=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)   # an earlier build of this lock
docker tag "$candidate" "$tag" && docker rmi "$candidate" >/dev/null
if [ -n "$old_id" ] && [ "$old_id" != "$image_id" ]; then docker rmi "$old_id" >/dev/null 2>&1 || true; fi
if [ "${KEEP_OLD_IMAGES:-0}" != 1 ]; then   # other locks' images (in use ones stay: no --force)
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$IMAGE_NAME" | grep -v -x -e "$tag" \
        | xargs -r docker rmi >/dev/null 2>&1 || true
fi
t_check=$(secs "$t0" "$(now)")
t_total=$(secs "$t_start" "$(now)")
"$PYTHON" - "$BUILD_REPORT" "$checks" <<PY
import json, os, platform, sys
report = {
    "image": "$tag", "image_id": "$image_id", "rootfs_sha256": "$rootfs_sha", "layer_diff_id": "$layer",
    "lock_sha256": "$lock_sha", "inputs_sha256": "$inputs_sha", "vllm_wheel_sha256": "$vllm_wheel_sha",
    "wheels": $n_wheels, "download_bytes": $download_bytes, "debian_root_bytes": $debian_bytes,
    "installed_root_bytes": $installed_bytes, "venv_bytes": $venv_bytes, "image_bytes": $image_bytes,
    "debs_lock": {"path": "containers/vllm/debs.lock", "sha256": "$DEB_LOCK_SHA256", "packages": $DEB_LOCK_COUNT,
                  "snapshot": "$DEB_LOCK_SNAPSHOT"},
    "seconds": {"download": $t_download, "rootfs": $t_rootfs, "install": $t_install, "import": $t_import,
                "check": $t_check, "total": $t_total},
    "free_bytes_at_start": $free_start,
    "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                "loadavg_start": "$load_start", "loadavg_end": open("/proc/loadavg").read().split()[:3]},
    "checks": json.load(open(sys.argv[2])),
}
json.dump(report, open(sys.argv[1], "w"), indent=1)
open(sys.argv[1], "a").write("\n")
PY
rm -f "$checks"
if [ "$WRITE_LOCK" -eq 1 ]; then
    "$HARNESS" serve vllm-image record --tag "$tag" --report "$BUILD_REPORT"
else
    "$HARNESS" serve vllm-image compare --tag "$tag" || true
fi
log "built $tag ($image_id), rootfs sha256 $rootfs_sha, in $t_total s (download $t_download, rootfs $t_rootfs, install $t_install, import $t_import, check $t_check); report $BUILD_REPORT"
