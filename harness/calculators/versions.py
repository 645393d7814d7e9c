"""Formula versions: the versioned entries of ``versions.toml`` and the library functions that compute them.

Some calculators exist in more than one version in routine use, and for four of the paper's 55 a
current guideline replaced the formula the benchmark rewards (Table s9: MDRD -> race-free CKD-EPI
2021, MELD Na -> MELD 3.0, Friedewald -> Sampson LDL, ATP III Framingham -> PREVENT). Each
:class:`FormulaVersion` holds the version's id, title, source, date, coefficients and the formula text
a formula-given arm shows the model. Exactly one version per calculator is the benchmark's
(``benchmark = true``): its text is the catalogue's own, so the default configuration is the paper's.

    from harness.calculators.versions import VERSIONS, parse_formula_versions, version_text
    chosen = parse_formula_versions(["9=ckd-epi-2021"])   # {9: "ckd-epi-2021"}, errors name the problem
    version_text(9, "ckd-epi-2021")                        # the text a Program-Solve prompt gets

A gold answer exists only for the benchmark version; for another version the kit computes a
"library-derived reference" from the gold variables (``library_reference``), never mixed with
benchmark gold.

Library implementations of every version: each is a ``Calculator`` whose function reads its numbers from
the version's ``coefficients`` (``versions.toml`` is the one place they are written). The library's own
calculators of the benchmark versions (CKD-EPI 2021 for ID 3, MDRD for ID 9, Friedewald for ID 44, in
harness.calculators.lab) are these functions at the benchmark coefficients (``benchmark_coefficients``);
tests/calculators/test_answers_unchanged.py checks every dataset row answers as before.
MELD Na (23) and the Framingham hard-CHD risk (46) are outside the 22, so the arms still abstain on
them; their versions are implemented here for the library-derived reference.

    from harness.calculators import versioned_calculator, solve_gold_versioned   # the library at a version
    from harness.calculators.versions import library_reference
    calc, provenance = versioned_calculator(9, "ckd-epi-2021")
    value, provenance = solve_gold_versioned(case, {9: "ckd-epi-2021"}, convention="exact")

Conventions where a version needs an input the benchmark's gold variables lack: MELD 3.0 needs sex
and albumin, PREVENT needs eGFR; neither has a default, so the reference abstains (LibraryAbstain
naming the variable). PREVENT's diabetes, statin and antihypertensive flags default to "no" (the
benchmark's own rule for a finding the note does not mention). Outside PREVENT's validated ranges
(age 30-79) and above Sampson's triglyceride limit (800 mg/dL) the function abstains.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.calculators.base import Calculator, LibraryAbstain, Variable
from harness.calculators.physical import SBP
from harness.calculators.variables import (
    AGE,
    ALBUMIN,
    CREATININE,
    HDL,
    RACE,
    SEX,
    SODIUM,
    TOTAL_CHOL,
    TRIGLYCERIDES,
    conc,
)
from harness.core import units

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
    text: str | None  # None for the benchmark version: the catalogue's text is used

    def to_dict(self) -> dict:
        return {
            "calculator_id": self.calculator_id,
            "version": self.version,
            "benchmark": self.benchmark,
            "title": self.title,
            "source": self.source,
            "date": self.date,
            "coefficients": _plain(self.coefficients),
            "text": self.text,
        }


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
            fv = FormulaVersion(
                cid,
                vid,
                bool(entry["benchmark"]),
                entry["title"],
                entry["source"],
                str(entry["date"]),
                _freeze(entry.get("coefficients", {})),
                entry.get("text", "").strip() or None,
            )
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
            raise FormulaVersionError(
                f"{path.name}: calculator {cid} needs exactly one benchmark version, has {len(bench)}"
            )
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


def benchmark_coefficients(calculator_id: int) -> Mapping[str, Any]:
    """The coefficients of a calculator's benchmark version (what the library's own calculator computes with)."""
    versions = _versions_of(calculator_id)
    return next(v for v in versions.values() if v.benchmark).coefficients


def _versions_of(calculator_id: int) -> dict[str, FormulaVersion]:
    """A versioned calculator's versions; FormulaVersionError naming the versioned ones for any other."""
    versions = VERSIONS.get(int(calculator_id))
    if not versions:
        raise FormulaVersionError(
            f"calculator {calculator_id} has no versioned formula entries (versioned calculators: {sorted(VERSIONS)})"
        )
    return versions


