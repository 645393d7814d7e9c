"""TEST ORACLE, not part of the kit: MedCalc-Bench Verified's reference behaviour, written for this test suite
from reading Verified's reference code and texts (nikhilk7153/MedCalc-Bench-Verified at commit 0eb5960:
``calculator_implementations/*.py``, the entity -> parameter map ``name_to_python.json`` that ``generate_csv.py``
applies, ``rounding.py``, ``unit_converter_new.py``). Nothing here is copied; it restates, calculator by
calculator, what that code computes from a row's "Relevant Entities", quirks included:

- entity names are matched exactly, as ``generate_csv.py`` looks them up (``calc_map[entity]``); a row whose
  entities hold a name the map lacks has no Verified answer (``NotApplicable``), and a mapped name whose
  parameter the code never reads is ignored (APACHE II immunocompromise, four Caprini items, SOFA dobutamine);
- ages go through ``age_conversion``: years as given, months // 12, weeks // 52, days -> 0;
- weights: lbs x 0.453592, g / 1000, anything else read as kg; temperatures: only the exact spelling
  "degrees celsius" is Celsius, every other unit is converted as Fahrenheit;
- concentrations through molar mass / valence, counts through litre factors (a "m^3" is a cubic metre);
- the code's own slips: CKD-EPI's A = 0.7 for a man with creatinine <= 0.9, GCS 'not testable' = 4, Framingham's
  swapped arguments for a total cholesterol not in mg/dL (NotApplicable here), MME's "FentaNYL patch" spelling.

``reference(calculator_id, entities)`` returns a float, a ``datetime.date`` or ``(weeks, days)``; it raises
``NotApplicable`` where Verified's code has no answer (unknown entity name, unit its tables lack, a crash).

MedCalc-Bench v1.0 rows (the kit's dev file) spell some entities differently from Verified's rows (Verified
renamed them when it rebuilt the dataset); ``V1_RENAMES`` maps those spellings to Verified's, per calculator,
so Verified's behaviour can be applied to v1.0 rows. Entities Verified dropped are listed with ``None``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

__all__ = ["REFERENCE", "NotApplicable", "reference"]


class NotApplicable(Exception):
    """Verified's reference code gives no answer for these entities."""


def r5(x: float) -> float:
    """Verified's rounding of intermediate values: 5 decimals, or 5 significant digits below 1e-4."""
    if x == 0:
        return 0
    if abs(x) >= 1e-4:
        return round(x, 5)
    return round(x, -int(math.floor(math.log10(abs(x)))) + 5)


# ----- entity access --------------------------------------------------------------------------------------


class Row:
    """A row's entities under Verified's map for one calculator: parameter name -> value."""

    def __init__(self, entities: dict, names: dict[str, str]):
        self.p: dict[str, Any] = {}
        for key, value in entities.items():
            if key not in names:
                raise NotApplicable(f"entity {key!r} is not in Verified's map for this calculator")
            if value == "False":
                value = False
            elif value == "True":
                value = True
            self.p[names[key]] = value

    def has(self, name: str) -> bool:
        return name in self.p

    def __getitem__(self, name: str) -> Any:
        try:
            return self.p[name]
        except KeyError:
            raise NotApplicable(f"parameter {name!r} missing (Verified's code would raise)") from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.p.get(name, default)

    def num(self, name: str) -> float:
        v = self[name]
        return float(v[0] if isinstance(v, (list, tuple)) else v)


def age(row: Row) -> float:
    v = row["age"]
    out = None
    for i in range(0, len(v), 2):
        unit = v[i + 1]
        if "year" in unit:
            return v[i]
        if "months" in unit:
            return v[i] // 12
        if "weeks" in unit:
            return v[i] // 52
        if "days" in unit:
            return 0
    if out is None:
        raise NotApplicable(f"age {v!r}")
    return out


def weight_kg(v) -> float:
    value, unit = v[0], v[1]
    if unit == "lbs":
        return r5(value * 0.453592)
    if unit == "g":
        return value / 1000
    return value


def height_m(v) -> float:
    if len(v) == 4:
        return r5((v[0] * 12 + v[2]) * 0.0254)
    factors = {"m": 1, "cm": 0.01, "ft": 0.3048, "in": 0.0254}
    if v[-1] not in factors:
        raise NotApplicable(f"height unit {v[-1]!r}")
    return v[0] if v[-1] == "m" else r5(v[0] * factors[v[-1]])


def height_in(v) -> float:
    if len(v) == 4:
        return v[0] * 12 + v[2]
    factors = {"m": 39.3701, "cm": 0.393701, "ft": 12, "in": 1}
    if v[-1] not in factors:
        raise NotApplicable(f"height unit {v[-1]!r}")
    return v[0] if v[-1] == "in" else r5(v[0] * factors[v[-1]])


def height_cm(v) -> float:
    if len(v) == 4:
        return r5((v[0] * 12 + v[2]) * 2.54)
    factors = {"m": 100, "cm": 1, "ft": 30.48, "in": 2.54}
    if v[-1] not in factors:
        raise NotApplicable(f"height unit {v[-1]!r}")
    return v[0] if v[-1] == "cm" else r5(v[0] * factors[v[-1]])


def celsius(v) -> float:
    value, unit = v[0], v[1]
    if unit == "degrees celsius":
        return value
    return r5((value - 32) * 5 / 9)


_MASS = {"kg": 1000, "g": 1, "mg": 1e-3, "µg": 1e-6}
_AMOUNT = {"mol": 1, "mmol": 1e-3, "µmol": 1e-6, "pmol": 1e-9}
_VOLUME = {"L": 1, "dL": 0.1, "mL": 1e-3, "µL": 1e-6, "mm^3": 1e-6, "cm^3": 1e-3, "m^3": 1e3}


def conc(v, molar_mass: float | None, valence: int | None, target: str) -> float:
    """A concentration [value, 'mass/volume'] converted to ``target`` as Verified's converter does."""
    value, unit = float(v[0]), str(v[1]).replace("μ", "µ")
    if unit == target:
        return value
    try:
        src_mass, src_vol = unit.split("/")
        dst_mass, dst_vol = target.split("/")
    except ValueError:
        raise NotApplicable(f"unit {unit!r}") from None
    if src_vol not in _VOLUME or dst_vol not in _VOLUME:
        raise NotApplicable(f"unit {unit!r}")

    def to_mol(x: float, m: str) -> float:
        if m in _AMOUNT:
            return x * _AMOUNT[m]
        if m in _MASS:
            if molar_mass is None:
                raise NotApplicable("no molar mass")
            return x * _MASS[m] / molar_mass
        if m == "mEq":
            if valence is None:
                raise NotApplicable("no valence")
            return x / valence * 1e-3
        raise NotApplicable(f"mass unit {m!r}")

    if src_mass == dst_mass:
        x = value
    elif src_mass in _MASS and dst_mass in _MASS:
        x = value * _MASS[src_mass] / _MASS[dst_mass]
    elif src_mass in _AMOUNT and dst_mass in _AMOUNT:
        x = value * _AMOUNT[src_mass] / _AMOUNT[dst_mass]
    else:
        mol = to_mol(value, src_mass)
        if dst_mass in _AMOUNT:
            x = mol / _AMOUNT[dst_mass]
        elif dst_mass in _MASS:
            if molar_mass is None:
                raise NotApplicable("no molar mass")
            x = mol * molar_mass / _MASS[dst_mass]
        elif dst_mass == "mEq":
            if valence is None:
                raise NotApplicable("no valence")
            x = mol * valence * 1e3
        else:
            raise NotApplicable(f"target {target!r}")
    return r5(x / (_VOLUME[src_vol] / _VOLUME[dst_vol]) if src_vol != dst_vol else x)


