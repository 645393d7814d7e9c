"""Ordinary clinical programs run OK with the right value and kind, on every backend; wrong
kinds and program errors are classified precisely (the process backend's latency is `make bench-executor`'s).

Programs are written the way a model writes them for real MedCalc-Bench rows
(one_shot_verified.csv): the inputs come from the row's Relevant Entities, the expected value
from its Ground Truth Answer / limits.
"""

from __future__ import annotations

import ast
import csv
import datetime

import pytest

from executor.outcomes import Outcome

PROGRAMS = {
    "Creatinine Clearance (Cockcroft-Gault Equation)": """
import math
age = {age}
weight = {weight}
height_cm = {height}
creatinine = {creat}
male = {male}
height_in = height_cm / 2.54
ibw = (50.0 if male else 45.5) + 2.3 * (height_in - 60)
bmi = weight / (height_cm / 100) ** 2
if bmi < 18.5:
    used = weight
elif bmi < 25:
    used = min(ibw, weight)
else:
    used = ibw + 0.4 * (weight - ibw)
answer = (140 - age) * used * (1 if male else 0.85) / (72 * creatinine)
print(f"BMI {{bmi:.1f}}, weight used {{used:.1f}} kg")
""",
    "Mean Arterial Pressure (MAP)": "sbp = {sbp}\ndbp = {dbp}\nanswer = sbp / 3 + 2 * dbp / 3\n",
    "Body Mass Index (BMI)": "w = {weight}\nh = {height} / 100\nanswer = w / (h * h)\n",
    "QTc Bazett Calculator": "import math\nrr = 60 / {hr}\nanswer = {qt} / math.sqrt(rr)\n",
    "Estimated Due Date": """
from datetime import datetime, timedelta
lmp = datetime.strptime("{lmp}", "%m/%d/%Y")
answer = (lmp + timedelta(days=280 + ({cycle} - 28))).date()
""",
    "Estimated Date of Conception": """
import datetime
lmp = datetime.datetime.strptime("{lmp}", "%m/%d/%Y").date()
answer = lmp + datetime.timedelta(weeks=2)
""",
    "Estimated Gestational Age": """
import datetime
fmt = "%m/%d/%Y"
today = datetime.datetime.strptime("{today}", fmt).date()
lmp = datetime.datetime.strptime("{lmp}", fmt).date()
days = (today - lmp).days
answer = (days // 7, days % 7)
""",
}


def _fill(name: str, ent: dict) -> str:
    tpl = PROGRAMS[name]
    if name.startswith("Creatinine"):
        return tpl.format(
            age=ent["age"][0],
            weight=ent["weight"][0],
            height=ent["height"][0],
            creat=ent["creatinine"][0],
            male=ent["sex"] == "Male",
        )
    if name.startswith("Mean Arterial"):
        return tpl.format(sbp=ent["Systolic Blood Pressure"][0], dbp=ent["Diastolic Blood Pressure"][0])
    if name.startswith("Body Mass"):
        return tpl.format(weight=ent["weight"][0], height=ent["height"][0])
    if name.startswith("QTc"):
        return tpl.format(hr=ent["Heart Rate or Pulse"][0], qt=ent["QT Interval"][0])
    if name == "Estimated Due Date":
        return tpl.format(lmp=ent["Last menstrual date"], cycle=ent["cycle length"])
    if name == "Estimated Date of Conception":
        return tpl.format(lmp=ent["Last menstrual date"])
    return tpl.format(today=ent["Current Date"], lmp=ent["Last menstrual date"])


def _rows(shared_data_dir):
    with open(shared_data_dir / "one_shot_verified.csv", newline="", encoding="utf-8") as fh:
        return {r["Calculator Name"]: r for r in csv.DictReader(fh) if r["Calculator Name"] in PROGRAMS}


@pytest.mark.parametrize("calculator", sorted(PROGRAMS))
def test_real_row_program_runs_ok_with_gold_value(calculator, backend_executor, shared_data_dir):
    _backend, ex = backend_executor
    row = _rows(shared_data_dir)[calculator]
    result = ex.run(_fill(calculator, ast.literal_eval(row["Relevant Entities"])))
    assert result.outcome == Outcome.OK.value, result.error
    if calculator == "Estimated Gestational Age":
        assert result.kind == "weeks_days"
        weeks, days = ast.literal_eval(row["Ground Truth Answer"])
        assert result.answer == [int(weeks.split()[0]), int(days.split()[0])]
    elif row["Output Type"] == "date":
        assert result.kind == "date"
        gold = datetime.datetime.strptime(row["Ground Truth Answer"], "%m/%d/%Y").date().isoformat()
        assert result.answer == gold
    else:
        assert result.kind == "number"
        assert float(row["Lower Limit"]) <= result.answer <= float(row["Upper Limit"])
        assert abs(result.answer - float(row["Ground Truth Answer"])) < 0.01
    if calculator.startswith("Creatinine"):
        assert result.stdout.startswith("BMI ") and not result.stdout_truncated


