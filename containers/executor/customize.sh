#!/bin/sh
# mmdebstrap extract hook (the extract variant runs no customize hooks) for the executor image (called by scripts/build-executor-image.sh).
#
#   customize.sh ROOTFS REPO WHEEL_DIR
#
# Runs after the Debian packages of containers/executor/packages.txt were extracted into ROOTFS:
# records the resolved package list, strips what the executor never loads (strip.txt), adds the
# non-root user, installs pyseccomp and the executor package into the interpreter's own stdlib
# directory (the supervisor runs with `python3 -I -S`, so neither site-packages nor PYTHONPATH is
# on sys.path), builds the ld.so cache (pyseccomp locates libseccomp via `ldconfig -p`) and
# byte-compiles everything once, because the image root is mounted read-only at run time.
set -eu
ROOT=$1
REPO=$2
WHEEL_DIR=$3
HERE=$REPO/containers/executor
PYLIB=$ROOT/usr/lib/python3.11
META=$ROOT/usr/share/mathsolver-executor

[ -x "$ROOT/usr/bin/python3.11" ] || { echo "customize: python3.11 missing in rootfs" >&2; exit 1; }
mkdir -p "$META"

# 1. Resolved package list (extract variant keeps no dpkg database; the .debs are still cached).
found=0
for deb in "$ROOT"/var/cache/apt/archives/*.deb; do
    [ -e "$deb" ] || continue
    found=1
    dpkg-deb --show --showformat='${Package}\t${Version}\t${Architecture}\n' "$deb"
done | LC_ALL=C sort > "$META/packages.tsv"
[ -s "$META/packages.tsv" ] || { echo "customize: no .deb files found to record the package list" >&2; exit 1; }
# The same packages as a dpkg status file (the build script installs it as /var/lib/dpkg/status), so
# that an SBOM generator or a vulnerability scanner finds them where it looks on any Debian image.
for deb in "$ROOT"/var/cache/apt/archives/*.deb; do
    [ -e "$deb" ] || continue
    dpkg-deb --show --showformat='${Package}\t' "$deb"
    echo "$deb"
done | LC_ALL=C sort | while IFS="$(printf '\t')" read -r _name deb; do
    echo "Package: $(dpkg-deb --field "$deb" Package)"
    echo "Status: install ok installed"
    dpkg-deb --field "$deb" Priority Section Installed-Size Maintainer Architecture Multi-Arch Source Version
    echo
done > "$META/dpkg-status"

# 2. Strip.
grep -v -e '^#' -e '^[[:space:]]*$' "$HERE/strip.txt" | while read -r pattern; do
    # shellcheck disable=SC2086  # the pattern is a glob on purpose
    for p in "$ROOT"/$pattern; do
        [ -e "$p" ] || [ -L "$p" ] || continue
        rm -rf "$p"
    done
done
cp "$HERE/strip.txt" "$META/strip.txt"
# Executables: only the interpreter and ldconfig stay (no shell, no dpkg, no tar in the image).
for d in bin sbin usr/bin usr/sbin; do
    [ -d "$ROOT/$d" ] && [ ! -L "$ROOT/$d" ] || continue
    for f in "$ROOT/$d"/* "$ROOT/$d"/.[!.]*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        case "$d/${f##*/}" in
            usr/bin/python3|usr/bin/python3.11|sbin/ldconfig) ;;
            *) rm -rf "$f" ;;
        esac
    done
done

# 3. Users: root and the unprivileged executor (uid/gid 10001). No login shell exists in the image.
printf 'root:x:0:0:root:/root:/nonexistent\nexecutor:x:10001:10001:executor:/nonexistent:/nonexistent\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nexecutor:x:10001:\n' > "$ROOT/etc/group"
chmod 0644 "$ROOT/etc/passwd" "$ROOT/etc/group"

# 4. pyseccomp (pure Python over libseccomp.so.2), from the hash-checked wheel downloaded on the host.
python3 - "$WHEEL_DIR" "$PYLIB" <<'PY'
import pathlib, sys, zipfile
wheel_dir, pylib = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheels = sorted(wheel_dir.glob("pyseccomp-*.whl"))
if len(wheels) != 1:
    sys.exit(f"customize: expected one pyseccomp wheel in {wheel_dir}, found {wheels}")
with zipfile.ZipFile(wheels[0]) as z:
    (pylib / "pyseccomp.py").write_bytes(z.read("pyseccomp.py"))
PY

# 5. The executor package (Python sources only).
rm -rf "$PYLIB/executor"
( cd "$REPO" && find executor -name '*.py' -not -path '*/__pycache__/*' | LC_ALL=C sort ) | while read -r f; do
    mkdir -p "$PYLIB/$(dirname "$f")"
    cp "$REPO/$f" "$PYLIB/$f"
done
( cd "$REPO" && find executor -name '*.py' -not -path '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum ) \
    | sha256sum | cut -d' ' -f1 > "$META/executor-src.sha256"
cp "$HERE/packages.txt" "$META/packages.txt"

# 6. Files docker bind-mounts over anyway; keep them empty so the rootfs does not carry host data.
: > "$ROOT/etc/hostname"
: > "$ROOT/etc/hosts"
rm -f "$ROOT/etc/resolv.conf"
: > "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/tmp" && chmod 1777 "$ROOT/tmp"

# 7. ld.so cache and bytecode (unchecked-hash pycs: no mtime in them, nothing to revalidate).
chroot "$ROOT" /sbin/ldconfig
chroot "$ROOT" /usr/bin/python3.11 -I -S -m compileall -q -j 1 --invalidation-mode unchecked-hash /usr/lib/python3.11 >/dev/null

# 8. Smoke test inside the chroot: the modules the executor needs import and find libseccomp.
chroot "$ROOT" /usr/bin/python3.11 -I -S -c '
import math, datetime, time, calendar, json, os, signal, resource, select, ast, ctypes, hashlib, struct, pyseccomp
print("customize: smoke ok, pyseccomp uses", pyseccomp._libseccomp_path)'
