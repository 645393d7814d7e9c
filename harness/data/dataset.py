"""Load and validate MedCalc-Bench cases.

`load_dataset(name_or_path)` accepts a pinned name ("bundled-test", "one-shot", "dev", "verified") or a
path to a CSV or Parquet file in the benchmark's 14-column schema, validates every row and returns a
`Dataset` of typed `Case` objects. Every schema problem raises `DatasetError`, whose message names the
file, the row (1-based data row, header excluded, plus the row's "Row Number" when known) and the
column.

Formats accepted (checked against every row of the v1.0 dev file and the Verified one-shot split):

* decimal / integer outputs: gold answer and both limits are plain numbers ("25.238", "-1", "4").
  Integer-typed rows with a fractional gold value exist upstream (e.g. Wells' PE 1.5) and are kept.
* date outputs: "MM/DD/YYYY" (one- or two-digit month/day accepted), e.g. "01/09/2007".
* gestational age: stored as a Python tuple string "('0 weeks', '6 days')" with Output Type "integer"
  (v1.0) or "date" (Verified one-shot). Detected by the answer's format and mapped to output_type
  "weeks_days" with gold_value (weeks, days); the file's own type is kept in `raw_output_type`.
* Relevant Entities: a Python-literal dict, parsed with `ast.literal_eval` (never `eval`).

Refused at load, so no scorer or arm meets them mid-run (one rule for every scorer):

* a Calculator ID outside MedCalc-Bench's 55 (harness/data/calculator_ids.py): no arm has a formula or
  prompt for it and the official check raises "Unknown calculator ID" on it;
* a numeric row whose Lower Limit exceeds its Upper Limit. The official check is ``answer >= lower and
  answer <= upper`` (ncbi-nlp/MedCalc-Bench evaluation/evaluate.py at 5523b77, line 44), so on such a row no
  answer is ever correct, and the `paper` scorer has no interval to test. MedCalc-Bench's own files write
  the lower bound first for negative golds too (e.g. v1.0 Row Number 467: gold -0.828, limits -0.8694,
  -0.7866), and so does Verified's generator (nikhilk7153/MedCalc-Bench-Verified
  calculator_implementations/generate_csv.py at 0eb5960, lines 141-156: gold*1.05 is the lower limit of a
  negative gold); copies that compute the limits as gold*0.95 and gold*1.05 swap them for every negative gold.
  The kit does not reorder them silently: the error names the row, and swapping the two cells fixes it.

Answers and limits are parsed by harness/data/values.py, the kit's one value parser, with its
defaults (the file forms above).
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.hashing import file_sha256 as sha256_file
from harness.data import pins
from harness.data.calculator_ids import CALCULATOR_IDS
from harness.data.dev_split import dev_path, how_to_build
from harness.data.errors import DatasetError
from harness.data.locations import bundled_dir
from harness.data.values import looks_like_weeks_days, parse_date, parse_number, parse_weeks_days

COLUMNS = (
    "Row Number",
    "Calculator ID",
    "Calculator Name",
    "Category",
    "Output Type",
    "Note ID",
    "Note Type",
    "Patient Note",
    "Question",
    "Relevant Entities",
    "Ground Truth Answer",
    "Lower Limit",
    "Upper Limit",
    "Ground Truth Explanation",
)
# Columns that must hold a value on every row (the others may be empty).
REQUIRED_VALUES = (
    "Row Number",
    "Calculator ID",
    "Calculator Name",
    "Output Type",
    "Patient Note",
    "Question",
    "Relevant Entities",
    "Ground Truth Answer",
    "Lower Limit",
    "Upper Limit",
)
RAW_OUTPUT_TYPES = ("decimal", "integer", "date", "weeks_days")
OUTPUT_TYPES = ("decimal", "integer", "date", "weeks_days")

# name -> (where, file name). "bundled": harness/data; "shared": the dev split, built by `harness data build-dev`
# (harness/data/dev_split.py says where it is looked for); "cache": the download cache written by `harness data fetch`.
PINNED_NAMES: dict[str, tuple[str, str]] = {
    "bundled-test": ("bundled", "test_slice.csv"),
    "one-shot": ("bundled", "one_shot_verified.csv"),
    "dev": ("shared", "test_dev_v1.0.csv"),
    "verified": ("cache", ""),
}


@dataclass(frozen=True)
class Case:
    """One benchmark row, typed. String fields are as in the file; `gold_value` is parsed."""

    row_number: int
    calculator_id: int
    calculator_name: str
    category: str
    output_type: str  # "decimal" | "integer" | "date" | "weeks_days"
    note_id: str
    note_type: str
    note: str
    question: str
    entities: dict
    gold_answer: str
    lower_limit: str
    upper_limit: str
    gold_value: Any  # float | datetime.date | (weeks, days)
    explanation: str
    raw_output_type: str = ""  # the file's own "Output Type" (differs for gestational age)

    @property
    def case_id(self) -> str:
        return f"{self.calculator_id}-{self.row_number}"

    def __hash__(self) -> int:  # entities is a dict, so hash the identifying fields
        return hash((self.calculator_id, self.row_number, self.note, self.gold_answer))

    @property
    def lower_value(self) -> Any:
        """Lower Limit parsed like the gold answer."""
        return parse_gold(self.lower_limit, self.output_type)

    @property
    def upper_value(self) -> Any:
        """Upper Limit parsed like the gold answer."""
        return parse_gold(self.upper_limit, self.output_type)


@dataclass
class Dataset:
    """A validated set of cases read from one file."""

    name: str
    path: Path
    sha256: str
    cases: list[Case] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def calculator_ids(self) -> list[int]:
        """Sorted distinct calculator ids."""
        return sorted({c.calculator_id for c in self.cases})

    def by_case_id(self) -> dict[str, Case]:
        return {c.case_id: c for c in self.cases}

    def by_calculator_id(self) -> dict[int, list[Case]]:
        """Cases grouped by calculator id, file order kept (e.g. the one-shot example per calculator)."""
        groups: dict[int, list[Case]] = {}
        for c in self.cases:
            groups.setdefault(c.calculator_id, []).append(c)
        return groups


# ---------------------------------------------------------------- value parsing


def parse_gold(text: str, output_type: str) -> Any:
    """Parse an answer or limit string according to the (mapped) output type, in the file forms
    (harness/data/values.py with its defaults: MM/DD/YYYY dates, tuples with days 0..6)."""
    if output_type == "date":
        return parse_date(text)
    if output_type == "weeks_days":
        return parse_weeks_days(text)
    if output_type in ("decimal", "integer"):
        return parse_number(text)
    raise ValueError(f"unknown output type {output_type!r}")


def parse_entities(text: str) -> dict:
    """Relevant Entities: a Python-literal dict (ast.literal_eval only)."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python-literal dict ({type(exc).__name__}: {exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a dict, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------- reading files