def per_volume(v, target: str) -> float:
    """A count [value, unit] per ``target`` volume ('L', 'µL', 'mm^3'), as convert_to_units_per_liter does."""
    value, unit = v[0], str(v[1]).replace("μ", "µ")
    if unit == target:
        return value
    if unit not in _VOLUME:
        raise NotApplicable(f"count unit {unit!r}")
    return r5(r5(_VOLUME[target] / _VOLUME[unit]) * value)


# ----- calculators ------------------------------------------------------------------------------------------

REFERENCE: dict[int, tuple[dict[str, str], Callable[[Row], Any]]] = {}


def calc(cid: int, names: str):
    """Register calculator ``cid``; ``names``: 'entity=param; ...' (Verified's entity -> parameter map)."""
    mapping = dict(part.rsplit("=", 1) for part in (p.strip() for p in names.split(";")) if part)

    def deco(fn):
        REFERENCE[cid] = (mapping, fn)
        return fn

    return deco


_ALL = "*"
V1_RENAMES: dict[int | str, dict[str, str | None]] = {
    _ALL: {
        "Congestive Heart Faliure": "Congestive Heart Failure",
        "QT interval": "QT Interval",
        "FiO₂": "FiO2",
        "PaCO₂": "PaCO2",
    },
    16: {"Bedridden recently >3 days or major surgery within 12 weeks": "Bedridden recently >3 days"},
    17: {"Cerebrovascular disease history": None},  # v1.0 rows hold it beside "History of cerebrovascular disease"
    18: {"Diabetes mellitus criteria for CCI rule": "Diabetes mellitus"},
    25: {"Hypertension history": "Hypertension"},
    27: {
        "Recent syncope": "Recent Syncope",
        "Cardiac failure present": "Cardiac Failure Present",
        "Melena present": "Melena Present",
    },
    28: {"Partial pressure of oxygen (PaO₂) for Apache II": "PaO2", "Chronic Renal Failure": "Chronic renal failure"},
    29: {
        "Partial pressure of oxygen (PaO₂) for Apache II": "Partial pressure of oxygen",
        "Renal disease": "Renal disease history",
        "Liver disease severity": "Liver disease history",
    },
    32: {
        "Chronic Obstructive Pulmonary Disease": "Chronic Pulmonary Disease",
        "Diabetes mellitus criteria for CCI rule": "Diabetes mellitus",
    },
    33: {
        "Symptom onset ≤3 days": "Symptom onset <=3 days",
        "Altered mental status for PECARN head injury criteria": None,
        "Occipital, parietal or temporal scalp hematoma; history of level of conciousness (LOC) ≥5 sec; not acting "
        "normally per parent or severe mechanism of injury?": None,
    },
    43: {
        "Partial pressure of oxygen (PaO₂) for Apache II": "PaO2",
        "Continous positive airway pressure": "Continuous positive airway pressure",
        "Continuous veno-venous hemodialysis for ≥24 hours in the past week": None,
    },
    68: {"cycle length": None},
}


# v1.0 misspellings of temperature units; Verified's rows spell them right (its code reads any unit but
# "degrees celsius" as Fahrenheit: convert_temperature.py).
_V1_UNIT_SPELLINGS = {"degrees celsisus": "degrees celsius", "degrees fahreinheit": "degrees fahrenheit"}


def verified_spelling(calculator_id: int, entities: dict) -> dict:
    """A row's entities under Verified's names (v1.0 spellings renamed, dropped ones removed; graded strings and
    the misspelled 'Not mentinoed' as Verified's rows write them)."""
    renames = {**V1_RENAMES[_ALL], **V1_RENAMES.get(int(calculator_id), {})}
    out = {}
    for key, value in entities.items():
        new = renames.get(key, key)
        if new is None or (isinstance(value, str) and value.strip().lower() in ("not mentinoed", "not mentioned")):
            continue
        if int(calculator_id) == 32 and isinstance(value, str):
            value = value.lower()  # Verified's rows write graded values in lower case
        if isinstance(value, list) and len(value) == 2 and value[1] in _V1_UNIT_SPELLINGS:
            value = [value[0], _V1_UNIT_SPELLINGS[value[1]]]
        out[new] = value
    return out


def reference(calculator_id: int, entities: dict) -> Any:
    entities = verified_spelling(calculator_id, entities)
    if int(calculator_id) == 49:  # generate_csv.py passes MME's entities through unmapped
        try:
            return mme(entities)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise NotApplicable(f"Verified's code would fail: {type(exc).__name__}: {exc}") from None
    try:
        names, fn = REFERENCE[int(calculator_id)]
    except KeyError:
        raise NotApplicable(f"no reference for calculator {calculator_id}") from None
    try:
        return fn(Row(entities, names))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, IndexError) as exc:
        raise NotApplicable(f"Verified's code would fail: {type(exc).__name__}: {exc}") from None


def _bmi(row: Row) -> float:
    h = height_m(row["height"])
    return r5(weight_kg(row["weight"]) / (h * h))


def _ibw(row: Row) -> float:
    h = height_in(row["height"])
    base = 50 if row["sex"] == "Male" else 45.5 if row["sex"] == "Female" else None
    if base is None:
        raise NotApplicable("sex")
    return r5(base + 2.3 * (h - 60))


def _abw(row: Row) -> float:
    ibw = _ibw(row)
    return r5(ibw + 0.4 * (weight_kg(row["weight"]) - ibw))


@calc(2, "age=age; sex=sex; weight=weight; height=height; creatinine=creatinine")
def cockcroft_gault(row):
    w = weight_kg(row["weight"])
    bmi = _bmi(row)
    if bmi < 18.5:
        adj = w
    elif 18.5 <= bmi <= 24.9:
        adj = min(_ibw(row), w)
    else:
        adj = _abw(row)
    k = 1 if row["sex"] == "Male" else 0.85
    return r5((140 - age(row)) * adj * k / (conc(row["creatinine"], 113.12, None, "mg/dL") * 72))


@calc(3, "age=age; sex=sex; creatinine=creatinine")
def ckd_epi(row):
    scr = conc(row["creatinine"], 113.12, None, "mg/dL")
    sex = row["sex"]
    if scr <= 0.7 and sex == "Female":
        a, b = 0.7, -0.241
    elif scr <= 0.9 and sex == "Male":
        a, b = 0.7, -0.302  # the code's A for this branch (its text says 0.9)
    elif scr > 0.7 and sex == "Female":
        a, b = 0.7, -1.2
    elif scr > 0.9 and sex == "Male":
        a, b = 0.9, -1.2
    else:
        raise NotApplicable("sex")
    g = 1.012 if sex == "Female" else 1
    return r5(142 * (scr / a) ** b * 0.9938 ** age(row) * g)


