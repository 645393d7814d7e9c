#!/usr/bin/env python3
"""The Debian layer of the kit's images, locked like the wheels: containers/<image>/debs.lock.

A lock names every .deb of an image by package, version, architecture, sha256 and size, with the archive and pool
path it came from, and the state of the archive it was resolved against: the lock time as a timestamp of Debian's
snapshot archive (which serves every past state of the archive by such a timestamp) and each suite's Release date.
The image builds (scripts/build-executor-image.sh, scripts/build-vllm-image.sh, through scripts/lib/image-host.sh)
use it in four steps, all stdlib Python plus dpkg-deb and gpgv:

  check      fetch the mirror's signed indexes (InRelease checked with gpgv against Debian's keyring, Packages.xz
             against InRelease's sha256) and compare what the mirror serves now with the lock; a package that moved
             on (another version, or the same version with other bytes) or is gone is refused, every one named
             with its old and new version, on one line
  fetch      put every locked .deb in the local cache (~/.cache/mathsolver-kit/debs), downloading only the missing
             ones from the mirror by their pool path, each checked against the lock's sha256
  repo       a flat apt repository of exactly the locked .debs from the cache: the image's packages are resolved
             against it alone (mmdebstrap), so the same lock and the same cache give the same bytes
  installed  the packages that went into the root (dpkg status, or the executor's packages.tsv) are the lock's
  lock       (make deb-lock, or a build with RELOCK=1) write the lock from the .debs a resolution against the mirror
             downloaded, naming every package that changed against the old lock; the .debs go into the cache

Usage: scripts/deb_lock.py {check,fetch,repo,installed,lock,diff} --lock FILE [options]  (see --help of each)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

PROG = "deb-lock"
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
DEFAULT_CACHE = Path(os.environ.get("DEB_CACHE") or Path.home() / ".cache" / "mathsolver-kit" / "debs")
ARCH = "amd64"
HEADER = "# package version architecture sha256 size priority archive filename"


class LockError(Exception):
    """A one-line refusal: names the file or package and what is wrong."""


# --- Debian version order (deb-version(7)): epoch, upstream version, revision; '~' sorts before everything --------
def _char_order(c: str) -> int:
    if c == "~":
        return -1
    if c.isalpha():
        return ord(c)
    return ord(c) + 256


def _compare_part(a: str, b: str) -> int:
    i = j = 0
    while i < len(a) or j < len(b):
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _char_order(a[i]) if i < len(a) and not a[i].isdigit() else 0
            bc = _char_order(b[j]) if j < len(b) and not b[j].isdigit() else 0
            if ac != bc:
                return -1 if ac < bc else 1
            i += 1
            j += 1
        m = re.match(r"\d*", a[i:]).group()
        n = re.match(r"\d*", b[j:]).group()
        i += len(m)
        j += len(n)
        if int(m or 0) != int(n or 0):
            return -1 if int(m or 0) < int(n or 0) else 1
    return 0


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as Debian version `a` sorts before, equal to or after `b`."""

    def split(v: str) -> tuple[int, str, str]:
        epoch, _, rest = v.rpartition(":") if ":" in v else ("0", "", v)
        upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
        return int(epoch or 0), upstream, revision

    ea, ua, ra = split(a)
    eb, ub, rb = split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _compare_part(ua, ub) or _compare_part(ra, rb)


# --- the lock file --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deb:
    package: str
    version: str
    arch: str
    sha256: str
    size: int
    priority: str = ""  # the archive's priority (its override, which can differ from the .deb's own field;
    # mmdebstrap's minbase takes every `required` package, apt included, by it)
    archive: str = ""  # the archive's name: the last path segment of the mirror URL (debian, debian-security)
    filename: str = ""  # the pool path inside that archive

    @property
    def key(self) -> tuple[str, str]:
        return self.package, self.arch

    @property
    def cache_name(self) -> str:
        return f"{self.package}_{self.version.replace(':', '%3a')}_{self.arch}.deb"

    def line(self) -> str:
        return " ".join(
            (
                self.package,
                self.version,
                self.arch,
                self.sha256,
                str(self.size),
                self.priority or "-",
                self.archive or "-",
                self.filename or "-",
            )
        )


