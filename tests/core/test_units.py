"""harness.core.units: the one unit-conversion module the library and the catalogue share, its explicit frozen
conventions, and unknown units raising everywhere (the library's variables and the catalogue's entities)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from harness.calculators import LIBRARY, LibraryAbstain
from harness.calculators.entities import Entities
from harness.core import units
from harness.core.units import EXACT, MEDCALC_V1, Convention, UnitError


@pytest.mark.parametrize(
    "value,unit,kg",
    [
        (70, "kg", 70),
        (2180, "g", 2.18),
        (142, "lbs", 64.410064),
        (30, "lb", 13.60776),
        (16, "oz", 0.453592),
        (70000, "mg", 0.07),
    ],
)
def test_weight_conversion(value, unit, kg):
    assert units.weight_kg(value, unit) == pytest.approx(kg, rel=1e-6)


@pytest.mark.parametrize(
    "value,unit,cm", [(175, "cm", 175), (1.99, "m", 199), (72, "in", 182.88), (6, "ft", 182.88), (1750, "mm", 175)]
)
def test_height_conversion(value, unit, cm):
    assert units.height_cm(value, unit) == pytest.approx(cm)


def test_age_fractions_are_the_conventions():
    assert units.age_years(17, "months", EXACT) == pytest.approx(17 / 12)
    assert units.age_years(2, "weeks", EXACT) == pytest.approx(14 / 365.25)
    assert units.age_years(30, "days", MEDCALC_V1) == pytest.approx(30 / 365.25)


@pytest.mark.parametrize(
    "compound,value,unit,target,expected",
    [
        ("creatinine", 88.4, "µmol/L", "mg/dL", 88.4 * 113.12 / 1e4),
        ("glucose", 5.5, "mmol/L", "mg/dL", 5.5 * 18.016),
        ("calcium", 2.5, "mmol/L", "mg/dL", 2.5 * 4.008),
        ("calcium", 5.0, "mEq/L", "mg/dL", 2.5 * 4.008),
        ("sodium", 140, "mEq/L", "mmol/L", 140),
        ("sodium", 137, "mg/dL", "mmol/L", 1370 / 22.99),
        ("albumin", 31, "g/L", "g/dL", 3.1),
        ("cholesterol", 5.0, "mmol/L", "mg/dL", 5.0 * 38.6654),
        ("triglycerides", 1.0, "mmol/L", "mg/dL", 86.1338),
    ],
)
def test_concentration_conversion(compound, value, unit, target, expected):
    assert units.concentration(compound, value, unit, target, EXACT) == pytest.approx(expected, rel=1e-9)


def test_v1_convention_rounds_every_step():
    """MedCalc-Bench v1.0's worked example: 4.75 mmol/L cholesterol -> 0.005 mol -> 193.3 mg/dL."""
    assert units.concentration("cholesterol", 4.75, "mmol/L", "mg/dL", MEDCALC_V1) == pytest.approx(193.3)
    assert units.concentration("creatinine", 366, "µmol/L", "mg/dL", MEDCALC_V1) == pytest.approx(4.1)
    assert units.concentration("sodium", 140, "mEq/L", "mmol/L", MEDCALC_V1) == 140  # no molar step
    assert units.concentration("cholesterol", 4.75, "mmol/L", "mg/dL", EXACT) == pytest.approx(183.66065)
    assert units.concentration("cholesterol", 4.75, "mmol/L", "mg/dL") == pytest.approx(183.66065)  # default


def test_convention_is_an_explicit_frozen_object_not_ambient_state():
    assert dataclasses.is_dataclass(Convention)
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXACT.rounding = "v1.0-stepwise"  # type: ignore[misc]
    assert units.get_convention("medcalc-v1.0") is MEDCALC_V1
    assert units.get_convention(EXACT) is EXACT
    with pytest.raises(ValueError, match="unknown unit convention 'nonsense'"):
        units.get_convention("nonsense")
    with pytest.raises(ValueError, match="rounding"):
        Convention("x", "y", "sometimes")
    source = inspect.getsource(units)
    assert "contextvars" not in source and "ContextVar" not in source
    assert set(units.CONVENTIONS) == {"exact", "medcalc-v1.0"}
    d = MEDCALC_V1.to_dict()
    assert d["name"] == "medcalc-v1.0" and d["molar_mass"]["triglycerides"] == 861.338