@calc(
    4,
    "sex=sex; age=age; Congestive Heart Failure=chf; Thromboembolism history=thromboembolism; "
    "Vascular disease history=vascular_disease; Diabetes history=diabetes; Hypertension history=hypertension; "
    "Transient Ischemic Attacks History=tia; Stroke=stroke",
)
def cha2ds2_vasc(row):
    a = age(row)
    s = 2 if a >= 75 else 1 if a >= 65 else 0
    s += 1 if str(row["sex"]).lower() == "female" else 0
    s += 1 if row.get("chf") else 0
    s += 1 if row.get("hypertension") else 0
    s += 2 if (row.get("stroke") or row.get("tia") or row.get("thromboembolism")) else 0
    s += 1 if row.get("vascular_disease") else 0
    s += 1 if row.get("diabetes") else 0
    return s


def _map(row: Row) -> float:
    return r5(row["sys_bp"][0] / 3 + 2 * row["dia_bp"][0] / 3)


@calc(5, "Systolic Blood Pressure=sys_bp; Diastolic Blood Pressure=dia_bp")
def mean_arterial_pressure(row):
    return _map(row)


@calc(6, "weight=weight; height=height")
def bmi(row):
    return _bmi(row)


@calc(7, "Calcium=calcium; Albumin=albumin")
def calcium_correction(row):
    alb = conc(row["albumin"], 66500, None, "g/dL")
    ca = conc(row["calcium"], 40.08, 2, "mg/dL")
    return r5(0.8 * (4.0 - alb) + ca)


@calc(
    8,
    "Heart Rate or Pulse=heart_rate; Previously Documented Pulmonary Embolism=previous_pe; "
    "Immobilization for at least 3 days=immobilization_for_3days; "
    "Malignancy with treatment within 6 months or palliative=malignancy_with_treatment; "
    "Pulmonary Embolism is #1 diagnosis OR equally likely=pe_number_one; "
    "Surgery in the previous 4 weeks=surgery_in_past4weeks; Previously documented Deep Vein Thrombosis=previous_dvt; "
    "Hemoptysis=hemoptysis; Clinical signs and symptoms of Deep Vein Thrombosis=clinical_dvt",
)
def wells_pe(row):
    s = 0.0
    s += 3 if row.get("clinical_dvt") else 0
    s += 3 if row.get("pe_number_one") else 0
    s += 1.5 if row["heart_rate"][0] > 100 else 0
    s += 1.5 if (row.get("immobilization_for_3days") or row.get("surgery_in_past4weeks")) else 0
    s += 1.5 if (row.get("previous_pe") or row.get("previous_dvt")) else 0
    s += 1 if row.get("hemoptysis") else 0
    s += 1 if row.get("malignancy_with_treatment") else 0
    return s


@calc(9, "age=age; sex=sex; creatinine=creatinine; Race=race")
def mdrd(row):
    scr = conc(row["creatinine"], 113.12, None, "mg/dL")
    race = 1.212 if row.get("race") == "Black" else 1
    sex = 0.742 if row["sex"] == "Female" else 1
    return r5(175 * math.exp(math.log(scr) * -1.154) * math.exp(math.log(age(row)) * -0.203) * race * sex)


@calc(10, "sex=sex; height=height; weight=weight")
def ideal_body_weight(row):
    return _ibw(row)


def _rr(row: Row) -> float:
    return r5(60 / row["heart_rate"][0])


_QT = "Heart Rate or Pulse=heart_rate; QT Interval=qt_interval"


@calc(11, _QT)
def bazett(row):
    return r5(row["qt_interval"][0] / _rr(row) ** 0.5)


@calc(56, _QT)
def fridericia(row):
    return r5(row["qt_interval"][0] / _rr(row) ** (1 / 3))


@calc(57, _QT)
def framingham_qt(row):
    return r5(row["qt_interval"][0] + 154 * (1 - _rr(row)))


@calc(58, _QT)
def hodges(row):
    return r5(row["qt_interval"][0] + 1.75 * (60 / _rr(row) - 60))


@calc(59, _QT)
def rautaharju(row):
    return r5(row["qt_interval"][0] * (120 + row["heart_rate"][0]) / 180)


