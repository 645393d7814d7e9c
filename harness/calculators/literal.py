"""Literal implementations of the catalogue's formula texts, one function per calculator.

Each function reads one case's gold entities (through :class:`~harness.calculators.entities.Entities`,
which converts units to the ones the text states) and applies the text of its catalogue entry
exactly, branch for branch: thresholds, constants and the defaults for absent criteria are the
text's. They exist to check that every text is complete (``harness formulas check``): if a literal
reading of the text reproduces the benchmark's gold answers, the text gives a model everything it
needs. Written from the cited clinical sources and the catalogue texts, not from any other
implementation.

CKD-EPI 2021 (3), MDRD (9) and Friedewald (44) call the versioned functions of
``harness.calculators.versions`` at the benchmark coefficients (the texts state the same numbers).

Return types: decimal and integer calculators return a number, the two date calculators a
``datetime.date``, gestational age a ``(weeks, days)`` tuple.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any, TypeVar

from harness.core.units import EXACT, Convention, UnitError

from . import versions
from .entities import Entities

__all__ = ["LITERAL", "literal_compute"]

LITERAL: dict[int, Callable[[Entities], Any]] = {}
_Literal = TypeVar("_Literal", bound=Callable[[Entities], Any])


def _calc(cid: int) -> Callable[[_Literal], _Literal]:
    def deco(fn: _Literal) -> _Literal:
        LITERAL[cid] = fn
        return fn

    return deco


def literal_compute(calculator_id: int, entities: dict | Entities, convention: Convention | str = EXACT) -> Any:
    """Apply calculator ``calculator_id``'s catalogue text to a case's gold entities, unit conversions under
    ``convention`` (a ``harness.core.units.Convention`` or its name; ignored when ``entities`` is already an
    :class:`Entities`, which carries its own)."""
    fn = LITERAL.get(int(calculator_id))
    if fn is None:
        raise KeyError(f"no literal implementation for calculator {calculator_id}")
    e = entities if isinstance(entities, Entities) else Entities(entities, convention)
    return fn(e)


# ----- shared pieces ----------------------------------------------------------------------------


def _is_female(e: Entities) -> bool:
    return e.text("sex", "gender").startswith("f")


def _sex(e: Entities) -> str:
    return "female" if _is_female(e) else "male"


def _bmi(e: Entities) -> float:
    h = e.height_cm() / 100.0
    return e.weight_kg() / (h * h)


def _ibw(e: Entities) -> float:
    inches = e.height_cm() * 0.393701
    return (45.5 if _is_female(e) else 50.0) + 2.3 * (inches - 60.0)


def _abw(e: Entities) -> float:
    ibw = _ibw(e)
    return ibw + 0.4 * (e.weight_kg() - ibw)


def _map(e: Entities) -> float:
    sbp = e.number("Systolic Blood Pressure", unit="mmHg")
    dbp = e.number("Diastolic Blood Pressure", unit="mmHg")
    return sbp / 3.0 + 2.0 * dbp / 3.0


def _rr_sec(e: Entities) -> float:
    return 60.0 / e.number("Heart Rate or Pulse", unit="beats/min")


def _qt(e: Entities) -> float:
    return e.number("QT interval", unit="ms")


def _na(e: Entities) -> float:
    return e.mmol_l("sodium", "Sodium")


def _anion_gap(e: Entities) -> float:
    return _na(e) - (e.mmol_l("chloride", "Chloride") + e.mmol_l("bicarbonate", "Bicarbonate"))


def _albumin_corrected_ag(e: Entities) -> float:
    return _anion_gap(e) + 2.5 * (4.0 - e.g_dl("albumin", "Albumin"))


def _creatinine(e: Entities, *names: str) -> float:
    return e.mg_dl("creatinine", *(names or ("creatinine",)))


# ----- physical and laboratory formulas -------------------------------------------------------


@_calc(2)
def creatinine_clearance(e: Entities) -> float:
    bmi = _bmi(e)
    w = e.weight_kg()
    if bmi < 18.5:
        weight = w
    elif bmi < 25:
        weight = min(_ibw(e), w)
    else:
        weight = _abw(e)
    sex = 0.85 if _is_female(e) else 1.0
    return (140.0 - e.age_years()) * weight * sex / (72.0 * _creatinine(e))


@_calc(3)
def ckd_epi_2021(e: Entities) -> float:
    return versions.ckd_epi(versions.benchmark_coefficients(3), _sex(e), e.age_years(), _creatinine(e))


@_calc(5)
def mean_arterial_pressure(e: Entities) -> float:
    return _map(e)


@_calc(6)
def bmi(e: Entities) -> float:
    return _bmi(e)


@_calc(7)
def calcium_correction(e: Entities) -> float:
    return e.mg_dl("calcium", "Calcium") + 0.8 * (4.0 - e.g_dl("albumin", "Albumin"))


@_calc(9)
def mdrd(e: Entities) -> float:
    race = "black" if "black" in e.text("Race") else "other"
    return versions.mdrd(versions.benchmark_coefficients(9), _sex(e), e.age_years(), _creatinine(e), race)


@_calc(10)
def ideal_body_weight(e: Entities) -> float:
    return _ibw(e)


@_calc(11)
def qtc_bazett(e: Entities) -> float:
    return _qt(e) / math.sqrt(_rr_sec(e))


@_calc(56)
def qtc_fridericia(e: Entities) -> float:
    return _qt(e) / _rr_sec(e) ** (1.0 / 3.0)


@_calc(57)
def qtc_framingham(e: Entities) -> float:
    return _qt(e) + 154.0 * (1.0 - _rr_sec(e))


@_calc(58)
def qtc_hodges(e: Entities) -> float:
    return _qt(e) + 1.75 * (e.number("Heart Rate or Pulse", unit="beats/min") - 60.0)


@_calc(59)
def qtc_rautaharju(e: Entities) -> float:
    return _qt(e) * (120.0 + e.number("Heart Rate or Pulse", unit="beats/min")) / 180.0


@_calc(19)
def fib4(e: Entities) -> float:
    plt_per_l_billions = e.per_ul("Platelet count") / 1000.0
    return (e.age_years() * e.number("Aspartate aminotransferase", unit="U/L")) / (
        plt_per_l_billions * math.sqrt(e.number("Alanine aminotransferase", unit="U/L"))
    )


@_calc(22)
def maintenance_fluids(e: Entities) -> float:
    w = e.weight_kg()
    if w < 10:
        return 4.0 * w
    if w <= 20:
        return 40.0 + 2.0 * (w - 10.0)
    return 60.0 + (w - 20.0)


@_calc(23)
def meld_na(e: Entities) -> float:
    cr = _creatinine(e)
    if e.flag(
        "Dialysis at least twice in the past week",
        "Continuous veno-venous hemodialysis for >=24 hours in the past week",
    ):
        cr = 4.0
    cr = min(max(cr, 1.0), 4.0)
    bili = max(e.mg_dl("bilirubin", "Bilirubin"), 1.0)
    inr = max(e.number("international normalized ratio"), 1.0)
    na = min(max(_na(e), 125.0), 137.0)
    meld_i = 0.957 * math.log(cr) + 0.378 * math.log(bili) + 1.120 * math.log(inr) + 0.643
    meld = round(meld_i, 1) * 10.0
    if meld > 11:
        meld = meld + 1.32 * (137.0 - na) - 0.033 * meld * (137.0 - na)
    return float(min(round(meld), 40))


_STEROID_EQUIV_MG = {
    "betamethasone": 0.75,
    "cortisone": 25.0,
    "dexamethasone": 0.75,
    "hydrocortisone": 20.0,
    "methylprednisolone": 4.0,
    "prednisolone": 5.0,
    "prednisone": 5.0,
    "triamcinolone": 4.0,
}


def _steroid_equiv(name: str) -> float:
    drug = name.strip().lower().split()[0]
    return _STEROID_EQUIV_MG[drug]


@_calc(24)
def steroid_conversion(e: Entities) -> float:
    name, dose, unit = e.lookup("input steroid")
    target = e.lookup("target steroid")
    if str(unit).lower() in {"g"}:
        dose = dose * 1000.0
    elif str(unit).lower() in {"µg", "mcg"}:
        dose = dose / 1000.0
    return dose / _steroid_equiv(name) * _steroid_equiv(target)


@_calc(26)
def sodium_correction(e: Entities) -> float:
    return _na(e) + 0.024 * (e.mg_dl("glucose", "Glucose") - 100.0)


@_calc(30)
def serum_osmolality(e: Entities) -> float:
    return 2.0 * _na(e) + e.mg_dl("bun", "Blood Urea Nitrogen (BUN)") / 2.8 + e.mg_dl("glucose", "Glucose") / 18.0


@_calc(31)
def homa_ir(e: Entities) -> float:
    return e.number("Insulin", unit="µIU/mL") * e.mg_dl("glucose", "Glucose") / 405.0


@_calc(38)
def free_water_deficit(e: Entities) -> float:
    age = e.age_years()
    female = _is_female(e)
    if age < 18:
        tbw = 0.6
    elif age < 65:
        tbw = 0.5 if female else 0.6
    else:
        tbw = 0.45 if female else 0.5
    return tbw * e.weight_kg() * (_na(e) / 140.0 - 1.0)


@_calc(39)
def anion_gap(e: Entities) -> float:
    return _anion_gap(e)


@_calc(40)
def fena(e: Entities) -> float:
    scr = _creatinine(e)
    ucr = e.mg_dl("creatinine", "Urine creatinine")
    una = e.mmol_l("sodium", "Urine sodium")
    return (scr * una) / (_na(e) * ucr) * 100.0


@_calc(44)
def ldl_friedewald(e: Entities) -> float:
    tc = e.mg_dl("cholesterol", "Total cholesterol")
    hdl = e.mg_dl("cholesterol", "high-density lipoprotein cholesterol")
    tg = e.mg_dl("triglycerides", "Triglycerides")
    return versions.ldl_friedewald(versions.benchmark_coefficients(44), tc, hdl, tg)


@_calc(60)
def bsa_mosteller(e: Entities) -> float:
    return math.sqrt(e.weight_kg() * e.height_cm() / 3600.0)


@_calc(61)
def target_weight(e: Entities) -> float:
    h = e.height_cm() / 100.0
    return e.number("Body Mass Index (BMI)", "Target BMI", unit="kg/m^2") * h * h


@_calc(62)
def adjusted_body_weight(e: Entities) -> float:
    return _abw(e)


@_calc(63)
def delta_gap(e: Entities) -> float:
    return _anion_gap(e) - 12.0


@_calc(64)
def delta_ratio(e: Entities) -> float:
    return (_anion_gap(e) - 12.0) / (24.0 - e.mmol_l("bicarbonate", "Bicarbonate"))


@_calc(65)
def albumin_corrected_anion_gap(e: Entities) -> float:
    return _albumin_corrected_ag(e)


@_calc(66)
def albumin_corrected_delta_gap(e: Entities) -> float:
    return _albumin_corrected_ag(e) - 12.0


@_calc(67)
def albumin_corrected_delta_ratio(e: Entities) -> float:
    return (_albumin_corrected_ag(e) - 12.0) / (24.0 - e.mmol_l("bicarbonate", "Bicarbonate"))


_MME_FACTOR = {  # CDC 2022 clinical practice guideline, MME conversion factors (per mg; fentanyl per µg)
    "codeine": 0.15,
    "fentanyl buccal": 0.13,
    "fentanyl patch": 2.4,
    "hydrocodone": 1.0,
    "hydromorphone": 5.0,
    "methadone": 4.7,
    "morphine": 1.0,
    "oxycodone": 1.5,
    "oxymorphone": 3.0,
    "tapentadol": 0.4,
    "tramadol": 0.2,
    "buprenorphine": 10.0,
}


@_calc(49)
def mme(e: Entities) -> float:
    total = 0.0
    for key, value in e.raw.items():
        k = key.strip()
        if not k.lower().endswith(" dose"):
            continue
        drug = k[: -len(" dose")].strip().lower()
        factor = _MME_FACTOR.get(drug)
        if factor is None:
            raise KeyError(f"no MME factor for {key!r}")
        dose, unit = (value[0], value[1]) if isinstance(value, (list, tuple)) else (value, "")
        if str(unit).replace("μ", "µ").strip().lower() not in ("", "mg", "µg", "mcg"):
            # the factors are per mg, or per µg for the fentanyl forms (the catalogue text): no other unit
            raise UnitError(f"entity {key!r}: dose unit {unit!r} not supported (known: mg, µg)")
        per_day = e.in_unit((f"{key} Per Day",), {"perday", "/day", "timesperday", "timesaday"}, "per day")
        per_day = 1.0 if per_day is None else per_day
        total += float(dose) * per_day * factor
    return total


# ----- dates --------------------------------------------------------------------------------------


@_calc(13)
def due_date(e: Entities) -> dt.date:
    lmp = e.date("Last menstrual date")
    cycle = e.number("cycle length") or 28.0
    return lmp + dt.timedelta(days=280 + int(cycle) - 28)


@_calc(68)
def conception_date(e: Entities) -> dt.date:
    return e.date("Last menstrual date") + dt.timedelta(days=14)


@_calc(69)
def gestational_age(e: Entities) -> tuple[int, int]:
    days = (e.date("Current Date") - e.date("Last menstrual date")).days
    return days // 7, days % 7


# ----- point scores ---------------------------------------------------------------------------------


@_calc(4)
def cha2ds2_vasc(e: Entities) -> int:
    age = e.age_years()
    s = 2 if age >= 75 else 1 if age >= 65 else 0
    s += 1 if _is_female(e) else 0
    s += e.flag("Congestive Heart Faliure", "Congestive Heart Failure")
    s += e.flag("Hypertension history", "Hypertension")
    s += 2 * e.flag("Stroke", "Transient Ischemic Attacks History", "Thromboembolism history")
    s += e.flag("Vascular disease history")
    s += e.flag("Diabetes history", "Diabetes mellitus")
    return int(s)


@_calc(8)
def wells_pe(e: Entities) -> float:
    s = 0.0
    s += 3.0 * e.flag("Clinical signs and symptoms of Deep Vein Thrombosis")
    s += 3.0 * e.flag("Pulmonary Embolism is #1 diagnosis OR equally likely")
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    s += 1.5 if hr is not None and hr > 100 else 0.0
    s += 1.5 * e.flag("Immobilization for at least 3 days", "Surgery in the previous 4 weeks")
    s += 1.5 * e.flag("Previously Documented Pulmonary Embolism", "Previously documented Deep Vein Thrombosis")
    s += 1.0 * e.flag("Hemoptysis")
    s += 1.0 * e.flag("Malignancy with treatment within 6 months or palliative")
    return s


@_calc(15)
def child_pugh(e: Entities) -> int:
    bili = e.mg_dl("bilirubin", "Bilirubin")
    alb = e.g_dl("albumin", "Albumin")
    inr = e.number("international normalized ratio")
    s = 0
    s += 1 if bili is None or bili < 2 else 2 if bili <= 3 else 3
    s += 1 if alb is None or alb > 3.5 else 2 if alb >= 2.8 else 3
    s += 1 if inr is None or inr < 1.7 else 2 if inr <= 2.3 else 3
    asc = e.text("Ascites")
    s += 3 if "moderate" in asc or "severe" in asc else 2 if "slight" in asc or "mild" in asc else 1
    enc = e.text("Encephalopathy")
    s += 3 if "3" in enc or "4" in enc else 2 if "1" in enc or "2" in enc else 1
    return s


@_calc(16)
def wells_dvt(e: Entities) -> int:
    s = 0
    s += e.flag("Active cancer")
    s += e.flag(
        "Bedridden recently >3 days or major surgery within 12 weeks",
        "Bedridden recently >3 days",
        "Major surgery within 12 weeks",
    )
    s += e.flag("Calf swelling >3 centimeters compared to the other leg")
    s += e.flag("Collateral (nonvaricose) superficial veins present")
    s += e.flag("Entire Leg Swollen")
    s += e.flag("Localized tenderness along the deep venous system")
    s += e.flag("Pitting edema, confined to symptomatic leg")
    s += e.flag("Paralysis, paresis, or recent plaster immobilization of the lower extremity")
    s += e.flag("Previously documented Deep Vein Thrombosis")
    s -= 2 * e.flag("Alternative diagnosis to Deep Vein Thrombosis as likely or more likely")
    return int(s)


@_calc(17)
def rcri(e: Entities) -> int:
    s = 0
    s += e.flag("Elevated-risk surgery")
    s += e.flag("History of ischemic heart disease")
    s += e.flag("Congestive Heart Failure criteria for the Cardiac Risk Index rule")
    s += e.flag("History of cerebrovascular disease", "Cerebrovascular disease history")
    s += e.flag("Pre-operative treatment with insulin")
    cr = e.mg_dl("creatinine", "Pre-operative creatinine")
    s += 1 if cr is not None and cr > 2.0 else 0
    return int(s)


@_calc(18)
def heart_score(e: Entities) -> int:
    hist = e.text("Suspicion History")
    s = 2 if hist.startswith("highly") else 1 if hist.startswith("moderately") else 0
    ekg = e.text("Electrocardiogram Test")
    s += 2 if "significant" in ekg else 1 if "repolarization" in ekg else 0
    age = e.age_years()
    s += 2 if age >= 65 else 1 if age >= 45 else 0
    factors = sum(
        bool(e.flag(*k))
        for k in (
            ("Hypertension history", "Hypertension"),
            ("hypercholesterolemia",),
            ("Diabetes mellitus criteria for CCI rule", "Diabetes mellitus"),
            ("obesity",),
            ("smoking",),
            ("parent or sibling with Cardiovascular disease before age 65",),
        )
    )
    athero = e.flag("atherosclerotic disease", "Transient Ischemic Attacks History")
    s += 2 if athero or factors >= 3 else 1 if factors >= 1 else 0
    trop = e.text("Initial troponin")
    s += 2 if trop.startswith("greater than three") else 1 if trop.startswith("between") else 0
    return int(s)


@_calc(20)
def centor_mcisaac(e: Entities) -> int:
    age = e.age_years()
    s = 0
    if age is not None:
        s += 1 if 3 <= age <= 14 else -1 if age >= 45 else 0
    s += e.flag("Exudate or swelling on tonsils")
    s += e.flag("Tender/swollen anterior cervical lymph nodes")
    t = e.temperature_c()
    s += 1 if t is not None and t > 38 else 0
    # "Cough absent" scores when the note does not mention a cough (the benchmark's convention).
    s += 1 if not e.has("Cough Absent", "Cough present") else e.flag("Cough Absent")
    return int(s)


_GCS = {
    "eye": [("spontaneous", 4), ("verbal", 3), ("pain", 2), ("no eye", 1)],
    "verbal": [("oriented", 5), ("confused", 4), ("inappropriate", 3), ("incomprehensible", 2), ("no verbal", 1)],
    "motor": [("obeys", 6), ("localizes", 5), ("withdraw", 4), ("flexion", 3), ("extension", 2), ("no motor", 1)],
}


def _gcs_part(value: str, table: list[tuple[str, int]], full: int) -> int:
    for word, pts in table:
        if word in value:
            return pts
    return full  # not mentioned / not testable: full score


@_calc(21)
def glasgow_coma_scale(e: Entities) -> int:
    return (
        _gcs_part(e.text("Best eye response"), _GCS["eye"], 4)
        + _gcs_part(e.text("Best verbal response"), _GCS["verbal"], 5)
        + _gcs_part(e.text("Best motor response"), _GCS["motor"], 6)
    )


@_calc(25)
def has_bled(e: Entities) -> int:
    s = 0
    s += e.flag("Hypertension history", "Hypertension")
    s += e.flag("Renal disease criteria for the HAS-BLED rule")
    s += e.flag("Liver disease criteria for the HAS-BLED rule")
    s += e.flag("Stroke")
    s += e.flag("Prior major bleeding or predisposition to bleeding")
    s += e.flag("Labile international normalized ratio")
    age = e.age_years()
    s += 1 if age is not None and age > 65 else 0
    s += e.flag("Medication usage predisposing to bleeding")
    drinks = e.number("Number of Alcoholic Drinks Per Week")
    s += 1 if drinks is not None and drinks >= 8 else 0
    return int(s)


@_calc(27)
def glasgow_blatchford(e: Entities) -> int:
    s = 0
    bun = e.mg_dl("bun", "Blood Urea Nitrogen (BUN)")
    if bun is not None:
        s += 6 if bun > 70 else 4 if bun >= 28 else 3 if bun >= 22.4 else 2 if bun >= 18.2 else 0
    hb = e.g_dl("hemoglobin", "Hemoglobin")
    if hb is not None:
        if _is_female(e):
            s += 0 if hb >= 12 else 1 if hb >= 10 else 6
        else:
            s += 0 if hb >= 13 else 1 if hb >= 12 else 3 if hb >= 10 else 6
    sbp = e.number("Systolic Blood Pressure", unit="mmHg")
    if sbp is not None:
        s += 0 if sbp >= 110 else 1 if sbp >= 100 else 2 if sbp >= 90 else 3
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    s += 1 if hr is not None and hr >= 100 else 0
    s += e.flag("Melena present")
    s += 2 * e.flag("Recent syncope")
    s += 2 * e.flag("Hepatic disease history")
    s += 2 * e.flag("Cardiac failure present")
    return int(s)


@_calc(28)
def apache_ii(e: Entities) -> int:
    s = 0
    age = e.age_years()
    s += 6 if age >= 75 else 5 if age >= 65 else 3 if age >= 55 else 2 if age >= 45 else 0
    if e.flag("History of severe organ failure or immunocompromise"):
        surgery = e.text("Surgery Type")
        # surgery type not stated: 0 (MedCalc-Bench Verified, calculator_implementations/apache_ii.py)
        s += 2 if surgery.startswith("elective") else 5 if surgery.startswith(("nonoperative", "emergency")) else 0
    t = e.temperature_c()
    if t is not None:
        s += (
            4
            if t >= 41
            else 3
            if t >= 39
            else 1
            if t >= 38.5
            else 0
            if t >= 36
            else 1
            if t >= 34
            else 2
            if t >= 32
            else 3
            if t >= 30
            else 4
        )
    if e.has("Systolic Blood Pressure") and e.has("Diastolic Blood Pressure"):
        m = _map(e)
        s += 4 if m > 159 else 3 if m > 129 else 2 if m > 109 else 0 if m > 69 else 2 if m > 49 else 4
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    if hr is not None:
        s += (
            4
            if hr >= 180
            else 3
            if hr >= 140
            else 2
            if hr >= 110
            else 0
            if hr >= 70
            else 2
            if hr >= 55
            else 3
            if hr >= 40
            else 4
        )
    rr = e.number("respiratory rate", unit="breaths/min")
    if rr is not None:
        s += (
            4
            if rr >= 50
            else 3
            if rr >= 35
            else 1
            if rr >= 25
            else 0
            if rr >= 12
            else 1
            if rr >= 10
            else 2
            if rr >= 6
            else 4
        )
    fio2 = e.fraction_percent("FiO2")
    aa = e.number("A-a gradient", unit="mmHg")
    pao2 = e.number(
        "Partial pressure of oxygen (PaO2) for Apache II", "PaO2", "Partial pressure of oxygen", unit="mmHg"
    )
    if fio2 is not None and fio2 >= 50 and aa is not None:
        s += 4 if aa > 499 else 3 if aa >= 350 else 2 if aa >= 200 else 0
    elif pao2 is not None:
        s += 0 if pao2 > 70 else 1 if pao2 >= 61 else 3 if pao2 >= 55 else 4
    ph = e.number("pH")
    if ph is not None:
        s += (
            4
            if ph >= 7.7
            else 3
            if ph >= 7.6
            else 1
            if ph >= 7.5
            else 0
            if ph >= 7.33
            else 2
            if ph >= 7.25
            else 3
            if ph >= 7.15
            else 4
        )
    na = e.mmol_l("sodium", "Sodium")
    if na is not None:
        s += (
            4
            if na >= 180
            else 3
            if na >= 160
            else 2
            if na >= 155
            else 1
            if na >= 150
            else 0
            if na >= 130
            else 2
            if na >= 120
            else 3
            if na >= 111
            else 4
        )
    k = e.mmol_l("potassium", "Potassium")
    if k is not None:
        s += (
            4
            if k >= 7
            else 3
            if k >= 6
            else 1
            if k >= 5.5
            else 0
            if k >= 3.5
            else 1
            if k >= 3
            else 2
            if k >= 2.5
            else 4
        )
    cr = e.mg_dl("creatinine", "creatinine")
    if cr is not None:
        acute = e.flag("Acute renal failure")
        chronic = e.flag("Chronic Renal Failure")
        if cr >= 3.5:
            pts = 8 if acute else 4
        elif cr >= 2.0:
            pts = 6 if acute else 3
        elif cr >= 1.5:
            pts = 4 if acute else 2
        elif cr >= 0.6 or acute or chronic:
            pts = 0
        else:
            pts = 2
        s += pts
    hct = e.number("Hematocrit", unit="%")
    if hct is not None:
        s += 4 if hct >= 60 else 2 if hct >= 50 else 1 if hct >= 46 else 0 if hct >= 30 else 2 if hct >= 20 else 4
    wbc = e.per_ul("White blood cell count")
    if wbc is not None:
        w = wbc / 1000.0
        s += 4 if w >= 40 else 2 if w >= 20 else 1 if w >= 15 else 0 if w >= 3 else 2 if w >= 1 else 4
    gcs = e.number("Glasgow Coma Score")
    s += int(15 - gcs) if gcs is not None else 0
    return int(s)


@_calc(29)
def psi(e: Entities) -> int:
    s = int(e.age_years())
    s -= 10 if _is_female(e) else 0
    s += 10 * e.flag("Nursing home resident")
    s += 30 * e.flag("Neoplastic disease")
    s += 20 * e.flag("Liver disease severity", "Liver disease history")
    s += 10 * e.flag("Congestive Heart Faliure", "Congestive Heart Failure")
    s += 10 * e.flag("Cerebrovascular disease history")
    s += 10 * e.flag("Renal disease", "Renal disease history")
    s += 20 * e.flag("Altered mental status")
    rr = e.number("respiratory rate", unit="breaths/min")
    s += 20 if rr is not None and rr >= 30 else 0
    sbp = e.number("Systolic Blood Pressure", unit="mmHg")
    s += 20 if sbp is not None and sbp < 90 else 0
    t = e.temperature_c()
    s += 15 if t is not None and (t < 35 or t > 39.9) else 0
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    s += 10 if hr is not None and hr >= 125 else 0
    ph = e.number("pH")
    s += 30 if ph is not None and ph < 7.35 else 0
    bun = e.mg_dl("bun", "Blood Urea Nitrogen (BUN)")
    s += 20 if bun is not None and bun >= 30 else 0
    na = e.mmol_l("sodium", "Sodium")
    s += 20 if na is not None and na < 130 else 0
    glu = e.mg_dl("glucose", "Glucose")
    s += 10 if glu is not None and glu >= 250 else 0
    hct = e.number("Hematocrit", unit="%")
    s += 10 if hct is not None and hct < 30 else 0
    pao2 = e.number(
        "Partial pressure of oxygen (PaO2) for Apache II", "PaO2", "Partial pressure of oxygen", unit="mmHg"
    )
    s += 10 if pao2 is not None and pao2 < 60 else 0
    s += 10 * e.flag("Pleural effusion on x-ray")
    return int(s)


@_calc(32)
def charlson(e: Entities) -> int:
    age = e.age_years()
    s = 4 if age >= 80 else 3 if age >= 70 else 2 if age >= 60 else 1 if age >= 50 else 0
    s += e.flag("Myocardial infarction")
    s += e.flag("Congestive Heart Faliure", "Congestive Heart Failure")
    s += e.flag("Peripheral vascular disease")
    s += e.flag("Cerebrovascular Accident", "Transient Ischemic Attacks History")
    s += e.flag("Dementia")
    s += e.flag("Chronic Obstructive Pulmonary Disease", "Chronic Pulmonary Disease")
    s += e.flag("Connective tissue disease")
    s += e.flag("Peptic ulcer disease")
    liver = e.text("Liver disease severity")
    s += 3 if ("moderate" in liver or "severe" in liver) else 1 if liver in {"mild", "true"} else 0
    dm = e.text("Diabetes mellitus criteria for CCI rule", "Diabetes mellitus")
    s += 2 if "end-organ" in dm or "end organ" in dm else 1 if "uncomplicated" in dm else 0
    s += 2 * e.flag("Hemiplegia")
    s += 2 * e.flag("Moderate to severe Chronic Kidney Disease")
    tumor = e.text("Solid tumor")
    s += 6 if "metastatic" in tumor else 2 if tumor in {"localized", "true"} else 0
    s += 2 * e.flag("Leukemia")
    s += 2 * e.flag("Lymphoma")
    s += 6 * e.flag("AIDS")
    return int(s)


@_calc(33)
def feverpain(e: Entities) -> int:
    # "No cough or coryza": an unmentioned cough/coryza counts as absent (+1), as in Centor and in MedCalc-Bench
    # Verified (calculator_implementations/feverpain.py, the 'cough_coryza_absent' not-reported branch).
    no_cough = e.flag("Absence of cough or coryza") if e.has("Absence of cough or coryza") else True
    return int(
        e.flag("Fever in past 24 hours")
        + no_cough
        + e.flag("Symptom onset <=3 days")
        + e.flag("Purulent tonsils")
        + e.flag("Severe tonsil inflammation")
    )


_CAPRINI_EVENTS = [  # (entity, points)
    ("Major Surgery in the last month", 1),
    ("Congestive Heart Failure in the last month", 1),
    ("Sepsis in the last month", 1),
    ("Pneumonia in the last month", 1),
    ("Immobilizing plaster cast in the last month", 2),
    ("Hip, pelvis, or leg fracture in the last month", 5),
    ("Stroke in the last month", 5),
    ("Multiple trauma in the last month", 5),
    ("Acute spinal cord injury causing paralysis in the last month", 5),
    ("Varicose veins", 1),
    ("Current swollen legs", 1),
    ("Current central venous access", 2),
    ("Family history of thrombosis", 3),
    ("Positive Factor V Leiden", 3),
    ("Positive prothrombin 20210A", 3),
    ("Elevated serum homocysteine", 3),
    ("Positive lupus anticoagulant", 3),
    ("Elevated anticardiolipin antibody", 3),
    ("Heparin-induced thrombocytopenia", 3),
    ("Other congenital or acquired thrombophilia", 3),
    ("History of inflammatory bowel disease", 1),
    ("Acute Myocardial infarction", 1),
    ("Chronic Obstructive Pulmonary Disease", 1),
    ("Present or previous malignancy", 2),
]


@_calc(36)
def caprini(e: Entities) -> int:
    age = e.age_years()
    s = 3 if age >= 75 else 2 if age >= 61 else 1 if age >= 41 else 0
    surgery = e.text("Surgery Type")
    if "arthroplasty" in surgery:
        s += 5
    elif "major" in surgery or "laparoscopic" in surgery or "arthroscopic" in surgery:
        s += 2
    elif "minor" in surgery:
        s += 1
    for name, pts in _CAPRINI_EVENTS:
        s += pts * e.flag(name)
    s += 3 * e.flag("Previously documented Deep Vein Thrombosis")
    s += 3 * e.flag("Previously Documented Pulmonary Embolism")
    mob = e.text("Mobility")
    s += 2 if "confined" in mob else 1 if "bed rest" in mob else 0
    bmi_v = e.number("Body Mass Index (BMI)", unit="kg/m^2")
    s += 1 if bmi_v is not None and bmi_v > 25 else 0
    return int(s)


@_calc(43)
def sofa(e: Entities) -> int:
    s = 0
    pao2 = e.number(
        "Partial pressure of oxygen (PaO2) for Apache II", "PaO2", "Partial pressure of oxygen", unit="mmHg"
    )
    fio2 = e.fraction_percent("FiO2")
    if pao2 is not None and fio2:
        ratio = pao2 / (fio2 / 100.0)
        support = e.flag(
            "On mechanical ventilation", "Continous positive airway pressure", "Continuous positive airway pressure"
        )
        if ratio >= 400:
            s += 0
        elif ratio >= 300:
            s += 1
        elif ratio >= 200 or not support:
            s += 2
        elif ratio >= 100:
            s += 3
        else:
            s += 4
    plt = e.per_ul("Platelet count")
    if plt is not None:
        p = plt / 1000.0
        s += 0 if p >= 150 else 1 if p >= 100 else 2 if p >= 50 else 3 if p >= 20 else 4
    gcs = e.number("Glasgow Coma Score")
    if gcs is not None:
        s += 0 if gcs >= 15 else 1 if gcs >= 13 else 2 if gcs >= 10 else 3 if gcs >= 6 else 4
    bili = e.mg_dl("bilirubin-584.66", "Bilirubin")
    if bili is not None:
        s += 0 if bili < 1.2 else 1 if bili < 2 else 2 if bili < 6 else 3 if bili < 12 else 4
    dop = e.mcg_kg_min("DOPamine") or 0.0
    dob = e.mcg_kg_min("DOBUTamine") or 0.0
    epi = e.mcg_kg_min("EPINEPHrine") or 0.0
    nor = e.mcg_kg_min("norEPINEPHrine") or 0.0
    if dop > 15 or epi > 0.1 or nor > 0.1:
        cv = 4
    elif dop > 5 or epi > 0 or nor > 0:
        cv = 3
    elif dop > 0 or dob > 0:
        cv = 2
    else:
        cv = 0
        if e.has("Systolic Blood Pressure") and e.has("Diastolic Blood Pressure") and _map(e) < 70:
            cv = 1
    s += cv
    cr = e.mg_dl("creatinine", "creatinine")
    renal = 0
    if cr is not None:
        renal = 0 if cr < 1.2 else 1 if cr < 2 else 2 if cr < 3.5 else 3 if cr <= 5 else 4
    uo = e.in_unit(("Urine Output",), {"ml/day", "ml/24h", "ml"}, "mL/day")
    if uo is not None:
        renal = max(renal, 4 if uo < 200 else 3 if uo < 500 else 0)
    s += renal
    return int(s)


@_calc(45)
def curb65(e: Entities) -> int:
    s = e.flag("Confusion")
    bun = e.mg_dl("bun", "Blood Urea Nitrogen (BUN)")
    s += 1 if bun is not None and bun > 19 else 0
    rr = e.number("respiratory rate", unit="breaths/min")
    s += 1 if rr is not None and rr >= 30 else 0
    sbp = e.number("Systolic Blood Pressure", unit="mmHg")
    dbp = e.number("Diastolic Blood Pressure", unit="mmHg")
    s += 1 if (sbp is not None and sbp < 90) or (dbp is not None and dbp <= 60) else 0
    age = e.age_years()
    s += 1 if age is not None and age >= 65 else 0
    return int(s)


@_calc(46)
def framingham_hard_chd(e: Entities) -> float:
    age = e.age_years()
    tc = e.mg_dl("cholesterol", "Total cholesterol")
    hdl = e.mg_dl("cholesterol", "high-density lipoprotein cholesterol")
    sbp = e.number("Systolic Blood Pressure", unit="mmHg")
    bp_med = 1.0 if e.flag("Blood pressure being treated with medicines") else 0.0
    smoker = 1.0 if e.flag("Smoker", "smoking") else 0.0
    la = math.log(age)
    if _is_female(e):
        age_smoke = min(age, 78.0)
        score = (
            31.764001 * la
            + 22.465206 * math.log(tc)
            - 1.187731 * math.log(hdl)
            + 2.552905 * math.log(sbp)
            + 0.420251 * bp_med
            + 13.07543 * smoker
            - 5.060998 * la * math.log(tc)
            - 2.996945 * math.log(age_smoke) * smoker
            - 146.5933061
        )
        base = 0.98767
    else:
        age_smoke = min(age, 70.0)
        score = (
            52.00961 * la
            + 20.014077 * math.log(tc)
            - 0.905964 * math.log(hdl)
            + 1.305784 * math.log(sbp)
            + 0.241549 * bp_med
            + 12.096316 * smoker
            - 4.605038 * la * math.log(tc)
            - 2.84367 * math.log(age_smoke) * smoker
            - 2.93323 * la * la
            - 172.300168
        )
        base = 0.9402
    return (1.0 - base ** math.exp(score)) * 100.0


@_calc(48)
def perc(e: Entities) -> int:
    s = 0
    age = e.age_years()
    s += 1 if age is not None and age >= 50 else 0
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    s += 1 if hr is not None and hr >= 100 else 0
    sat = e.number("O2 saturation percentage", unit="%")
    s += 1 if sat is not None and sat < 95 else 0
    s += e.flag("Unilateral Leg Swelling")
    s += e.flag("Hemoptysis")
    s += e.flag("Recent surgery or trauma")
    s += e.flag("Previously Documented Pulmonary Embolism", "Previously documented Deep Vein Thrombosis")
    s += e.flag("Hormone use")
    return int(s)


@_calc(51)
def sirs(e: Entities) -> int:
    s = 0
    t = e.temperature_c()
    s += 1 if t is not None and (t > 38 or t < 36) else 0
    hr = e.number("Heart Rate or Pulse", unit="beats/min")
    s += 1 if hr is not None and hr > 90 else 0
    rr = e.number("respiratory rate", unit="breaths/min")
    paco2 = e.number("PaCO2", unit="mmHg")
    s += 1 if (rr is not None and rr > 20) or (paco2 is not None and paco2 < 32) else 0
    wbc = e.per_ul("White blood cell count")
    bands = e.number("Band form percentage", "Bands", unit="%")
    s += 1 if (wbc is not None and (wbc > 12000 or wbc < 4000)) or (bands is not None and bands > 10) else 0
    return int(s)
