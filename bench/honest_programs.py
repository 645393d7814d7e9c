"""The honest corpus (issue 33): programs in the shape models write them for MedCalc-Bench, each
with the answer it must give. Every one must run and answer on both backends
(tests/executor/test_executor_honest.py), and `python -m bench honest-corpus` reports how many any executor
refuses (bench/honest_corpus.py); each answer is also checked against plain CPython
(the paper's executor ran each program in a fresh interpreter), so a wrong expectation here
fails too.

They are the kit's own, written after the constructs the reviewer named and the forms the
model replies stored in this repository take: date arithmetic with strptime/strftime/calendar/
timedelta, unit conversions, scores built from dicts and lambdas, helper functions, try/except,
f-strings and %-formatting, single-underscore names, ``from math import *``, ``global``, the
``__main__`` guard. None reads the clock: a program that does is in the determinism set
(tests/executor/test_executor_determinism.py). ``answer`` is the JSON form the executor
reports: a number, "YYYY-MM-DD" or [weeks, days].

``demo_programs()`` adds every program the kit's own real-model run produced (the committed CPU
demo, results/cpu-demo), extracted from the stored replies with the kit's own
``harness.arms.prompts.extract_program``. A 0.5B model's programs mostly fail as Python; for
them the test asks for what plain CPython does, and no refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO_RESULTS = REPO / "results" / "cpu-demo"


@dataclass(frozen=True)
class Honest:
    name: str
    category: str
    source: str
    answer: object  # number | "YYYY-MM-DD" | [weeks, days]


def _p(name: str, category: str, answer: object, source: str) -> Honest:
    return Honest(name, category, source.lstrip("\n"), answer)


CORPUS: tuple[Honest, ...] = (
    # --- dates: strptime / strftime / calendar / timedelta ------------------------------------
    _p(
        "naegele_due_date",
        "dates",
        "2023-10-22",
        """
from datetime import datetime, timedelta

# Last menstrual period from the note
lmp = datetime.strptime("01/15/2023", "%m/%d/%Y")
# Naegele's rule: LMP + 280 days
due_date = lmp + timedelta(days=280)
print(f"Estimated due date: {due_date.strftime('%m/%d/%Y')}")
answer = due_date
""",
    ),
    _p(
        "due_date_cycle_length",
        "dates",
        "2021-06-11",
        """
import datetime

last_menstrual_period = "09/01/2020"
cycle_length = 31  # days

lmp_date = datetime.datetime.strptime(last_menstrual_period, "%m/%d/%Y").date()
# adjust Naegele's rule for a cycle longer than 28 days
estimated_due_date = lmp_date + datetime.timedelta(days=280 + (cycle_length - 28))
answer = estimated_due_date
""",
    ),
    _p(
        "conception_date",
        "dates",
        "2022-03-19",
        """
from datetime import date, timedelta

lmp = date(2022, 3, 5)
cycle_length = 28
# ovulation/conception is about 14 days after the LMP for a 28-day cycle
conception = lmp + timedelta(days=cycle_length - 14)
answer = conception
""",
    ),
    _p(
        "gestational_age_strptime_tuple",
        "dates",
        [14, 3],
        """
from datetime import datetime

lmp = datetime.strptime("2021-01-04", "%Y-%m-%d")
current_date = datetime.strptime("2021-04-15", "%Y-%m-%d")

delta_days = (current_date - lmp).days
weeks = delta_days // 7
days = delta_days % 7
print(f"Gestational age: {weeks} weeks and {days} days")
answer = (weeks, days)
""",
    ),
    _p(
        "gestational_age_time_strptime",
        "dates",
        [37, 0],
        """
import time

# Dates from the note (MM/DD/YYYY)
lmp = time.strptime("05/10/2019", "%m/%d/%Y")
today = time.strptime("01/24/2020", "%m/%d/%Y")

