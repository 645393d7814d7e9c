"""sha256 sums of result files: the one reader, checker and writer, shared by `harness verify` and `harness compare`.

A sums file is text in `sha256sum` format, one `<sha256>  <path>` line per file, sorted by path. A user's results
root holds its own `SHA256SUMS`, paths relative to that root, so it checks wherever it is copied (`cd ROOT &&
sha256sum -c SHA256SUMS` checks it too). The committed result sets are listed in `checksums/results.sha256`, paths
relative to the repository root. `sums_for(result_set)` says which sums cover a result set (the nearest SHA256SUMS
at or above it, else the committed list's entries for a committed set); `check_sums` names every missing, changed
and unlisted file.

Who writes them: every command that writes into a results root leaves its sums current when it ends, however it
ends (an error, Ctrl-C), through `SumsOnExit` and `write_own_sums`, the one writer: `harness run`, `make reproduce`
(`harness reproduce`), each shard and `harness merge`; the analysis commands (`stats`, `tables`, `figures`,
`report`, `compare`) writing inside a root that keeps its own sums rewrite them (`refresh_own_sums`); `harness
checksums update` writes them on demand. The repository's `results/` and its committed sets are covered by the
committed list instead (`in_committed_list`), which only `harness checksums update` rewrites.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.hashing import file_sha256
from harness.core.paths import REPO_ROOT

SUMS_FILE = "SHA256SUMS"  # a results root's own sums, paths relative to that root
SIGNATURE_FILE = "provenance.dsse.json"  # a set's signed statement (harness.verify.provenance): it signs
# the sums' files, so no sums file lists it
COMMITTED_SUMS = REPO_ROOT / "checksums" / "results.sha256"  # the committed result sets', relative to the repo
REPO_RESULTS = REPO_ROOT / "results"  # the committed sets' parent


class SumsError(Exception):
    """A sums file that cannot be read (the message names the file and line)."""


def covered_files(tree: Path) -> list[Path]:
    """Every regular file under a results tree (hidden files, caches, the tree's own SHA256SUMS and every set's
    signed statement, SIGNATURE_FILE, excluded)."""
    return sorted(
        p
        for p in tree.rglob("*")
        if p.is_file()
        and p != tree / SUMS_FILE
        and p.name != SIGNATURE_FILE
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(tree).parts)
    )


def read_sums(path: Path) -> dict[str, str]:
    """{relative path: sha256} of a sums file; SumsError naming the file (and line) when it is absent or malformed."""
    entries: dict[str, str] = {}
    if not path.exists():
        raise SumsError(f"{path}: sums file not found")
    for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or len(parts[0]) != 64 or any(c not in "0123456789abcdefABCDEF" for c in parts[0]):
            raise SumsError(f"{path}:{lineno}: not a '<sha256>  <path>' line: {line!r}")
        digest, rel = parts[0].lower(), parts[1].strip().lstrip("*")
        if rel in entries:
            raise SumsError(f"{path}:{lineno}: {rel} listed twice")
        entries[rel] = digest
    return entries


def write_sums(path: Path, trees: list[Path], root: Path = REPO_ROOT) -> int:
    """Write the sums of every file under `trees`, paths relative to `root`; the number of files."""
    lines = []
    trees = [t.resolve() for t in trees]
    root = root.resolve()
    for tree in trees:
        for p in covered_files(tree):
            lines.append(f"{file_sha256(p)}  {p.relative_to(root).as_posix()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# sha256 of every committed result file; regenerate with `harness checksums update`\n"
        + "\n".join(sorted(lines, key=lambda s: s[66:]))
        + "\n"
    )
    return len(lines)


@dataclass(frozen=True)
class SumsWritten:
    """A sums file just written: where, and how many files it lists."""

    path: str
    files: int


def write_own_sums(results_root: Path) -> SumsWritten:
    """A results root's own SHA256SUMS: every file under it, paths relative to it (written atomically)."""
    target = Path(results_root) / SUMS_FILE
    tmp = Path(results_root) / f".{SUMS_FILE}.tmp"
    n = write_sums(tmp, [Path(results_root)], root=Path(results_root))
    os.replace(tmp, target)
    return SumsWritten(str(target), n)


def write_committed_sums(committed: Path = COMMITTED_SUMS) -> SumsWritten:
    """The committed list: every file under the repository's results/, paths relative to the repository."""
    return SumsWritten(str(committed), write_sums(committed, [REPO_RESULTS], root=REPO_ROOT))


