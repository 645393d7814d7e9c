"""Physical calculators: blood pressure, body size and weight, fluids, QT correction.

Each function takes plain numbers in the units its ``Variable`` list states and returns the
unrounded result; the benchmark scores decimals within +-5% of its own rounded answer.
"""

from __future__ import annotations

import math

from harness.core import units

from .base import Calculator, Variable
from .variables import HEART_RATE, HEIGHT, QT, SEX, WEIGHT, plain

CM_PER_IN = 2.54


def ideal_body_weight(sex: str, height: float) -> float:
    """Devine IBW in kg: 50 (male) or 45.5 (female) + 2.3 kg per inch over 60 in; ``height`` in cm."""
    base = 50.0 if sex == "male" else 45.5
    return base + 2.3 * (height / CM_PER_IN - 60.0)


def adjusted_body_weight(sex: str, weight: float, height: float) -> float:
    """ABW = IBW + 0.4 (weight - IBW), kg."""
    ibw = ideal_body_weight(sex, height)
    return ibw + 0.4 * (weight - ibw)


def bmi(weight: float, height: float) -> float:
    """Body mass index, kg/m^2, from kg and cm."""
    m = height / 100.0
    return weight / (m * m)


def mean_arterial_pressure(sbp: float, dbp: float) -> float:
    """MAP = 2/3 DBP + 1/3 SBP, mm Hg."""
    return 2.0 * dbp / 3.0 + sbp / 3.0


def maintenance_fluids(weight: float) -> float:
    """Holliday-Segar 4-2-1 rule, mL/hr: 4 mL/kg for the first 10 kg, 2 mL/kg for the next 10 kg,
    1 mL/kg above 20 kg (the benchmark's piecewise form)."""
    if weight < 10:
        return 4.0 * weight
    if weight <= 20:
        return 40.0 + 2.0 * (weight - 10.0)
    return 60.0 + (weight - 20.0)


def _rr_seconds(heart_rate: float) -> float:
    if heart_rate <= 0:
        raise ValueError("heart rate must be positive")
    return 60.0 / heart_rate


def qtc_bazett(heart_rate: float, qt_interval: float) -> float:
    """QTc = QT / sqrt(RR), QT in ms, RR = 60/HR in s."""
    return qt_interval / math.sqrt(_rr_seconds(heart_rate))


def qtc_fridericia(heart_rate: float, qt_interval: float) -> float:
    """QTc = QT / RR^(1/3)."""
    return qt_interval / _rr_seconds(heart_rate) ** (1.0 / 3.0)


def qtc_framingham(heart_rate: float, qt_interval: float) -> float:
    """QTc = QT + 154 (1 - RR), ms."""
    return qt_interval + 154.0 * (1.0 - _rr_seconds(heart_rate))


def qtc_hodges(heart_rate: float, qt_interval: float) -> float:
    """QTc = QT + 1.75 (HR - 60), ms."""
    return qt_interval + 1.75 * (heart_rate - 60.0)


def qtc_rautaharju(heart_rate: float, qt_interval: float) -> float:
    """QTc = QT (120 + HR) / 180, ms."""
    return qt_interval * (120.0 + heart_rate) / 180.0


def body_surface_area(weight: float, height: float) -> float:
    """Mosteller BSA, m^2 = sqrt(height cm * weight kg / 3600)."""
    return math.sqrt(weight * height / 3600.0)


def target_weight(target_bmi: float, height: float) -> float:
    """Weight (kg) at a target BMI: BMI * height(m)^2."""
    m = height / 100.0
    return target_bmi * m * m


SBP = Variable(
    "systolic_bp",
    "mm Hg",
    "systolic blood pressure in mm Hg",
    "quantity",
    ("Systolic Blood Pressure", "systolic blood pressure", "sbp"),
    plain(units.blood_pressure_mmhg),
)
DBP = Variable(
    "diastolic_bp",
    "mm Hg",
    "diastolic blood pressure in mm Hg",
    "quantity",
    ("Diastolic Blood Pressure", "diastolic blood pressure", "dbp"),
    plain(units.blood_pressure_mmhg),
)
TARGET_BMI = Variable(
    "target_bmi",
    "kg/m^2",
    "target body mass index in kg/m^2",
    "quantity",
    ("Body Mass Index (BMI)", "bmi", "body mass index"),
    plain(units.bmi_kg_m2),
)

