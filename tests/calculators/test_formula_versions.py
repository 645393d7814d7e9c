"""Formula versions: the versioned catalogue, --formula-version parsing, the library implementation
of every version (pinned on worked cases), and the benchmark versions' equality with the library."""

from __future__ import annotations

import math
import textwrap

import pytest

from harness.calculators import LIBRARY, LibraryAbstain, solve_gold, solve_gold_versioned, versioned_calculator
from harness.calculators.catalogue import CATALOGUE, literal_compute
from harness.calculators.versions import (
    REFERENCE_LABEL,
    VERSIONS,
    FormulaVersionError,
    benchmark_version,
    ckd_epi,
    coefficient_calculator,
    framingham_atp3,
    get_version,
    implemented_versions,
    ldl_friedewald,
    ldl_sampson,
    library_reference,
    load_versions,
    mdrd,
    meld_3,
    meld_na,
    parse_formula_versions,
    prevent_ascvd,
    version_text,
)
from harness.data.conventions import default_convention
from harness.data.dataset import load_dataset


def coeffs(cid, version):
    return get_version(cid, version).coefficients


# ---- the catalogue ------------------------------------------------------------------------------------


def test_the_required_versions_exist_with_source_date_and_coefficients():
    required = {
        3: {"ckd-epi-2021", "ckd-epi-2009"},
        9: {"mdrd-2006", "ckd-epi-2021"},
        23: {"meld-na-2016", "meld-3.0"},
        44: {"friedewald-1972", "sampson-2020"},
        46: {"atp3-framingham-2001", "prevent-2023"},
    }
    for cid, want in required.items():
        assert want <= set(VERSIONS[cid]), cid
        for fv in VERSIONS[cid].values():
            assert fv.source and fv.date and fv.coefficients, (cid, fv.version)
    # every calculator the paper's audit marks as replaced by a guideline has a non-benchmark version
    replaced = {cid for cid, e in CATALOGUE.items() if e.replaced_by_guideline}
    assert replaced == {9, 23, 44, 46}
    for cid in replaced:
        assert any(not v.benchmark for v in VERSIONS[cid].values())
    # the library implements every version the catalogue holds
    assert implemented_versions() == sorted((cid, v) for cid in VERSIONS for v in VERSIONS[cid])


def test_benchmark_versions_keep_the_catalogue_text():
    assert benchmark_version(9) == "mdrd-2006" and benchmark_version(2) is None
    assert version_text(9, "mdrd-2006") is None and version_text(9, None) is None
    assert "142" in version_text(9, "ckd-epi-2021") and "race" in version_text(9, "ckd-epi-2021").lower()
    assert "0.948" in version_text(44, "sampson-2020")


def test_parse_formula_versions():
    assert parse_formula_versions(["9=ckd-epi-2021", " 44=sampson-2020 "]) == {9: "ckd-epi-2021", 44: "sampson-2020"}
    assert parse_formula_versions(["9=mdrd-2006"]) == {}  # the benchmark's version is the default
    for bad, msg in [
        ("9", "expected CALC_ID=VERSION"),
        ("x=mdrd-2006", "not an integer"),
        ("2=anything", "calculator 2 has no versioned formula"),
        ("9=mdrd-1999", "no version 'mdrd-1999'"),
    ]:
        with pytest.raises(FormulaVersionError, match=msg):
            parse_formula_versions([bad])
    with pytest.raises(FormulaVersionError, match="given twice"):
        parse_formula_versions(["3=ckd-epi-2009", "3=ckd-epi-2021"])
    assert parse_formula_versions(["3=ckd-epi-2009", "3=ckd-epi-2009"]) == {3: "ckd-epi-2009"}


def test_bad_version_files_are_named(tmp_path):
    def write(body):
        p = tmp_path / "v.toml"
        p.write_text(textwrap.dedent(body))
        return p

    entry = """
    [[version]]
    calculator_id = 9
    version = "{v}"
    benchmark = {b}
    title = "t"
    source = "s"
    date = "2020"
    coefficients = {{ a = {a} }}
    {text}
    """
    with pytest.raises(FormulaVersionError, match="needs its own formula text"):
        load_versions(write(entry.format(v="x", b="false", a=1, text="")))
    with pytest.raises(FormulaVersionError, match="exactly one benchmark version"):
        load_versions(write(entry.format(v="x", b="false", a=1, text="text = 'f'")))
    with pytest.raises(FormulaVersionError, match="coefficient 'a' is not a number"):
        load_versions(write(entry.format(v="x", b="true", a='"one"', text="")))
    with pytest.raises(FormulaVersionError, match="duplicate version id"):
        load_versions(write(entry.format(v="x", b="true", a=1, text="") + entry.format(v="x", b="true", a=1, text="")))


