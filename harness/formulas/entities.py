"""Read MedCalc-Bench gold "Relevant Entities" dicts: key aliases and unit conversion.

The benchmark's entity dicts spell the same variable several ways across releases ("QT interval" /
"QT Interval", "FiO₂" / "FiO2", "Hypertension" / "Hypertension history") and give quantities as
``[value, unit]`` pairs in whatever unit the note used. :class:`Entities` hides both: callers ask for
a quantity in the unit the formula text states and get a float (or ``None`` when absent).

Conversion constants are the molar masses and factors the benchmark's own worked explanations use
(e.g. creatinine 113.12 g/mol, glucose 180.16 g/mol, BUN 28.02 g/mol, bilirubin 548.66 g/mol,
cholesterol 386.65 g/mol, triglycerides 885.7 g/mol, calcium 40.08 g/mol, sodium 22.99 g/mol,
0.393701 in/cm, 2.54 cm/in, 0.453592 kg/lb).
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from harness.data.values import parse_date

__all__ = ["Entities", "normalize_key", "MOLAR_MASS", "parse_us_date"]

# g/mol, for mmol/L <-> mg/dL (mg/dL = mmol/L * M / 10) and µmol/L <-> mg/dL (/ 10000 * M).
MOLAR_MASS = {
    "creatinine": 113.12,
    "glucose": 180.16,
    "bun": 28.02,
    "bilirubin": 548.66,  # the benchmark's value (bilirubin is 584.66 g/mol); kept to reproduce its numbers
    "cholesterol": 386.65,
    "triglycerides": 885.7,
    "calcium": 40.08,
    "sodium": 22.99,
    "albumin": 66500.0,
}

_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def normalize_key(key: str) -> str:
    """Case-, subscript-, space- and punctuation-insensitive form of an entity name."""
    k = key.translate(_SUBSCRIPTS).lower().replace("≤", "<=").replace("≥", ">=")
    k = re.sub(r"[^a-z0-9<>=#%]+", " ", k)
    return " ".join(k.split())


def parse_us_date(text: str) -> _dt.date:
    """Parse the benchmark's month/day/year date strings ("02/24/2000", "02-24-2000"; four-digit
    years) with harness/data/values.py."""
    return parse_date(text, dashes=True)


class Entities:
    """Alias- and unit-aware view of one case's gold entity dict."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = dict(raw)
        self._norm = {normalize_key(k): v for k, v in raw.items()}

    # ----- raw access -------------------------------------------------------------------------
    def lookup(self, *names: str) -> Any:
        """The value stored under the first present alias (normalized match), else None."""
        for n in names:
            v = self._norm.get(normalize_key(n))
            if v is not None:
                return v
        return None

    def has(self, *names: str) -> bool:
        return self.lookup(*names) is not None

    def pair(self, *names: str) -> tuple[float | None, str]:
        """(value, unit) of a quantity; unit '' when the entity is a bare number."""
        v = self.lookup(*names)
        if v is None:
            return None, ""
        if isinstance(v, (list, tuple)):
            if len(v) >= 2 and isinstance(v[-1], str) and not isinstance(v[0], str):
                return float(v[0]), v[-1].strip()
            return float(v[0]), ""
        if isinstance(v, bool):
            return float(v), ""
        if isinstance(v, (int, float)):
            return float(v), ""
        try:
            return float(str(v).strip()), ""
        except ValueError:
            return None, ""

    def flag(self, *names: str) -> bool:
        """True when any alias is present and truthy (absent criteria count as absent, as the
        benchmark's explanations assume)."""
        for n in names:
            v = self._norm.get(normalize_key(n))
            if isinstance(v, str):
                if v.strip().lower() not in {"", "false", "no", "none", "absent", "not mentioned", "not mentinoed"}:
                    return True
            elif v:
                return True
        return False

    def text(self, *names: str) -> str:
        """A categorical entity as a lowercase string ('' when absent)."""
        v = self.lookup(*names)
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v).strip().lower()

    def date(self, *names: str) -> _dt.date | None:
        v = self.lookup(*names)
        return None if v is None else parse_us_date(str(v))

    # ----- typed quantities -------------------------------------------------------------------
    def number(self, *names: str) -> float | None:
        """A unitless number (INR, pH, GCS, counts of drinks, a percent value)."""
        return self.pair(*names)[0]

    def age_years(self) -> float | None:
        v, u = self.pair("age")
        if v is None:
            return None
        u = u.lower()
        if u.startswith("month"):
            return v / 12.0
        if u.startswith("week"):
            return v / 52.0
        if u.startswith("day"):
            return v / 365.0
        return v

    def height_cm(self) -> float | None:
        v, u = self.pair("height")
        if v is None:
            return None
        u = u.lower()
        if u == "m":
            return v * 100.0
        if u in {"in", "inch", "inches"}:
            return v * 2.54
        if u in {"ft", "feet"}:
            return v * 30.48
        if u == "mm":
            return v / 10.0
        return v

    def weight_kg(self) -> float | None:
        v, u = self.pair("weight")
        if v is None:
            return None
        u = u.lower()
        if u in {"lbs", "lb", "pounds"}:
            return v * 0.453592
        if u == "g":
            return v / 1000.0
        if u == "oz":
            return v * 0.0283495
        return v

    def temperature_c(self, *names: str) -> float | None:
        v, u = self.pair(*(names or ("Temperature",)))
        if v is None:
            return None
        if "fahr" in u.lower() or u.strip().upper() in {"F", "°F"}:
            return (v - 32.0) * 5.0 / 9.0
        return v

    def mg_dl(self, analyte: str, *names: str, molar_mass: float | None = None) -> float | None:
        """A concentration in mg/dL; analyte keys MOLAR_MASS (or molar_mass overrides it) for mmol/L
        and µmol/L inputs."""
        v, u = self.pair(*names)
        if v is None:
            return None
        u = u.replace("μ", "µ").lower()
        mm = molar_mass or MOLAR_MASS[analyte]
        if u in {"mmol/l", "meq/l"} and analyte not in {"sodium"}:
            if analyte == "calcium" and u == "meq/l":
                return v / 2.0 * mm / 10.0
            return v * mm / 10.0
        if u in {"µmol/l", "umol/l"}:
            return v * mm / 10000.0
        if u in {"mg/l"}:
            return v / 10.0
        if u in {"g/l"}:
            return v * 100.0
        if u in {"g/dl"}:
            return v * 1000.0
        return v

    def mmol_l(self, *names: str, molar_mass: float = MOLAR_MASS["sodium"], valence: int = 1) -> float | None:
        """An electrolyte in mmol/L (= mEq/L for the monovalent ions used here)."""
        v, u = self.pair(*names)
        if v is None:
            return None
        u = u.lower()
        if u == "mg/dl":
            return v * 10.0 / molar_mass
        if u == "meq/l":
            return v / valence
        return v

    def g_dl(self, *names: str) -> float | None:
        """A protein concentration (albumin, hemoglobin) in g/dL."""
        v, u = self.pair(*names)
        if v is None:
            return None
        u = u.lower()
        if u == "g/l":
            return v / 10.0
        if u == "mg/dl":
            return v / 1000.0
        return v

    def per_ul(self, *names: str) -> float | None:
        """A cell count per µL (= per mm³); 'L' counts are divided by 10⁶."""
        v, u = self.pair(*names)
        if v is None:
            return None
        u = u.replace("μ", "µ").strip()
        if u == "L":
            return v / 1e6
        if u in {"10^9/L", "x10^9/L", "10⁹/L"}:
            return v * 1000.0
        return v

    def mcg_kg_min(self, *names: str) -> float | None:
        return self.pair(*names)[0]

    def fraction_percent(self, *names: str) -> float | None:
        """FiO₂ as a percent (0.4 -> 40)."""
        v, _ = self.pair(*names)
        if v is None:
            return None
        return v * 100.0 if v <= 1.0 else v
