"""sha256 manifests of result files (per-case results, their manifests and derived tables).

A manifest is a text file in `sha256sum` format, one `<sha256>  <path>` line per file, sorted by path.
The committed result sets are listed in `checksums/results.sha256`, paths relative to the repository
root; a user's results root (a `make reproduce` output, or any root after `harness checksums update
--results ROOT`) holds its own `SHA256SUMS`, paths relative to that root, so it verifies wherever it is
copied (`cd ROOT && sha256sum -c SHA256SUMS` checks it too). `check_manifest` names every missing,
changed and unlisted file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from harness.core.hashing import file_sha256
from harness.core.paths import REPO_ROOT

ROOT = REPO_ROOT
RESULTS_MANIFEST = ROOT / "checksums" / "results.sha256"
CHECKSUM_FILE = "SHA256SUMS"          # a results root's own checksums, paths relative to that root


class ChecksumError(Exception):
    pass


def covered_files(tree: Path) -> list[Path]:
    """Every regular file under a results tree (hidden files, caches and the tree's own SHA256SUMS excluded)."""
    return sorted(p for p in tree.rglob("*") if p.is_file() and p != tree / CHECKSUM_FILE
                  and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(tree).parts))


def read_manifest(manifest: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    if not manifest.exists():
        raise ChecksumError(f"{manifest}: checksum manifest not found")
    for lineno, line in enumerate(manifest.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise ChecksumError(f"{manifest}:{lineno}: not a '<sha256>  <path>' line: {line!r}")
        digest, rel = parts[0].lower(), parts[1].strip().lstrip("*")
        if rel in entries:
            raise ChecksumError(f"{manifest}:{lineno}: {rel} listed twice")
        entries[rel] = digest
    return entries


def write_manifest(manifest: Path, trees: list[Path], root: Path = ROOT) -> int:
    lines = []
    trees = [t.resolve() for t in trees]
    root = root.resolve()
    for tree in trees:
        for path in covered_files(tree):
            lines.append(f"{file_sha256(path)}  {path.relative_to(root).as_posix()}")
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text("# sha256 of every committed result file; regenerate with `harness checksums update`\n"
                        + "\n".join(sorted(lines, key=lambda s: s[66:])) + "\n")
    return len(lines)


@dataclass
class CheckReport:
    ok: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not (self.missing or self.changed or self.unlisted)

    def lines(self) -> list[str]:
        out = [f"MISSING  {p}" for p in self.missing]
        out += [f"CHANGED  {p}" for p in self.changed]
        out += [f"UNLISTED {p}" for p in self.unlisted]
        return out


def write_own_checksums(results_root: Path) -> dict:
    """A results root's own SHA256SUMS: every file under it, paths relative to it (written atomically)."""
    target = Path(results_root) / CHECKSUM_FILE
    tmp = Path(results_root) / f".{CHECKSUM_FILE}.tmp"
    n = write_manifest(tmp, [Path(results_root)], root=Path(results_root))
    os.replace(tmp, target)
    return {"path": str(target), "files": n}


def check_manifest(manifest: Path, trees: list[Path], root: Path = ROOT) -> CheckReport:
    return check_entries(read_manifest(manifest), trees, root)


def check_entries(entries: dict[str, str], trees: list[Path], root: Path) -> CheckReport:
    """Each listed file (path relative to `root`) against its sha256; every file under `trees` not listed."""
    root = root.resolve()
    trees = [t.resolve() for t in trees]
    report = CheckReport()
    for rel, digest in sorted(entries.items()):
        path = root / rel
        if not path.is_file():
            report.missing.append(rel)
        elif file_sha256(path) != digest:
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
