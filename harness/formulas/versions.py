"""Formula versions as explicit inputs: the versioned entries of ``versions.toml``.

Some calculators exist in more than one version in routine use, and for four of the paper's 55 a
current guideline replaced the formula the benchmark rewards (Table s9: MDRD -> race-free CKD-EPI
2021, MELD Na -> MELD 3.0, Friedewald -> Sampson LDL, ATP III Framingham -> PREVENT). Each
:class:`FormulaVersion` holds the version's id, title, source, date, coefficients and the formula text
a formula-given arm shows the model. Exactly one version per calculator is the benchmark's
(``benchmark = true``): its text is the catalogue's own, so the default configuration is the paper's.

    from harness.formulas.versions import VERSIONS, parse_formula_versions, version_text
    chosen = parse_formula_versions(["9=ckd-epi-2021"])   # {9: "ckd-epi-2021"}, errors name the problem
    version_text(9, "ckd-epi-2021")                        # the text a Program-Solve prompt gets

A gold answer exists only for the benchmark version; for another version the kit computes a
"library-derived reference" from the gold variables (harness.library.versions), never mixed with
benchmark gold.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

VERSIONS_FILE = Path(__file__).with_name("versions.toml")
REFERENCE_LABEL = "library-derived reference"


class FormulaVersionError(ValueError):
    """A version entry or a --formula-version choice that is not valid; the message names it."""


@dataclass(frozen=True)
class FormulaVersion:
    calculator_id: int
    version: str
    benchmark: bool
    title: str
    source: str
    date: str
    coefficients: Mapping[str, Any]
    text: str | None   # None for the benchmark version: the catalogue's text is used

    def to_dict(self) -> dict:
        return {"calculator_id": self.calculator_id, "version": self.version, "benchmark": self.benchmark,
                "title": self.title, "source": self.source, "date": self.date,
                "coefficients": _plain(self.coefficients), "text": self.text}


def _plain(m: Any) -> Any:
    if isinstance(m, Mapping):
        return {k: _plain(v) for k, v in m.items()}
    return m


def _freeze(m: Any) -> Any:
    if isinstance(m, dict):
        return MappingProxyType({k: _freeze(v) for k, v in m.items()})
    return m


def load_versions(path: Path = VERSIONS_FILE) -> dict[int, dict[str, FormulaVersion]]:
    """Read and validate the versions file: one benchmark version per calculator, unique ids, every
    non-benchmark version with its own text, every coefficient a number."""
    with open(path, "rb") as fh:
        raw = tomllib.load(fh).get("version", [])
    out: dict[int, dict[str, FormulaVersion]] = {}
    for i, entry in enumerate(raw, start=1):
        where = f"{path.name}: version entry {i}"
        try:
            cid, vid = int(entry["calculator_id"]), str(entry["version"])
            fv = FormulaVersion(cid, vid, bool(entry["benchmark"]), entry["title"], entry["source"],
                                str(entry["date"]), _freeze(entry.get("coefficients", {})),
                                entry.get("text", "").strip() or None)
        except KeyError as exc:
            raise FormulaVersionError(f"{where}: missing field {exc.args[0]!r}") from None
        where = f"{path.name}: calculator {cid} version {vid!r}"
        if vid in out.get(cid, {}):
            raise FormulaVersionError(f"{where}: duplicate version id")
        if not fv.benchmark and not fv.text:
            raise FormulaVersionError(f"{where}: a non-benchmark version needs its own formula text")
        if fv.benchmark and fv.text:
            raise FormulaVersionError(f"{where}: the benchmark version uses the catalogue's text; remove 'text'")
        _check_numbers(fv.coefficients, where)
        out.setdefault(cid, {})[vid] = fv
    for cid, versions in out.items():
        bench = [v for v in versions.values() if v.benchmark]
        if len(bench) != 1:
            raise FormulaVersionError(f"{path.name}: calculator {cid} needs exactly one benchmark version, "
                                      f"has {len(bench)}")
    return dict(sorted(out.items()))


def _check_numbers(coeffs: Mapping, where: str) -> None:
    for k, v in coeffs.items():
        if isinstance(v, Mapping):
            _check_numbers(v, f"{where} coefficients.{k}")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise FormulaVersionError(f"{where}: coefficient {k!r} is not a number: {v!r}")


VERSIONS: dict[int, dict[str, FormulaVersion]] = load_versions()


def benchmark_version(calculator_id: int) -> str | None:
    """The benchmark's version id of a versioned calculator, None for an unversioned one."""
    versions = VERSIONS.get(int(calculator_id))
    if not versions:
        return None
    return next(v.version for v in versions.values() if v.benchmark)


def get_version(calculator_id: int, version: str) -> FormulaVersion:
    versions = VERSIONS.get(int(calculator_id))
    if not versions:
        raise FormulaVersionError(f"calculator {calculator_id} has no versioned formula entries "
                                  f"(versioned calculators: {sorted(VERSIONS)})")
    if version not in versions:
        raise FormulaVersionError(f"calculator {calculator_id} has no version {version!r}; "
                                  f"known: {', '.join(versions)}")
    return versions[version]


def parse_formula_versions(items: Iterable[str]) -> dict[int, str]:
    """``["CALC_ID=VERSION", ...]`` (the repeatable --formula-version option) -> {calculator id: version}.
    Choosing the benchmark version is allowed and dropped (it is the default), so the result holds
    only departures from the benchmark and an explicit benchmark choice hashes like no choice."""
    out: dict[int, str] = {}
    seen: dict[int, str] = {}
    for item in items:
        text = str(item).strip()
        cid_text, sep, version = text.partition("=")
        if not sep or not cid_text.strip() or not version.strip():
            raise FormulaVersionError(f"--formula-version {text!r}: expected CALC_ID=VERSION, e.g. 9=ckd-epi-2021")
        try:
            cid = int(cid_text)
        except ValueError:
            raise FormulaVersionError(f"--formula-version {text!r}: calculator id {cid_text!r} is not an integer") from None
        fv = get_version(cid, version.strip())
        if cid in seen and seen[cid] != fv.version:
            raise FormulaVersionError(f"--formula-version: calculator {cid} given twice ({seen[cid]!r} and {fv.version!r})")
        seen[cid] = fv.version
        if not fv.benchmark:
            out[cid] = fv.version
    return dict(sorted(out.items()))


def version_text(calculator_id: int, version: str | None) -> str | None:
    """The formula text of a non-benchmark version; None for the benchmark version (or None), meaning
    "use the catalogue's text"."""
    if version is None:
        return None
    fv = get_version(calculator_id, version)
    return None if fv.benchmark else fv.text


def version_of(calculator_id: int, chosen: Mapping[int, str] | None) -> str | None:
    """The version in force for a calculator under a choice map: the chosen one, else the benchmark's
    (None for calculators without versions)."""
    if chosen and int(calculator_id) in chosen:
        return chosen[int(calculator_id)]
    return benchmark_version(calculator_id)


__all__ = ["VERSIONS", "VERSIONS_FILE", "REFERENCE_LABEL", "FormulaVersion", "FormulaVersionError", "load_versions",
           "benchmark_version", "get_version", "parse_formula_versions", "version_text", "version_of"]
