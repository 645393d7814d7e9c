# Sourced by the offline image builds (scripts/build-executor-image.sh, scripts/build-vllm-image.sh), never run: what
# a host needs to build an image with mmdebstrap and docker import. The sourcing script defines `die` first.

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

require_image_host() {  # require_image_host: root, mmdebstrap, Debian's keyring, a docker that answers
    [ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap root mode, chroot)"
    command -v mmdebstrap >/dev/null || die "mmdebstrap missing: run scripts/install-host.sh (make host) first"
    # Debian's archive keys, named explicitly: on an Ubuntu host apt's own keyring has only Ubuntu's (the rootfs
    # keeps no apt state, so the bytes are the same either way).
    [ -f "$DEBIAN_KEYRING" ] || die "$DEBIAN_KEYRING missing: apt-get install debian-archive-keyring (make host does)"
    command -v docker >/dev/null || die "docker CLI missing: run scripts/install-host.sh (make host) first"
    docker info >/dev/null 2>&1 || die "dockerd not answering 'docker info': run scripts/install-host.sh (make host) first"
}

# The Debian layer, locked (scripts/deb_lock.py, containers/<image>/debs.lock): both image builds resolve their packages
# against a flat repository of exactly the locked .debs from the local cache, never against the mirror directly, so the
# same lock and cache give the same bytes. The sourcing script sets REPO, BUILD_DIR, DEBIAN_MIRRORS, PYTHON and `log`.
#   RELOCK=1        resolve against the mirror again and rewrite the lock, naming every package that changed
#   DEBS_OFFLINE=1  do not ask the mirror: every locked .deb must be in the cache
#   DEBS_MOVED      what a build does when the mirror moved on and the locked .debs are not all in the cache: refuse
#                   (the default, naming each package with its locked and served version) or relock (CI on a machine
#                   without the cache: the lock is rewritten, each change named). With every locked .deb cached, the
#                   locked state is built from the cache either way.
#   DEB_CACHE       the cache of locked .debs [~/.cache/mathsolver-kit/debs]
DEB_CACHE=${DEB_CACHE:-$HOME/.cache/mathsolver-kit/debs}
export DEB_CACHE

deb_lock() { "$PYTHON" "$REPO/scripts/deb_lock.py" "$@" --mirrors "$DEBIAN_MIRRORS" --keyring "$DEBIAN_KEYRING" \
                 --cache "$DEB_CACHE"; }

# deb_resolve IMAGE LOCK VARIANT INCLUDE: what the mirror serves for this package set now -> the lock (make deb-lock)
deb_resolve() {
    local image=$1 lock=$2 variant=$3 include=$4 resolved=$BUILD_DIR/resolved-debs root=$BUILD_DIR/resolve-root
    local -a mirrors hook
    IFS='|' read -r -a mirrors <<< "$DEBIAN_MIRRORS"
    rm -rf --one-file-system "$resolved" "$root"
    mkdir -p "$resolved"
    # the .debs apt downloaded, copied out before mmdebstrap cleans its cache (extract: no customize step runs)
    if [ "$variant" = extract ]; then
        hook=(--extract-hook="cp \"\$1\"/var/cache/apt/archives/*.deb '$resolved/'")
    else
        hook=(--skip=essential/unlink --customize-hook="cp \"\$1\"/var/cache/apt/archives/*.deb '$resolved/'")
    fi
    log "resolving $include against the mirror (mmdebstrap --variant=$variant)"
    mmdebstrap --quiet --mode=root --variant="$variant" --format=directory --keyring="$DEBIAN_KEYRING" \
        --include="$include" "${hook[@]}" bookworm "$root" "${mirrors[@]}" \
        || die "mmdebstrap could not resolve $include against the mirror (DEBIAN_MIRRORS)"
    rm -rf --one-file-system "$root"
    deb_lock lock --lock "$lock" --image "$image" --resolved "$resolved" || die "writing $lock failed (above)"
    rm -rf "$resolved"
}

# deb_layer IMAGE LOCK VARIANT INCLUDE: check the lock against the mirror (or RELOCK), fill the cache, and set DEB_REPO
# to the mmdebstrap mirror line of the locked .debs; DEB_LOCK_SHA256 / DEB_LOCK_COUNT / DEB_LOCK_SNAPSHOT describe it
deb_layer() {
    local image=$1 lock=$2 variant=$3 include=$4 rc=0
    if [ "${RELOCK:-0}" = 1 ] || [ ! -f "$lock" ]; then
        [ "${DEBS_OFFLINE:-0}" != 1 ] || die "$lock: RELOCK=1 (or a missing lock) needs the mirror; DEBS_OFFLINE=1 forbids it"
        deb_resolve "$image" "$lock" "$variant" "$include"
    elif [ "${DEBS_OFFLINE:-0}" != 1 ]; then
        deb_lock check --lock "$lock" || rc=$?
        local name
        name="$(basename "$(dirname "$lock")")/$(basename "$lock")"
        if [ "$rc" -eq 3 ] && deb_lock fetch --lock "$lock" --offline 2>/dev/null; then
            # the mirror moved on, but the cache holds every locked .deb with its locked sha256: the locked state is
            # still buildable, byte for byte, so it is built (the moved packages are named above)
            log "$name: the mirror moved on (above), but every locked .deb is in $DEB_CACHE with its locked sha256: building the locked state"
        elif [ "$rc" -eq 3 ] && [ "${DEBS_MOVED:-refuse}" = relock ]; then
            log "$name: the mirror moved on (above) and the locked .debs are not all cached: DEBS_MOVED=relock, so the lock is rewritten"
            deb_resolve "$image" "$lock" "$variant" "$include"
        elif [ "$rc" -ne 0 ]; then
            die "$name: the Debian packages are not as locked (above)"
        fi
    fi
    local -a offline=()
    [ "${DEBS_OFFLINE:-0}" != 1 ] || offline=(--offline)
    deb_lock fetch --lock "$lock" "${offline[@]}" || die "the locked .debs of $lock are not all available (above)"
    deb_lock repo --lock "$lock" --out "$BUILD_DIR/debs-repo" || die "building the repository of $lock failed (above)"
    DEB_REPO="deb [trusted=yes] copy://$BUILD_DIR/debs-repo ./"
    read -r DEB_LOCK_SHA256 DEB_LOCK_COUNT DEB_LOCK_SNAPSHOT < <(deb_lock sha256 --lock "$lock")
}

# deb_sources_list: DEBIAN_MIRRORS as sources.list lines (what the image's apt names instead of the build's repository)
deb_sources_list() { tr '|' '\n' <<< "$DEBIAN_MIRRORS"; }
