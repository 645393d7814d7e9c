"""Which unit convention applies to a dataset: an explicit choice, else the dataset's identity by content.

Never the file name: a MedCalc-Bench v1.0 file saved under any name is recognised by the sha256 of its bytes
(``KNOWN_DATASETS``); a file the kit does not know gets "exact" (plain arithmetic), and the reason says so.
The conventions themselves (constants, rounding rule) are ``harness.core.units.Convention`` objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core.units import CONVENTIONS, EXACT, MEDCALC_V1, Convention, get_convention

from .pins import pinned_sha256

__all__ = ["KnownDataset", "KNOWN_DATASETS", "ConventionChoice", "known_dataset", "default_convention",
           "resolve_convention", "convention_names"]


@dataclass(frozen=True)
class KnownDataset:
    sha256: str
    label: str
    convention: str
    source: str


# Datasets the kit knows by content. MedCalc-Bench v1.0's gold answers depend on its stepwise-rounded
# conversions (harness.core.units.MEDCALC_V1); Verified's reference code converts with plain arithmetic.
KNOWN_DATASETS: tuple[KnownDataset, ...] = (
    KnownDataset("c2d23097f8bdb7ae4a77dbf4a5a767335df7303998d7c7664a73a29fd8e2b31a",
                 "MedCalc-Bench v1.0 test_data.csv (1,047 rows)", MEDCALC_V1.name,
                 "ncbi-nlp/MedCalc-Bench dataset/test_data.csv"),
    KnownDataset("df9c3d74fb15a7641cb527382a6edce84d75d066d70ae520015be00e539dfd28",
                 "MedCalc-Bench v1.0 dev split test_dev_v1.0.csv (625 rows)", MEDCALC_V1.name,
                 "625 rows of MedCalc-Bench v1.0 test_data.csv (the kit's 'dev' split)"),
    KnownDataset("d653fe0b83289259f2eaa90784234a066bfec0414d502d28590de19a14239604",
                 "MedCalc-Bench v1.0 bundled slice test_slice.csv (110 rows)", MEDCALC_V1.name,
                 "two rows per calculator of test_dev_v1.0.csv (the kit's 'bundled-test')"),
    KnownDataset("0728278c75b93a96a358c928d60912e7a1ea247c4f37be276ffe9f13efae292f",
                 "MedCalc-Bench Verified one-shot split one_shot_verified.csv (55 rows)", EXACT.name,
                 "nikhilk7153/MedCalc-Bench-Verified datasets/one_shot_data.csv at 0eb5960"),
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
        return KnownDataset(sha256, "MedCalc-Bench Verified test split (pinned)", EXACT.name,
                            "checksums/datasets.json 'verified'")
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
        return {"name": self.name, "source": self.source, "reason": self.reason,
                "rounding": self.convention.rounding}

    def describe(self) -> str:
        return f"unit convention: {self.name} ({self.reason})"


def _sha(dataset: Any) -> str | None:
    return dataset if isinstance(dataset, str) else getattr(dataset, "sha256", None)


def default_convention(dataset: Any) -> ConventionChoice:
    """The convention a dataset (a ``Dataset`` or a content sha256) gets without ``--convention``."""
    sha = _sha(dataset)
    known = known_dataset(sha)
    if known is not None:
        return ConventionChoice(get_convention(known.convention), "dataset",
                                f"dataset content sha256 {sha[:12]}... is {known.label}")
    short = f"{sha[:12]}..." if sha else "unknown"
    return ConventionChoice(EXACT, "default",
                            f"dataset content sha256 {short} is not a file the kit knows; exact arithmetic "
                            f"(give --convention medcalc-v1.0 for a MedCalc-Bench v1.0 file)")


def resolve_convention(dataset: Any, option: str | Convention | None = None) -> ConventionChoice:
    """``option`` when given (it wins), else ``default_convention(dataset)``. ValueError for an unknown name."""
    if option is None or option == "":
        return default_convention(dataset)
    conv = get_convention(option)
    default = default_convention(dataset)
    note = "" if default.name == conv.name else f"; the dataset's own would be {default.name}"
    return ConventionChoice(conv, "option", f"--convention {conv.name}{note}")
