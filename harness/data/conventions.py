"""Which unit convention applies to a dataset: an explicit choice, else the dataset's identity by content.

Never the file name. A known file is recognised by the sha256 of its bytes (``KNOWN_DATASETS``); any other
loaded dataset row by row, by the per-row fingerprints of the known v1.0 and Verified rows
(harness/data/row_fingerprints.py), so a subset, a reordering or a re-save of a known split gets that split's
convention:

* every row a known row of one convention (rows known to both count for either): that convention;
* known Verified rows and rows the kit does not know: exact (the default for unknown rows anyway);
* known v1.0 rows next to rows of another known convention, or next to rows the kit does not know, is
  refused (DatasetError with the counts): the kit cannot tell whether the unknown rows follow v1.0 (a
  Verified file's rows that Verified did not change look exactly like v1.0's), so ``--convention`` decides;
* no known row: exact (plain arithmetic), and the reason says so.

The conventions themselves (constants, rounding rule) are ``harness.core.units.Convention`` objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core.units import CONVENTIONS, EXACT, MEDCALC_V1, Convention, get_convention

from .errors import DatasetError
from .pins import pinned_sha256
from .row_fingerprints import known_rows, row_fingerprint

__all__ = [
    "KNOWN_DATASETS",
    "ConventionChoice",
    "KnownDataset",
    "MixedConventionsError",
    "RowCounts",
    "convention_names",
    "default_convention",
    "known_dataset",
    "resolve_convention",
    "row_counts",
]


@dataclass(frozen=True)
class KnownDataset:
    sha256: str
    label: str
    convention: str
    source: str


# Datasets the kit knows by content. MedCalc-Bench v1.0's gold answers depend on its stepwise-rounded
# conversions (harness.core.units.MEDCALC_V1); Verified's reference code converts with plain arithmetic.
KNOWN_DATASETS: tuple[KnownDataset, ...] = (
    KnownDataset(
        "c2d23097f8bdb7ae4a77dbf4a5a767335df7303998d7c7664a73a29fd8e2b31a",
        "MedCalc-Bench v1.0 test_data.csv (1,047 rows)",
        MEDCALC_V1.name,
        "ncbi-nlp/MedCalc-Bench dataset/test_data.csv",
    ),
    KnownDataset(
        "df9c3d74fb15a7641cb527382a6edce84d75d066d70ae520015be00e539dfd28",
        "MedCalc-Bench v1.0 dev split test_dev_v1.0.csv (625 rows)",
        MEDCALC_V1.name,
        "625 rows of MedCalc-Bench v1.0 test_data.csv (the kit's 'dev' split)",
    ),
    KnownDataset(
        "d653fe0b83289259f2eaa90784234a066bfec0414d502d28590de19a14239604",
        "MedCalc-Bench v1.0 bundled slice test_slice.csv (110 rows)",
        MEDCALC_V1.name,
        "two rows per calculator of test_dev_v1.0.csv (the kit's 'bundled-test')",
    ),
    KnownDataset(
        "0728278c75b93a96a358c928d60912e7a1ea247c4f37be276ffe9f13efae292f",
        "MedCalc-Bench Verified one-shot split one_shot_verified.csv (55 rows)",
        EXACT.name,
        "nikhilk7153/MedCalc-Bench-Verified datasets/one_shot_data.csv at 0eb5960",
    ),
)


def convention_names() -> list[str]:
    """The names ``--convention`` accepts."""
    return sorted(CONVENTIONS)


def known_dataset(sha256: str | None) -> KnownDataset | None:
    """The known dataset with this content sha256: the table above, plus Verified once pinned."""
    if not sha256:
        return None
    for k in KNOWN_DATASETS:
        if k.sha256 == sha256:
            return k
    verified = pinned_sha256("verified")
    if verified and verified == sha256:
        return KnownDataset(
            sha256, "MedCalc-Bench Verified test split (pinned)", EXACT.name, "checksums/datasets.json 'verified'"
        )
    return None


@dataclass(frozen=True)
class ConventionChoice:
    """The convention in force and why: ``source`` is "option" (--convention), "dataset" (content sha256 of
    a known file) or "default" (an unknown file: exact)."""

    convention: Convention
    source: str
    reason: str

    @property
    def name(self) -> str:
        return self.convention.name

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "reason": self.reason, "rounding": self.convention.rounding}

    def describe(self) -> str:
        return f"unit convention: {self.name} ({self.reason})"


def _sha(dataset: Any) -> str | None:
    return dataset if isinstance(dataset, str) else getattr(dataset, "sha256", None)


@dataclass(frozen=True)
class RowCounts:
    """How many rows of a dataset are known rows of each convention (``by_convention``), known to more than
    one (``shared``), or not known (``unknown``); ``labels``: the known sets the rows come from."""

    by_convention: dict[str, int]
    shared: int
    unknown: int
    labels: tuple[str, ...]

    def describe(self) -> str:
        parts = [f"{n} known {name} row{'s' * (n != 1)}" for name, n in sorted(self.by_convention.items())]
        if self.shared:
            parts.append(f"{self.shared} row{'s' * (self.shared != 1)} known to both")
        if self.unknown:
            parts.append(f"{self.unknown} row{'s' * (self.unknown != 1)} the kit does not know")
        return ", ".join(parts)


class MixedConventionsError(DatasetError):
    """A dataset's known rows belong to more than one unit convention (or v1.0 rows sit next to unknown ones);
    ``counts`` says how many of each."""

    def __init__(self, message: str, counts: RowCounts, **where: Any) -> None:
        super().__init__(message, **where)
        self.counts = counts


def row_counts(cases: Any) -> RowCounts:
    """Count a dataset's rows by the convention of the known rows they match (module docstring)."""
    sets = known_rows()
    by_conv: dict[str, int] = {}
    shared = unknown = 0
    labels: list[str] = []
    for case in cases:
        fp = row_fingerprint(case)
        hits = [s for s in sets if fp in s.fingerprints]
        convs = {s.convention for s in hits}
        if not convs:
            unknown += 1
        elif len(convs) > 1:
            shared += 1
        else:
            (conv,) = convs
            by_conv[conv] = by_conv.get(conv, 0) + 1
        labels += [s.label for s in hits if s.label not in labels]
    return RowCounts(by_conv, shared, unknown, tuple(labels))


