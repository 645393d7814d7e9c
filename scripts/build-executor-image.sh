#!/usr/bin/env bash
# Build the executor container image offline (no registry pulls): mmdebstrap a minimal Debian
# bookworm rootfs (python3, the stdlib, libseccomp2; packages in containers/executor/packages.txt),
# add pyseccomp from the hash-pinned wheel in requirements.lock and the executor package
# (containers/executor/customize.sh), pack it into a deterministic tar and `docker import` it.
#
# Output: image `mathsolver-executor:<first 16 hex of the rootfs tar sha256>` and `:latest`, and
# containers/executor/image.lock (JSON: tag, image id, rootfs sha256, executor source digest, the deb lock, build time).
# The Debian packages are locked in containers/executor/debs.lock (scripts/deb_lock.py): the build checks that the
# mirror still serves every locked .deb (refusing, naming each package that moved on with its old and new version),
# keeps the locked .debs in a local cache and resolves the rootfs against exactly those. With the same lock and
# SOURCE_DATE_EPOCH the rootfs tar (and thus the layer digest) is byte-identical; the image id also covers
# docker's import timestamp, so it is machine-local.
#
# Usage: sudo scripts/build-executor-image.sh [--force] [--relock] [--lock-only]
#   --force              rebuild even if an image for the same inputs exists
#   --relock             (or RELOCK=1) resolve the packages against the mirror again and rewrite debs.lock,
#                        naming every package that changed
#   --lock-only          only (re)write debs.lock, no image (`make deb-lock`)
# Environment:
#   DEBIAN_MIRRORS       space-separated mmdebstrap mirror lines; default deb.debian.org bookworm,
#                        bookworm-updates and bookworm-security (the .debs come from debs.lock and the cache; where the mirror
#                        moved on, Debian's snapshot archive at the lock's timestamp serves the locked state)
#   SOURCE_DATE_EPOCH    timestamp clamped into the rootfs (default 1704067200 = 2024-01-01)
#   PYTHON               host interpreter with pip for the wheel download (default: .venv/bin/python,
#                        else python3)
#   BUILD_DIR            scratch directory (default /var/tmp/mathsolver-executor-build)
#   DEB_CACHE            the cache of locked .debs (default ~/.cache/mathsolver-kit/debs)
#   DEBS_OFFLINE=1       build from the cached .debs without asking the mirror
#   IMAGE_NAME           the image's repository name (default mathsolver-executor; another keeps a test build apart)
#   KEEP_OLD_IMAGES=1    keep the tags of earlier builds (default: remove those not in use)
#   TAG_LATEST=0         do not move the :latest tag (for builds from a work tree on a shared host)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$REPO/containers/executor
IMAGE_NAME=${IMAGE_NAME:-mathsolver-executor}
LOCK=$HERE/image.lock
DEBS_LOCK=$HERE/debs.lock
BUILD_DIR=${BUILD_DIR:-/var/tmp/mathsolver-executor-build}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1704067200}
DEBIAN_MIRRORS=${DEBIAN_MIRRORS:-"deb http://deb.debian.org/debian bookworm main|deb http://deb.debian.org/debian bookworm-updates main|deb http://deb.debian.org/debian-security bookworm-security main"}
FORCE=0 LOCK_ONLY=0
for a in "$@"; do
    case "$a" in
        --force) FORCE=1 ;;
        --relock) RELOCK=1 ;;
        --lock-only) LOCK_ONLY=1 ;;
        *) echo "build-executor-image: unknown argument '$a' (usage: $0 [--force] [--relock] [--lock-only])" >&2; exit 2 ;;
    esac
done

log() { printf 'build-executor-image: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# shellcheck source=scripts/lib/image-host.sh
. "$REPO/scripts/lib/image-host.sh"
require_image_host
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON=$REPO/.venv/bin/python; else PYTHON=python3; fi
fi
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip (set PYTHON=...)"

start=$(date +%s.%N)
include=$(grep -v -e '^#' -e '^[[:space:]]*$' "$HERE/packages.txt" | paste -sd, -)
if [ "$LOCK_ONLY" -eq 1 ]; then
    mkdir -p "$BUILD_DIR"
    RELOCK=1 deb_layer executor "$DEBS_LOCK" extract "$include"
    rm -rf "$BUILD_DIR/debs-repo"
    exit 0
fi

# --- inputs digest (cache key) ------------------------------------------------------------------
src_digest=$(cd "$REPO" && find executor -name '*.py' -not -path '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
pin_block=$(awk '/^pyseccomp==/{p=1} p&&/^[^ ]/&&!/^pyseccomp==/{p=0} p' "$REPO/requirements.lock")
[ -n "$pin_block" ] || die "pyseccomp pin not found in requirements.lock"
inputs() {  # the build's inputs digest: the lock is one of them
    { cat "$HERE/packages.txt" "$HERE/strip.txt" "$HERE/customize.sh" "${BASH_SOURCE[0]}" "$REPO/scripts/lib/image-host.sh";
      [ ! -f "$DEBS_LOCK" ] || cat "$DEBS_LOCK";
      echo "$pin_block"; echo "$src_digest"; echo "$DEBIAN_MIRRORS"; echo "$SOURCE_DATE_EPOCH"; } | sha256sum | cut -d' ' -f1
}
inputs_digest=$(inputs)
if [ "$FORCE" -eq 0 ] && [ "${RELOCK:-0}" != 1 ] && [ -f "$LOCK" ]; then
    lock_inputs=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("inputs_sha256",""))' "$LOCK" 2>/dev/null || true)
    lock_id=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("image_id",""))' "$LOCK" 2>/dev/null || true)
    if [ "$lock_inputs" = "$inputs_digest" ] && [ -n "$lock_id" ] && docker image inspect "$lock_id" >/dev/null 2>&1; then
        [ "${TAG_LATEST:-1}" = 0 ] || docker tag "$lock_id" "$IMAGE_NAME:latest"
        log "up to date: $lock_id (inputs $inputs_digest); use --force to rebuild"
        exit 0
    fi
