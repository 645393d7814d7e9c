"""The Debian layer of both images, locked (scripts/deb_lock.py, containers/{executor,vllm}/debs.lock): the committed
locks name every .deb with its sha256 and the archive state; a package the mirror moved on is refused, named with its
old and new version; the cache is filled only with bytes of the locked sha256; the build's repository holds exactly
the locked .debs; a root with other packages than the lock's is refused."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

LOCKS = {"executor": ROOT / "containers" / "executor" / "debs.lock", "vllm": ROOT / "containers" / "vllm" / "debs.lock"}


def _module():
    spec = importlib.util.spec_from_file_location("deb_lock", ROOT / "scripts" / "deb_lock.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["deb_lock"] = mod
    spec.loader.exec_module(mod)
    return mod


dl = _module()


@pytest.mark.parametrize("image", sorted(LOCKS))
def test_the_committed_lock_names_every_deb_with_its_sha256_and_the_archive_state(image):
    lock = dl.read_lock(LOCKS[image])
    assert lock.image == image
    assert [r.split()[:2] for r in lock.releases] == [
        ["debian", "bookworm"],
        ["debian", "bookworm-updates"],
        ["debian-security", "bookworm-security"],
    ]
    assert len(lock.debs) >= (40 if image == "executor" else 150)
    for deb in lock.debs.values():
        assert deb.priority in ("required", "important", "standard", "optional", "extra")
        assert deb.archive in ("debian", "debian-security") and deb.filename.startswith(
            ("pool/main/", "pool/updates/main/")
        )
        assert deb.filename.endswith(f"_{deb.arch}.deb") and deb.arch in ("amd64", "all")
    # the text is canonical: the lock writes back byte for byte
    assert lock.text() == LOCKS[image].read_text()
    if image == "vllm":  # the archive's override, not the .deb's field ("important"): minbase takes apt by it
        assert lock.debs[("apt", "amd64")].priority == "required"
    names = {d.package for d in lock.debs.values()}
    assert (
        {"libc6", "libseccomp2", "python3.11-minimal"} <= names
        if image == "executor"
        else {"libc6", "python3.11", "gcc-12", "ca-certificates", "apt"} <= names
    )


def _served_as_locked(lock):
    return dict(lock.debs)


def test_a_moved_package_is_refused_naming_it_with_its_old_and_new_version():
    text = LOCKS["executor"].read_text()
    lock = dl.parse_lock(text, "containers/executor/debs.lock")
    assert dl.moved(lock, _served_as_locked(lock)) == []
    libc6 = lock.debs[("libc6", "amd64")]
    seccomp = lock.debs[("libseccomp2", "amd64")]
    # the lock edited to an older libc6 (another .deb) and to other bytes of the same libseccomp2 version
    older = libc6.version.rsplit("u", 1)[0] + "u" + str(int(libc6.version.rsplit("u", 1)[1]) - 1)
    edited = text.replace(f"libc6 {libc6.version} amd64 {libc6.sha256}", f"libc6 {older} amd64 {'a' * 64}")
    edited = edited.replace(seccomp.sha256, "0" * 64)
    stale = dl.parse_lock(edited, "containers/executor/debs.lock")
    changes = dl.moved(stale, _served_as_locked(lock))
    assert [c.package for c in changes] == ["libc6", "libseccomp2"]
    line = dl.refusal(stale, changes)
    assert "\n" not in line
    assert line.startswith(
        "containers/executor/debs.lock: the mirror moved on for 2 of "
        f"{len(lock.debs)} locked packages (locked at snapshot {lock.snapshot}): "
    )
    assert f"libc6:amd64 {older} -> {libc6.version}" in line
    assert f"libseccomp2:amd64 {seccomp.version} -> {seccomp.version} (same version, other bytes" in line
    assert "RELOCK=1" in line
    # a package the mirror no longer serves at all
    gone = {k: v for k, v in lock.debs.items() if k != ("tar", "amd64")}
    assert dl.refusal(lock, dl.moved(lock, gone)).count("tar:amd64 ") == 1
    assert "-> gone" in dl.refusal(lock, dl.moved(lock, gone))


def test_the_check_command_exits_3_with_the_refusal_line(monkeypatch, capsys, tmp_path):
    lock = dl.read_lock(LOCKS["executor"])
    served = dict(lock.debs)
    old = served[("libc6", "amd64")]
    served[("libc6", "amd64")] = dl.Deb(
        old.package, old.version + "+b1", old.arch, "b" * 64, old.size, old.priority, old.archive, old.filename
    )
    monkeypatch.setattr(dl, "mirror_state", lambda mirrors, keyring: (["debian bookworm now"], served, []))
    mirrors = "deb http://mirror.invalid/debian bookworm main"
    assert dl.main(["check", "--lock", str(LOCKS["executor"]), "--mirrors", mirrors]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("deb-lock: ERROR: ") and err.count("\n") == 0
    assert f"libc6:amd64 {old.version} -> {old.version}+b1" in err
    monkeypatch.setattr(dl, "mirror_state", lambda mirrors, keyring: (["debian bookworm now"], dict(lock.debs), []))
    assert dl.main(["check", "--lock", str(LOCKS["executor"]), "--mirrors", mirrors]) == 0
    assert "serves all" in capsys.readouterr().err


@pytest.mark.parametrize(
    "a,b",
    [
        ("1.0~rc1", "1.0"),
        ("1.0", "1.0-1"),
        ("2.36-9+deb12u9", "2.36-9+deb12u10"),
        ("1:0.9", "2:0.1"),
        ("9.9", "1:0.1"),
        ("1.0a", "1.0+"),
        ("3.0.22-1~deb12u2", "3.0.22-1"),
        ("1.2.3-1", "1.2.3-1+b1"),
        ("1.00", "1.1"),
    ],
)
def test_debian_version_order(a, b):
    assert dl.compare_versions(a, b) == -1 and dl.compare_versions(b, a) == 1 and dl.compare_versions(a, a) == 0
    if shutil.which("dpkg"):
        assert subprocess.run(["dpkg", "--compare-versions", a, "lt", b]).returncode == 0


def test_a_malformed_or_incomplete_lock_is_refused_naming_the_line(tmp_path):
    text = LOCKS["executor"].read_text()
    with pytest.raises(dl.LockError, match=r"debs.lock:\d+: not 'package version"):
        dl.parse_lock(text.replace(" amd64 ", " amd64 zz", 1), "debs.lock")
    with pytest.raises(dl.LockError, match="no '# snapshot: "):
        dl.parse_lock("\n".join(line for line in text.splitlines() if "snapshot:" not in line), "debs.lock")
    with pytest.raises(dl.LockError, match="missing: make deb-lock"):
        dl.read_lock(tmp_path / "debs.lock")


def _tiny_deb(tmp_path, name, version):
    """A real .deb (dpkg-deb --build) of one file."""
    src = tmp_path / f"src-{name}"
    (src / "DEBIAN").mkdir(parents=True)
    (src / "usr" / "share" / name).mkdir(parents=True)
    (src / "usr" / "share" / name / "f").write_text(name)
    (src / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n"
    )
    out = tmp_path / f"{name}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(src), str(out)], check=True, capture_output=True)
    return out


@pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="dpkg-deb missing")
def test_fetch_keeps_only_locked_bytes_and_the_repository_holds_exactly_the_lock(tmp_path):
    mirror = tmp_path / "mirror" / "debian"
    (mirror / "pool" / "main" / "t").mkdir(parents=True)
    debs = {}
    for name, version in (("tone", "1.0-1"), ("ttwo", "2:0.5")):
        f = _tiny_deb(tmp_path, name, version)
        shutil.copy(f, mirror / "pool" / "main" / "t" / f.name)
        debs[(name, "all")] = dl.Deb(
            name,
            version,
            "all",
            hashlib.sha256(f.read_bytes()).hexdigest(),
            f.stat().st_size,
            "required" if name == "tone" else "-",
            "debian",
            f"pool/main/t/{f.name}",
        )
    lock = dl.Lock("test", "20260101T000000Z", ["debian bookworm x"], debs, "debs.lock")
    mirrors = dl.parse_mirrors(f"deb file://{mirror} bookworm main")
    cache = tmp_path / "cache"
    assert dl.fetch(lock, cache, mirrors)[:2] == (0, 2)
    assert dl.fetch(lock, cache, None)[:2] == (2, 0)  # offline: the cache alone
    assert {p.name for p in cache.iterdir()} == {"tone_1.0-1_all.deb", "ttwo_2%3a0.5_all.deb"}
    repo = tmp_path / "repo"
    dl.make_repo(lock, cache, repo)
    packages = (repo / "Packages").read_text()
    assert packages.count("Package: ") == 2 and f"SHA256: {debs[('tone', 'all')].sha256}" in packages
    assert "Filename: ./ttwo_2%3a0.5_all.deb" in packages
    assert packages.count("Priority: required") == 1  # the archive's priority from the lock, not the .deb's
    # the mirror now serves other bytes under the locked pool path: refused, the package named
    (mirror / "pool" / "main" / "t" / "tone.deb").write_bytes(b"other")
    with pytest.raises(dl.LockError, match=r"tone:all 1.0-1 from .* is not the locked sha256"):
        dl.fetch(lock, tmp_path / "clean-cache", mirrors)
    # a corrupted cache entry is not used; offline with nothing to fall back on names the package
    (cache / "tone_1.0-1_all.deb").write_bytes(b"corrupt")
    with pytest.raises(dl.LockError, match=r"1 locked .debs neither in .* nor on a mirror: tone:all 1.0-1"):
        dl.fetch(lock, cache, None)


def test_a_root_with_other_packages_than_the_lock_is_refused(tmp_path):
    lock = dl.read_lock(LOCKS["executor"])
    rows = [f"{d.package}\t{d.version}\t{d.arch}" for d in lock.debs.values()]
    tsv = tmp_path / "packages.tsv"
    tsv.write_text("\n".join(sorted(rows)) + "\n")
    dl.check_installed(lock, tsv)
    tsv.write_text("\n".join(sorted(rows + ["bash\t5.2.15-2+b7\tamd64"])) + "\n")
    with pytest.raises(dl.LockError, match=r"not .*debs.lock's: bash:amd64 not locked -> 5.2.15-2\+b7"):
        dl.check_installed(lock, tsv)


def test_both_builds_resolve_against_the_locked_repository_and_the_lock_is_an_input():
    lib = (ROOT / "scripts" / "lib" / "image-host.sh").read_text()
    assert 'DEB_REPO="deb [trusted=yes] copy://$BUILD_DIR/debs-repo ./"' in lib
    for script, lock in (("build-executor-image.sh", "executor"), ("build-vllm-image.sh", "vllm")):
        text = (ROOT / "scripts" / script).read_text()
        assert f'deb_layer {lock} "$DEBS_LOCK"' in text
        assert 'deb_lock.py" installed --lock "$DEBS_LOCK"' in text
    assert '"$DEB_REPO"' in (ROOT / "scripts" / "build-executor-image.sh").read_text()
    assert 'recipe_rootfs "$ROOT_DIR" "$include" "$DEB_REPO"' in (ROOT / "scripts" / "build-vllm-image.sh").read_text()


@pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="dpkg-deb missing")
def test_a_relock_takes_what_the_mirror_index_lists_and_keeps_the_lock_when_nothing_changed(
    tmp_path, monkeypatch, capsys
):
    resolved = tmp_path / "resolved"
    resolved.mkdir()
    stanzas = []
    for name, version in (("tone", "1.0-1"), ("ttwo", "2:0.5")):
        f = _tiny_deb(tmp_path, name, version)
        shutil.copy(f, resolved / f.name)
        stanzas.append(
            {
                "Package": name,
                "Version": version,
                "Architecture": "all",
                "Priority": "required",
                "SHA256": hashlib.sha256(f.read_bytes()).hexdigest(),
                "Size": str(f.stat().st_size),
                "Filename": f"pool/main/t/{name}.deb",
                "_archive": "debian",
            }
        )
    monkeypatch.setattr(
        dl, "mirror_state", lambda mirrors, keyring: (["debian bookworm d"], dl.candidates(stanzas), stanzas)
    )
    lock_path = tmp_path / "debs.lock"
    args = [
        "lock",
        "--lock",
        str(lock_path),
        "--image",
        "test",
        "--resolved",
        str(resolved),
        "--mirrors",
        "deb http://mirror.invalid/debian bookworm main",
        "--cache",
        str(tmp_path / "cache"),
    ]
    assert dl.main(args) == 0
    lock = dl.read_lock(lock_path)
    assert lock.debs[("ttwo", "all")].filename == "pool/main/t/ttwo.deb"
    assert lock.debs[("ttwo", "all")].priority == "required" and lock.releases == ["debian bookworm d"]
    assert {p.name for p in (tmp_path / "cache").iterdir()} == {"tone_1.0-1_all.deb", "ttwo_2%3a0.5_all.deb"}
    first = lock_path.read_text()
    capsys.readouterr()
    assert dl.main(args) == 0 and lock_path.read_text() == first  # same packages: the lock is kept
    assert "no package changed since snapshot" in capsys.readouterr().err
    # the lock names what changed on a relock
    lock_path.write_text(first.replace(" 1.0-1 all ", " 0.9-1 all "))
    assert dl.main(args) == 0
    assert "changed: tone:all 0.9-1 -> 1.0-1" in capsys.readouterr().err
    # a downloaded .deb the signed index does not list (other bytes) is refused, naming it
    stanzas[0]["SHA256"] = "0" * 64
    assert dl.main(args) == 1
    assert "tone:all 1.0-1 with sha256" in capsys.readouterr().err


def _deb_layer(tmp_path, check_rc: int, cached: bool, moved: str | None = None):
    """The real deb_layer of scripts/lib/image-host.sh, with only what the mirror and cache answer played by a stand-in
    for deb_lock (check: exit CHECK_RC; fetch --offline: succeeds when CACHED); returns (exit status, the calls made,
    stderr)."""
    calls = tmp_path / "calls"
    script = f"""
