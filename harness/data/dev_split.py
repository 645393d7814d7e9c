"""The kit's `dev` split, built from the pinned MedCalc-Bench v1.0 test file instead of shipped.

The split is 625 rows of MedCalc-Bench v1.0 dataset/test_data.csv (ncbi-nlp/MedCalc-Bench at commit 5523b77,
sha256 c2d23097...). The kit ships its definition, harness/data/dev_split_v1.0.json: the source's sha256, the
625 Row Numbers, and the sha256 of the result. `build_dev` reads a copy of test_data.csv the user supplies,
checks its sha256, keeps those rows in the source's order with every cell unchanged, and writes them with
Python's csv module (minimal quoting, "\\n" line ends), which reproduces the source's own bytes for each row
(checked: the source's csv round trip must be byte-identical). The result must hash to the pinned 'dev'
sha256 (checksums/datasets.json) before it is written.

Where the split is looked for (`dev_path`): $MEDCALC_SHARED_DIR when set; else the data cache
($MATHSOLVER_DATA_DIR or ~/.cache/mathsolver-kit), where `harness data build-dev` writes it; else, when it holds
the file, the development checkout's ../shared/data/medcalc-bench.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

from harness.core.paths import BUNDLED_DATA_DIR
from harness.data.errors import DatasetError
from harness.data.locations import cache_dir, shared_dir

__all__ = [
    "DEFINITION_FILE",
    "DEV_FILE_NAME",
    "V1_TEST_DATA_SHA256",
    "V1_TEST_DATA_URL",
    "build_dev",
    "build_target",
    "definition",
    "dev_path",
    "how_to_build",
]

DEFINITION_FILE = BUNDLED_DATA_DIR / "dev_split_v1.0.json"
V1_TEST_DATA_SHA256 = "c2d23097f8bdb7ae4a77dbf4a5a767335df7303998d7c7664a73a29fd8e2b31a"
V1_TEST_DATA_URL = (
    "https://raw.githubusercontent.com/ncbi-nlp/MedCalc-Bench/"
    "5523b7785c004912e76ca4db19efbd7367b23c40/dataset/test_data.csv"
)
DEV_FILE_NAME = "test_dev_v1.0.csv"


def definition() -> dict:
    """The shipped definition: source sha256, result sha256, Row Numbers."""
    return json.loads(DEFINITION_FILE.read_text(encoding="utf-8"))


def dev_path() -> Path:
    """Where the dev split is (or would be built): module docstring."""
    env = os.environ.get("MEDCALC_SHARED_DIR")
    if env:
        return Path(env) / DEV_FILE_NAME
    built = cache_dir() / DEV_FILE_NAME
    checkout = shared_dir() / DEV_FILE_NAME  # without the variable: the development checkout's ../shared
    return checkout if not built.exists() and checkout.exists() else built


def build_target() -> Path:
    """Where `build_dev` writes by default: $MEDCALC_SHARED_DIR when set, else the data cache (never the
    development checkout's ../shared)."""
    env = os.environ.get("MEDCALC_SHARED_DIR")
    return (Path(env) if env else cache_dir()) / DEV_FILE_NAME


def how_to_build() -> str:
    """The commands that make the dev split, for messages."""
    return (
        f"download MedCalc-Bench v1.0 test_data.csv ({V1_TEST_DATA_URL}, sha256 {V1_TEST_DATA_SHA256[:12]}...) "
        "and run `harness data build-dev --source test_data.csv`"
    )


def _serialise(rows: list[list[str]]) -> bytes:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def build_dev(
    source: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    source_sha256: str = V1_TEST_DATA_SHA256,
    expected_sha256: str | None = None,
) -> Path:
    """Write the dev split from `source` (the v1.0 test_data.csv) to `out` (default: `build_target()`). DatasetError
    naming the file for a source of other content, a missing Row
    Number, or a result whose sha256 is not the pinned one; nothing is written then. `source_sha256` and
    `expected_sha256` exist for tests (default: the pins)."""
    source = Path(source)
    spec = definition()
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read the v1.0 source: {exc.strerror}", file=source) from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != source_sha256:
        raise DatasetError(
            f"sha256 {digest} is not the pinned MedCalc-Bench v1.0 test_data.csv ({source_sha256}); {how_to_build()}",
            file=source,
        )
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    if _serialise(rows) != raw:
        raise DatasetError("the csv round trip of the source is not byte-identical; refusing to build", file=source)
    header, records = rows[0], rows[1:]
    rn = header.index("Row Number")
    wanted = set(spec["row_numbers"])
    chosen = [r for r in records if r[rn].strip().isdigit() and int(r[rn]) in wanted]
    missing = wanted - {int(r[rn]) for r in chosen}
    if missing or len(chosen) != len(wanted):
        raise DatasetError(
            f"{len(missing)} of the dev split's {len(wanted)} Row Numbers are not in the source "
            f"(e.g. {sorted(missing)[:5]})",
            file=source,
        )
    data = _serialise([header, *chosen])
    expected = expected_sha256 or spec["sha256"]
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise DatasetError(
            f"the built dev split hashes to {got}, not the pinned {expected}; nothing written", file=source
        )
    target = Path(out) if out is not None else build_target()
    if target.is_dir() or target.suffix.lower() != ".csv":  # a directory (existing or not) gets the file name
        target = target / DEV_FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".dev-", suffix=".csv", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
