"""`verify(root) -> Report`: every check of a results root, as data. `harness verify` prints the report;
`make reproduce` (harness.reproduce.reproduction) and the rehearsal call it.

What a root is checked against:
- checksums, per result set (a directory holding <model>/<arm>/seed<N>.jsonl): the nearest SHA256SUMS
  at or above the set inside the root (a user's own root: `make reproduce` writes one, `harness checksums
  update --results ROOT` writes one for any root); else, for a set named like a committed one
  (`results/cpu-demo`, `results/gold-solve`), the committed sums list's entries for it; else none, which
  is said, not failed. Verifying the repository's `results/` also names a committed set that is gone.
  With an explicit sums file (`--sums`), the whole root is checked against it (paths relative to the repository
  root, or to the root's parent outside it), as before;
- records: real and synthetic records mixed, the unit convention of each convention-dependent arm, every
  stored reply or value rescored against its stored score;
- tables: a set's `tables/` re-derived byte for byte.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.tables import build_all
from harness.core.paths import REPO_ROOT as ROOT
from harness.core.sums import COMMITTED_SUMS, SumsError, SumsReport, check_sums, read_sums, sums_for
from harness.model.rehearsal.labels import mixing_problem
from harness.run.store import result_sets
from harness.verify.keys import SigningKeyError, read_allowed_signers
from harness.verify.provenance import ProvenanceError, check_signed
from harness.verify.rescore import check_files, convention_problems, merged_conventions

REPO_RESULTS = ROOT / "results"


@dataclass
class Report:
    """What verify found: `notes` say what was checked and passed, `problems` each name a file (and line)."""

    root: Path
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems

    def add(self, notes: list[str], problems: list[str]) -> None:
        self.notes += notes
        self.problems += problems


def root_for(results_root: Path) -> Path:
    """An explicit sums file's paths are relative to the repository root, or to the results root's parent
    outside it."""
    results_root = results_root.resolve()
    return ROOT if results_root.is_relative_to(ROOT) else results_root.parent


def _shown(path: Path) -> str:
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _lines(report: SumsReport, base: Path) -> list[str]:
    return [f"{line[:9]}{_shown(base / line[9:])}" for line in report.lines()]


def check_checksums(
    results_root: Path, sums: Path | None = None, committed_sums: Path = COMMITTED_SUMS
) -> tuple[list[str], list[str]]:
    """(notes, problems) of the checksums of every result set under the root (see the module's docstring)."""
    root = results_root.resolve()
    if sums is not None:
        try:
            report = check_sums(read_sums(sums), [root], root=root_for(root))
        except SumsError as exc:
            return [], [str(exc)]
        return [f"checksums: {len(report.ok)} files match {sums}"], report.lines()
    committed: dict[str, str] = read_sums(committed_sums) if committed_sums.is_file() else {}
    committed_sets = sorted({"/".join(rel.split("/")[:2]) for rel in committed if rel.count("/") >= 2})
    sets = result_sets(root)
    if root == REPO_RESULTS.resolve():  # a committed set that is gone is named, not skipped
        sets = sorted(set(sets) | {ROOT / s for s in committed_sets})
    notes: list[str] = []
    problems: list[str] = []
    done: set[Path] = set()
    for result_set in sets:
        try:
            found = sums_for(result_set, within=root, committed=committed_sums)
        except SumsError as exc:
            problems.append(str(exc))
            continue
        if found is None:
            notes.append(
                f"checksums: none for {_shown(result_set)} (record them with `harness checksums update "
                f"--results {_shown(result_set)}`; rescoring still checks every record)"
            )
            continue
        own = found.source != committed_sums
        if own and found.base in done:
            continue
        done.add(found.base)
        report = check_sums(found.entries, [found.base], root=found.base)
        notes.append(
            f"checksums: {len(report.ok)} files match {_shown(found.source)}"
            if own
            else f"checksums: {len(report.ok)} files of {_shown(result_set)} match {_shown(committed_sums)}"
        )
        problems += _lines(report, found.base)
    return notes, problems


def check_records(result_set: Path, convention: str | None = None) -> tuple[list[str], list[str]]:
    """(notes, problems) from one read of each results file (the store's reader, files spread over worker
    processes): real and synthetic (rehearsal-server) records mixed fail; each convention-dependent arm's
    convention is said, and a set that mixes conventions (or, with `convention`, was made under another
    one) fails; every stored reply or value is rescored against its stored score."""
    checks = check_files(result_set)
    failed = next((c for c in checks if c.error is not None), None)
    if failed is not None:
        return [], [f"RESCORE  {failed.error}"]
    notes, conv_problems = convention_problems(result_set, convention, merged_conventions(checks))
    firsts: dict = {}
    for c in checks:
        for kind, item in c.firsts.items():
            firsts.setdefault(kind, item)  # the first record of each kind, in file order, decides mixing
    problem = mixing_problem(firsts.values())
    mixing = [f"SYNTHETIC {result_set}: {problem}"] if problem else []
    mismatches = [
        f"{c.path}: ignoring an incomplete last line (a committed file must end with a complete record)"
        for c in checks
        if c.torn
    ] + [m for c in checks for m in c.mismatches]
    notes = list(notes) + [
        f"rescoring: {sum(c.records for c in checks)} records in {result_set} reproduce their stored scores"
        if not mismatches
        else f"rescoring: {len(mismatches)} mismatches in {result_set}"
    ]
    return notes, mixing + [f"CONVENTION {p}" for p in conv_problems] + [f"RESCORE  {m}" for m in mismatches]


def check_tables(result_set: Path) -> tuple[list[str], list[str]]:
    """Recompute the tables of a result set and compare them byte for byte with the ones it holds."""
    committed = result_set / "tables"
    if not committed.is_dir():
        return [], []
    with tempfile.TemporaryDirectory() as tmp:
        build_all(result_set, Path(tmp))
        fresh = {p.relative_to(tmp).as_posix(): p.read_bytes() for p in Path(tmp).rglob("*") if p.is_file()}
        old = {p.relative_to(committed).as_posix(): p.read_bytes() for p in committed.rglob("*") if p.is_file()}
    problems = [
        f"TABLE    {committed / name}: differs from the recomputed table"
        for name in sorted(old)
        if name in fresh and fresh[name] != old[name]
    ]
    problems += [
        f"TABLE    {committed / name}: committed but not produced by the current code"
        for name in sorted(old)
        if name not in fresh
    ]
    problems += [
        f"TABLE    {committed / name}: produced by the current code but not committed"
        for name in sorted(fresh)
        if name not in old
    ]
    return ([] if problems else [f"tables: {len(old)} files in {committed} re-derive byte for byte"]), problems


def check_signatures(results_root: Path, signed_by: Path) -> tuple[list[str], list[str]]:
    """(notes, problems): each result set's signed statement (harness.verify.provenance), the first thing that
    differs named per set."""
    try:
        allowed = read_allowed_signers(signed_by)
    except SigningKeyError as exc:
        return [], [f"SIGNATURE {exc}"]
    notes, problems = [], []
    for result_set in result_sets(Path(results_root)):
        try:
            notes.append(check_signed(result_set, allowed))
        except ProvenanceError as exc:
            problems.append(f"SIGNATURE {exc}")
    return notes, problems


def verify(
    results_root: Path,
    *,
    sums: Path | None = None,
    convention: str | None = None,
    tables: bool = True,
    committed_sums: Path = COMMITTED_SUMS,
    signed_by: Path | None = None,
) -> Report:
    """Every check of a results root: checksums, records (mixing, convention, rescoring), tables; with `signed_by`
    (an allowed-signers file) each set's signature, signed digests and provenance first."""
    report = Report(Path(results_root))
    if signed_by is not None:
        report.add(*check_signatures(Path(results_root), signed_by))
    report.add(*check_checksums(Path(results_root), sums, committed_sums))
    for result_set in result_sets(Path(results_root)):
        report.add(*check_records(result_set, convention))
        if tables:
            report.add(*check_tables(result_set))
    return report