# ---- worked cases, by hand from each source's equation -------------------------------------------------


def test_ckd_epi_2009_and_2021_worked_cases():
    # 60-year-old man, creatinine 1.0 mg/dL (above kappa 0.9, so only the upper exponent applies):
    # 2009: 141 x (1.0/0.9)^-1.209 x 0.993^60 = 141 x 0.88044 x 0.65606 = 81.44
    # 2021: 142 x (1.0/0.9)^-1.200 x 0.9938^60 = 142 x 0.88123 x 0.68856 = 86.16
    assert ckd_epi(coeffs(3, "ckd-epi-2009"), "male", 60, 1.0) == pytest.approx(81.443, abs=5e-3)
    assert ckd_epi(coeffs(3, "ckd-epi-2021"), "male", 60, 1.0) == pytest.approx(86.163, abs=5e-3)
    # 60-year-old Black woman, 1.0 mg/dL: 2009 keeps the race factor 1.159, 2021 has none:
    # 2009: 141 x (1/0.7)^-1.209 x 0.993^60 x 1.018 x 1.159 = 70.91;
    # 2021: 142 x (1/0.7)^-1.2 x 0.9938^60 x 1.012 = 64.50
    assert ckd_epi(coeffs(3, "ckd-epi-2009"), "female", 60, 1.0, "black") == pytest.approx(70.913, abs=5e-3)
    assert ckd_epi(coeffs(3, "ckd-epi-2021"), "female", 60, 1.0, "black") == pytest.approx(64.495, abs=5e-3)
    # below kappa the lower exponent applies: woman, 40 y, 0.5 mg/dL, 2021:
    # 142 x (0.5/0.7)^-0.241 x 0.9938^40 x 1.012 = 142 x 1.08447 x 0.77975 x 1.012 = 121.52
    assert ckd_epi(coeffs(3, "ckd-epi-2021"), "female", 40, 0.5) == pytest.approx(121.519, abs=5e-3)


def test_mdrd_worked_cases():
    # 175 x 1.0^-1.154 x 60^-0.203 = 76.22 (man); x 0.742 x 1.212 = 68.55 (Black woman)
    assert mdrd(coeffs(9, "mdrd-2006"), "male", 60, 1.0, "other") == pytest.approx(76.221, abs=5e-3)
    assert mdrd(coeffs(9, "mdrd-2006"), "female", 60, 1.0, "black") == pytest.approx(68.546, abs=5e-3)


def test_meld_na_and_meld_3_worked_cases():
    # MELD(i) = 0.957 ln 1.9 + 0.378 ln 4.2 + 1.120 ln 1.8 + 0.643 = 2.458 -> 2.5 -> 25;
    # 25 + 1.32 x 7 - 0.033 x 25 x 7 = 28.47 -> 28
    assert meld_na(coeffs(23, "meld-na-2016"), 1.9, 4.2, 1.8, 130, False, False) == 28
    # MELD 3.0, woman, albumin 2.8: 1.33 + 4.56 ln 4.2 + 0.82 x 7 - 0.24 x 7 x ln 4.2 + 9.09 ln 1.8
    #   + 11.14 ln 1.9 + 1.85 x 0.7 - 1.83 x 0.7 x ln 1.9 + 6 = 30.17 -> 30; a man scores 1.33 less: 28.84 -> 29
    assert meld_3(coeffs(23, "meld-3.0"), "female", 1.9, 4.2, 1.8, 130, 2.8, False, False) == 30
    assert meld_3(coeffs(23, "meld-3.0"), "male", 1.9, 4.2, 1.8, 130, 2.8, False, False) == 29
    # dialysis sets creatinine to the cap (4.0 for MELD-Na, 3.0 for MELD 3.0); labs below 1 are raised to 1
    assert meld_na(coeffs(23, "meld-na-2016"), 0.5, 0.5, 0.9, 140, True, False) == round(
        round(0.957 * math.log(4.0) + 0.643, 1) * 10
    )
    assert meld_3(coeffs(23, "meld-3.0"), "male", 0.5, 0.5, 0.9, 140, 4.0, False, True) == round(
        11.14 * math.log(3.0) + 6
    )