@dataclass
class Lock:
    image: str
    snapshot: str
    releases: list[str] = field(default_factory=list)  # "archive suite date" per mirror line
    debs: dict[tuple[str, str], Deb] = field(default_factory=dict)
    path: str = "debs.lock"

    def text(self) -> str:
        lines = [
            f"# Debian packages of the {self.image} image, every .deb by name, version, architecture and sha256",
            "# (scripts/deb_lock.py; regenerate with `make deb-lock`, or a build with RELOCK=1).",
            f"# snapshot: {self.snapshot}",
            *[f"# release: {r}" for r in self.releases],
            HEADER,
        ]
        lines += [d.line() for d in sorted(self.debs.values(), key=lambda d: d.key)]
        return "\n".join(lines) + "\n"

    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()


def parse_lock(text: str, path: str = "debs.lock") -> Lock:
    image = snapshot = ""
    releases: list[str] = []
    debs: dict[tuple[str, str], Deb] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*(snapshot|release):\s*(.+)", line)
            if m and m.group(1) == "snapshot":
                snapshot = m.group(2).strip()
            elif m:
                releases.append(m.group(2).strip())
            m = re.match(r"# Debian packages of the (\S+) image", line)
            if m:
                image = m.group(1)
            continue
        parts = line.split()
        if len(parts) != 8 or not re.fullmatch(r"[0-9a-f]{64}", parts[3]) or not parts[4].isdigit():
            raise LockError(f"{path}:{n}: not '{HEADER[2:]}': {line!r}")
        deb = Deb(*parts[:4], int(parts[4]), *parts[5:])
        if deb.key in debs:
            raise LockError(f"{path}:{n}: {deb.package}:{deb.arch} is locked twice")
        debs[deb.key] = deb
    if not re.fullmatch(r"\d{8}T\d{6}Z", snapshot):
        raise LockError(f"{path}: no '# snapshot: YYYYMMDDTHHMMSSZ' line (the archive state the lock was made from)")
    if not debs:
        raise LockError(f"{path}: locks no package")
    return Lock(image, snapshot, releases, debs, path)


def read_lock(path: str | Path) -> Lock:
    p = Path(path)
    if not p.exists():
        raise LockError(f"{p}: missing: make deb-lock writes it (resolves the image's packages against the mirror)")
    return parse_lock(p.read_text(), str(p))