seconds = time.mktime(today) - time.mktime(lmp)
total_days = int(round(seconds / 86400))
answer = (total_days // 7, total_days % 7)
""",
    ),
    _p(
        "gestational_age_divmod",
        "dates",
        [28, 3],
        """
from datetime import date

def gestational_age(lmp, current):
    weeks, days = divmod((current - lmp).days, 7)
    return weeks, days

answer = gestational_age(date(2020, 1, 1), date(2020, 7, 18))
""",
    ),
    _p(
        "time_strptime_strftime_round_trip",
        "dates",
        "2023-03-14",
        """
import time
import datetime

parsed = time.strptime("2023-03-14", "%Y-%m-%d")
text = time.strftime("%m/%d/%Y", parsed)
print("Visit date:", text)
answer = datetime.datetime.strptime(text, "%m/%d/%Y").date()
""",
    ),
    _p(
        "time_strptime_yday",
        "dates",
        73,
        """
import time

t = time.strptime("14 Mar 2023", "%d %b %Y")
answer = t.tm_yday
""",
    ),
    _p(
        "age_from_birth_date",
        "dates",
        67,
        """
from datetime import date

def calculate_age(birth_date, on_date):
    age = on_date.year - birth_date.year
    if (on_date.month, on_date.day) < (birth_date.month, birth_date.day):
        age -= 1
    return age

dob = date(1955, 11, 30)
visit = date(2023, 6, 1)
answer = calculate_age(dob, visit)
""",
    ),
    _p(
        "days_between_visits",
        "dates",
        45,
        """
from datetime import datetime

admission = datetime.strptime("March 3, 2022", "%B %d, %Y")
discharge = datetime.strptime("April 17, 2022", "%B %d, %Y")
length_of_stay = (discharge - admission).days
answer = length_of_stay
""",
    ),
    _p(
        "calendar_monthrange_leap",
        "dates",
        29,
        """
import calendar

year, month = 2024, 2
days_in_month = calendar.monthrange(year, month)[1]
print(f"{calendar.month_name[month]} {year} has {days_in_month} days (leap year: {calendar.isleap(year)})")
answer = days_in_month
""",
    ),
    _p(
        "from_calendar_import_star",
        "dates",
        366,
        """
from calendar import *

year = 2020
answer = 366 if isleap(year) else 365
""",
    ),
    _p(
        "timedelta_weeks",
        "dates",
        "2024-10-02",
        """
from datetime import date, timedelta

ultrasound_date = date(2024, 3, 20)
ga_weeks_at_scan, ga_days_at_scan = 12, 0
remaining = timedelta(weeks=40) - timedelta(weeks=ga_weeks_at_scan, days=ga_days_at_scan)
answer = ultrasound_date + remaining
""",
    ),
    _p(
        "date_fromisoformat",
        "dates",
        100,
        """
from datetime import date

start = date.fromisoformat("2021-02-01")
end = date.fromisoformat("2021-05-12")
answer = (end - start).days
""",
    ),
    _p(
        "calendar_timegm",
        "dates",
        31,
        """
import calendar
import time

t1 = calendar.timegm(time.strptime("2022-01-01", "%Y-%m-%d"))
t2 = calendar.timegm(time.strptime("2022-02-01", "%Y-%m-%d"))
answer = (t2 - t1) // 86400
""",
    ),
    _p(
        "date_replace_birthday",
        "dates",
        "2024-07-04",
        """
from datetime import date

birth = date(1980, 7, 4)
next_birthday = birth.replace(year=2024)
answer = next_birthday
""",
    ),
    _p(
        "datetime_combine_hours",
        "dates",
        36.5,
        """
from datetime import datetime, date, time

start = datetime.combine(date(2023, 5, 1), time(8, 0))
end = datetime.combine(date(2023, 5, 2), time(20, 30))
hours = (end - start).total_seconds() / 3600
answer = hours
""",
    ),
    _p(
        "percent_format_date",
        "dates",
        "2019-12-05",
        """
import datetime

month, day, year = 12, 5, 2019
text = "%02d/%02d/%04d" % (month, day, year)
answer = datetime.datetime.strptime(text, "%m/%d/%Y").date()
""",
    ),
    _p(
        "from_datetime_import_star",
        "dates",
        "2022-02-28",
        """
from datetime import *

lmp = date(2021, 5, 24)
edd = lmp + timedelta(days=280)
answer = edd
""",
    ),
    _p(
        "weekday_name",
        "dates",
        2,
        """
import calendar
from datetime import date

d = date(2023, 3, 15)
print(calendar.day_name[d.weekday()])
answer = d.weekday()
""",
    ),
    _p(
        "strptime_with_time_of_day",
        "dates",
        10.25,
        """
from datetime import datetime

onset = datetime.strptime("2023-08-01 22:45", "%Y-%m-%d %H:%M")
arrival = datetime.strptime("2023-08-02 09:00", "%Y-%m-%d %H:%M")
answer = (arrival - onset).total_seconds() / 3600
""",
    ),
    _p(
        "ultrasound_dating",
        "dates",
        [20, 3],
        """
from datetime import datetime, timedelta

scan_date = datetime.strptime("02/10/2022", "%m/%d/%Y")
ga_at_scan = timedelta(weeks=8, days=3)
today = datetime.strptime("05/05/2022", "%m/%d/%Y")
ga_today = ga_at_scan + (today - scan_date)
answer = (ga_today.days // 7, ga_today.days % 7)
""",
    ),
    # --- unit conversions and formulas ---------------------------------------------------------
    _p(
        "bmi_imperial",
        "conversions",
        27.3,
        """
# Patient variables
weight_lb = 185
height_in = 69

weight_kg = weight_lb * 0.453592
height_m = height_in * 0.0254
bmi = weight_kg / (height_m ** 2)
print(f"BMI: {bmi:.1f} kg/m^2")
answer = round(bmi, 1)
""",
    ),
    _p(
        "fahrenheit_to_celsius",
        "conversions",
        38.5,
        """
temp_f = 101.3
temp_c = (temp_f - 32) * 5 / 9
answer = round(temp_c, 1)
""",
    ),
    _p(
        "glucose_mmol",
        "conversions",
        12.54,
        """
glucose_mg_dl = 226
# 1 mmol/L glucose = 18.016 mg/dL
glucose_mmol_l = glucose_mg_dl / 18.016
answer = round(glucose_mmol_l, 2)
""",
    ),
    _p(
        "creatinine_umol_to_mg",
        "conversions",
        1.5,
        """
creatinine_umol = 132.6
creatinine_mg_dl = creatinine_umol / 88.4
answer = round(creatinine_mg_dl, 2)
""",
    ),
    _p(
        "bsa_mosteller",
        "conversions",
        1.83,
        """
import math

height_cm = 170
weight_kg = 71
bsa = math.sqrt(height_cm * weight_kg / 3600)
answer = round(bsa, 2)
""",
    ),
    _p(
        "bsa_dubois_pow",
        "conversions",
        2.06,
        """
weight = 88.0  # kg
height = 178.0  # cm
bsa = 0.007184 * pow(weight, 0.425) * pow(height, 0.725)
answer = round(bsa, 2)
""",
    ),
    _p(
        "ideal_body_weight_devine",
        "conversions",
        73.0,
        """
sex = "male"
height_cm = 177.8
height_in = height_cm / 2.54

if sex == "male":
    ibw = 50 + 2.3 * (height_in - 60)
else:
    ibw = 45.5 + 2.3 * (height_in - 60)
answer = round(ibw, 1)
""",
    ),
    _p(
        "adjusted_body_weight",
        "conversions",
        72.2,
        """
def ideal_body_weight(height_in, female):
    base = 45.5 if female else 50.0
    return base + 2.3 * (height_in - 60)

actual_weight = 95.0
ibw = ideal_body_weight(65, female=True)
adjusted = ibw + 0.4 * (actual_weight - ibw)
answer = round(adjusted, 2)
""",
    ),
    _p(
        "mean_arterial_pressure",
        "conversions",
        93.33,
        """
blood_pressure = "130/75"
sbp, dbp = map(int, blood_pressure.split("/"))
map_value = (sbp + 2 * dbp) / 3
answer = round(map_value, 2)
""",
    ),
    _p(
        "corrected_calcium",
        "conversions",
        9.44,
        """
calcium = 8.2  # mg/dL
albumin = 2.45  # g/dL
normal_albumin = 4.0
corrected_ca = calcium + 0.8 * (normal_albumin - albumin)
answer = round(corrected_ca, 2)
""",
    ),
    _p(
        "anion_gap",
        "conversions",
        16,
        """
sodium = 138
chloride = 100
bicarbonate = 22
anion_gap = sodium - (chloride + bicarbonate)
print("Anion gap = %d mEq/L" % anion_gap)
answer = anion_gap
""",
    ),
    _p(
        "serum_osmolality",
        "conversions",
        292.54,
        """
na = 140
bun = 18
glucose = 110
osm = 2 * na + bun / 2.8 + glucose / 18
answer = round(osm, 2)
""",
    ),
    _p(
        "corrected_sodium_hillier",
        "conversions",
        136.8,
        """
measured_sodium = 130
serum_glucose = 383
corrected_sodium = measured_sodium + 0.024 * (serum_glucose - 100)
answer = round(corrected_sodium, 1)
""",
    ),
    _p(
        "free_water_deficit",
        "conversions",
        2.89,
        """
age = 72
sex = "F"
weight = 60.0
sodium = 155

if sex == "M":
    tbw_fraction = 0.5 if age >= 65 else 0.6
else:
    tbw_fraction = 0.45 if age >= 65 else 0.5
fwd = tbw_fraction * weight * (sodium / 140 - 1)
answer = round(fwd, 2)
""",
    ),
    _p(
        "qtc_bazett",
        "conversions",
        460.09,
        """
import math

qt_interval = 420  # msec
heart_rate = 72  # bpm
rr_interval = 60 / heart_rate  # seconds
qtc = qt_interval / math.sqrt(rr_interval)
answer = round(qtc, 2)
""",
    ),
    _p(
        "qtc_fridericia",
        "conversions",
        445.7,
        """
qt = 400
hr = 83
rr = 60.0 / hr
qtc = qt / rr ** (1 / 3)
answer = round(qtc, 1)
""",
    ),
    _p(
        "qtc_framingham",
        "conversions",
        466.7,
        """
qt_msec = 410
heart_rate_bpm = 95
rr_sec = 60 / heart_rate_bpm
qtc = qt_msec + 154 * (1 - rr_sec)
answer = round(qtc, 1)
""",
    ),
    _p(
        "cockcroft_gault",
        "conversions",
        57.18,
        """
age = 68
weight_kg = 74.0
serum_creatinine = 1.1
is_female = True

crcl = ((140 - age) * weight_kg) / (72 * serum_creatinine)
if is_female:
    crcl *= 0.85
answer = round(crcl, 2)
""",
    ),
    _p(
        "mdrd_gfr",
        "conversions",
        41.64,
        """
import math

scr = 1.3
age = 61
female = True
black = False

gfr = 175 * math.pow(scr, -1.154) * math.pow(age, -0.203)
if female:
    gfr *= 0.742
if black:
    gfr *= 1.212
answer = round(gfr, 2)
""",
    ),
    _p(
        "ckd_epi_2021",
        "conversions",
        69.66,
        """
def ckd_epi_2021(scr, age, female):
    kappa = 0.7 if female else 0.9
    alpha = -0.241 if female else -0.302
    gfr = 142 * min(scr / kappa, 1) ** alpha * max(scr / kappa, 1) ** -1.200 * 0.9938 ** age
    if female:
        gfr *= 1.012
    return gfr

answer = round(ckd_epi_2021(1.2, 59, False), 2)
""",
    ),
    _p(
        "ldl_friedewald",
        "conversions",
        122.0,
        """
total_cholesterol = 210
hdl = 48
triglycerides = 200
ldl = total_cholesterol - hdl - triglycerides / 5
answer = ldl
""",
    ),
    _p(
        "a_a_gradient",
        "conversions",
        29.73,
        """
fio2 = 0.21
patm = 760
ph2o = 47
paco2 = 40
pao2 = 70
r_quotient = 0.8

pAO2 = fio2 * (patm - ph2o) - paco2 / r_quotient
gradient = pAO2 - pao2
answer = round(gradient, 2)
""",
    ),
    _p(
        "pf_ratio",
        "conversions",
        175.0,
        """
pao2 = 70
fio2_percent = 40
pf = pao2 / (fio2_percent / 100)
answer = round(pf, 1)
""",
    ),
    _p(
        "fena",
        "conversions",
        0.55,
        """
urine_na, serum_na = 20, 140
urine_cr, serum_cr = 52.0, 2.0
fena = (urine_na * serum_cr) / (serum_na * urine_cr) * 100
answer = round(fena, 2)
""",
    ),
    _p(
        "steroid_conversion",
        "conversions",
        33.33,
        """
# Equivalent doses: dexamethasone 0.75 mg = prednisone 5 mg
equivalents = {"dexamethasone": 0.75, "prednisone": 5, "hydrocortisone": 20, "methylprednisolone": 4}
dose_mg = 5.0
from_drug, to_drug = "dexamethasone", "prednisone"
converted = dose_mg / equivalents[from_drug] * equivalents[to_drug]
answer = round(converted, 2)
""",
    ),
    _p(
        "morphine_milligram_equivalents",
        "conversions",
        130.0,
        """
mme_factors = {
    "oxycodone": 1.5,
    "hydrocodone": 1.0,
    "tramadol": 0.2,
    "tapentadol": 0.4,
}
regimen = [("oxycodone", 20, 3), ("tramadol", 50, 2), ("tapentadol", 50, 1)]

total_mme = 0
for drug, dose, times_per_day in regimen:
    total_mme += dose * times_per_day * mme_factors[drug]
answer = round(total_mme, 2)
""",
    ),
    _p(
        "maintenance_fluids_421",
        "conversions",
        110,
        """
def maintenance_rate(weight_kg):
    if weight_kg <= 10:
        return 4 * weight_kg
    elif weight_kg <= 20:
        return 40 + 2 * (weight_kg - 10)
    else:
        return 60 + 1 * (weight_kg - 20)

answer = maintenance_rate(70)
""",
    ),
    _p(
        "target_weight_from_bmi",
        "conversions",
        73.76,
        """
target_bmi = 19.2
height_cm = 196
height_m = height_cm / 100
target_weight_kg = target_bmi * height_m ** 2
answer = round(target_weight_kg, 2)
""",
    ),
    _p(
        "homa_ir",
        "conversions",
        3.33,
        """
fasting_insulin = 12.5  # uIU/mL
fasting_glucose = 108  # mg/dL
homa_ir = fasting_insulin * fasting_glucose / 405
answer = round(homa_ir, 2)
""",
    ),
    _p(
        "delta_ratio",
        "conversions",
        1.5,
        """
na, cl, hco3 = 140, 98, 12
ag = na - (cl + hco3)
delta_ag = ag - 12
delta_hco3 = 24 - hco3
delta_ratio = delta_ag / delta_hco3
answer = round(delta_ratio, 2)
""",
    ),
    _p(
        "shock_index",
        "conversions",
        1.25,
        """
heart_rate = 125
systolic_bp = 100
answer = heart_rate / systolic_bp
""",
    ),
    _p(
        "unit_lambda_conversions",
        "conversions",
        84.8,
        """
lb_to_kg = lambda lb: lb * 0.45359237
inch_to_cm = lambda inch: inch * 2.54

weight = lb_to_kg(187)
height = inch_to_cm(70)
print("weight %.1f kg, height %.1f cm" % (weight, height))
answer = round(weight, 1)
""",
    ),
    # --- scores: dicts, lambdas, helpers -------------------------------------------------------
    _p(
        "cha2ds2_vasc",
        "scores",
        4,
        """
patient = {
    "chf": False,
    "hypertension": True,
    "age": 76,
    "diabetes": False,
    "stroke_tia": False,
    "vascular_disease": True,
    "female": False,
}

score = 0
score += 1 if patient["chf"] else 0
score += 1 if patient["hypertension"] else 0
score += 2 if patient["age"] >= 75 else (1 if patient["age"] >= 65 else 0)
score += 1 if patient["diabetes"] else 0
score += 2 if patient["stroke_tia"] else 0
score += 1 if patient["vascular_disease"] else 0
score += 1 if patient["female"] else 0
answer = score
""",
    ),
    _p(
        "has_bled_map_sum",
        "scores",
        3,
        """
criteria = [
    True,   # hypertension
    False,  # abnormal renal function
    False,  # abnormal liver function
    True,   # stroke history
    False,  # bleeding history
    False,  # labile INR
    True,   # elderly > 65
    False,  # drugs
    False,  # alcohol
]
answer = sum(map(int, criteria))
""",
    ),
    _p(
        "wells_dvt_dict_lambda",
        "scores",
        1,
        """
findings = {
    "active_cancer": True,
    "bedridden_recently": False,
    "calf_swelling_3cm": True,
    "collateral_veins": False,
    "entire_leg_swollen": False,
    "localized_tenderness": True,
    "pitting_edema": False,
    "paralysis_or_cast": False,
    "previous_dvt": False,
    "alternative_diagnosis_as_likely": True,
}
points = lambda key: (-2 if key == "alternative_diagnosis_as_likely" else 1) if findings[key] else 0
wells_score = sum([points(k) for k in findings])
answer = wells_score
""",
    ),
    _p(
        "centor_modified",
        "scores",
        3,
        """
age = 15
exudate_or_swelling = True
tender_nodes = True
temperature_c = 37.8
cough_absent = False

score = 0
if 3 <= age <= 14:
    score += 1
elif age >= 45:
    score -= 1
score += int(exudate_or_swelling)
score += int(tender_nodes)
score += 1 if temperature_c > 38 else 0
score += 1 if cough_absent else 0
answer = score + 1
""",
    ),
    _p(
        "curb65_lambdas",
        "scores",
        3,
        """
confusion = True
bun = 25  # mg/dL
respiratory_rate = 32
sbp, dbp = 95, 58
age = 58

checks = [
    lambda: confusion,
    lambda: bun > 19,
    lambda: respiratory_rate >= 30,
    lambda: sbp < 90 or dbp <= 60,
    lambda: age >= 65,
]
answer = sum([1 for check in checks if check()]) - 1
""",
    ),
    _p(
        "child_pugh_helpers",
        "scores",
        8,
        """
def bilirubin_points(bili):
    if bili < 2:
        return 1
    elif bili <= 3:
        return 2
    return 3

def albumin_points(alb):
    if alb > 3.5:
        return 1
    elif alb >= 2.8:
        return 2
    return 3

def inr_points(inr):
    return 1 if inr < 1.7 else (2 if inr <= 2.3 else 3)

ascites_points = {"absent": 1, "slight": 2, "moderate": 3}
encephalopathy_points = {"none": 1, "grade 1-2": 2, "grade 3-4": 3}

total = (bilirubin_points(2.5) + albumin_points(3.0) + inr_points(1.5)
         + ascites_points["slight"] + encephalopathy_points["none"])
answer = total
""",
    ),
    _p(
        "meld_score",
        "scores",
        21,
        """
import math

bilirubin = 3.1
inr = 1.9
creatinine = 1.4

bilirubin = max(bilirubin, 1.0)
inr = max(inr, 1.0)
creatinine = min(max(creatinine, 1.0), 4.0)
meld = 3.78 * math.log(bilirubin) + 11.2 * math.log(inr) + 9.57 * math.log(creatinine) + 6.43
answer = round(meld)
""",
    ),
    _p(
        "meld_na",
        "scores",
        27.1,
        """
from math import log

bili, inr, cr, na = 2.8, 1.6, 1.9, 128

meld_i = 0.957 * log(max(cr, 1)) + 0.378 * log(max(bili, 1)) + 1.120 * log(max(inr, 1)) + 0.643
meld = round(meld_i * 10, 1)
na = min(max(na, 125), 137)
if meld > 11:
    meld = meld + 1.32 * (137 - na) - (0.033 * meld * (137 - na))
answer = round(meld, 1)
""",
    ),
    _p(
        "range_lookup_table",
        "scores",
        3,
        """
# points by heart rate band, as a list of (lower, upper, points)
hr_bands = [(0, 39, 4), (40, 54, 3), (55, 69, 2), (70, 109, 0), (110, 139, 2), (140, 179, 3), (180, 999, 4)]

def band_points(value, bands):
    for low, high, pts in bands:
        if low <= value <= high:
            return pts
    raise ValueError(f"value {value} outside every band")

answer = band_points(152, hr_bands)
""",
    ),
    _p(
        "heart_score",
        "scores",
        5,
        """
history = 1        # moderately suspicious
ecg = 1            # non-specific repolarization
age = 67
risk_factors = ["hypertension", "hyperlipidemia", "smoker"]
troponin_ratio = 0.8  # x upper limit of normal

age_points = 2 if age >= 65 else (1 if age >= 45 else 0)
rf_points = 2 if len(risk_factors) >= 3 else (1 if risk_factors else 0)
trop_points = 0 if troponin_ratio <= 1 else (1 if troponin_ratio <= 3 else 2)
answer = history + ecg + age_points + rf_points + trop_points - 1
""",
    ),
    _p(
        "glasgow_blatchford",
        "scores",
        8,
        """
bun_mg_dl = 45
hemoglobin = 10.5
male = True
sbp = 95
pulse = 105
melena, syncope, hepatic, cardiac_failure = True, False, False, False

bun_mmol = bun_mg_dl * 0.357
if bun_mmol >= 25: score = 6
elif bun_mmol >= 10: score = 4
elif bun_mmol >= 8: score = 3
elif bun_mmol >= 6.5: score = 2
else: score = 0

if male:
    score += 6 if hemoglobin < 10 else 3 if hemoglobin < 12 else 1 if hemoglobin < 13 else 0
else:
    score += 6 if hemoglobin < 10 else 1 if hemoglobin < 12 else 0
score += 3 if sbp < 90 else 2 if sbp < 100 else 1 if sbp < 110 else 0
score += 1 if pulse >= 100 else 0
score += sum([melena, syncope * 2, hepatic * 2, cardiac_failure * 2])
answer = score - 3
""",
    ),
    _p(
        "perc_rule_any_all",
        "scores",
        2,
        """
perc = {
    "age_ge_50": False,
    "hr_ge_100": True,
    "sao2_lt_95": False,
    "hemoptysis": False,
    "estrogen_use": True,
    "prior_dvt_pe": False,
    "unilateral_leg_swelling": False,
    "recent_surgery_trauma": False,
}
positive = [name for name, present in perc.items() if present]
rule_negative = not any(perc.values())
print("PERC negative" if rule_negative else f"PERC positive: {', '.join(positive)}")
answer = len(positive)
""",
    ),
    _p(
        "caprini_dict_weights",
        "scores",
        7,
        """
risk_factor_points = {
    "age_61_74": 2,
    "major_surgery": 2,
    "bmi_over_25": 1,
    "swollen_legs": 1,
    "history_of_dvt": 3,
    "varicose_veins": 1,
}
present = ["age_61_74", "major_surgery", "bmi_over_25", "varicose_veins", "swollen_legs"]
answer = sum([risk_factor_points.get(f, 0) for f in present])
""",
    ),
    _p(
        "rcri_count",
        "scores",
        2,
        """
high_risk_surgery = True
ischemic_heart_disease = False
heart_failure = False
cerebrovascular_disease = True
insulin_diabetes = False
creatinine_over_2 = False

rcri = sum([high_risk_surgery, ischemic_heart_disease, heart_failure,
            cerebrovascular_disease, insulin_diabetes, creatinine_over_2])
answer = rcri
""",
    ),
    _p(
        "qsofa_booleans",
        "scores",
        2,
        """
respiratory_rate = 24
altered_mentation = False
systolic_bp = 98
answer = int(respiratory_rate >= 22) + int(altered_mentation) + int(systolic_bp <= 100)
""",
    ),
    _p(
        "wells_pe_float_points",
        "scores",
        4.5,
        """
criteria = {
    "clinical_signs_dvt": (False, 3.0),
    "pe_most_likely": (True, 3.0),
    "heart_rate_over_100": (True, 1.5),
    "immobilization_or_surgery": (False, 1.5),
    "previous_dvt_pe": (False, 1.5),
    "hemoptysis": (False, 1.0),
    "malignancy": (False, 1.0),
}
answer = sum([pts for present, pts in criteria.values() if present])
""",
    ),
    _p(
        "sofa_component_helper",
        "scores",
        3,
        """
def respiration_points(pf_ratio, ventilated):
    if pf_ratio < 100 and ventilated:
        return 4
    if pf_ratio < 200 and ventilated:
        return 3
    if pf_ratio < 300:
        return 2
    if pf_ratio < 400:
        return 1
    return 0

def platelet_points(platelets):
    thresholds = [(20, 4), (50, 3), (100, 2), (150, 1)]
    for limit, pts in thresholds:
        if platelets < limit:
            return pts
    return 0

answer = respiration_points(250, False) + platelet_points(130)
""",
    ),
    _p(
        "framingham_like_exp",
        "scores",
        21.53,
        """
import math

age, total_chol, hdl, sbp = 55, 213, 50, 130
smoker, treated = 1, 0

ln_sum = (3.06117 * math.log(age) + 1.12370 * math.log(total_chol) - 0.93263 * math.log(hdl)
          + 1.93303 * math.log(sbp) + 0.65451 * smoker)
risk = 1 - 0.88936 ** math.exp(ln_sum - 23.9802)
answer = round(risk * 100, 2)
""",
    ),
    _p(
        "max_key_lambda",
        "scores",
        "2023-04-02",
        """
from datetime import date

readings = {date(2023, 4, 1): 7.2, date(2023, 4, 2): 9.8, date(2023, 4, 3): 8.1}
peak_day = max(readings, key=lambda d: readings[d])
answer = peak_day
""",
    ),
    _p(
        "sorted_filter_map",
        "scores",
        6.9,
        """
potassium_values = [4.1, 5.6, 3.2, 6.9, 5.1]
high = sorted(filter(lambda k: k > 5.0, potassium_values), reverse=True)
answer = list(map(float, high))[0]
""",
    ),
    _p(
        "enumerate_zip_weights",
        "scores",
        11,
        """
items = ["fever", "tachycardia", "hypotension", "altered_mental_status"]
present = [True, True, False, True]
weights = [3, 2, 4, 6]
total = 0
for i, (item, flag) in enumerate(zip(items, present)):
    if flag:
        total += weights[i]
answer = total
""",
    ),
    _p(
        "default_argument_helper",
        "scores",
        2,
        """
def score_temperature(temp_c, low=36.0, high=38.0):
    if temp_c < low or temp_c > high:
        return 1
    return 0

def score_wbc(wbc, low=4.0, high=12.0):
    return 1 if (wbc < low or wbc > high) else 0

answer = score_temperature(38.6) + score_wbc(15.2)
""",
    ),
    _p(
        "apgar_dict_comprehension",
        "scores",
        7,
        """
observations = {"appearance": "acrocyanosis", "pulse": 120, "grimace": "grimace",
                "activity": "some flexion", "respiration": "strong cry"}
tables = {
    "appearance": {"blue": 0, "acrocyanosis": 1, "pink": 2},
    "grimace": {"none": 0, "grimace": 1, "cry": 2},
    "activity": {"limp": 0, "some flexion": 1, "active": 2},
    "respiration": {"absent": 0, "weak cry": 1, "strong cry": 2},
}
scores = {k: tables[k][v] for k, v in observations.items() if k in tables}
scores["pulse"] = 0 if observations["pulse"] == 0 else (1 if observations["pulse"] < 100 else 2)
answer = sum(scores.values())
""",
    ),
    # --- control flow, errors, formatting, names --------------------------------------------------
    _p(
        "try_except_value_error_parse",
        "style",
        72.5,
        """
raw_weight = "72.5 kg"
try:
    weight = float(raw_weight)
except ValueError:
    weight = float(raw_weight.split()[0])
answer = weight
""",
    ),
    _p(
        "try_except_zero_division",
        "style",
        0.0,
        """
urine_output_ml = 0
hours = 0
try:
    rate = urine_output_ml / hours
except ZeroDivisionError:
    rate = 0.0
answer = rate
""",
    ),
    _p(
        "try_except_else_finally",
        "style",
        3.5,
        """
log = []
try:
    value = int("7")
except (TypeError, ValueError) as err:
    log.append(f"bad input: {err}")
    value = None
else:
    log.append("parsed")
finally:
    log.append("done")
print(log)
answer = value / 2
""",
    ),
    _p(
        "raise_and_catch_custom_message",
        "style",
        1,
        """
def validate_age(age):
    if age < 0 or age > 130:
        raise ValueError(f"implausible age: {age}")
    return age

try:
    validate_age(-4)
    answer = 0
except ValueError as e:
    print("error:", e)
    answer = 1
""",
    ),
    _p(
        "fstring_format_specs",
        "style",
        24.22,
        """
weight = 70.0
height = 1.70
bmi = weight / height ** 2
print(f"Weight: {weight:.1f} kg | Height: {height:.2f} m | BMI: {bmi:>8.3f}")
print(f"{'Category':<12}{'normal' if 18.5 <= bmi < 25 else 'other':>10}")
answer = float(f"{bmi:.2f}")
""",
    ),
    _p(
        "percent_formatting",
        "style",
        13.5,
        """
hb = 13.5
hct = 40.2
print("Hemoglobin: %.1f g/dL, hematocrit: %s%%" % (hb, hct))
print("%-10s|%5d|" % ("count", 3))
answer = hb
""",
    ),
    _p(
        "str_format_literal",
        "style",
        68.0,
        """
hr = 68
print("Heart rate is {} bpm ({:.0%} of 100)".format(hr, hr / 100))
print("{0} / {1} mmHg".format(120, 80))
answer = float("{:.1f}".format(hr))
""",
    ),
    _p(
        "from_math_import_star",
        "style",
        2.7183,
        """
from math import *

x = exp(1)
y = sqrt(16) + log(e) + floor(2.7) + ceil(0.1) - pi + pi
answer = round(x, 4)
""",
    ),
    _p(
        "underscore_names",
        "style",
        12.0,
        """
import math as _m

_weight_kg = 60.0
_MULTIPLIER = 0.2

def _helper(_value, _factor=_MULTIPLIER):
    return _value * _factor

for _ in range(3):
    pass
_now = _helper(_weight_kg)
answer = _m.floor(_now) * 1.0
""",
    ),
    _p(
        "main_guard",
        "style",
        31.249999999999993,
        """
def compute_bmi(weight_kg, height_m):
    return weight_kg / (height_m ** 2)


def main():
    result = compute_bmi(80, 1.6)
    print(f"BMI: {result}")
    return result


if __name__ == "__main__":
    answer = main()
""",
    ),
    _p(
        "global_accumulator",
        "style",
        5,
        """
score = 0

def add_points(condition, points):
    global score
    if condition:
        score += points

add_points(True, 2)
add_points(False, 1)
add_points(True, 3)
answer = score
""",
    ),
    _p(
        "nonlocal_closure",
        "style",
        3,
        """
def make_counter():
    count = 0
    def increment(flag):
        nonlocal count
        if flag:
            count += 1
        return count
    return increment

counter = make_counter()
for finding in [True, False, True, True]:
    total = counter(finding)
answer = total
""",
    ),
    _p(
        "while_loop_titration",
        "style",
        7,
        """
dose = 10.0
target = 30.0
steps = 0
while dose < target:
    dose *= 1.2
    steps += 1
answer = steps
""",
    ),
    _p(
        "list_comprehension_condition",
        "style",
        3,
        """
lab_values = {"sodium": 131, "potassium": 5.8, "chloride": 101, "bicarbonate": 18, "glucose": 250}
reference = {"sodium": (135, 145), "potassium": (3.5, 5.1), "chloride": (98, 107),
             "bicarbonate": (22, 29), "glucose": (70, 140)}
abnormal = [name for name, value in lab_values.items()
            if not reference[name][0] <= value <= reference[name][1]]
print("Abnormal:", ", ".join(sorted(abnormal)))
answer = len(abnormal) - 1
""",
    ),
    _p(
        "round_abs_pow_int",
        "style",
        16,
        """
a = -3.6
b = 2
answer = int(round(abs(a))) ** b // 1 + pow(2, 3) % 3 - 2
""",
    ),
    _p(
        "tuple_unpacking",
        "style",
        120,
        """
vitals = (120, 80, 72)
systolic, diastolic, pulse = vitals
first, *rest = [systolic, diastolic]
answer = first
""",
    ),
    _p(
        "dict_get_defaults",
        "style",
        1.5,
        """
dose_adjustments = {"mild": 1.0, "moderate": 1.5}
severity = "moderate"
factor = dose_adjustments.get(severity, 2.0)
other = dose_adjustments.get("severe", 2.0)
answer = factor if other == 2.0 else 0
""",
    ),
    _p(
        "match_statement",
        "style",
        0.85,
        """
sex = "Female"
match sex.lower():
    case "female" | "f":
        factor = 0.85
    case "male" | "m":
        factor = 1.0
    case _:
        factor = None
answer = factor
""",
    ),
    _p(
        "walrus_operator",
        "style",
        4,
        """
symptoms = ["fever", "cough", "dyspnea", "chest pain"]
if (n := len(symptoms)) > 3:
    print(f"{n} symptoms")
answer = n
""",
    ),
    _p(
        "assert_statements",
        "style",
        140,
        """
sodium = 140
assert 100 < sodium < 200, "sodium out of range"
answer = sodium
""",
    ),
    _p(
        "clamp_min_max",
        "style",
        4.0,
        """
creatinine = 5.3
clamped = min(max(creatinine, 1.0), 4.0)
answer = clamped
""",
    ),
    _p(
        "set_membership_and_sorted",
        "style",
        2,
        """
red_flags = {"fever", "weight loss", "night sweats"}
reported = ["cough", "fever", "night sweats"]
hits = sorted({s for s in reported if s in red_flags})
print(hits)
answer = len(hits)
""",
    ),
    _p(
        "sorted_items_by_value",
        "style",
        8.4,
        """
labs = {"wbc": 8.4, "hgb": 12.1, "plt": 250.0}
ordered = sorted(labs.items(), key=lambda kv: kv[1])
answer = ordered[0][1]
""",
    ),
    _p(
        "calendar_month_name_lookup",
        "style",
        9,
        """
import calendar

month_text = "September"
month_number = list(calendar.month_name).index(month_text)
answer = month_number
""",
    ),
    _p(
        "timedelta_total_seconds",
        "style",
        5400.0,
        """
from datetime import timedelta

infusion = timedelta(hours=1, minutes=30)
answer = infusion.total_seconds()
""",
    ),
    _p(
        "math_isclose_floor_ceil",
        "style",
        8,
        """
import math

ratio = 0.1 + 0.2
same = math.isclose(ratio, 0.3)
answer = math.floor(7.9) + math.ceil(0.2) if same else -1
""",
    ),
    _p(
        "string_methods_parse",
        "style",
        94,
        """
note_line = "  SpO2: 94% on room air  "
cleaned = note_line.strip().lower()
if cleaned.startswith("spo2"):
    value = int(cleaned.split(":")[1].split("%")[0].strip())
else:
    value = None
answer = value
""",
    ),
    _p(
        "underscore_digit_literals",
        "style",
        250000,
        """
platelets_per_ul = 250_000
answer = platelets_per_ul
""",
    ),
    _p(
        "print_sep_end",
        "style",
        3,
        """
print("a", "b", "c", sep="-", end="!\\n")
print("no newline", end="")
print()
answer = 3
""",
    ),
    _p(
        "nested_helpers",
        "style",
        7.5,
        """
def pack_years(packs_per_day, years):
    def validate(x):
        if x < 0:
            raise ValueError("negative")
        return x
    return validate(packs_per_day) * validate(years)

answer = pack_years(0.5, 15)
""",
    ),
    _p(
        "multiple_returns_and_ternary",
        "style",
        2,
        """
def classify_bp(sbp, dbp):
    if sbp >= 140 or dbp >= 90:
        return 2, "stage 2"
    if sbp >= 130 or dbp >= 80:
        return 1, "stage 1"
    return 0, "normal"

stage, label = classify_bp(142, 85)
print(label)
answer = stage
""",
    ),
    _p(
        "integer_division_and_modulo",
        "style",
        [3, 5],
        """
total_days = 26
answer = (total_days // 7, total_days % 7)
""",
    ),
    _p(
        "bool_to_int_sum_comprehension",
        "style",
        3,
        """
answers = ["yes", "no", "yes", "yes", "no"]
answer = sum([a == "yes" for a in answers])
""",
    ),
    _p(
        "cystatin_ratio_expression",
        "style",
        0.58,
        """
import math

age, cr, cystatin = 70, 1.1, 1.3
egfr_ratio = (cr / 0.9) ** -0.544 * (cystatin / 0.8) ** -0.323 * 0.9961 ** age
answer = round(egfr_ratio, 2)
""",
    ),
    _p(
        "time_struct_fields",
        "style",
        2020,
        """
import time

visit = time.strptime("2020-02-29", "%Y-%m-%d")
print(visit.tm_mon, visit.tm_mday)
answer = visit.tm_year
""",
    ),
    _p(
        "time_mktime_localtime_round_trip",
        "style",
        "2021-03-28",
        """
import time
import datetime

t = time.mktime(time.strptime("2021-03-28 12:00", "%Y-%m-%d %H:%M"))
back = time.localtime(t)
answer = datetime.date(back.tm_year, back.tm_mon, back.tm_mday)
""",
    ),
    _p(
        "repr_of_values_in_output",
        "style",
        1,
        """
values = {"na": 140, "k": 4.2, "labs": [1, 2.5, "x"], "when": (2020, 1, 1)}
print(repr(values), str(values["labs"]))
answer = 1
""",
    ),
    _p(
        "hash_of_strings_for_dedup",
        "style",
        3,
        """
names = ["aspirin", "Aspirin", "ibuprofen", "aspirin ", "ibuprofen"]
seen = {}
for n in names:
    key = hash(n.strip().lower())
    seen[key] = n
answer = len(seen) + 1
""",
    ),
    # --- issue 40: what the adversary's rewrites of this corpus and the hidden set showed ------
    _p(
        "unit_label_namereplace",
        "conversions",
        1.0,
        """
# the unit from the note, spelled in ASCII for the log line
unit = "\u00b5mol/L"
ascii_unit = unit.encode("ascii", "namereplace").decode("ascii")
print(f"creatinine 88 {ascii_unit}")
creatinine_mg_dl = 88 / 88.4
answer = round(creatinine_mg_dl, 2)
""",
    ),
    _p(
        "unicode_escape_degree_sign",
        "conversions",
        101.3,
        """
raw = b"temperature 38.5 \\\\N{DEGREE SIGN}C"
text = raw.decode("unicode_escape")
celsius = float(text.split()[1])
answer = round(celsius * 9 / 5 + 32, 1)
""",
    ),
    _p(
        "match_class_pattern_keywords",
        "dates",
        1,
        """
from datetime import date

visit = date(2024, 3, 15)
match visit:
    case date(year=y, month=m) if m >= 3:
        quarter = (m - 1) // 3 + 1
    case _:
        quarter = 0
answer = quarter
""",
    ),
    _p(
        "datetime_max_as_a_start_value",
        "dates",
        "2023-12-30",
        """
import datetime

visits = [datetime.datetime(2024, 1, 5, 9, 30), datetime.datetime(2023, 12, 30, 14, 0)]
earliest = datetime.datetime.max
for visit in visits:
    if visit < earliest:
        earliest = visit
answer = earliest.date()
""",
    ),
    _p(
        "printed_in_pieces",
        "style",
        140,
        """
labs = [("Na", 140), ("K", 4.2), ("Cl", 102)]
for name, value in labs:
    print(name, end=": ")
    print(value)
answer = labs[0][1]
""",
    ),
    _p(
        "except_as_in_a_helper",
        "style",
        4.0,
        """
def parse(text):
    try:
        return float(text)
    except ValueError as err:
        print("skipped:", err)
        return None

values = [parse(v) for v in ["1.5", "n/a", "2.5"]]
answer = sum([v for v in values if v is not None])
""",
    ),
)


def demo_programs() -> list[tuple[str, str]]:
    """(name, program) for every program in the CPU demo's stored replies (results/cpu-demo),
    extracted with the kit's own extraction code, in record order."""
    from harness.arms.prompts import extract_program
    from harness.run.store import read_result_file

    found: list[tuple[str, str]] = []
    for path in sorted(DEMO_RESULTS.glob("*/*/seed*.jsonl")):
        for record in read_result_file(path):
            for i, reply in enumerate(record.replies):
                program = extract_program(reply)
                if program is not None:
                    found.append((f"{record.arm}-{record.case_id}-{i}", program))
    return found