_QT = "QT in ms, RR = 60 / heart rate (s)"

CALCULATORS = [
    Calculator(
        5,
        "Mean Arterial Pressure (MAP)",
        "decimal",
        "MAP = 2/3 x DBP + 1/3 x SBP (mm Hg). Standard bedside estimate; e.g. Klabunde RE, "
        "Cardiovascular Physiology Concepts, 3rd ed. 2021, ch. 5.",
        [SBP, DBP],
        lambda systolic_bp, diastolic_bp: mean_arterial_pressure(systolic_bp, diastolic_bp),
    ),
    Calculator(
        6,
        "Body Mass Index (BMI)",
        "decimal",
        "BMI = weight (kg) / height (m)^2. WHO, Obesity: preventing and managing the global epidemic, TRS 894, 2000.",
        [WEIGHT, HEIGHT],
        bmi,
    ),
    Calculator(
        10,
        "Ideal Body Weight",
        "decimal",
        "Devine: IBW = 50 kg (male) or 45.5 kg (female) + 2.3 kg x (height in inches - 60). "
        "Devine BJ. Drug Intell Clin Pharm 1974;8:650-655.",
        [SEX, HEIGHT],
        ideal_body_weight,
    ),
    Calculator(
        11,
        "QTc Bazett Calculator",
        "decimal",
        f"QTc = QT / sqrt(RR); {_QT}. Bazett HC. Heart 1920;7:353-370.",
        [HEART_RATE, QT],
        qtc_bazett,
    ),
    Calculator(
        22,
        "Maintenance Fluids Calculations",
        "decimal",
        "Holliday-Segar 4-2-1 rule (mL/hr): weight < 10 kg: 4 x wt; 10-20 kg: 40 + 2 x (wt - 10); "
        "> 20 kg: 60 + (wt - 20). Holliday MA, Segar WE. Pediatrics 1957;19:823-832.",
        [WEIGHT],
        maintenance_fluids,
    ),
    Calculator(
        56,
        "QTc Fridericia Calculator",
        "decimal",
        f"QTc = QT / RR^(1/3); {_QT}. Fridericia LS. Acta Med Scand 1920;53:469-486.",
        [HEART_RATE, QT],
        qtc_fridericia,
    ),
    Calculator(
        57,
        "QTc Framingham Calculator",
        "decimal",
        f"QTc = QT + 154 x (1 - RR); {_QT}. Sagie A et al. Am J Cardiol 1992;70:797-801.",
        [HEART_RATE, QT],
        qtc_framingham,
    ),
    Calculator(
        58,
        "QTc Hodges Calculator",
        "decimal",
        "QTc = QT + 1.75 x (heart rate - 60); QT in ms. Hodges M et al. J Am Coll Cardiol 1983;1:694 (abstract).",
        [HEART_RATE, QT],
        qtc_hodges,
    ),
    Calculator(
        59,
        "QTc Rautaharju Calculator",
        "decimal",
        "QTc = QT x (120 + heart rate) / 180; QT in ms. Rautaharju PM, Mason JW, Akiyama T. "
        "Int J Cardiol 2014;174:535-540.",
        [HEART_RATE, QT],
        qtc_rautaharju,
    ),
    Calculator(
        60,
        "Body Surface Area Calculator",
        "decimal",
        "Mosteller: BSA (m^2) = sqrt(height (cm) x weight (kg) / 3600). Mosteller RD. N Engl J Med 1987;317:1098.",
        [WEIGHT, HEIGHT],
        body_surface_area,
    ),
    Calculator(
        61,
        "Target weight",
        "decimal",
        "Target weight (kg) = target BMI (kg/m^2) x height (m)^2 (inverse of the BMI definition).",
        [TARGET_BMI, HEIGHT],
        target_weight,
    ),
    Calculator(
        62,
        "Adjusted Body Weight",
        "decimal",
        "ABW = IBW + 0.4 x (actual weight - IBW), IBW by Devine. Pai MP, Paloucek FP. Ann "
        "Pharmacother 2000;34:1066-1069; Devine BJ 1974.",
        [SEX, WEIGHT, HEIGHT],
        adjusted_body_weight,
    ),
]