# --- what the mirror serves -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mirror:
    url: str
    suite: str
    components: tuple[str, ...]

    @property
    def archive(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


def parse_mirrors(spec: str) -> list[Mirror]:
    """DEBIAN_MIRRORS: mmdebstrap's `deb URL SUITE COMPONENT...` lines separated by |."""
    out = []
    for line in filter(None, (s.strip() for s in spec.split("|"))):
        parts = [p for p in line.split() if not p.startswith("[")]
        if len(parts) < 4 or parts[0] != "deb":
            raise LockError(f"DEBIAN_MIRRORS: not a 'deb URL SUITE COMPONENT' line: {line!r}")
        out.append(Mirror(parts[1].rstrip("/"), parts[2], tuple(parts[3:])))
    if not out:
        raise LockError("DEBIAN_MIRRORS is empty")
    return out


def _get(url: str, timeout: float = 120.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read()
    except (urllib.error.URLError, OSError) as exc:
        raise LockError(f"cannot fetch {url}: {exc}") from None


def parse_stanzas(text: str, wanted=("Package", "Version", "Architecture", "SHA256", "Size", "Filename", "Priority")):
    """The stanzas of a Packages (or control) file, with only the `wanted` fields."""
    stanza: dict[str, str] = {}
    for line in text.splitlines() + [""]:
        if not line:
            if stanza:
                yield stanza
                stanza = {}
            continue
        if line[0] in " \t":
            continue
        name, sep, value = line.partition(":")
        if sep and (wanted is None or name in wanted):
            stanza[name] = value.strip()


def verified_release(mirror: Mirror, keyring: str) -> str:
    """The mirror's InRelease for the suite, its signature checked by gpgv against Debian's keyring."""
    signed = _get(f"{mirror.url}/dists/{mirror.suite}/InRelease")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "InRelease"), Path(tmp, "Release")
        src.write_bytes(signed)
        res = subprocess.run(
            ["gpgv", "--quiet", "--keyring", keyring, "--output", str(out), str(src)], capture_output=True, text=True
        )
        if res.returncode != 0 or not out.exists():
            raise LockError(
                f"{mirror.url}/dists/{mirror.suite}/InRelease: signature not valid against {keyring}: "
                f"{res.stderr.strip().splitlines()[-1:] or res.returncode}"
            )
        return out.read_text()


def fetch_index(mirror: Mirror, keyring: str, arch: str = ARCH) -> tuple[str, list[dict]]:
    """(the suite's Release Date, the Packages stanzas of every component) as the mirror serves them now."""
    release = verified_release(mirror, keyring)
    date = next((line.split(":", 1)[1].strip() for line in release.splitlines() if line.startswith("Date:")), "?")
    sums = {}
    section = False
    for line in release.splitlines():
        if not line.startswith(" "):
            section = line.startswith("SHA256:")
            continue
        if section:
            digest, size, name = line.split()
            sums[name] = (digest, int(size))
    stanzas = []
    for comp in mirror.components:
        name = f"{comp}/binary-{arch}/Packages.xz"
        if name not in sums:
            raise LockError(f"{mirror.url} {mirror.suite}: InRelease lists no {name}")
        data = _get(f"{mirror.url}/dists/{mirror.suite}/{name}")
        if hashlib.sha256(data).hexdigest() != sums[name][0]:
            raise LockError(f"{mirror.url} {mirror.suite}: {name} does not match the sha256 InRelease gives")
        for s in parse_stanzas(lzma.decompress(data).decode("utf-8", "replace")):
            s["_archive"] = mirror.archive
            stanzas.append(s)
    return date, stanzas


def candidates(stanzas) -> dict[tuple[str, str], Deb]:
    """What apt would take for each (package, architecture): the highest version any suite serves."""
    best: dict[tuple[str, str], Deb] = {}
    for s in stanzas:
        try:
            deb = Deb(
                s["Package"],
                s["Version"],
                s["Architecture"],
                s["SHA256"],
                int(s["Size"]),
                s.get("Priority", "-"),
                s["_archive"],
                s["Filename"],
            )
        except KeyError:
            continue
        old = best.get(deb.key)
        if old is None or compare_versions(deb.version, old.version) > 0:
            best[deb.key] = deb
    return best


def mirror_state(mirrors: list[Mirror], keyring: str) -> tuple[list[str], dict[tuple[str, str], Deb], list[dict]]:
    releases, stanzas = [], []
    for m in mirrors:
        date, st = fetch_index(m, keyring)
        releases.append(f"{m.archive} {m.suite} {date}")
        stanzas += st
    return releases, candidates(stanzas), stanzas


# --- comparing ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    package: str
    arch: str
    old: Deb | None
    new: Deb | None

    def describe(self) -> str:
        name = f"{self.package}:{self.arch}"
        if self.old is None:
            return f"{name} new {self.new.version}"
        if self.new is None:
            return f"{name} {self.old.version} -> gone"
        if self.old.version == self.new.version:
            return (
                f"{name} {self.old.version} -> {self.new.version} (same version, other bytes: sha256 "
                f"{self.old.sha256[:12]}... -> {self.new.sha256[:12]}...)"
            )
        return f"{name} {self.old.version} -> {self.new.version}"


def moved(lock: Lock, served: dict[tuple[str, str], Deb]) -> list[Change]:
    """Every locked package the mirror no longer serves as locked (another version or other bytes, or none)."""
    out = []
    for key, old in sorted(lock.debs.items()):
        new = served.get(key)
        if new is None or new.version != old.version or new.sha256 != old.sha256:
            out.append(Change(old.package, old.arch, old, new))
    return out


def diff(old: dict[tuple[str, str], Deb], new: dict[tuple[str, str], Deb]) -> list[Change]:
    """Every package added, removed or changed from one package set to another."""
    return [
        Change(k[0], k[1], old.get(k), new.get(k))
        for k in sorted(set(old) | set(new))
        if old.get(k) is None
        or new.get(k) is None
        or old[k].version != new[k].version
        or old[k].sha256 != new[k].sha256
    ]


def refusal(lock: Lock, changes: list[Change]) -> str:
    return (
        f"{lock.path}: the mirror moved on for {len(changes)} of {len(lock.debs)} locked packages "
        f"(locked at snapshot {lock.snapshot}): "
        + "; ".join(c.describe() for c in changes)
        + " -- refusing to build; RELOCK=1 rebuilds and rewrites the lock, or fetch the locked state from "
        f"Debian's snapshot archive at {lock.snapshot} (DEBIAN_MIRRORS), or build from the cached .debs with "
        "DEBS_OFFLINE=1"
    )


# --- .deb files -----------------------------------------------------------------------------------------------------
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def deb_control(path: Path) -> str:
    res = subprocess.run(["dpkg-deb", "--field", str(path)], capture_output=True, text=True)
    if res.returncode != 0:
        raise LockError(f"{path}: not a .deb dpkg-deb can read: {res.stderr.strip()[:200]}")
    return res.stdout


def read_deb(path: Path) -> Deb:
    fields = next(parse_stanzas(deb_control(path), ("Package", "Version", "Architecture")))
    return Deb(fields["Package"], fields["Version"], fields["Architecture"], sha256_file(path), path.stat().st_size)


def _place(src: Path, dst: Path) -> None:
    tmp = dst.with_name(dst.name + ".part")
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def cached(deb: Deb, cache: Path) -> Path | None:
    p = cache / deb.cache_name
    return p if p.exists() and p.stat().st_size == deb.size and sha256_file(p) == deb.sha256 else None


def fetch(lock: Lock, cache: Path, mirrors: list[Mirror] | None) -> tuple[int, int, int]:
    """Every locked .deb into the cache: (from the cache, downloaded, bytes downloaded). Without mirrors (offline),
    a missing one is an error."""
    cache.mkdir(parents=True, exist_ok=True)
    by_archive = {m.archive: m for m in mirrors or []}
    hit = got = nbytes = 0
    missing = []
    for deb in sorted(lock.debs.values(), key=lambda d: d.key):
        if cached(deb, cache):
            hit += 1
            continue
        mirror = by_archive.get(deb.archive)
        if mirror is None:
            missing.append(f"{deb.package}:{deb.arch} {deb.version}")
            continue
        data = _get(f"{mirror.url}/{deb.filename}")
        if hashlib.sha256(data).hexdigest() != deb.sha256:
            raise LockError(
                f"{lock.path}: {deb.package}:{deb.arch} {deb.version} from {mirror.url}/{deb.filename} "
                f"is not the locked sha256 {deb.sha256[:16]}..."
            )
        tmp = cache / (deb.cache_name + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, cache / deb.cache_name)
        got += 1
        nbytes += len(data)
    if missing:
        raise LockError(
            f"{lock.path}: {len(missing)} locked .debs neither in {cache} nor on a mirror: " + ", ".join(missing)
        )
    return hit, got, nbytes


def make_repo(lock: Lock, cache: Path, out: Path) -> None:
    """A flat apt repository (`deb [trusted=yes] copy://OUT ./`) of exactly the locked .debs from the cache."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    stanzas = []
    for deb in sorted(lock.debs.values(), key=lambda d: d.key):
        src = cached(deb, cache)
        if src is None:
            raise LockError(f"{lock.path}: {deb.package}:{deb.arch} {deb.version} is not in {cache} (fetch first)")
        _place(src, out / deb.cache_name)
        # the archive's priority, as the mirror's index gives it, in place of the .deb's own
        control = re.sub(r"^Priority:.*\n", "", deb_control(src), flags=re.M).rstrip("\n")
        if deb.priority not in ("", "-"):
            control += f"\nPriority: {deb.priority}"
        stanzas.append(f"{control}\nFilename: ./{deb.cache_name}\nSize: {deb.size}\nSHA256: {deb.sha256}\n")
    packages = "\n".join(stanzas).encode()
    (out / "Packages").write_bytes(packages)
    (out / "Release").write_text(
        "Origin: mathsolver-kit\nLabel: locked Debian packages\nSuite: bookworm\nCodename: bookworm\n"
        f"Architectures: {ARCH} all\nSHA256:\n {hashlib.sha256(packages).hexdigest()} {len(packages)} Packages\n"
    )


def installed_set(path: Path) -> dict[tuple[str, str], str]:
    """(package, arch) -> version from a dpkg status file or a packages.tsv (package, version, arch)."""
    text = path.read_text()
    if "\t" in text.split("\n", 1)[0]:
        rows = [line.split("\t") for line in text.splitlines() if line.strip()]
        return {(r[0], r[2]): r[1] for r in rows}
    out = {}
    for s in parse_stanzas(text, ("Package", "Version", "Architecture", "Status")):
        if s.get("Status", "").endswith(" installed"):
            out[(s["Package"], s["Architecture"])] = s["Version"]
    return out


def check_installed(lock: Lock, path: Path) -> None:
    have = installed_set(path)
    want = {k: d.version for k, d in lock.debs.items()}
    problems = [
        f"{p}:{a} {want.get((p, a), 'not locked')} -> {have.get((p, a), 'not installed')}"
        for p, a in sorted(set(have) | set(want))
        if have.get((p, a)) != want.get((p, a))
    ]
    if problems:
        raise LockError(f"{path}: the root's packages are not {lock.path}'s: " + "; ".join(problems))


def make_lock(
    image: str, resolved: Path, mirrors: list[Mirror], keyring: str, cache: Path, old: Lock | None, path: str
) -> tuple[Lock, list[Change]]:
    """The lock of the .debs a resolution against the mirror downloaded (every one found in the mirror's index
    with the same bytes); they are stored in the cache."""
    releases, _best, stanzas = mirror_state(mirrors, keyring)
    index = {(s.get("Package"), s.get("Version"), s.get("Architecture"), s.get("SHA256")): s for s in stanzas}
    debs = {}
    for f in sorted(resolved.glob("*.deb")):
        d = read_deb(f)
        s = index.get((d.package, d.version, d.arch, d.sha256))
        if s is None:
            raise LockError(
                f"{f.name}: {d.package}:{d.arch} {d.version} with sha256 {d.sha256[:16]}... is not in "
                "the mirror's signed index"
            )
        d = Deb(d.package, d.version, d.arch, d.sha256, d.size, s.get("Priority", "-"), s["_archive"], s["Filename"])
        if d.key in debs:
            raise LockError(f"{resolved}: two versions of {d.package}:{d.arch} were downloaded")
        debs[d.key] = d
        cache.mkdir(parents=True, exist_ok=True)
        if not cached(d, cache):
            _place(f, cache / d.cache_name)
    if not debs:
        raise LockError(f"{resolved}: no .deb was downloaded (the resolution kept none)")
    snapshot = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    lock = Lock(image, snapshot, releases, debs, path)
    return lock, diff(old.debs if old else {}, debs)


# --- command line ---------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("check", "fetch", "repo", "installed", "lock", "diff", "sha256"))
    ap.add_argument("--lock", required=True, help="containers/<image>/debs.lock")
    ap.add_argument(
        "--mirrors",
        default=os.environ.get("DEBIAN_MIRRORS", ""),
        help="mmdebstrap mirror lines separated by | [DEBIAN_MIRRORS]",
    )
    ap.add_argument("--keyring", default=DEFAULT_KEYRING)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"the .deb cache [{DEFAULT_CACHE}]")
    ap.add_argument("--out", type=Path, help="repo: the repository directory")
    ap.add_argument("--resolved", type=Path, help="lock: the .debs a resolution downloaded")
    ap.add_argument("--image", default="", help="lock: the image's name (executor, vllm)")
    ap.add_argument("--status", type=Path, help="installed: a dpkg status file or packages.tsv")
    ap.add_argument("--against", type=Path, help="diff: the other lock")
    ap.add_argument("--offline", action="store_true", help="fetch: the cache only, no mirror")
    args = ap.parse_args(argv)
    try:
        if args.command == "lock":
            old = None
            if Path(args.lock).exists():
                try:
                    old = parse_lock(Path(args.lock).read_text(), args.lock)
                except LockError as exc:
                    print(f"{PROG}: the old lock is not readable ({exc}); writing a new one", file=sys.stderr)
            lock, changes = make_lock(
                args.image or (old.image if old else "?"),
                args.resolved,
                parse_mirrors(args.mirrors),
                args.keyring,
                args.cache,
                old,
                args.lock,
            )
            if old is not None and not changes:  # the same packages: the old snapshot still names their state
                print(
                    f"{PROG}: {args.lock}: no package changed since snapshot {old.snapshot}; the lock is kept",
                    file=sys.stderr,
                )
                return 0
            Path(args.lock).write_text(lock.text())
            what = "; ".join(c.describe() for c in changes) if old else f"{len(changes)} packages, first lock"
            print(
                f"{PROG}: wrote {args.lock}: {len(lock.debs)} packages at snapshot {lock.snapshot}; "
                f"changed: {what or 'nothing'}",
                file=sys.stderr,
            )
            return 0
        lock = read_lock(args.lock)
        if args.command == "sha256":
            print(hashlib.sha256(Path(args.lock).read_bytes()).hexdigest(), len(lock.debs), lock.snapshot)
        elif args.command == "check":
            releases, served, _ = mirror_state(parse_mirrors(args.mirrors), args.keyring)
            changes = moved(lock, served)
            if changes:
                print(f"{PROG}: ERROR: {refusal(lock, changes)}", file=sys.stderr)
                return 3
            print(
                f"{PROG}: {args.lock}: the mirror serves all {len(lock.debs)} locked packages as locked "
                f"({'; '.join(releases)})",
                file=sys.stderr,
            )
        elif args.command == "fetch":
            hit, got, nbytes = fetch(lock, args.cache, None if args.offline else parse_mirrors(args.mirrors))
            print(
                f"{PROG}: {args.lock}: {hit} .debs from {args.cache}, {got} downloaded ({nbytes} bytes)",
                file=sys.stderr,
            )
        elif args.command == "repo":
            make_repo(lock, args.cache, args.out)
            print(f"{PROG}: {args.out}: flat repository of the {len(lock.debs)} locked .debs", file=sys.stderr)
        elif args.command == "installed":
            check_installed(lock, args.status)
            print(f"{PROG}: {args.status}: exactly the {len(lock.debs)} locked packages", file=sys.stderr)
        elif args.command == "diff":
            changes = diff(read_lock(args.against).debs, lock.debs)
            print("\n".join(c.describe() for c in changes) or "no change")
    except LockError as exc:
        print(f"{PROG}: ERROR: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