def get_version(calculator_id: int, version: str) -> FormulaVersion:
    versions = _versions_of(calculator_id)
    if version not in versions:
        raise FormulaVersionError(
            f"calculator {calculator_id} has no version {version!r}; known: {', '.join(versions)}"
        )
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
            raise FormulaVersionError(
                f"--formula-version {text!r}: calculator id {cid_text!r} is not an integer"
            ) from None
        fv = get_version(cid, version.strip())
        if cid in seen and seen[cid] != fv.version:
            raise FormulaVersionError(
                f"--formula-version: calculator {cid} given twice ({seen[cid]!r} and {fv.version!r})"
            )
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


# ==== library implementations of the versions ===================================================

# ---- inputs the 22-calculator library does not define ------------------------------------------------
BILIRUBIN = conc("bilirubin", "bilirubin", "mg/dL", "total bilirubin in mg/dL", "Bilirubin", "total bilirubin")
INR = Variable(
    "inr", "ratio", "international normalized ratio (INR)", "number", ("international normalized ratio", "INR")
)
DIALYSIS = Variable(
    "dialysis_twice",
    "true|false",
    "dialysis at least twice in the past week",
    "bool",
    ("Dialysis at least twice in the past week",),
    default=False,
)
CVVHD = Variable(
    "cvvhd",
    "true|false",
    "continuous veno-venous hemodialysis for >= 24 hours in the past week",
    "bool",
    (
        "Continuous veno-venous hemodialysis for ≥24 hours in the past week",
        "Continuous veno-venous hemodialysis for >=24 hours in the past week",
    ),
    default=False,
)
BP_MEDICINE = Variable(
    "bp_medicine",
    "true|false",
    "blood pressure treated with medicines",
    "bool",
    ("Blood pressure being treated with medicines", "antihypertensive"),
    default=False,
)
SMOKER = Variable(
    "smoker", "true|false", "current smoker", "bool", ("Smoker", "smoking", "current smoker"), default=False
)
DIABETES = Variable(
    "diabetes", "true|false", "diabetes mellitus", "bool", ("Diabetes", "diabetes mellitus"), default=False
)
STATIN = Variable(
    "statin", "true|false", "on statin (lipid-lowering) therapy", "bool", ("Statin", "statin use"), default=False
)
EGFR = Variable(
    "egfr",
    "mL/min/1.73 m²",
    "estimated GFR in mL/min/1.73 m²",
    "number",
    ("eGFR", "estimated glomerular filtration rate", "Glomerular filtration rate"),
)


# ---- the functions (plain numbers in the variables' units; coefficients first) -----------------------


def ckd_epi(
    c: Mapping, sex: str, age: float, creatinine: float, race: str = "other", male_low_kappa: float | None = None
) -> float:
    """CKD-EPI creatinine eGFR = A x min(SCr/k,1)^a x max(SCr/k,1)^u x B^age x F (female) x R (Black).

    ``male_low_kappa`` (the library's convention argument, harness.calculators.lab.ckd_epi_2021): for a man with
    SCr <= k, eGFR = A x (SCr/male_low_kappa)^a x B^age, as MedCalc-Bench Verified's code computes it with 0.7;
    None: the published equation."""
    female = sex == "female"
    kappa = c["kappa_female"] if female else c["kappa_male"]
    alpha = c["alpha_female"] if female else c["alpha_male"]
    if not female and male_low_kappa is not None and creatinine <= kappa:
        g = c["intercept"] * (creatinine / male_low_kappa) ** alpha * c["age_base"] ** age
    else:
        r = creatinine / kappa
        g = c["intercept"] * min(r, 1.0) ** alpha * max(r, 1.0) ** c["upper_exponent"] * c["age_base"] ** age
    if female:
        g *= c["female_factor"]
    if race == "black":
        g *= c["black_factor"]
    return g