def _by_rows(dataset: Any) -> ConventionChoice | None:
    """The convention a loaded dataset's rows give, None when no row is known; DatasetError when they mix."""
    counts = row_counts(dataset.cases)
    total = len(dataset.cases)
    path = getattr(dataset, "path", None)
    known = sorted(counts.by_convention)
    if not known:
        return None
    v1 = MEDCALC_V1.name
    if len(known) > 1 or (known == [v1] and counts.unknown):
        raise MixedConventionsError(
            f"the rows mix unit conventions: {counts.describe()} (of {total}; known rows by content, "
            "harness/data/row_fingerprints.py). The kit cannot choose one for the whole file: split it by "
            "convention, or give --convention exact|medcalc-v1.0",
            counts,
            file=path,
        )
    (name,) = known
    rest = f"; {counts.describe()}" if counts.unknown or counts.shared else ""
    return ConventionChoice(
        get_convention(name),
        "dataset",
        f"{counts.by_convention[name]} of {total} rows are known rows of "
        f"{' and '.join(counts.labels)} by content{rest}",
    )


def default_convention(dataset: Any) -> ConventionChoice:
    """The convention a dataset (a ``Dataset`` or a content sha256) gets without ``--convention``. A loaded
    dataset whose rows mix conventions raises DatasetError with the counts (module docstring)."""
    sha = _sha(dataset)
    known = known_dataset(sha)
    if known is not None:
        return ConventionChoice(
            get_convention(known.convention),
            "dataset",
            f"dataset content sha256 {known.sha256[:12]}... is {known.label}",
        )
    if getattr(dataset, "cases", None):
        by_rows = _by_rows(dataset)
        if by_rows is not None:
            return by_rows
    short = f"{sha[:12]}..." if sha else "unknown"
    return ConventionChoice(
        EXACT,
        "default",
        f"dataset content sha256 {short} is not a file the kit knows and no row is a known "
        f"row; exact arithmetic (give --convention medcalc-v1.0 for MedCalc-Bench v1.0 rows)",
    )


def resolve_convention(dataset: Any, option: str | Convention | None = None) -> ConventionChoice:
    """``option`` when given (it wins), else ``default_convention(dataset)``. ValueError for an unknown name."""
    if option is None or option == "":
        return default_convention(dataset)
    conv = get_convention(option)
    try:
        default = default_convention(dataset)
        note = "" if default.name == conv.name else f"; the dataset's own would be {default.name}"
    except MixedConventionsError as exc:  # the option decides; the reason keeps the counts
        note = f"; the dataset's rows mix conventions ({exc.counts.describe()})"
    return ConventionChoice(conv, "option", f"--convention {conv.name}{note}")