KIND_CASES = [
    ("answer = 3", "OK", "number", 3),
    ("answer = 2.5e-3", "OK", "number", 0.0025),
    ("import datetime\nanswer = datetime.datetime(2021, 5, 4, 13, 30)", "OK", "date", "2021-05-04"),
    ("answer = (40, 0)", "OK", "weeks_days", [40, 0]),
    ("answer = True", "BAD_RETURN_KIND", None, None),
    ("answer = float('nan')", "BAD_RETURN_KIND", None, None),
    ("answer = float('inf')", "BAD_RETURN_KIND", None, None),
    ("answer = 10**400", "BAD_RETURN_KIND", None, None),
    ("answer = '5.0'", "BAD_RETURN_KIND", None, None),
    ("answer = [39, 2]", "BAD_RETURN_KIND", None, None),
    ("answer = (39, 2.0)", "BAD_RETURN_KIND", None, None),
    ("answer = (39, 2, 1)", "BAD_RETURN_KIND", None, None),
    ("answer = complex(1, 2)", "BAD_RETURN_KIND", None, None),
    ("import datetime\nanswer = datetime.timedelta(days=3)", "BAD_RETURN_KIND", None, None),
    ("x = 1", "PROGRAM_ERROR", None, None),
    ("answer = None", "BAD_RETURN_KIND", None, None),
    # issue 33, item 4: a (weeks, days) answer must be a reading: days 0-6, weeks not negative
    ("answer = (0, 0)", "OK", "weeks_days", [0, 0]),
    ("answer = (39, 6)", "OK", "weeks_days", [39, 6]),
    ("answer = (39, 10)", "BAD_RETURN_KIND", None, None),
    ("answer = (39, 7)", "BAD_RETURN_KIND", None, None),
    ("answer = (-3, 2)", "BAD_RETURN_KIND", None, None),
    ("answer = (3, -1)", "BAD_RETURN_KIND", None, None),
    ("answer = (10**9 + 1, 0)", "BAD_RETURN_KIND", None, None),
]


@pytest.mark.parametrize("source,outcome,kind,answer", KIND_CASES, ids=[c[0] for c in KIND_CASES])
def test_answer_kind_checking(source, outcome, kind, answer, process_executor):
    r = process_executor.run(source)
    assert (r.outcome, r.kind, r.answer) == (outcome, kind, answer), r.error


@pytest.mark.parametrize("value", [(39, 10), (-3, 2)], ids=["days_over_6", "negative_weeks"])
def test_weeks_days_outside_a_reading_is_the_wrong_return_kind_on_both_backends(value, backend_executor):
    """Issue 33, item 4: like a bool or a string, with a message saying which part is out."""
    _backend, ex = backend_executor
    r = ex.run(f"weeks, days = {value}\nanswer = (weeks, days)\n")
    assert (r.outcome, r.kind, r.answer) == (Outcome.BAD_RETURN_KIND.value, None, None), r
    assert r.error.startswith(f"answer {value!r} is not a (weeks, days) gestational age: ")


def test_a_forged_line_with_an_out_of_range_reading_is_a_forgery():
    """The supervisor checks a child's line with the same rule (child.weeks_days_problem)."""
    from executor.supervisor import message_problem

    line = {
        "nonce": "n",
        "outcome": "OK",
        "answer": [39, 10],
        "kind": "weeks_days",
        "stdout": "",
        "stderr": "",
        "stdout_truncated": False,
        "stderr_truncated": False,
        "error": None,
        "addresses_masked": 0,
    }
    assert message_problem(line) == "weeks_days answer is not a (weeks, days) reading"
    assert message_problem({**line, "answer": [39, 6]}) is None
    assert message_problem({**line, "answer": [39, 6], "addresses_masked": -1}) == "addresses_masked is not a count"


def test_unset_answer_has_its_own_message(process_executor):
    r = process_executor.run("x = 1\n")
    assert r.error == "the program did not assign a value to `answer`"


@pytest.mark.parametrize(
    "source,expected",
    [
        ("x = 1\ny = x / 0\n", "ZeroDivisionError: division by zero (line 2)"),
        ("import calendar\nanswer = calendar.monthrange(2020, 13)\n", "(line 2)"),
        ("answer = (\n", "SyntaxError"),
        (
            "import datetime\nanswer = datetime.date(2020, 2, 30)\n",
            "ValueError: day is out of range for month (line 2)",
        ),
        ("import time\ntime.day_name\n", "AttributeError"),  # on the allow-list (calendar), not on time
        ("raise ValueError('x' * 5000)\n", "ValueError: xxx"),
    ],
)
def test_program_errors_are_short_and_show_no_host_paths(source, expected, process_executor):
    r = process_executor.run(source)
    assert r.outcome == "PROGRAM_ERROR"
    assert expected in r.error
    assert len(r.error) <= 500
    assert "/" not in r.error.replace("%m/%d", "")


def test_warnings_go_to_captured_stderr(process_executor):
    r = process_executor.run("x = 1\nanswer = 2 if x is 1 else 3\n")
    assert r.outcome == "OK" and "SyntaxWarning" in r.stderr


def test_output_truncation_without_flood(process_executor):
    r = process_executor.run("print('y' * 20000)\nanswer = 1\n")
    assert r.outcome == "OK" and r.stdout_truncated and r.stdout == "y" * 16384
    assert r.stderr_truncated is False


def test_modules_are_proxies_without_sys_and_print_without_builtins(process_executor_os_layers, process_executor):
    """Layer 2 on its own terms: the module proxies have no 'sys'; print is not the builtin."""
    r = process_executor.run(
        "import datetime, calendar, time, math\n"
        "answer = len([m for m in (datetime, calendar, time, math) if 'sleep' in dir(m)])\n"
    )
    assert r.outcome == "REJECTED_STATIC"  # dir is not allowed statically
    r = process_executor.run("import datetime\nanswer = datetime.date(2020, 1, 1)\nprint(answer, sep='-', end='!')\n")
    assert r.outcome == "OK" and r.stdout == "2020-01-01!"
