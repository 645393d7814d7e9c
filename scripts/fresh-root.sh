#!/usr/bin/env bash
# Run a command in a pristine Debian root (12 bookworm by default, --suite trixie for Debian 13), as on a machine that
# has never seen the kit: dpkg knows no package beyond a cloud image's few, no docker, no runsc, no compiler, no
# virtualenv, no pip cache, no models.
#
#   bash scripts/fresh-root.sh [--keep] [--committed] [--suite bookworm|trixie] -- COMMAND...
#
# The root is made once with mmdebstrap (variant apt plus ca-certificates python3 python3-venv make git sudo:
# what a fresh cloud image has; about 2-5 min) and cached as a tarball under $FRESH_ROOT_CACHE
# [/var/cache/mathsolver-fresh-root], keyed by the suite and that package list; each call unpacks a new copy (a few
# seconds).
# The kit goes to /kit: the work tree's tracked and untracked-but-not-ignored files (what a clone of it would hold
# once committed), or with --committed the tree of HEAD. COMMAND runs in /kit under chroot in a private mount
# namespace with /proc, /sys and /dev, a clean environment, and only the host's network client settings carried
# in (resolv.conf, CA trust, pip configuration and PIP_*/proxy/CA variables), so the package registries reach it.
# It cannot start dockerd, runsc or systemd services. The copy is deleted afterwards unless --keep (path printed).
# Exit status: COMMAND's. Needs root, mmdebstrap, unshare (util-linux). Used by .ci/fresh-root-stage.
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"
LOG_NAME=fresh-root
die() { printf 'fresh-root: ERROR: %s\n' "$*" >&2; exit 2; }
usage="usage: fresh-root.sh [--keep] [--committed] [--suite bookworm|trixie] -- COMMAND..."
keep=0 committed=0 suite=bookworm
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=1; shift ;;
        --committed) committed=1; shift ;;
        --suite) [ $# -ge 2 ] || die "$usage"; suite=$2; shift 2 ;;
        --) shift; break ;;
        *) die "$usage" ;;
    esac
done
[ $# -gt 0 ] || die "$usage"
[ "$(id -u)" -eq 0 ] || die "needs root (chroot, mounts)"
command -v mmdebstrap >/dev/null || die "mmdebstrap not installed: apt-get install -y mmdebstrap"
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
git -C "$kit" rev-parse --git-dir >/dev/null 2>&1 || die "$kit is not a git checkout"

packages=ca-certificates,python3,python3-venv,make,git,sudo
cache=${FRESH_ROOT_CACHE:-/var/cache/mathsolver-fresh-root}
mkdir -p "$cache"
case "$suite" in bookworm|trixie) ;; *) die "--suite must be bookworm (Debian 12) or trixie (Debian 13), not '$suite'" ;; esac
tarball=$cache/$suite-$(printf '%s' "$packages" | sha256sum | cut -c1-12).tar
if [ ! -s "$tarball" ]; then
    printf 'fresh-root: making the %s root once (%s), about 2-5 min\n' "$suite" "$packages" >&2
    mmdebstrap --quiet --variant=apt --format=tar --include="$packages" "$suite" "$tarball.part" >&2
    mv "$tarball.part" "$tarball"
fi

root=$(mktemp -d /var/tmp/fresh-root.XXXXXX)
finish() {
    if [ "$keep" -eq 1 ]; then printf 'fresh-root: kept %s\n' "$root" >&2; else rm -rf --one-file-system "$root"; fi
}
trap finish EXIT
tar -xf "$tarball" -C "$root"
mkdir -p "$root/kit"
if [ "$committed" -eq 1 ]; then
    git -C "$kit" archive HEAD | tar -x -C "$root/kit"
else
    (cd "$kit" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ \
        | tar --null -T - -cf -) | tar -x -C "$root/kit"
fi
# the host's network client settings, nothing else of the host
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for f in /etc/ssl/certs/ca-certificates.crt /usr/local/share/ca-certificates /etc/pip.conf /etc/xdg/pip /root/.config/pip; do
    [ -e "$f" ] || continue
    mkdir -p "$root$(dirname "$f")"
    cp -aL "$f" "$root$(dirname "$f")/" 2>/dev/null || true
done
passenv=()
while IFS= read -r kv; do passenv+=("$kv"); done < <(env | grep -E '^(PIP_[A-Z_]+|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|[Hh][Tt][Tt][Pp][Ss]?_[Pp][Rr][Oo][Xx][Yy]|[Nn][Oo]_[Pp][Rr][Oo][Xx][Yy])=' || true)
# the command and the carried environment as a script in the root (quoting survives any argument)
{
    printf 'cd /kit\n'
    for kv in "${passenv[@]}"; do printf 'export %q\n' "$kv"; done
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$root/.fresh-root-command"
rc=0
unshare --mount --propagation private bash -c "
    mount -t proc proc '$root/proc' && mount --rbind /sys '$root/sys' && mount --make-rslave '$root/sys' &&
    mount --rbind /dev '$root/dev' && mount --make-rslave '$root/dev' &&
    exec chroot '$root' /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash /.fresh-root-command" || rc=$?
exit $rc
