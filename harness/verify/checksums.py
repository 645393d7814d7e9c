"""sha256 manifests of committed files (per-case results, their manifests and derived tables).

A manifest is a text file in `sha256sum` format, one `<sha256>  <path>` line per file, paths relative
to the repository root and sorted. `check_manifest` names every missing, changed and unlisted file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from harness.core.hashing import file_sha256
from harness.core.paths import REPO_ROOT

ROOT = REPO_ROOT
RESULTS_MANIFEST = ROOT / "checksums" / "results.sha256"


class ChecksumError(Exception):
    pass


def covered_files(tree: Path) -> list[Path]:
    """Every regular file under a committed tree (hidden files and caches excluded)."""
    return sorted(p for p in tree.rglob("*") if p.is_file() and not any(part.startswith(".") or part == "__pycache__"
                                                                          for part in p.relative_to(tree).parts))


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


def check_manifest(manifest: Path, trees: list[Path], root: Path = ROOT) -> CheckReport:
    entries = read_manifest(manifest)
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