def test_cells_per_cubic_metre_follow_the_convention():
    """v1.0 reads "count/m^3" as per mm^3; Verified converts the cubic metre it names (1e-9 per mm^3)."""
    assert units.cells_per_ul(6370, "m^3", MEDCALC_V1) == 6370
    assert units.cells_per_ul(6370, "m^3", EXACT) == pytest.approx(6.37e-6)
    assert units.cells_per_ul(13700, "L", EXACT) == pytest.approx(0.0137)
    assert units.cells_per_ul(12, "10^9/L") == 12000


@pytest.mark.parametrize(
    "value,unit,expected", [(150000, "µL", 150), (119000000.0, "L", 0.119), (150, "10^9/L", 150), (150, "K/µL", 150)]
)
def test_platelet_conversion(value, unit, expected):
    assert units.platelets_per_nl(value, unit) == pytest.approx(expected)


def test_identity_units_accept_spelling_variants():
    assert units.blood_pressure_mmhg(120, "mm hg") == 120
    assert units.blood_pressure_mmhg(120, "mmHg") == 120
    assert units.interval_ms(400, "msec") == 400
    assert units.heart_rate_bpm(60, "beats per minute") == 60
    assert units.insulin_uiu_per_ml(60, "pmol/L") == pytest.approx(10)
    assert units.bmi_kg_m2(22, "kg/m^2") == 22
    assert units.temperature_c(98.6, "degrees fahreinheit") == pytest.approx(37.0)
    assert units.temperature_c(37.2, "degrees celsisus") == 37.2


@pytest.mark.parametrize(
    "func,args",
    [
        (units.weight_kg, (70, "stone")),
        (units.height_cm, (5, "yards")),
        (units.blood_pressure_mmhg, (16, "kPa")),
        (units.platelets_per_nl, (150, "per field")),
        (units.temperature_c, (300, "K")),
        (units.cells_per_ul, (5, "per field")),
    ],
)
def test_unknown_unit_raises(func, args):
    with pytest.raises(UnitError):
        func(*args)


def test_conversion_without_data_raises():
    with pytest.raises(UnitError, match="albumin"):
        units.concentration("albumin", 0.5, "mEq/L", "g/dL")  # no valence
    with pytest.raises(UnitError, match="no conversion data"):
        units.concentration("unobtainium", 1, "mg/dL", "mmol/L")
    with pytest.raises(UnitError, match="no converter"):
        units.convert(1, "kg", "furlongs")


# ----- both layers use the one module: same constants, same errors ---------------------------------------


def test_library_and_catalogue_convert_with_the_same_constants():
    """Triglycerides 1.5 mmol/L: one value in the library and in the catalogue's entity view (861.338 g/mol)."""
    ents = {
        "Total cholesterol": [200, "mg/dL"],
        "high-density lipoprotein cholesterol": [50, "mg/dL"],
        "Triglycerides": [1.5, "mmol/L"],
    }
    lib = LIBRARY[44].from_entities(ents, convention=EXACT)["triglycerides"]
    cat = Entities(ents, EXACT).mg_dl("triglycerides", "Triglycerides")
    assert lib == cat == pytest.approx(1.5 * 86.1338)
    assert Entities({"age": [2, "weeks"]}, EXACT).age_years() == units.age_years(2, "weeks", EXACT)


def test_unknown_units_are_an_error_in_both_layers():
    """70,000 mg is 0.07 kg in both; a weight in stones is an error in both (never passed through)."""
    assert Entities({"weight": [70000, "mg"]}).weight_kg() == pytest.approx(0.07)
    with pytest.raises(UnitError, match="weight"):
        Entities({"weight": [11, "stone"]}).weight_kg()
    ents = {"sex": "Male", "height": [180, "cm"], "weight": [11, "stone"]}
    with pytest.raises(LibraryAbstain, match="stone"):
        LIBRARY[6].from_entities(ents)
    with pytest.raises(UnitError, match="unitless"):
        Entities({"Heart Rate or Pulse": [80, "beats per minute"]}).number("Heart Rate or Pulse")
    assert (
        Entities({"Heart Rate or Pulse": [80, "beats per minute"]}).number("Heart Rate or Pulse", unit="beats/min")
        == 80
    )
    with pytest.raises(UnitError, match="temperature"):
        Entities({"Temperature": [310, "kelvin"]}).temperature_c()