def mdrd(c: Mapping, sex: str, age: float, creatinine: float, race: str) -> float:
    """MDRD eGFR = A x SCr^b x age^c x F (female) x R (Black)."""
    g = c["intercept"] * creatinine ** c["creatinine_exponent"] * age ** c["age_exponent"]
    if sex == "female":
        g *= c["female_factor"]
    if race == "black":
        g *= c["black_factor"]
    return g


def meld_na(
    c: Mapping, creatinine: float, bilirubin: float, inr: float, sodium: float, dialysis_twice: bool, cvvhd: bool
) -> int:
    """OPTN 2016 MELD-Na: bounded labs, MELD(i) rounded to a tenth x 10, the sodium term above 11, cap 40."""
    floor = c["lab_floor"]
    cr = c["creatinine_cap"] if (dialysis_twice or cvvhd) else min(max(creatinine, floor), c["creatinine_cap"])
    bili, ratio = max(bilirubin, floor), max(inr, floor)
    na = min(max(sodium, c["sodium_low"]), c["sodium_high"])
    meld_i = (
        c["creatinine"] * math.log(cr) + c["bilirubin"] * math.log(bili) + c["inr"] * math.log(ratio) + c["constant"]
    )
    meld = round(meld_i, 1) * 10.0
    if meld > c["meld_i_threshold"]:
        meld = meld + c["sodium"] * (c["sodium_high"] - na) - c["sodium_interaction"] * meld * (c["sodium_high"] - na)
    return int(min(round(meld), c["score_cap"]))


def meld_3(
    c: Mapping,
    sex: str,
    creatinine: float,
    bilirubin: float,
    inr: float,
    sodium: float,
    albumin: float,
    dialysis_twice: bool,
    cvvhd: bool,
) -> int:
    """MELD 3.0 (Kim 2021): bounded labs, sex, sodium-bilirubin and albumin-creatinine interactions, cap 40."""
    floor = c["lab_floor"]
    cr = c["creatinine_cap"] if (dialysis_twice or cvvhd) else min(max(creatinine, floor), c["creatinine_cap"])
    bili, ratio = max(bilirubin, floor), max(inr, floor)
    na = min(max(sodium, c["sodium_low"]), c["sodium_high"])
    alb = min(max(albumin, c["albumin_low"]), c["albumin_high"])
    dna, dalb = c["sodium_high"] - na, c["albumin_high"] - alb
    score = (
        c["female"] * (sex == "female")
        + c["bilirubin"] * math.log(bili)
        + c["sodium"] * dna
        + c["sodium_bilirubin"] * dna * math.log(bili)
        + c["inr"] * math.log(ratio)
        + c["creatinine"] * math.log(cr)
        + c["albumin"] * dalb
        + c["albumin_creatinine"] * dalb * math.log(cr)
        + c["constant"]
    )
    return int(min(round(score), c["score_cap"]))


def ldl_friedewald(c: Mapping, total_cholesterol: float, hdl: float, triglycerides: float) -> float:
    """Friedewald LDL (mg/dL) = TC - HDL - TG / d."""
    return total_cholesterol - hdl - triglycerides / c["triglyceride_divisor"]


def ldl_sampson(c: Mapping, total_cholesterol: float, hdl: float, triglycerides: float) -> float:
    """Sampson/NIH LDL (mg/dL) = TC/a - HDL/b - (TG/c + TG x nonHDL/d - TG^2/e) - f; TG above its limit abstains."""
    if triglycerides > c["tg_max"]:
        raise ValueError(f"Sampson equation not valid for triglycerides {triglycerides:g} mg/dL > {c['tg_max']:g}")
    non_hdl = total_cholesterol - hdl
    tg = triglycerides
    return (
        total_cholesterol / c["total_divisor"]
        - hdl / c["hdl_divisor"]
        - (tg / c["tg_divisor"] + tg * non_hdl / c["tg_nonhdl_divisor"] - tg * tg / c["tg_squared_divisor"])
        - c["constant"]
    )


