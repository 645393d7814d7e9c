"""SYNTHETIC: a full-size result set for timing the post-run stages, made by replicating a small rehearsal
result set (`make rehearse SIZE=small`), never by running a model.

    .venv/bin/python -m bench synthesize-fullsize /tmp/rehearsal-small /tmp/fullsize [--cases 1100] [--seeds 42-46]

Reads SOURCE/results (the rehearsal's per-case files and run manifests) and SOURCE/rehearsal-cases.csv (its
case set), and writes OUT/synthetic-fullsize-cases.csv and OUT/results:

* cases: the source case set repeated until it holds at least --cases rows; each copy gets fresh row numbers
  (row + replica x 100000), hence fresh case ids ("<calculator>-<row>"), with every other column unchanged,
  so the gold answers (and the stored scores) stay valid;
* seeds: --seeds new seeds, the i-th a copy of the source's (i mod n)-th seed;
* records: every source record once per (case copy, new seed), with case id, row number, seed, dataset
  (name, path, sha256) rewritten and the key recomputed from them (harness.run.recompute.recomputed_key), marked
  `"synthetic": true` and `detail.synthetic_fullsize` (which
  source record and copy it is: in `detail`, since a record holds no field outside its schema, harness.run.record);
  records of the rehearsal server stay synthetic (rehearsal model ids), so `harness merge` and `verify` refuse to
  mix them with real results;
* run manifests: the source's, with seeds and dataset rewritten and marked synthetic.

OUT/SYNTHETIC-FULLSIZE.json says what the set is. Nothing in it is a result: it exists to time stats, tables,
figures, report and verify at the paper's record count (`python -m bench stages`, bench/stages.py).
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import replace
from pathlib import Path

from harness.arms.detail import Detail
from harness.core.hashing import file_sha256
from harness.run.manifest import RunManifest, read_manifests, write_manifest
from harness.run.recompute import recomputed_key
from harness.run.record import Record
from harness.run.store import iter_result_files, read_result_file, results_location, write_result_file

ROW_STRIDE = 100_000


class FullsizeError(ValueError):
    """The source cannot give the synthetic set (the message names the file)."""


DATASET_NAME = "synthetic-fullsize-cases"


def replicate_cases(src_csv: Path, dst_csv: Path, n_cases: int) -> tuple[int, int]:
    """Write the repeated case set; return (replicas, rows written)."""
    with open(src_csv, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    if not rows:
        raise FullsizeError(f"{src_csv}: no cases")
    if max(int(r["Row Number"]) for r in rows) >= ROW_STRIDE:
        raise FullsizeError(f"{src_csv}: row numbers reach {ROW_STRIDE}; fresh row numbers would collide")
    replicas = -(-n_cases // len(rows))
    with open(dst_csv, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for rep in range(replicas):
            for r in rows:
                w.writerow({**r, "Row Number": str(int(r["Row Number"]) + rep * ROW_STRIDE)})
    return replicas, replicas * len(rows)


def _copy(rec: Record, rep: int, new_seed: int, old_seed: int, cases_csv: str, sha: str) -> Record:
    """One synthetic copy of a source record: its case moved to replica `rep`, seed `new_seed`, the synthetic
    split, the source named in `detail`, and the key the runner gives these fields (compare recomputes it)."""
    calc, _, row = rec.case_id.partition("-")
    new_row = int(row) + rep * ROW_STRIDE
    copy = replace(
        rec,
        case_id=f"{calc}-{new_row}",
        row_number=new_row,
        seed=new_seed,
        dataset=DATASET_NAME,
        dataset_path=cases_csv,
        dataset_sha256=sha,
        synthetic=True,
        detail=Detail(
            **(rec.detail or Detail()),
            synthetic_fullsize={"source_key": rec.key, "replica": rep, "source_seed": old_seed},
        ),
        key="",
    )
    return replace(copy, key=recomputed_key(copy))


def synthesize(source: Path, out: Path, n_cases: int, seeds: list[int]) -> dict:
    src_results = source / "results"
    files = list(iter_result_files(src_results))
    if not files:
        raise FullsizeError(f"{src_results}: no per-case results")
    if out.exists():
        shutil.rmtree(out)
    (out / "results").mkdir(parents=True)
    cases_csv = out / f"{DATASET_NAME}.csv"
    replicas, rows = replicate_cases(source / "rehearsal-cases.csv", cases_csv, n_cases)
    sha = file_sha256(cases_csv)
    have = sorted({results_location(p).seed for p in files})
    source_of = {new: have[i % len(have)] for i, new in enumerate(seeds)}
    written = 0
    for path in files:
        old_seed = results_location(path).seed
        targets = [s for s in seeds if source_of[s] == old_seed]
        if not targets:
            continue
        records = read_result_file(path)
        for new_seed in targets:
            dst = out / "results" / path.parent.relative_to(src_results) / f"seed{new_seed}.jsonl"
            written += write_result_file(
                dst,
                (
                    _copy(rec, rep, new_seed, old_seed, str(cases_csv), sha)
                    for rep in range(replicas)
                    for rec in records
                ),
            )
    for found in read_manifests(src_results):  # the rehearsal's run and reproduce manifests
        man = found.manifest
        changes: dict = {
            "synthetic": True,
            "dataset": replace(man.dataset, name=DATASET_NAME, path=str(cases_csv), sha256=sha, n_cases=rows),
        }
        if isinstance(man, RunManifest):
            changes["seeds"] = tuple(seeds)
        write_manifest(out / "results", replace(man, **changes))
    info = {
        "synthetic": True,
        "what": "SYNTHETIC full-size copy of a rehearsal result set, for timing the post-run stages only; "
        "not a result (the rehearsal server is a scripted fake, and these are copies of its output)",
        "source": str(source),
        "cases": rows,
        "case_replicas": replicas,
        "seeds": seeds,
        "seed_sources": {str(k): v for k, v in source_of.items()},
        "records": written,
        "dataset": {"name": DATASET_NAME, "path": str(cases_csv), "sha256": sha},
        "result_bytes": sum(p.stat().st_size for p in iter_result_files(out / "results")),
    }
    (out / "SYNTHETIC-FULLSIZE.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    return info