def in_committed_list(root: Path, committed: Path | None = None) -> bool:
    """Whether the committed list covers `root`: the repository's results/ itself, or a committed set in it (a
    directory of results/ the list has entries for). Such a root gets no SHA256SUMS of its own."""
    committed = COMMITTED_SUMS if committed is None else committed
    root = Path(root).resolve()
    results = REPO_RESULTS.resolve()
    if root == results:
        return True
    if root.parent != results or not committed.is_file():
        return False
    prefix = f"results/{root.name}/"
    return any(rel.startswith(prefix) for rel in read_sums(committed))


def _stat_tree(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file the sums cover: what tells whether a block wrote anything."""
    if not root.is_dir():
        return {}
    out = {}
    for p in covered_files(root):
        st = p.stat()
        out[p.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


class SumsOnExit:
    """A results root's own SHA256SUMS rewritten when the block ends, however it ends (an error, Ctrl-C), so what
    was written stays checkable; nothing when the block wrote nothing there (a run refused before it started leaves
    the root as it was), for a root the committed list covers, or one that was never made.

        with SumsOnExit(out) as sums:
            ...                       # write records, manifests, outputs
        sums.written                  # the SumsWritten of the block's end (None when none was written)

    A failure to write the sums while another error ends the block is reported on stderr, never in its place."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.written: SumsWritten | None = None

    def __enter__(self) -> SumsOnExit:
        self._before = _stat_tree(self.root)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if not self.root.is_dir() or in_committed_list(self.root) or _stat_tree(self.root) == self._before:
            return
        try:
            self.written = write_own_sums(self.root)
        except OSError as write_error:
            if exc_type is None:
                raise
            print(
                f"could not write {self.root / SUMS_FILE} ({write_error}); `harness checksums update --results "
                f"{self.root}` writes it",
                file=sys.stderr,
            )


def refresh_own_sums(results_root: Path, written: Path) -> SumsWritten | None:
    """After a command wrote `written` inside a results root that keeps its own SHA256SUMS: rewrite them, so the
    root still verifies (None when the root keeps none, or `written` is outside it)."""
    root = Path(results_root).resolve()
    if not (root / SUMS_FILE).is_file() or not Path(written).resolve().is_relative_to(root):
        return None
    return write_own_sums(root)


@dataclass
class SumsReport:
    """Each file against its sums: relative paths that match, are missing, changed, or are not listed."""

    ok: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not (self.missing or self.changed or self.unlisted)

    def lines(self) -> list[str]:
        return (
            [f"MISSING  {p}" for p in self.missing]
            + [f"CHANGED  {p}" for p in self.changed]
            + [f"UNLISTED {p}" for p in self.unlisted]
        )


def check_sums(
    entries: dict[str, str], trees: list[Path], root: Path, digest: Callable[[Path], str] = file_sha256
) -> SumsReport:
    """Each listed file (path relative to `root`) against its sha256; every file under `trees` not listed.
    `digest`: how a file's sha256 is had (a caller that hashed the files already passes its lookup)."""
    root = root.resolve()
    trees = [t.resolve() for t in trees]
    report = SumsReport()
    for rel, want in sorted(entries.items()):
        path = root / rel
        if not path.is_file():
            report.missing.append(rel)
        elif digest(path) != want:
            report.changed.append(rel)
        else:
            report.ok.append(rel)
    for tree in trees:
        if tree.exists():
            for path in covered_files(tree):
                rel = path.relative_to(root).as_posix()
                if rel not in entries:
                    report.unlisted.append(rel)
    return report


@dataclass(frozen=True)
class Sums:
    """The sums that cover one result set: its entries (paths relative to `base`), where they come from."""

    entries: dict[str, str]
    base: Path  # the directory the entries' paths are relative to
    source: Path  # the sums file read


def sums_for(result_set: Path, within: Path | None = None, committed: Path = COMMITTED_SUMS) -> Sums | None:
    """The sums covering a result set: the nearest SHA256SUMS at or above it (not above `within`, when given), else,
    for a set named like a committed one (`results/<name>`), the committed list's entries for it; None when none.
    SumsError when the sums file found cannot be read."""
    result_set = Path(result_set).resolve()
    for d in [result_set, *result_set.parents]:
        if within is not None and not d.is_relative_to(Path(within).resolve()):
            break
        if (d / SUMS_FILE).is_file():
            return Sums(read_sums(d / SUMS_FILE), d, d / SUMS_FILE)
    if committed.is_file():
        prefix = f"results/{result_set.name}/"
        entries = {rel[len(prefix) :]: digest for rel, digest in read_sums(committed).items() if rel.startswith(prefix)}
        if entries:
            return Sums(entries, result_set, committed)
    return None
