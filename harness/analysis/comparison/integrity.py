"""Integrity first: the files a comparison reads, against the sums written with them.

A number is judged only when every file it is computed from is as it was written. The files the comparison reads
are the results files (`<model>/<arm>/seed<N>.jsonl`) and the manifests directly in the root
(harness.run.manifest.manifest_files). Each is set against the root's `SHA256SUMS` (harness.core.sums.sums_for: the
nearest at or above the root; for a committed set, the committed `checksums/results.sha256`):

* a file whose sha256 is not the one the sums record (changed), one they list that is gone (missing), or one they do
  not list (added after they were written) makes the numbers it feeds *not comparable: changed after it was
  written*, naming the file: a results file feeds its (model, arm); a run manifest every (model, arm) it covers; a
  manifest that is gone, or is not listed and cannot be read, feeds every number (what it covered cannot be told);
* no sums at all: every number is not comparable ("no SHA256SUMS: nothing shows these files are as written"), the
  fix named (`harness checksums update --results ROOT` right after a run; `make reproduce` writes them);
* a sums file that cannot be read: the comparison refuses the root, naming the file and line (`IntegrityError`);
* a changed file that no longer parses: the comparison refuses it with the reader's error, which then also says the
  file changed after it was written (`changed_note`);
* a file the comparison does not read (tables, the report, logs, its own outputs) that differs is named in the
  summary and changes no verdict (`harness verify` checks every file).

The sums are not signed: an edit that rewrites them together with the files is beyond what they can show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.core.hashing import file_sha256
from harness.core.parallel import ordered_map
from harness.core.sums import SUMS_FILE, SumsError, covered_files, sums_for
from harness.run.manifest import MANIFEST_GLOB, SHARD_MANIFEST, ManifestError, manifest_files, read_manifest
from harness.run.store import StoreError, iter_result_files, model_slug, results_location

CHANGED, MISSING, UNLISTED = "changed", "missing", "not listed"
WHAT = {
    CHANGED: "its sha256 is not the one {sums} records",
    MISSING: "listed in {sums}, now missing",
    UNLISTED: "not in {sums}: added after it was written",
}
FIX = "`harness checksums update --results {root}` records them right after a run; `make reproduce` writes them"


class IntegrityError(ValueError):
    """A root whose sums cannot be read: the comparison refuses it (the message names the file and line)."""


@dataclass(frozen=True)
class FileProblem:
    rel: str  # relative to the results root
    what: str  # CHANGED | MISSING | UNLISTED

    def text(self, sums: str) -> str:
        return f"changed after it was written: {self.rel} ({WHAT[self.what].format(sums=sums)})"


@dataclass
class Integrity:
    """The files a comparison reads against the root's sums, and what each problem makes not comparable."""

    root: Path
    sums: Path | None  # the sums file read; None: no sums cover the root
    results: dict[tuple[str, str], list[FileProblem]] = field(default_factory=dict)  # (model dir, arm) -> problems
    manifests: dict[Path, FileProblem] = field(default_factory=dict)  # a manifest file present -> its problem
    everything: list[FileProblem] = field(default_factory=list)  # problems that feed every number
    unread: list[FileProblem] = field(default_factory=list)  # files no number is read from
    checked: int = 0  # files read and found as written
    digests: dict[Path, str] = field(default_factory=dict)  # sha256 of each file read (by resolved path)

    @property
    def sums_name(self) -> str:
        return self.sums.name if self.sums is not None else SUMS_FILE

    def missing_sums(self) -> str | None:
        """Why no number can be judged for want of sums, or None."""
        if self.sums is not None:
            return None
        return (
            f"no {SUMS_FILE} covers {self.root}: nothing shows these files are as written ("
            + FIX.format(root=self.root)
            + ")"
        )

    def problems_for(self, model: str, arm: str, manifests: list[Path]) -> list[str]:
        """Every integrity reason of the stored (model, arm), whose run manifests are `manifests`."""
        out = [p.text(self.sums_name) for p in self.everything]
        out += [p.text(self.sums_name) for p in self.results.get((model_slug(model), arm), [])]
        out += [self.manifests[m].text(self.sums_name) for m in manifests if m in self.manifests]
        return out

    def summary(self) -> str:
        """One line: what was checked against which sums, and what differs."""
        if self.sums is None:
            return f"integrity: not checked: {self.missing_sums()}; every number is not comparable"
        read = [p for v in self.results.values() for p in v] + list(self.manifests.values()) + self.everything
        parts = [f"integrity: {self.checked} files read match {self.sums}"]
        if read:
            shown = ", ".join(f"{p.rel} ({p.what})" for p in sorted(read, key=lambda p: p.rel)[:5])
            parts.append(
                f"{len(read)} read file(s) changed after they were written, their numbers not comparable: "
                f"{shown}" + ("; ..." if len(read) > 5 else "")
            )
        if self.unread:
            shown = ", ".join(f"{p.rel} ({p.what})" for p in self.unread[:5])
            parts.append(
                f"{len(self.unread)} file(s) no number is read from differ ({shown}"
                + ("; ..." if len(self.unread) > 5 else "")
                + "; `harness verify` names every file)"
            )
        return "; ".join(parts)


