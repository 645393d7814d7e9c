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
# in (resolv.conf, CA trust, pip's index, certificate, proxy and timeout settings, proxy and CA variables), so the
# package registries reach it; the host's find-links, extra indexes and constraints are left out.
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
# the host's network client settings, nothing else of the host: resolv.conf, CA trust, and of pip's configuration
# only how it reaches the registry (index-url, cert, client-cert, trusted-host, proxy, timeout, retries), written to
# the root's /etc/pip.conf. A host's find-links, extra-index-url, constraint or no-index describe packages that host
# holds (a wheel folder, a local index, a version cap), not a new machine's: they are named and left out (issue 48).
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for f in /etc/ssl/certs/ca-certificates.crt /usr/local/share/ca-certificates; do
    [ -e "$f" ] || continue
    mkdir -p "$root$(dirname "$f")"
    cp -aL "$f" "$root$(dirname "$f")/" 2>/dev/null || true
done
python3 - "$root/etc/pip.conf" <<'PY' >&2
import configparser, os, sys
network = ("index-url", "cert", "client-cert", "trusted-host", "proxy", "timeout", "default-timeout", "retries")
home = os.path.expanduser("~")
files = ["/etc/pip.conf", "/etc/xdg/pip/pip.conf", f"{home}/.pip/pip.conf", f"{home}/.config/pip/pip.conf"]
files += [os.environ["PIP_CONFIG_FILE"]] if os.environ.get("PIP_CONFIG_FILE") else []
kept, dropped = {}, set()
for path in files:
    config = configparser.ConfigParser(interpolation=None)
    try:
        config.read(path)
    except configparser.Error:
        continue
    for section in config.sections():
        for key, value in config.items(section):
            if key in network:
                kept[(section, key)] = value
            else:
                dropped.add(key)
dropped |= {k[4:].lower().replace("_", "-") for k in os.environ if k.startswith("PIP_")
            and k[4:].lower().replace("_", "-") not in network + ("disable-pip-version-check",)}
out = configparser.ConfigParser(interpolation=None)
for (section, key), value in sorted(kept.items()):
    if not out.has_section(section):
        out.add_section(section)
    out.set(section, key, value)
if kept:
    with open(sys.argv[1], "w") as f:
        out.write(f)
if dropped:
    print("fresh-root: the host's pip settings not carried into the root (this host's packages, not a new "
          "machine's): " + ", ".join(sorted(dropped)))
PY
passenv=()
while IFS= read -r kv; do passenv+=("$kv"); done < <(env | grep -E '^(PIP_(INDEX_URL|CERT|CLIENT_CERT|TRUSTED_HOST|PROXY|TIMEOUT|DEFAULT_TIMEOUT|RETRIES|DISABLE_PIP_VERSION_CHECK)|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|[Hh][Tt][Tt][Pp][Ss]?_[Pp][Rr][Oo][Xx][Yy]|[Nn][Oo]_[Pp][Rr][Oo][Xx][Yy])=' || true)
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