def _date(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%m/%d/%Y").date()


@calc(13, "cycle length=cycle_length; Last menstrual date=menstrual_date")
def due_date(row):
    return _date(row["menstrual_date"]) + dt.timedelta(weeks=40) + dt.timedelta(days=row["cycle_length"] - 28)


@calc(68, "Last menstrual date=menstrual_date")
def conception(row):
    return _date(row["menstrual_date"]) + dt.timedelta(weeks=2)


@calc(69, "Current Date=current_date; Last menstrual date=menstrual_date")
def gestational_age(row):
    days = abs((_date(row["current_date"]) - _date(row["menstrual_date"])).days)
    return (days // 7, days % 7)


@calc(
    15,
    "international normalized ratio=inr; Ascites=ascites; Albumin=albumin; Bilirubin=bilirubin; "
    "Encephalopathy=encephalopathy",
)
def child_pugh(row):
    inr = float(row["inr"])
    s = 1 if inr < 1.7 else 2 if inr <= 2.3 else 3
    bili = conc(row["bilirubin"], 548.66, None, "mg/dL")
    s += 1 if bili < 2 else 2 if bili <= 3 else 3
    alb = conc(row["albumin"], 66500, None, "g/dL")
    s += 1 if alb > 3.5 else 2 if alb >= 2.8 else 3
    if row.has("ascites"):
        s += {"absent": 1, "slight": 2, "moderate": 3}.get(row["ascites"], 0)
    else:
        s += 1
    if row.has("encephalopathy"):
        s += {"No Encephalopathy": 1, "Grade 1-2": 2, "Grade 3-4": 3}.get(row["encephalopathy"], 0)
    else:
        s += 1
    return s


@calc(
    16,
    "Alternative diagnosis to Deep Vein Thrombosis as likely or more likely=alternative_to_dvt_diagnosis; "
    "Localized tenderness along the deep venous system=localized_tenderness_on_deep_venuous_system; "
    "Previously documented Deep Vein Thrombosis=previous_dvt_documented; "
    "Paralysis, paresis, or recent plaster immobilization of the lower extremity="
    "paralysis_paresis_immobilization_in_lower_extreme; Entire Leg Swollen=leg_swollen; "
    "Bedridden recently >3 days=bedridden_for_atleast_3_days; Active cancer=active_cancer; "
    "Major surgery within 12 weeks=major_surgery_in_last_12_weeks; "
    "Calf swelling >3 centimeters compared to the other leg=calf_swelling_3cm; "
    "Collateral (nonvaricose) superficial veins present=collateral_superficial_veins; "
    "Pitting edema, confined to symptomatic leg=pitting_edema_on_symptomatic_leg",
)
def wells_dvt(row):
    s = 0
    for name in (
        "active_cancer",
        "calf_swelling_3cm",
        "collateral_superficial_veins",
        "leg_swollen",
        "localized_tenderness_on_deep_venuous_system",
        "pitting_edema_on_symptomatic_leg",
        "paralysis_paresis_immobilization_in_lower_extreme",
        "previous_dvt_documented",
    ):
        s += 1 if row.get(name) else 0
    s += 1 if (row.get("bedridden_for_atleast_3_days") or row.get("major_surgery_in_last_12_weeks")) else 0
    s -= 2 if row.get("alternative_to_dvt_diagnosis") else 0
    return s


@calc(
    17,
    "Congestive Heart Failure criteria for the Cardiac Risk Index rule=congestive_heart_failure; "
    "Elevated-risk surgery=elevated_risk_surgery; History of ischemic heart disease=ischemetic_heart_disease; "
    "Pre-operative treatment with insulin=pre_operative_insulin_treatment; "
    "Pre-operative creatinine=pre_operative_creatinine; History of cerebrovascular disease=cerebrovascular_disease; "
    "age=age",
)
def rcri(row):
    s = sum(
        1
        for n in (
            "elevated_risk_surgery",
            "ischemetic_heart_disease",
            "congestive_heart_failure",
            "cerebrovascular_disease",
            "pre_operative_insulin_treatment",
        )
        if row.get(n)
    )
    if row.has("pre_operative_creatinine"):
        s += 1 if conc(row["pre_operative_creatinine"], 113.12, None, "mg/dL") > 2 else 0
    return s


_HEART_OPTIONS = {
    "history": {"Slightly suspicious": 0, "Moderately suspicious": 1, "Highly suspicious": 2},
    "electrocardiogram": {"Normal": 0, "Non-specific repolarization disturbance": 1, "Significant ST deviation": 2},
    "initial_troponin": {
        "less than or equal to normal limit": 0,
        "between the normal limit or up to three times the normal limit": 1,
        "greater than three times normal limit": 2,
    },
}
_HEART_DEFAULT = {
    "history": "Slightly suspicious",
    "electrocardiogram": "Normal",
    "initial_troponin": "less than or equal to normal limit",
}


@calc(
    18,
    "age=age; Hypertension history=hypertension; Electrocardiogram Test=electrocardiogram; "
    "Diabetes mellitus=diabetes_mellitus; smoking=smoking; "
    "parent or sibling with Cardiovascular disease before age 65=family_with_cvd; "
    "atherosclerotic disease=atherosclerotic_disease; Suspicion History=history; "
    "hypercholesterolemia=hypercholesterolemia; obesity=obesity; Transient Ischemic Attacks History=tia; "
    "Initial troponin=initial_troponin",
)
def heart(row):
    s = 0
    for name, options in _HEART_OPTIONS.items():
        s += options[row.get(name, _HEART_DEFAULT[name])]
    a = age(row)
    s += 0 if a < 45 else 1 if a < 65 else 2
    n = sum(
        1
        for f in (
            "hypertension",
            "hypercholesterolemia",
            "diabetes_mellitus",
            "obesity",
            "smoking",
            "family_with_cvd",
            "atherosclerotic_disease",
        )
        if row.get(f)
    )
    s += 0 if n == 0 else 1 if n <= 2 else 2
    return s


@calc(19, "age=age; Alanine aminotransferase=alt; Aspartate aminotransferase=ast; Platelet count=platelet_count")
def fib4(row):
    plt = per_volume(row["platelet_count"], "L") / 1e9
    return r5(age(row) * row["ast"][0] / (plt * math.sqrt(row["alt"][0])))


@calc(
    20,
    "age=age; Cough Absent=cough_absent; Temperature=temperature; "
    "Tender/swollen anterior cervical lymph nodes=tender_lymph_nodes; "
    "Exudate or swelling on tonsils=exudate_swelling_tonsils",
)
def centor(row):
    a = age(row)
    s = 1 if 3 <= a <= 14 else -1 if a >= 45 else 0
    s += 1 if celsius(row["temperature"]) > 38 else 0
    s += 1 if (not row.has("cough_absent") or row["cough_absent"]) else 0
    s += 1 if row.get("tender_lymph_nodes") else 0
    s += 1 if row.get("exudate_swelling_tonsils") else 0
    return s


_GCS = {
    "best_eye_response": {
        "eyes open spontaneously": 4,
        "eye opening to verbal command": 3,
        "eye opening to pain": 2,
        "no eye opening": 1,
        "not testable": 4,
    },
    "best_verbal_response": {
        "oriented": 5,
        "confused": 4,
        "inappropriate words": 3,
        "incomprehensible sounds": 2,
        "no verbal response": 1,
        "not testable": 4,
    },
    "best_motor_response": {
        "obeys commands": 6,
        "localizes pain": 5,
        "withdrawal from pain": 4,
        "flexion to pain": 3,
        "extension to pain": 2,
        "no motor response": 1,
    },
}


@calc(
    21,
    "Best motor response=best_motor_response; Best eye response=best_eye_response; "
    "Best verbal response=best_verbal_response",
)
def gcs(row):
    return sum(table[row[name]] for name, table in _GCS.items())


@calc(22, "weight=weight")
def maintenance_fluid(row):
    w = weight_kg(row["weight"])
    return r5(w * 4) if w < 10 else r5(40 + 2 * (w - 10)) if w <= 20 else r5(60 + (w - 20))


@calc(
    23,
    "creatinine=creatinine; Continuous veno-venous hemodialysis for ≥24 hours in the past week=cvvhd; "
    "Dialysis at least twice in the past week=dialysis_twice; international normalized ratio=inr; "
    "Sodium=sodium; Bilirubin=bilirubin",
)
def meld_na(row):
    cr = conc(row["creatinine"], 113.12, None, "mg/dL")
    if cr < 1.0:
        cr = 1.0
    elif cr > 4.0 or row.get("dialysis_twice") or row.get("cvvhd"):
        cr = 4.0
    bili = max(conc(row["bilirubin"], None, None, "mg/dL"), 1.0)
    inr = max(float(row["inr"]), 1.0)
    na = min(max(conc(row["sodium"], 22.99, 1, "mEq/L"), 125), 137)
    meld_i = 0.957 * math.log(cr) + 0.378 * math.log(bili) + 1.120 * math.log(inr) + 0.643
    meld_10 = round(round(meld_i, 1) * 10)
    meld = round(meld_10 + 1.32 * (137 - na) - (0.033 * meld_10 * (137 - na)))
    return round(min(meld, 40) if meld_10 > 11 else meld_10)


_STEROID = {
    "Betamethasone IV": 1,
    "Cortisone PO": 33.33,
    "Dexamethasone IV": 1,
    "Dexamethasone PO": 1,
    "Hydrocortisone IV": 26.67,
    "Hydrocortisone PO": 26.67,
    "MethylPrednisoLONE IV": 5.33,
    "MethylPrednisoLONE PO": 5.33,
    "PrednisoLONE PO": 6.67,
    "PredniSONE PO": 6.67,
    "Triamcinolone IV": 5.33,
}


@calc(24, "input steroid=input steroid; target steroid=target steroid")
def steroid(row):
    name, mass, unit = row["input steroid"][:3]
    mg = mass * _MASS[unit] / _MASS["mg"] if unit != "mg" else mass
    return r5(mg * r5(_STEROID[row["target steroid"]] / _STEROID[name]))


@calc(
    25,
    "Liver disease criteria for the HAS-BLED rule=liver_disease_has_bled; age=age; "
    "Renal disease criteria for the HAS-BLED rule=renal_disease_has_bled; Hypertension=hypertension; "
    "Number of Alcoholic Drinks Per Week=alcoholic_drinks; Stroke=stroke; "
    "Medication usage predisposing to bleeding=medications_for_bleeding; "
    "Prior major bleeding or predisposition to bleeding=prior_bleeding; "
    "Labile international normalized ratio=labile_inr",
)
def has_bled(row):
    drinks = row["alcoholic_drinks"]
    drinks = int(float(drinks[0] if isinstance(drinks, (list, tuple)) else drinks))
    s = (1 if age(row) > 65 else 0) + (1 if drinks >= 8 else 0)
    s += sum(
        1
        for n in (
            "hypertension",
            "liver_disease_has_bled",
            "renal_disease_has_bled",
            "stroke",
            "prior_bleeding",
            "labile_inr",
            "medications_for_bleeding",
        )
        if row.get(n)
    )
    return s


@calc(26, "Sodium=sodium; Glucose=glucose")
def sodium_correction(row):
    return r5(conc(row["sodium"], 22.99, 1, "mEq/L") + 0.024 * (conc(row["glucose"], 180.16, None, "mg/dL") - 100))


@calc(
    27,
    "Heart Rate or Pulse=heart_rate; Blood Urea Nitrogen (BUN)=bun; sex=sex; Cardiac Failure Present=cardiac_failure; "
    "Hemoglobin=hemoglobin; Melena Present=melena_present; Systolic Blood Pressure=sys_bp; Recent Syncope=syncope; "
    "Hepatic disease history=hepatic_disease_history",
)
def glasgow_blatchford(row):
    hb = conc(row["hemoglobin"], 64500, None, "g/dL")
    bun = conc(row["bun"], 28.08, None, "mg/dL")
    s = 0
    if row["sex"] == "Male":
        s += 1 if 12 <= hb < 13 else 3 if 10 <= hb < 12 else 6 if hb < 10 else 0
    else:
        s += 1 if 10 <= hb < 12 else 6 if hb < 10 else 0
    s += 2 if 18.2 <= bun < 22.4 else 3 if 22.4 <= bun < 28 else 4 if 28 <= bun <= 70 else 6 if bun > 70 else 0
    sbp = row["sys_bp"][0]
    s += 1 if 100 <= sbp < 110 else 2 if 90 <= sbp < 100 else 3 if sbp < 90 else 0
    s += 1 if row["heart_rate"][0] >= 100 else 0
    s += 1 if row.get("melena_present") else 0
    s += sum(2 for n in ("syncope", "hepatic_disease_history", "cardiac_failure") if row.get(n))
    return s


@calc(
    28,
    "History of severe organ failure or immunocompromise=severe_organ_failure_or_immunocompromise; age=age; "
    "Temperature=temperature; Mean arterial pressure=mean_arterial_pressure; pH=pH; Heart Rate or Pulse=heart_rate; "
    "respiratory rate=respiratory_rate; Sodium=sodium; Potassium=potassium; creatinine=creatinine; "
    "Acute renal failure=acute_renal_failure; Chronic renal failure=chronic_renal_failure; Hematocrit=hematocrit; "
    "White blood cell count=wbc; Glasgow Coma Score=gcs; FiO2=fio2; PaO2=pao2; A-a gradient=a_a_gradient; "
    "Diastolic Blood Pressure=dia_bp; Systolic Blood Pressure=sys_bp; Surgery Type=surgery_type",
)
def apache_ii(row):
    def band(x, rules):
        for test, pts in rules:
            if test(x):
                return pts
        return 0

    s = 0
    a = age(row)
    s += 0 if a < 45 else 2 if a <= 54 else 3 if a <= 64 else 5 if a <= 74 else 6
    # chronic health: the code reads 'organ_failure_immunocompromise', which the map never fills -> 0 points
    if row["fio2"][0] >= 50:
        g = row.num("a_a_gradient")
        s += 4 if g > 499 else 3 if 350 <= g <= 499 else 2 if 200 <= g <= 349 else 0
    else:
        p = row["pao2"][0]
        s += 0 if p > 70 else 1 if 61 <= p <= 70 else 3 if 55 <= p <= 60 else 4
    t = celsius(row["temperature"])
    s += band(
        t,
        [
            (lambda x: x >= 41, 4),
            (lambda x: 39 <= x < 41, 3),
            (lambda x: 38.5 <= x < 39, 1),
            (lambda x: 36 <= x < 38.5, 0),
            (lambda x: 34 <= x < 36, 1),
            (lambda x: 32 <= x < 34, 2),
            (lambda x: 30 <= x < 32, 3),
            (lambda x: x < 30, 4),
        ],
    )
    m = _map(row)
    s += 4 if m > 159 else 3 if m > 129 else 2 if m > 109 else 0 if m > 69 else 2 if m > 49 else 4
    hr = row["heart_rate"][0]
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
    rr = row["respiratory_rate"][0]
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
    ph = row.num("pH")
    s += (
        4
        if ph >= 7.70
        else 3
        if ph >= 7.60
        else 1
        if ph >= 7.50
        else 0
        if ph >= 7.33
        else 2
        if ph >= 7.25
        else 3
        if ph >= 7.15
        else 4
    )
    na = conc(row["sodium"], 22.99, 1, "mmol/L")
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
    k = conc(row["potassium"], 39.10, 1, "mmol/L")
    s += (
        4
        if k >= 7.0
        else 3
        if k >= 6.0
        else 1
        if k >= 5.5
        else 0
        if k >= 3.5
        else 1
        if k >= 3.0
        else 2
        if k >= 2.5
        else 4
    )
    cr = conc(row["creatinine"], 113.12, None, "mg/dL")
    arf, crf = row.get("acute_renal_failure", False), row.get("chronic_renal_failure", False)
    if cr >= 3.5 and arf:
        s += 8
    elif 2.0 <= cr < 3.5 and arf:
        s += 6
    elif cr >= 3.5 and crf:
        s += 4
    elif 2.0 <= cr < 3.5 and crf:
        s += 3
    elif 1.5 <= cr < 2.0 and arf:
        s += 4
    elif 1.5 <= cr < 2.0 and crf:
        s += 2
    if not arf and not crf:
        s += 4 if cr >= 3.5 else 3 if cr >= 2.0 else 2 if cr >= 1.5 else 0 if cr >= 0.6 else 2
    hct = row["hematocrit"][0]
    s += 4 if hct >= 60 else 2 if hct >= 50 else 1 if hct >= 46 else 0 if hct >= 30 else 2 if hct >= 20 else 4
    wbc = per_volume(row["wbc"], "L")
    s += 4 if wbc >= 40e9 else 2 if wbc >= 20e9 else 1 if wbc >= 15e9 else 0 if wbc >= 3e9 else 2 if wbc >= 1e9 else 4
    s += int(15 - int(row.num("gcs")))
    return s


@calc(
    29,
    "Heart Rate or Pulse=heart_rate; pH=pH; Systolic Blood Pressure=sys_bp; Blood Urea Nitrogen (BUN)=bun; "
    "Renal disease history=renal_disease; Cerebrovascular disease history=cerebrovascular_disease; "
    "Neoplastic disease=neoplastic_disease; Sodium=sodium; Liver disease history=liver_disease; "
    "Congestive Heart Failure=chf; Nursing home resident=nursing_home_resident; "
    "Partial pressure of oxygen=partial_pressure_oxygen; age=age; respiratory rate=respiratory_rate; sex=sex; "
    "Hematocrit=hematocrit; Glucose=glucose; Temperature=temperature; Pleural effusion on x-ray=pleural_effusion; "
    "Altered mental status=altered_mental_status",
)
def psi(row):
    s = age(row) - (10 if row["sex"] == "Female" else 0)
    for name, pts in (
        ("nursing_home_resident", 10),
        ("neoplastic_disease", 30),
        ("liver_disease", 20),
        ("chf", 10),
        ("cerebrovascular_disease", 10),
        ("renal_disease", 10),
        ("altered_mental_status", 20),
        ("pleural_effusion", 10),
    ):
        s += pts if row.get(name) else 0
    s += 10 if row["heart_rate"][0] >= 125 else 0
    t = celsius(row["temperature"])
    s += 15 if (t < 35 or t > 39.9) else 0
    s += 30 if row.num("pH") < 7.35 else 0
    s += 20 if row["respiratory_rate"][0] >= 30 else 0
    s += 20 if row["sys_bp"][0] < 90 else 0
    s += 20 if conc(row["bun"], 28.02, None, "mg/dL") >= 30 else 0
    s += 20 if conc(row["sodium"], 22.99, 1, "mmol/L") < 130 else 0
    s += 10 if conc(row["glucose"], 180.16, None, "mg/dL") >= 250 else 0
    s += 10 if row["hematocrit"][0] < 30 else 0
    po2 = row["partial_pressure_oxygen"]
    if po2[1] == "mm Hg":
        s += 10 if po2[0] < 60 else 0
    elif po2[1] == "kPa":
        s += 10 if po2[0] < 8 else 0
    return s


@calc(30, "Sodium=sodium; Glucose=glucose; Blood Urea Nitrogen (BUN)=bun")
def serum_osmolality(row):
    return r5(
        2 * conc(row["sodium"], 22.99, 1, "mmol/L")
        + conc(row["bun"], 28.02, None, "mg/dL") / 2.8
        + conc(row["glucose"], 180.16, None, "mg/dL") / 18
    )


@calc(31, "Glucose=glucose; Insulin=insulin")
def homa_ir(row):
    ins, unit = row["insulin"][0], row["insulin"][1]
    ins = ins * 6 if unit == "pmol/L" else ins * 24.8 if unit == "ng/mL" else ins
    return r5(ins * conc(row["glucose"], 180.16, None, "mg/dL") / 405)


@calc(
    32,
    "age=age; Myocardial infarction=mi; Congestive Heart Failure=chf; Peripheral vascular disease=peripheral_vascular_disease; "
    "Cerebrovascular Accident=cva; Transient Ischemic Attacks History=tia; Dementia=dementia; "
    "Chronic Pulmonary Disease=copd; Connective tissue disease=connective_tissue_disease; "
    "Peptic ulcer disease=peptic_ucler_disease; Liver disease severity=liver_disease; "
    "Diabetes mellitus=diabetes_mellitus; Hemiplegia=hemiplegia; "
    "Moderate to severe Chronic Kidney Disease=moderate_to_severe_ckd; Solid tumor=solid_tumor; "
    "Leukemia=leukemia; Lymphoma=lymphoma; AIDS=aids",
)
def charlson(row):
    a = age(row)
    s = 0 if a < 50 else 1 if a < 60 else 2 if a < 70 else 3 if a < 80 else 4
    s += 1 if (row.get("cva") or row.get("tia")) else 0
    for name, graded in (
        ("solid_tumor", {"none": 0, "localized": 2, "metastatic": 6}),
        ("liver_disease", {"none": 0, "mild": 1, "moderate to severe": 3}),
        ("diabetes_mellitus", {"none or diet-controlled": 0, "uncomplicated": 1, "end-organ damage": 2}),
    ):
        value = row.get(name)
        # a graded value scores its grade; any other truthy value falls through to the code's one-point branch
        s += graded[value] if isinstance(value, str) and value in graded else (1 if value else 0)
    for name in ("hemiplegia", "moderate_to_severe_ckd", "leukemia", "lymphoma"):
        s += 2 if row.get(name) else 0
    s += 6 if row.get("aids") else 0
    for name in (
        "mi",
        "chf",
        "peripheral_vascular_disease",
        "connective_tissue_disease",
        "dementia",
        "copd",
        "peptic_ucler_disease",
    ):
        s += 1 if row.get(name) else 0
    return s


@calc(
    33,
    "Symptom onset <=3 days=symptom_onset; Purulent tonsils=purulent_tonsils; Fever in past 24 hours=fever_24_hours; "
    "Severe tonsil inflammation=severe_tonsil_inflammation; Absence of cough or coryza=cough_coryza_absent",
)
def feverpain(row):
    s = 1 if (not row.has("cough_coryza_absent") or row["cough_coryza_absent"]) else 0
    return s + sum(
        1 for n in ("fever_24_hours", "symptom_onset", "purulent_tonsils", "severe_tonsil_inflammation") if row.get(n)
    )


_CAPRINI_READ = {  # parameter the code reads -> points; the map fills four other names, never read
    "sepsis": 1,
    "pneumonia": 1,
    "hip_pelvis_leg_fracture": 5,
    "multiple_trauma": 5,
    "acute_spinal_chord_injury": 5,
    "varicose_veins": 1,
    "current_swollen_legs": 1,
    "current_central_venuous": 2,
    "previous_dvt": 3,
    "previous_pe": 3,
    "family_history_thrombosis": 3,
    "positive_factor_v": 3,
    "positive_prothrombin": 3,
    "serum_homocysteine": 3,
    "positive_lupus_anticoagulant": 3,
    "elevated_anticardiolipin_antibody": 3,
    "heparin_induced_thrombocytopenia": 3,
    "congenital_acquired_thrombophilia": 3,
    "inflammatory_bowel_disease": 1,
    "acute_myocardial_infarction": 1,
    "copd": 1,
    "malignancy": 2,
}


@calc(
    36,
    "age=age; sex=sex; Surgery Type=surgery_type; Major Surgery in the last month=major_surgery; "
    "Congestive Heart Failure in the last month=chf; Sepsis in the last month=sepsis; "
    "Pneumonia in the last month=pneumonia; Immobilizing plaster cast in the last month=immobilizing_plaster_case; "
    "Hip, pelvis, or leg fracture in the last month=hip_pelvis_leg_fracture; Stroke in the last month=stroke; "
    "Multiple trauma in the last month=multiple_trauma; "
    "Acute spinal cord injury causing paralysis in the last month=acute_spinal_chord_injury; "
    "Varicose veins=varicose_veins; Current swollen legs=current_swollen_legs; "
    "Current central venous access=current_central_venuous; "
    "Previously documented Deep Vein Thrombosis=previous_dvt; Previously Documented Pulmonary Embolism=previous_pe; "
    "Family history of thrombosis=family_history_thrombosis; Positive Factor V Leiden=positive_factor_v; "
    "Positive prothrombin 20210A=positive_prothrombin; Elevated serum homocysteine=serum_homocysteine; "
    "Positive lupus anticoagulant=positive_lupus_anticoagulant; "
    "Elevated anticardiolipin antibody=elevated_anticardiolipin_antibody; "
    "Heparin-induced thrombocytopenia=heparin_induced_thrombocytopenia; "
    "Other congenital or acquired thrombophilia=congenital_acquired_thrombophilia; Mobility=mobility; "
    "History of inflammatory bowel disease=inflammatory_bowel_disease; Body Mass Index (BMI)=bmi; "
    "Acute Myocardial infarction=acute_myocardial_infarction; Chronic Obstructive Pulmonary Disease=copd; "
    "Present or previous malignancy=malignancy",
)
def caprini(row):
    a = age(row)
    s = 0 if a <= 40 else 1 if 41 <= a <= 60 else 2 if 61 <= a <= 74 else 3 if a >= 75 else 0
    if row.has("surgery_type"):
        s += {
            "none": 0,
            "minor": 1,
            "major": 2,
            "laparoscopic": 2,
            "arthroscopic": 2,
            "elective major lower extremity arthroplasty": 5,
        }[row["surgery_type"]]
    if row.has("mobility"):
        s += {"normal": 0, "on bed rest": 1, "confined to bed >72 hours": 2}[row["mobility"]]
    if row.has("bmi"):
        s += 1 if row["bmi"][0] > 25 else 0
    return s + sum(pts for name, pts in _CAPRINI_READ.items() if row.get(name))


@calc(38, "age=age; weight=weight; sex=sex; Sodium=sodium")
def free_water_deficit(row):
    a, sex = age(row), row["sex"]
    if 0 <= a < 18:
        tbw = 0.6
    elif a < 65:
        tbw = 0.6 if sex == "Male" else 0.5 if sex == "Female" else None
    else:
        tbw = 0.5 if sex == "Male" else 0.45 if sex == "Female" else None
    if tbw is None:
        raise NotApplicable("sex")
    return r5(tbw * weight_kg(row["weight"]) * (conc(row["sodium"], 22.99, 1, "mmol/L") / 140 - 1))


_AG = "Chloride=chloride; Bicarbonate=bicarbonate; Sodium=sodium"


def _anion_gap(row: Row) -> float:
    na = conc(row["sodium"], 22.99, 1, "mEq/L")
    cl = conc(row["chloride"], 35.45, 1, "mEq/L")
    hco3 = conc(row["bicarbonate"], 61.02, 1, "mEq/L")
    return r5(na - (cl + hco3))


def _albumin_corrected_ag(row: Row) -> float:
    return r5(_anion_gap(row) + 2.5 * (4 - conc(row["albumin"], None, None, "g/dL")))


@calc(39, _AG)
def anion_gap(row):
    return _anion_gap(row)


@calc(63, _AG)
def delta_gap(row):
    return r5(_anion_gap(row) - 12.0)


@calc(64, _AG)
def delta_ratio(row):
    return r5(r5(_anion_gap(row) - 12.0) / (24 - conc(row["bicarbonate"], 61.02, 1, "mEq/L")))


@calc(65, _AG + "; Albumin=albumin")
def albumin_corrected_ag(row):
    return _albumin_corrected_ag(row)


@calc(66, _AG + "; Albumin=albumin")
def albumin_corrected_delta_gap(row):
    return r5(_albumin_corrected_ag(row) - 12.0)


@calc(67, _AG + "; Albumin=albumin")
def albumin_corrected_delta_ratio(row):
    return r5(r5(_albumin_corrected_ag(row) - 12.0) / (24 - conc(row["bicarbonate"], 61.02, 1, "mEq/L")))


@calc(40, "Urine creatinine=urine_creatinine; creatinine=creatinine; Urine sodium=urine_sodium; Sodium=sodium")
def fena(row):
    na = conc(row["sodium"], 22.99, 1, "mEq/L")
    cr = conc(row["creatinine"], 113.12, 1, "mg/dL")
    una = conc(row["urine_sodium"], 22.99, 1, "mEq/L")
    ucr = conc(row["urine_creatinine"], 113.12, 1, "mg/dL")
    return r5(cr * una / (na * ucr) * 100)


@calc(
    43,
    "PaO2=pao2; FiO2=fio2; On mechanical ventilation=mechanical_ventilation; Continuous positive airway pressure=cpap; "
    "Platelet count=platelet_count; Glasgow Coma Score=gcs; Bilirubin=bilirubin; Hypotension=hypotension; "
    "Systolic Blood Pressure=sys_bp; Diastolic Blood Pressure=dia_bp; DOPamine=dopamine; "
    "DOBUTamine=doboutamine; norEPINEPHrine=norepinephrine; EPINEPHrine=epinephrine; creatinine=creatinine; "
    "Urine Output=urine_output",
)
def sofa(row):
    s = 0
    ratio = r5(row["pao2"][0] / (row["fio2"][0] / 100))
    vent = bool(row.get("mechanical_ventilation")) or bool(row.get("cpap"))
    if ratio >= 400:
        pass
    elif 300 <= ratio < 400:
        s += 1
    elif 200 <= ratio < 300:
        s += 2
    elif ratio <= 199 and not vent:
        s += 2
    elif 100 <= ratio < 199 and vent:
        s += 3
    elif ratio < 100 and vent:
        s += 4
    dop = row.get("dopamine", [0])[0]
    dob = 0  # the map fills 'doboutamine'; the code reads 'dobutamine'
    epi = row.get("epinephrine", [0])[0]
    nor = row.get("norepinephrine", [0])[0]
    if dop > 15 or epi > 0.1 or nor > 0.1:
        s += 4
    elif dop > 5 or 0 < epi <= 0.1 or 0 < nor <= 0.1:
        s += 3
    elif 0 < dop <= 5 or dob:
        s += 2
    elif (
        row.has("sys_bp")
        and row.has("dia_bp")
        and row["sys_bp"][0] / 3 + 2 * row["dia_bp"][0] / 3 < 70
        and not dob
        and not epi
        and not nor
    ):
        s += 1
    g = row.num("gcs") if row.has("gcs") else 15
    s += 4 if g < 6 else 3 if g <= 9 else 2 if g <= 12 else 1 if g <= 14 else 0
    bili = conc(row["bilirubin"], 584.66, None, "mg/dL")
    s += 0 if bili < 1.2 else 1 if bili < 2.0 else 2 if bili < 6.0 else 3 if bili < 12.0 else 4
    plt = per_volume(row["platelet_count"], "µL")
    s += (
        1
        if 100000 <= plt < 150000
        else 2
        if 50000 <= plt < 100000
        else 3
        if 20000 <= plt < 50000
        else 4
        if plt < 20000
        else 0
    )
    cr = conc(row["creatinine"], 113.12, None, "mg/dL") if row.has("creatinine") else 0
    uo = row["urine_output"][0] if row.has("urine_output") else None
    if cr > 5.0 or (uo is not None and uo < 200):
        s += 4
    elif 3.5 <= cr <= 5.0 or (uo is not None and uo < 500):
        s += 3
    elif 2.0 <= cr < 3.5:
        s += 2
    elif 1.2 <= cr < 2.0:
        s += 1
    return s


@calc(
    44,
    "Total cholesterol=total_cholesterol; high-density lipoprotein cholesterol=hdl_cholesterol; Triglycerides=triglycerides",
)
def ldl(row):
    tc = conc(row["total_cholesterol"], 386.654, None, "mg/dL")
    hdl = conc(row["hdl_cholesterol"], 386.654, None, "mg/dL")
    tg = conc(row["triglycerides"], 861.338, None, "mg/dL")
    return r5(tc - hdl - tg / 5)


@calc(
    45,
    "age=age; Systolic Blood Pressure=sys_bp; Diastolic Blood Pressure=dia_bp; Blood Urea Nitrogen (BUN)=bun; "
    "respiratory rate=respiratory_rate; Confusion=confusion",
)
def curb65(row):
    s = 1 if age(row) >= 65 else 0
    s += 1 if row.get("confusion") else 0
    s += 1 if conc(row["bun"], 28.02, None, "mg/dL") > 19 else 0
    s += 1 if int(row["respiratory_rate"][0]) >= 30 else 0
    s += 1 if (int(row["sys_bp"][0]) < 90 or int(row["dia_bp"][0]) <= 60) else 0
    return s


@calc(
    46,
    "sex=sex; age=age; Systolic Blood Pressure=sys_bp; Smoker=smoker; Total cholesterol=total_cholesterol; "
    "high-density lipoprotein cholesterol=hdl_cholesterol; Blood pressure being treated with medicines=bp_medicine",
)
def framingham(row):
    sex = row["sex"]
    if row["total_cholesterol"][1] != "mg/dL":
        raise NotApplicable("total cholesterol not in mg/dL: the code passes its molar mass as the compound name")
    a = age(row)
    a_smoke = min(a, 70 if sex == "Male" else 78)
    smoker = 1 if row.get("smoker") else 0
    bp_med = 1 if row.get("bp_medicine") else 0
    tc = row["total_cholesterol"][0]
    hdl = conc(row["hdl_cholesterol"], 386.654, None, "mg/dL")
    la, ltc, lhdl, lsbp, las = (math.log(a), math.log(tc), math.log(hdl), math.log(row["sys_bp"][0]), math.log(a_smoke))
    if sex == "Male":
        x = (
            52.00961 * la
            + 20.014077 * ltc
            - 0.905964 * lhdl
            + 1.305784 * lsbp
            + 0.241549 * bp_med
            + 12.096316 * smoker
            - 4.605038 * la * ltc
            - 2.84367 * las * smoker
            - 2.93323 * la * la
            - 172.300168
        )
        risk = 1 - 0.9402 ** math.exp(x)
    elif sex == "Female":
        x = (
            31.764001 * la
            + 22.465206 * ltc
            - 1.187731 * lhdl
            + 2.552905 * lsbp
            + 0.420251 * bp_med
            + 13.07543 * smoker
            - 5.060998 * la * ltc
            - 2.996945 * las * smoker
            - 146.5933061
        )
        risk = 1 - 0.98767 ** math.exp(x)
    else:
        raise NotApplicable("sex")
    return round(risk * 100, 3)


@calc(
    48,
    "age=age; Heart Rate or Pulse=heart_rate; Hemoptysis=hemoptysis; O₂ saturation percentage=oxygen_sat; "
    "Recent surgery or trauma=recent_surgery_or_trauma; Previously documented Deep Vein Thrombosis=previous_dvt; "
    "Previously Documented Pulmonary Embolism=previous_pe; Unilateral Leg Swelling=unilateral_leg_swelling; "
    "Hormone use=hormonal_use",
)
def perc(row):
    s = (
        (1 if age(row) >= 50 else 0)
        + (1 if row["heart_rate"][0] >= 100 else 0)
        + (1 if row["oxygen_sat"][0] < 95 else 0)
    )
    s += sum(
        1 for n in ("unilateral_leg_swelling", "hemoptysis", "recent_surgery_or_trauma", "hormonal_use") if row.get(n)
    )
    s += 1 if (row.get("previous_dvt") or row.get("previous_pe")) else 0
    return s


_MME = {
    "Codeine": 0.15,
    "FentaNYL buccal": 0.13,
    "FentANYL patch": 2.4,
    "HYDROcodone": 1,
    "HYDROmorphone": 5,
    "Methadone": 4.7,
    "Morphine": 1,
    "OxyCODONE": 1.5,
    "OxyMORphone": 3,
    "Tapentadol": 0.4,
    "TraMADol": 0.2,
    "Buprenorphine": 10,
}


def mme(entities: dict) -> float:
    """MME (49): Verified passes the entities through unmapped. Doses are converted to mg, except "FentaNYL buccal"
    (and the code's "FentaNYL patch", a spelling no row uses) to µg; the patch ("FentANYL patch") goes to mg."""
    total = 0.0
    for key in entities:
        if "Day" in key:
            continue
        name = key.split(" Dose")[0]
        value, unit = entities[name + " Dose"][0], entities[name + " Dose"][1]
        target = "µg" if name in ("FentaNYL buccal", "FentaNYL patch") else "mg"
        amount = value if unit == target else value * _MASS[unit] / _MASS[target]
        if name not in _MME:
            raise NotApplicable(f"drug {name!r}")
        total = r5(total + entities[name + " Dose Per Day"][0] * _MME[name] * amount)
    return total


@calc(
    51,
    "Temperature=temperature; Heart Rate or Pulse=heart_rate; respiratory rate=respiratory_rate; "
    "White blood cell count=wbc; PaCO2=paco2",
)
def sirs(row):
    t = celsius(row["temperature"])
    s = 1 if (t > 38 or t < 36) else 0
    s += 1 if row["heart_rate"][0] > 90 else 0
    wbc = per_volume(row["wbc"], "mm^3")
    s += 1 if (wbc > 12000 or wbc < 4000) else 0
    resp = row.has("respiratory_rate") and row["respiratory_rate"][0] > 20
    if row.has("paco2") and row["paco2"][0] == 32:
        raise NotApplicable("PaCO2 of exactly 32: the code leaves its flag unset")
    paco2 = row.has("paco2") and row["paco2"][0] < 32
    return s + (1 if (resp or paco2) else 0)


@calc(60, "weight=weight; height=height")
def bsa(row):
    return r5(math.sqrt(weight_kg(row["weight"]) * height_cm(row["height"]) / 3600))


@calc(61, "Body Mass Index (BMI)=body_mass_index; height=height")
def target_weight(row):
    h = height_m(row["height"])
    return r5(row["body_mass_index"][0] * h * h)


@calc(62, "sex=sex; weight=weight; height=height")
def adjusted_body_weight(row):
    return _abw(row)