def test_ldl_friedewald_and_sampson_worked_cases():
    # TC 200, HDL 50, TG 150 mg/dL. Friedewald: 200 - 50 - 30 = 120.
    # Sampson: 200/0.948 - 50/0.971 - (150/8.56 + 150 x 150/2140 - 150^2/16100) - 9.44 = 123.40
    assert ldl_friedewald(coeffs(44, "friedewald-1972"), 200, 50, 150) == 120.0
    assert ldl_sampson(coeffs(44, "sampson-2020"), 200, 50, 150) == pytest.approx(123.397, abs=5e-3)
    calc = coefficient_calculator(44, "sampson-2020")
    with pytest.raises(LibraryAbstain, match="not valid for triglycerides 900"):
        calc.compute(total_cholesterol=300, hdl=40, triglycerides=900)


def test_prevent_and_framingham_worked_cases():
    # PREVENT calculator example patient: woman, 50 y, TC 200, HDL 45, SBP 160 treated, diabetes, non-smoker,
    # eGFR 90, no statin: 10-year ASCVD 9.2 % (total CVD 14.7 % in the same example).
    assert prevent_ascvd(
        coeffs(46, "prevent-2023"), "female", 50, 200, 45, 160, True, False, True, False, 90
    ) == pytest.approx(9.195, abs=5e-3)
    with pytest.raises(ValueError, match="ages 30-79"):
        prevent_ascvd(coeffs(46, "prevent-2023"), "male", 25, 200, 45, 120, False, False, False, False, 90)
    # ATP III (continuous form): man, 55 y, TC 213, HDL 50, SBP 120 untreated, non-smoker -> 6.51 %
    assert framingham_atp3(coeffs(46, "atp3-framingham-2001"), "male", 55, 213, 50, 120, False, False) == pytest.approx(
        6.5085, abs=5e-4
    )


# ---- benchmark versions equal the kit's existing implementations on real rows ------------------------


@pytest.mark.parametrize("dataset", ["bundled-test", "dev"])
def test_benchmark_versions_equal_the_library_and_literal(dataset):
    try:
        ds = load_dataset(dataset)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"{dataset} not available: {exc}")
    conv = default_convention(ds).convention
    checked = 0
    for case in ds.cases:
        cid = case.calculator_id
        if cid not in VERSIONS:
            continue
        calc = coefficient_calculator(cid, benchmark_version(cid))
        value = calc.compute(**calc.from_entities(case.entities, convention=conv))
        if cid in LIBRARY:
            assert value == solve_gold(case, convention=conv), case.case_id
            assert solve_gold_versioned(case, None, convention=conv)[0] == value
        else:
            assert value == pytest.approx(literal_compute(cid, case.entities, conv), rel=1e-12), case.case_id
        checked += 1
    assert checked >= 10


def test_versioned_gold_solve_and_provenance():
    ds = load_dataset("bundled-test")
    case = next(c for c in ds.cases if c.calculator_id == 9)
    conv = default_convention(ds).convention
    v0, p0 = solve_gold_versioned(case, {}, convention=conv)
    v1, p1 = solve_gold_versioned(case, {9: "ckd-epi-2021"}, convention=conv)
    assert p0 == {"function": "harness.calculators.lab.mdrd", "formula_id": 9, "version": "mdrd-2006"}
    assert p1 == {"function": "harness.calculators.versions.ckd_epi", "formula_id": 9, "version": "ckd-epi-2021"}
    assert v0 == solve_gold(case, convention=conv) and v1 != v0
    ent = coefficient_calculator(9, "ckd-epi-2021").from_entities(case.entities, convention=conv)
    assert v1 == ckd_epi(coeffs(9, "ckd-epi-2021"), ent["sex"], ent["age"], ent["creatinine"])
    with pytest.raises(LibraryAbstain, match="not in the library"):
        versioned_calculator(23, "meld-3.0")  # MELD is outside the arms' 22 calculators


def test_library_reference_is_labelled_and_abstains_with_the_missing_variable():
    ds = load_dataset("bundled-test")
    meld = next(c for c in ds.cases if c.calculator_id == 23)
    ref = library_reference(meld, "meld-3.0")
    assert ref["label"] == REFERENCE_LABEL == "library-derived reference"
    assert (
        ref["value"] is None and ref["missing"] == ["sex", "albumin"] and "['sex', 'albumin'] missing" in ref["reason"]
    )
    ldl = next(c for c in ds.cases if c.calculator_id == 44)
    ref = library_reference(ldl, "sampson-2020", convention=default_convention(ds).convention)
    assert ref["value"] is not None and ref["reason"] is None and ref["function"].endswith("ldl_sampson")