def framingham_atp3(
    c: Mapping,
    sex: str,
    age: float,
    total_cholesterol: float,
    hdl: float,
    systolic_bp: float,
    bp_medicine: bool,
    smoker: bool,
) -> float:
    """ATP III Framingham hard-CHD 10-year risk (%), sex-specific continuous form."""
    k = c["female"] if sex == "female" else c["male"]
    la, ltc = math.log(age), math.log(total_cholesterol)
    s = float(bool(smoker))
    score = (
        k["ln_age"] * la
        + k["ln_total_cholesterol"] * ltc
        + k["ln_hdl"] * math.log(hdl)
        + k["ln_sbp"] * math.log(systolic_bp)
        + k["bp_medicine"] * float(bool(bp_medicine))
        + k["smoker"] * s
        + k["ln_age_ln_total_cholesterol"] * la * ltc
        + k["ln_age_smoke_smoker"] * math.log(min(age, k["smoke_age_cap"])) * s
        + k["ln_age_squared"] * la * la
        + k["constant"]
    )
    return (1.0 - k["baseline_survival"] ** math.exp(score)) * 100.0


MG_DL_TO_MMOL_L = 0.02586  # cholesterol, PREVENT's own conversion


def prevent_ascvd(
    c: Mapping,
    sex: str,
    age: float,
    total_cholesterol: float,
    hdl: float,
    systolic_bp: float,
    bp_medicine: bool,
    statin: bool,
    diabetes: bool,
    smoker: bool,
    egfr: float,
) -> float:
    """AHA PREVENT base model, 10-year ASCVD risk (%), logistic form; ages 30-79."""
    if not 30 <= age <= 79:
        raise ValueError(f"PREVENT is defined for ages 30-79, got {age:g}")
    k = c["female"] if sex == "female" else c["male"]
    a = (age - 55.0) / 10.0
    n = (total_cholesterol - hdl) * MG_DL_TO_MMOL_L - 3.5
    h = (hdl * MG_DL_TO_MMOL_L - 1.3) / 0.3
    sl = (min(systolic_bp, 110.0) - 110.0) / 20.0
    sh = (max(systolic_bp, 110.0) - 130.0) / 20.0
    el = (min(egfr, 60.0) - 60.0) / -15.0
    eh = (max(egfr, 60.0) - 90.0) / -15.0
    dm, smk, bptx, st = (float(bool(x)) for x in (diabetes, smoker, bp_medicine, statin))
    x = (
        k["age"] * a
        + k["non_hdl"] * n
        + k["hdl"] * h
        + k["sbp_low"] * sl
        + k["sbp_high"] * sh
        + k["diabetes"] * dm
        + k["smoker"] * smk
        + k["egfr_low"] * el
        + k["egfr_high"] * eh
        + k["antihypertensive"] * bptx
        + k["statin"] * st
        + k["sbp_high_antihypertensive"] * sh * bptx
        + k["non_hdl_statin"] * n * st
        + k["age_non_hdl"] * a * n
        + k["age_hdl"] * a * h
        + k["age_sbp_high"] * a * sh
        + k["age_diabetes"] * a * dm
        + k["age_smoker"] * a * smk
        + k["age_egfr_low"] * a * el
        + k["constant"]
    )
    return 100.0 * math.exp(x) / (1.0 + math.exp(x))