def check_integrity(root: Path, digests: dict[Path, str] | None = None) -> Integrity:
    """The root's files against its sums (module docstring); `digests`: sha256 of files already hashed."""
    root = Path(root).resolve()
    try:
        sums = sums_for(root)
    except SumsError as exc:
        raise IntegrityError(f"{exc}; the comparison reads the root's sums first and cannot check these") from None
    out = Integrity(root, None if sums is None else sums.source)
    known = {Path(p).resolve(): d for p, d in (digests or {}).items()}
    read_files = [p.resolve() for p in iter_result_files(root)] + [p.resolve() for p in manifest_files(root)]
    todo = [p for p in read_files if p not in known]
    known.update(zip(todo, ordered_map(file_sha256, todo)))
    out.digests = {p: known[p] for p in read_files}
    if sums is None:
        return out
    listed = {(sums.base / rel).resolve(): d for rel, d in sums.entries.items()}
    read_set = set(read_files)
    manifest_set = {p.resolve() for p in manifest_files(root)}

    def rel_to_root(path: Path) -> str:
        return path.resolve().relative_to(root).as_posix()

    def place(path: Path, problem: FileProblem) -> None:
        if path in manifest_set:
            out.manifests[path] = problem
            return
        loc = results_location(path)
        out.results.setdefault((loc.model_dir, loc.arm), []).append(problem)

    for path in read_files:
        want = listed.get(path)
        if want is None:
            problem = FileProblem(rel_to_root(path), UNLISTED)
            if path in manifest_set and not _readable(path):
                out.everything.append(problem)
            else:
                place(path, problem)
        elif known[path] != want:
            place(path, FileProblem(rel_to_root(path), CHANGED))
        else:
            out.checked += 1
    for path in sorted(listed):
        if not path.is_relative_to(root) or path.is_file():
            continue
        rel = rel_to_root(path)
        if _is_results_file(path, root):
            loc = results_location(path)
            out.results.setdefault((loc.model_dir, loc.arm), []).append(FileProblem(rel, MISSING))
        elif path.parent == root and (path.match(MANIFEST_GLOB) or path.name == SHARD_MANIFEST):
            out.everything.append(FileProblem(rel, MISSING))  # a manifest that is gone: what it covered is unknown
        else:
            out.unread.append(FileProblem(rel, MISSING))
    for path in covered_files(root):
        path = path.resolve()
        if path in read_set:
            continue
        want = listed.get(path)
        if want is None:
            out.unread.append(FileProblem(rel_to_root(path), UNLISTED))
        elif file_sha256(path) != want:
            out.unread.append(FileProblem(rel_to_root(path), CHANGED))
    return out


def _readable(path: Path) -> bool:
    try:
        read_manifest(path)
    except ManifestError:
        return False
    return True


def _is_results_file(path: Path, root: Path) -> bool:
    try:
        loc = results_location(path)
    except StoreError:
        return False
    return loc.root == root and path.match("*/*/seed*.jsonl")


def changed_note(integrity: Integrity | None, path: Path | None) -> str:
    """' (it changed after it was written: ...)' for a file the reader refused, when the sums say it changed."""
    if integrity is None or path is None:
        return ""
    path = Path(path).resolve()
    for problems in [*integrity.results.values(), list(integrity.manifests.values()), integrity.everything]:
        for p in problems:
            if (integrity.root / p.rel).resolve() == path:
                return f"; {p.text(integrity.sums_name)}"
    return ""