def _cell(value: Any) -> str:
    """A table cell as the file's string (parquet int64 -> '12', null -> '')."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
        return repr(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _cell(value.item())
    return str(value)


def read_table(path: Path) -> list[dict[str, str]]:
    """Read a CSV or Parquet file into a list of {column: string} rows; checks the columns."""
    import pandas as pd  # here, not at module level: pandas takes ~0.8 s to import and most commands never read a file

    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        else:
            raise DatasetError("unsupported file type (expected .csv or .parquet)", file=path)
    except DatasetError:
        raise
    except FileNotFoundError:
        raise DatasetError("file not found", file=path) from None
    except Exception as exc:  # pandas/pyarrow parse errors, bad encoding
        raise DatasetError(f"cannot read file: {type(exc).__name__}: {exc}", file=path) from None
    columns = [str(c) for c in df.columns]
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise DatasetError(
            f"missing column(s) {', '.join(repr(c) for c in missing)}; expected the benchmark's columns "
            f"{', '.join(COLUMNS)}",
            file=path,
            column=missing[0],
        )
    df = df[list(COLUMNS)].astype(object)
    records = df.where(df.notna(), None).to_dict("records")  # every null flavour (NaN, NA, None) -> None
    return [{c: _cell(rec[c]) for c in COLUMNS} for rec in records]


def _parse_int(text: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d+", t):
        raise ValueError(f"expected an integer, got {text!r}")
    return int(t)


def _limits_swapped(output_type: str, lower: Any, upper: Any) -> bool:
    """A numeric row whose Lower Limit exceeds its Upper Limit (module docstring)."""
    return output_type in ("decimal", "integer") and lower > upper


def _more_swapped_rows(records: list[dict[str, str]], after: int) -> int:
    """How many rows after the 1-based row `after` also have numeric limits the wrong way round."""
    n = 0
    for rec in records[after:]:
        try:
            n += _limits_swapped(
                rec["Output Type"].strip(), parse_number(rec["Lower Limit"]), parse_number(rec["Upper Limit"])
            )
        except ValueError:
            continue
    return n


def case_from_row(rec: dict[str, str], *, file: Path, row: int) -> Case:
    """Validate one row and build its Case; raises DatasetError naming file, row and column."""
    rn_text = rec["Row Number"].strip()

    def err(column: str, message: str) -> DatasetError:
        return DatasetError(message, file=file, row=row, row_number=rn_text or None, column=column)

    for col in REQUIRED_VALUES:
        if not rec[col].strip():
            raise err(col, "empty value")
    try:
        row_number = _parse_int(rec["Row Number"])
    except ValueError as exc:
        raise err("Row Number", str(exc)) from None
    try:
        calculator_id = _parse_int(rec["Calculator ID"])
    except ValueError as exc:
        raise err("Calculator ID", str(exc)) from None
    if calculator_id not in CALCULATOR_IDS:
        raise err(
            "Calculator ID",
            f"calculator id {calculator_id} is not one of MedCalc-Bench's 55 calculators "
            f"({min(CALCULATOR_IDS)}..{max(CALCULATOR_IDS)}, listed in "
            "harness/data/calculator_ids.py)",
        )

    raw_type = rec["Output Type"].strip()
    if raw_type not in RAW_OUTPUT_TYPES:
        raise err("Output Type", f"unknown output type {raw_type!r} (expected one of {', '.join(RAW_OUTPUT_TYPES)})")
    gold_text = rec["Ground Truth Answer"]
    output_type = raw_type
    if raw_type == "weeks_days" or looks_like_weeks_days(gold_text):
        if raw_type == "decimal":
            raise err("Ground Truth Answer", f"tuple-style answer {gold_text!r} with Output Type 'decimal'")
        output_type = "weeks_days"

    values = {}
    for col in ("Ground Truth Answer", "Lower Limit", "Upper Limit"):
        try:
            values[col] = parse_gold(rec[col], output_type)
        except ValueError as exc:
            raise err(col, f"{exc} (output type {output_type})") from None
    if _limits_swapped(output_type, values["Lower Limit"], values["Upper Limit"]):
        raise err(
            "Lower Limit",
            f"Lower Limit {rec['Lower Limit'].strip()} exceeds Upper Limit "
            f"{rec['Upper Limit'].strip()} (gold {gold_text.strip()}): no answer could score "
            "correct; swap the two cells (limits computed as gold*0.95 and gold*1.05 come out "
            "swapped for a negative gold)",
        )

    try:
        entities = parse_entities(rec["Relevant Entities"])
    except ValueError as exc:
        raise err("Relevant Entities", str(exc)) from None

    return Case(
        row_number=row_number,
        calculator_id=calculator_id,
        calculator_name=rec["Calculator Name"].strip(),
        category=rec["Category"].strip(),
        output_type=output_type,
        note_id=rec["Note ID"],
        note_type=rec["Note Type"],
        note=rec["Patient Note"],
        question=rec["Question"],
        entities=entities,
        gold_answer=gold_text,
        lower_limit=rec["Lower Limit"],
        upper_limit=rec["Upper Limit"],
        gold_value=values["Ground Truth Answer"],
        explanation=rec["Ground Truth Explanation"],
        raw_output_type=raw_type,
    )


def parse_cases(records: list[dict[str, str]], *, file: Path) -> list[Case]:
    """Validate all rows; duplicate Row Numbers are an error naming both rows."""
    cases: list[Case] = []
    seen: dict[int, int] = {}
    for i, rec in enumerate(records, start=1):
        try:
            case = case_from_row(rec, file=file, row=i)
        except DatasetError as exc:
            more = _more_swapped_rows(records, i) if exc.problem.startswith("Lower Limit ") else 0
            if more:  # a copy with every negative gold's limits swapped: say how many rows need the fix
                raise DatasetError(
                    f"{exc.problem}; {more} later row{'s' * (more != 1)} too",
                    file=file,
                    row=i,
                    row_number=exc.row_number,
                    column=exc.column,
                ) from None
            raise
        if case.row_number in seen:
            raise DatasetError(
                f"duplicate Row Number {case.row_number} (first seen on row {seen[case.row_number]})",
                file=file,
                row=i,
                row_number=case.row_number,
                column="Row Number",
            )
        seen[case.row_number] = i
        cases.append(case)
    if not cases:
        raise DatasetError("no data rows", file=file)
    return cases


# ---------------------------------------------------------------- pinned names


def resolve(name_or_path: str | os.PathLike) -> tuple[str, Path]:
    """Map a pinned name or a path to (dataset name, file path). Raises DatasetError if absent."""
    spec = str(name_or_path)
    if spec in PINNED_NAMES:
        where, filename = PINNED_NAMES[spec]
        if where == "bundled":
            path = bundled_dir() / filename
            if not path.exists():
                raise DatasetError(f"bundled dataset {spec!r} is missing from the installed kit", file=path)
            return spec, path
        if where == "shared":
            path = dev_path()
            if not path.exists():
                raise DatasetError(
                    f"dataset 'dev' has not been built ({path} does not exist): {how_to_build()} "
                    "(or set MEDCALC_SHARED_DIR to a directory holding test_dev_v1.0.csv)",
                    file=path,
                )
            return spec, path
        return spec, pins.verified_path()  # the Verified split's location depends on its pin
    path = Path(spec).expanduser()
    if not path.exists():
        raise DatasetError(
            f"dataset not found: not a file and not one of the pinned names {', '.join(PINNED_NAMES)}", file=path
        )
    if path.is_dir():
        raise DatasetError("dataset path is a directory; give a .csv or .parquet file", file=path)
    return path.stem, path


def load_dataset(name_or_path: str | os.PathLike, *, verify: bool = True) -> Dataset:
    """Load a pinned dataset by name or a CSV/Parquet file by path, validating every row.

    For pinned names, `verify=True` also checks the file's sha256 against checksums/datasets.json
    (when a hash is pinned) and raises DatasetError naming the file on mismatch.
    """
    name, path = resolve(name_or_path)
    digest = sha256_file(path)
    if verify and str(name_or_path) in PINNED_NAMES:
        expected = pins.pinned_sha256(name)
        if expected and expected != digest:
            raise DatasetError(
                f"sha256 mismatch for pinned dataset {name!r}: expected {expected}, got {digest}; "
                "run `harness data check`",
                file=path,
            )
    cases = parse_cases(read_table(path), file=path)
    return Dataset(name=name, path=path, sha256=digest, cases=cases)