# ---- the registry: (calculator id, version) -> function and inputs ------------------------------------
_SPECS: dict[tuple[int, str], tuple[Any, list[Variable], str]] = {
    (3, "ckd-epi-2021"): (ckd_epi, [SEX, AGE, CREATININE], "decimal"),
    (3, "ckd-epi-2009"): (ckd_epi, [SEX, AGE, CREATININE, RACE], "decimal"),
    (9, "mdrd-2006"): (mdrd, [SEX, AGE, CREATININE, RACE], "decimal"),
    (9, "ckd-epi-2021"): (ckd_epi, [SEX, AGE, CREATININE], "decimal"),
    (23, "meld-na-2016"): (meld_na, [CREATININE, BILIRUBIN, INR, SODIUM, DIALYSIS, CVVHD], "integer"),
    (23, "meld-3.0"): (meld_3, [SEX, CREATININE, BILIRUBIN, INR, SODIUM, ALBUMIN, DIALYSIS, CVVHD], "integer"),
    (44, "friedewald-1972"): (ldl_friedewald, [TOTAL_CHOL, HDL, TRIGLYCERIDES], "decimal"),
    (44, "sampson-2020"): (ldl_sampson, [TOTAL_CHOL, HDL, TRIGLYCERIDES], "decimal"),
    (46, "atp3-framingham-2001"): (framingham_atp3, [SEX, AGE, TOTAL_CHOL, HDL, SBP, BP_MEDICINE, SMOKER], "decimal"),
    (46, "prevent-2023"): (
        prevent_ascvd,
        [SEX, AGE, TOTAL_CHOL, HDL, SBP, BP_MEDICINE, STATIN, DIABETES, SMOKER, EGFR],
        "decimal",
    ),
}


def implemented_versions() -> list[tuple[int, str]]:
    return sorted(_SPECS)


def coefficient_calculator(calculator_id: int, version: str) -> Calculator:
    """The coefficient-driven Calculator of one catalogue version (LibraryAbstain if none exists)."""
    fv = get_version(calculator_id, version)
    try:
        fn, variables, output_type = _SPECS[(fv.calculator_id, fv.version)]
    except KeyError:
        raise LibraryAbstain(
            f"calculator {calculator_id} version {version!r} has no library implementation", calculator_id=calculator_id
        ) from None
    bound = partial(fn, fv.coefficients)
    bound.__name__ = fn.__name__  # type: ignore[attr-defined]
    return Calculator(
        fv.calculator_id, f"{fv.title} [{fv.version}]", output_type, f"{fv.title}. {fv.source}", list(variables), bound
    )


def provenance(calc: Calculator, calculator_id: int, version: str | None) -> dict:
    """What a record says about the library function it used."""
    fn = calc.fn.func if isinstance(calc.fn, partial) else calc.fn
    return {"function": f"{fn.__module__}.{fn.__name__}", "formula_id": int(calculator_id), "version": version}


def library_reference(case: Any, version: str, *, convention: units.Convention | str = units.EXACT) -> dict:
    """The "library-derived reference" of a case at a version: the version's library function on the
    case's gold variables. Never a benchmark gold answer; returned with its label, value (or None)
    and the reason when the function abstains."""
    cid = int(case.calculator_id)
    out = {"label": REFERENCE_LABEL, "calculator_id": cid, "version": version, "value": None, "reason": None}
    try:
        calc = coefficient_calculator(cid, version)
        out["function"] = provenance(calc, cid, version)["function"]
        out["value"] = calc.compute(**calc.from_entities(case.entities, convention=convention))
    except LibraryAbstain as exc:
        out["reason"] = str(exc)
        entities = case.entities if isinstance(case.entities, dict) else {}
        missing = (
            [v.name for v in calc.variables if v.default is None and not calc._find(entities, v)[0]]
            if "calc" in locals()
            else []
        )
        if len(missing) > 1:
            out["reason"] = f"{calc.name} (calculator {cid}): variables {missing} missing from the gold entities"
        out["missing"] = missing
    return out


def benchmark_round(value: Any) -> Any:
    """The benchmark's own rounding of a number (units.benchmark_round), for display."""
    return units.benchmark_round(value) if isinstance(value, float) else value


__all__ = [
    "REFERENCE_LABEL",
    "VERSIONS",
    "VERSIONS_FILE",
    "FormulaVersion",
    "FormulaVersionError",
    "benchmark_coefficients",
    "benchmark_version",
    "ckd_epi",
    "coefficient_calculator",
    "framingham_atp3",
    "get_version",
    "implemented_versions",
    "ldl_friedewald",
    "ldl_sampson",
    "library_reference",
    "load_versions",
    "mdrd",
    "meld_3",
    "meld_na",
    "parse_formula_versions",
    "prevent_ascvd",
    "provenance",
    "version_of",
    "version_text",
]