fi

rm -rf "$BUILD_DIR"
mkdir -p "$BUILD_DIR/wheels"

# --- pyseccomp wheel, hash-checked against requirements.lock --------------------------------
printf '%s\n' "$pin_block" > "$BUILD_DIR/pyseccomp.req"
"$PYTHON" -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    -r "$BUILD_DIR/pyseccomp.req" -d "$BUILD_DIR/wheels" \
    || die "pip download of the pinned pyseccomp wheel failed"

# --- the locked Debian packages -----------------------------------------------------------
deb_layer executor "$DEBS_LOCK" extract "$include"
inputs_digest=$(inputs)   # a relock rewrote the lock

# --- rootfs --------------------------------------------------------------------------------------
log "mmdebstrap bookworm (extract: $include) from the $DEB_LOCK_COUNT locked .debs (snapshot $DEB_LOCK_SNAPSHOT)"
mmdebstrap --quiet --mode=root --variant=extract --format=directory \
    --include="$include" \
    --extract-hook="sh '$HERE/customize.sh' \"\$1\" '$REPO' '$BUILD_DIR/wheels'" \
    bookworm "$BUILD_DIR/rootfs" "$DEB_REPO"
"$PYTHON" "$REPO/scripts/deb_lock.py" installed --lock "$DEBS_LOCK" \
    --status "$BUILD_DIR/rootfs/usr/share/mathsolver-executor/packages.tsv" \
    || die "the rootfs does not hold exactly the packages of $DEBS_LOCK (above)"
# mmdebstrap cleans apt state after the hook; make sure nothing of it is left.
rm -rf "$BUILD_DIR/rootfs/var/cache/apt" "$BUILD_DIR/rootfs/var/lib/apt" "$BUILD_DIR/rootfs/var/log"/* \
       "$BUILD_DIR/rootfs/etc/apt" "$BUILD_DIR/rootfs/var/lib/dpkg"
# The dpkg status of the extracted packages (written by customize.sh): the SBOM's and scanners' source.
mkdir -p "$BUILD_DIR/rootfs/var/lib/dpkg"
mv "$BUILD_DIR/rootfs/usr/share/mathsolver-executor/dpkg-status" "$BUILD_DIR/rootfs/var/lib/dpkg/status"

# Deterministic tar: sorted names, clamped mtimes, numeric owners, no atime/ctime.
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner --owner=0 --group=0 \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --format=posix -C "$BUILD_DIR/rootfs" -cf "$BUILD_DIR/rootfs.tar" .
rootfs_sha=$(sha256sum "$BUILD_DIR/rootfs.tar" | cut -d' ' -f1)
rootfs_bytes=$(stat -c %s "$BUILD_DIR/rootfs.tar")
tag="$IMAGE_NAME:${rootfs_sha:0:16}"

# --- docker import ---------------------------------------------------------------------------
log "docker import -> $tag"
image_id=$(docker import \
    --change 'USER executor' \
    --change 'WORKDIR /tmp' \
    --change 'ENV PATH=/usr/bin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3", "-I", "-S", "-m", "executor.supervisor"]' \
    --change "LABEL org.mathsolver.rootfs-sha256=$rootfs_sha" \
    --change "LABEL org.mathsolver.executor-src-sha256=$src_digest" \
    --change "LABEL org.mathsolver.inputs-sha256=$inputs_digest" \
    --message "mathsolver executor rootfs $rootfs_sha" \
    "$BUILD_DIR/rootfs.tar" "$tag")
[ "${TAG_LATEST:-1}" = 0 ] || docker tag "$tag" "$IMAGE_NAME:latest"
if [ "${KEEP_OLD_IMAGES:-0}" != 1 ]; then  # drop earlier builds (images in use stay: no --force)
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$IMAGE_NAME" | grep -v -x -e "$tag" -e "$IMAGE_NAME:latest" \
        | xargs -r docker rmi >/dev/null 2>&1 || true
fi
layer=$(docker image inspect --format '{{index .RootFS.Layers 0}}' "$tag")
end=$(date +%s.%N)
build_s=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')

"$PYTHON" - "$LOCK" <<PY
import json, sys
lock = {
    "image": "$tag",
    "image_id": "$image_id",
    "rootfs_sha256": "$rootfs_sha",
    "rootfs_bytes": $rootfs_bytes,
    "layer_diff_id": "$layer",
    "executor_src_sha256": "$src_digest",
    "inputs_sha256": "$inputs_digest",
    "source_date_epoch": $SOURCE_DATE_EPOCH,
    "debian_mirrors": "$DEBIAN_MIRRORS".split("|"),
    "debs_lock": {"path": "containers/executor/debs.lock", "sha256": "$DEB_LOCK_SHA256",
                  "packages": $DEB_LOCK_COUNT, "snapshot": "$DEB_LOCK_SNAPSHOT"},
    "build_seconds": $build_s,
}
with open(sys.argv[1], "w") as f:
    json.dump(lock, f, indent=2)
    f.write("\n")
PY
rm -rf "$BUILD_DIR/rootfs" "$BUILD_DIR/debs-repo"
log "built $tag ($image_id), rootfs $rootfs_sha ($rootfs_bytes bytes) in ${build_s} s; lock: $LOCK"