set -u
die() {{ echo "DIE: $*" >&2; exit 1; }}
log() {{ echo "LOG: $*" >&2; }}
. '{ROOT}/scripts/lib/image-host.sh'
deb_lock() {{ echo "$*" >> '{calls}'
    case "$1" in
        check) return {check_rc} ;;
        fetch) case " $* " in *" --offline "*) [ {int(cached)} = 1 ] ;; *) return 0 ;; esac ;;
        sha256) echo abc 40 20261129T000000Z ;;
    esac; }}
deb_resolve() {{ echo "resolve $*" >> '{calls}'; }}
BUILD_DIR='{tmp_path}'
deb_layer executor '{tmp_path}/debs.lock' minbase python3
echo "REPO=$DEB_REPO"
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    if moved:
        env["DEBS_MOVED"] = moved
    (tmp_path / "debs.lock").write_text("x\n")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    return proc.returncode, calls.read_text().splitlines() if calls.exists() else [], proc.stderr


@pytest.mark.parametrize("moved", [None, "refuse", "relock"])
def test_a_moved_mirror_with_every_locked_deb_cached_builds_the_locked_state(tmp_path, moved):
    rc, calls, err = _deb_layer(tmp_path, check_rc=3, cached=True, moved=moved)
    assert rc == 0, err
    assert not any(c.startswith("resolve") for c in calls), calls  # never relocked: the locked bytes are at hand
    assert "every locked .deb is in" in err


def test_a_moved_mirror_without_the_cached_debs_is_refused_unless_relock_is_asked(tmp_path):
    rc, calls, err = _deb_layer(tmp_path, check_rc=3, cached=False)
    assert rc == 1 and "DIE:" in err and "not as locked" in err
    assert not any(c.startswith("resolve") for c in calls)
    (tmp_path / "b").mkdir()
    rc, calls, err = _deb_layer(tmp_path / "b", 3, False, "relock")
    assert rc == 0, err
    assert any(c.startswith("resolve executor") for c in calls), calls


def test_another_check_failure_is_refused_even_with_relock(tmp_path):
    rc, calls, err = _deb_layer(tmp_path, check_rc=1, cached=True, moved="relock")
    assert rc == 1 and "not as locked" in err
