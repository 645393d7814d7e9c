"""Compare two result directories by content: what the kill-and-resume check calls "identical", and what two
rehearsals (before and after a change) are compared by (`python -m bench compare-records A B`).

Per-case files cannot be byte-identical between an interrupted and an uninterrupted run: records are
appended in completion order, and each carries wall-clock fields. The comparison therefore canonicalises
every record (sorted keys, one line each, records sorted by `key`) after removing the fields that
measure time or transport rather than results: VOLATILE_FIELDS of the record and EXECUTOR_VOLATILE of
each executor result. Everything else (requests, replies, programs, executor outcomes and answers,
scores, keys, counts) must match exactly. Tables are compared byte for byte, the ledger tables s14/s14b
included (they depend on the run settings only, not on how many manifests a resumed run left). The content
checksums (`content_checksums`) are sha256 of those canonical files plus the raw table files, so two directories
are identical exactly when their content-checksum listings are byte-identical.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.core.canonical_json import canonical_json
from harness.model.rehearsal.replies import clock_neutral
from harness.run.store import iter_located_records, iter_result_files, read_result_file

VOLATILE_FIELDS = ("latency_ms", "started_at", "finished_at", "cached", "retries")
EXECUTOR_VOLATILE = ("wall_ms", "cpu_ms")
# Which clock stops a CPU-bound program (CPU_LIMIT or TIMEOUT_WALL) depends on the machine's load: the two
# compare as one outcome, their messages (also where a repair turn quotes them) as one token, and the
# prompt-token estimate of a record that holds such a repair turn is left out.
CLOCK_OUTCOMES = ("CPU_LIMIT", "TIMEOUT_WALL")


def _strip_executor(value: object) -> object:
    if isinstance(value, list):
        return [_strip_executor(v) for v in value]
    if isinstance(value, dict):
        out = {k: v for k, v in value.items() if k not in EXECUTOR_VOLATILE}
        if out.get("outcome") in CLOCK_OUTCOMES:
            out["outcome"], out["error"] = "CLOCK_LIMIT", "<clock limit>"
        return out
    return value


def canonical_record(record: dict) -> str:
    rec = {k: v for k, v in record.items() if k not in VOLATILE_FIELDS}
    if "executor" in rec:
        rec["executor"] = _strip_executor(rec["executor"])
    text = canonical_json(rec)
    neutral = clock_neutral(text)
    if neutral != text:
        rec = json.loads(neutral)
        rec.get("tokens", {}).pop("prompt", None)
        text = canonical_json(rec)
    return text


def canonical_file(path: Path) -> bytes:
    """A results file as canonical lines sorted by record key."""
    recs = sorted(read_result_file(path), key=lambda r: r.key)
    return b"".join(canonical_record(r.to_dict()).encode("utf-8") + b"\n" for r in recs)


def content_checksums(results_root: Path, tables_dir: Path | None = None) -> str:
    """`<sha256>  <path>` lines: canonical content of every results file, raw bytes of every table file."""
    lines = []
    for path in iter_result_files(results_root):
        lines.append(
            f"{hashlib.sha256(canonical_file(path)).hexdigest()}  results/{path.relative_to(results_root).as_posix()}"
        )
    if tables_dir is not None and tables_dir.is_dir():
        for path in sorted(p for p in tables_dir.rglob("*") if p.is_file()):
            data = path.read_bytes()
            lines.append(f"{hashlib.sha256(data).hexdigest()}  tables/{path.relative_to(tables_dir).as_posix()}")
    return "\n".join(lines) + "\n"


def compare(a_lines: str, b_lines: str) -> dict:
    """Two content-checksum listings: identical, and the paths that differ or are on one side only."""

    def parse(text: str) -> dict[str, str]:
        return {p: d for d, p in (ln.split("  ", 1) for ln in text.splitlines() if ln.strip())}

    a, b = parse(a_lines), parse(b_lines)
    differing = sorted(p for p in a.keys() & b.keys() if a[p] != b[p])
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    return {
        "identical": a_lines == b_lines,
        "files": len(a),
        "differing": differing,
        "only_reference": only_a,
        "only_resumed": only_b,
        "results_files": sum(p.startswith("results/") for p in a),
        "table_files": sum(p.startswith("tables/") for p in a),
    }


def canonical_records(results_root: Path, *, ignore: tuple[str, ...] = ()) -> dict[str, str]:
    """{key: canonical record} of every record under a results root, without the fields in `ignore`."""
    out = {}
    for _, _, rec in iter_located_records(results_root):
        out[rec.key] = canonical_record({k: v for k, v in rec.to_dict().items() if k not in ignore})
    return out


def compare_records(a_root: Path, b_root: Path) -> dict:
    """Two rehearsals' reference records by content: the canonical records (canonical_record) less `dataset_path`
    (each rehearsal writes its case set under its own --out)."""
    a = canonical_records(a_root, ignore=("dataset_path",))
    b = canonical_records(b_root, ignore=("dataset_path",))
    same = sum(1 for k in a if k in b and a[k] == b[k])
    differing = sorted(k for k in a if k in b and a[k] != b[k])
    return {
        "records_a": len(a),
        "records_b": len(b),
        "identical": same,
        "differing": differing,
        "one_side_only": len(a.keys() ^ b.keys()),
        "same": not differing and a.keys() == b.keys(),
    }
