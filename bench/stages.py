#!/usr/bin/env python3
"""Wall time of each post-run stage (stats, tables, figures, report, checksums, verify) over one result set,
the same commands the rehearsal runs (harness.reproduce.rehearsal.pipeline.post_run_stages), one after the
other, with `uptime` before and after. Issue 9's target is stats + tables + figures + report + verify
<= 60 s at full size (about 190k records) on a 2-core machine.

    .venv/bin/python scripts/bench_stages.py RESULTS --label after --out bench/stages.json [--code DIR]

RESULTS is a results root, e.g. the synthetic full-size set of scripts/synthesize_fullsize_results.py.
--code runs the stages with the harness package of another checkout (PYTHONPATH=DIR), for before/after
figures of the same set on the same machine; --out merges this run's figures under `runs.<label>` of the
JSON file (other labels are kept).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POST = ("stats", "tables", "figures", "report", "verify")   # the stages issue 9's 60 s target sums


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def harness_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from harness.cli import main; sys.argv[0] = 'harness'; main()", *args]


def run_stages(results: Path, work: Path, code: Path | None, log: Path) -> dict:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    manifest = work / "checksums.txt"
    commands = {
        "stats": ["stats", "--results", str(results), "--out", str(results / "stats")],
        "tables": ["tables", "--results", str(results), "--out", str(results / "tables")],
        "figures": ["figures", "--results", str(results), "--out", str(results / "figures")],
        "report": ["report", "--results", str(results), "--out", str(results / "report")],
        "checksums": ["checksums", "update", "--results", str(results), "--manifest", str(manifest)],
        "verify": ["verify", "--results", str(results), "--manifest", str(manifest)],
    }
    stages = {}
    with open(log, "a", encoding="utf-8") as fh:
        for name, args in commands.items():
            argv = harness_argv(*args)
            fh.write(f"$ {' '.join(args)}\n")
            fh.flush()
            t0, c0 = time.perf_counter(), os.times()
            rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=code or ROOT, env=env).returncode
            c1 = os.times()
            stages[name] = {"wall_s": round(time.perf_counter() - t0, 2),
                            "cpu_s": round((c1.children_user - c0.children_user)
                                           + (c1.children_system - c0.children_system), 2),
                            "returncode": rc}
    return stages


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path)
    p.add_argument("--label", default="run")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "stages.json")
    p.add_argument("--code", type=Path, default=None, help="checkout whose harness package runs the stages")
    a = p.parse_args(argv)
    results = a.results.resolve()
    work = results.parent
    synthetic = results.parent / "SYNTHETIC-FULLSIZE.json"
    records = sum(sum(1 for _ in open(f, "rb")) for f in results.glob("*/*/seed*.jsonl"))
    before = uptime()
    stages = run_stages(results, work, a.code.resolve() if a.code else None, work / f"bench-stages-{a.label}.log")
    entry = {"results": str(results), "records": records,
             "result_bytes": sum(f.stat().st_size for f in results.glob("*/*/seed*.jsonl")),
             "synthetic_set": json.loads(synthetic.read_text()) if synthetic.exists() else None,
             "code": str(a.code or ROOT), "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=a.code or ROOT,
                                                                  capture_output=True, text=True).stdout.strip(),
             "cpus": os.cpu_count(), "uptime_before": before, "uptime_after": uptime(), "stages": stages,
             "post_run_wall_s": round(sum(stages[s]["wall_s"] for s in POST), 2), "target_s": 60}
    if entry["synthetic_set"]:
        entry["synthetic_set"] = {k: entry["synthetic_set"][k] for k in ("what", "records", "cases", "seeds")}
    doc = json.loads(a.out.read_text()) if a.out.exists() else {}
    doc.setdefault("what", "post-run stage wall times (scripts/bench_stages.py); see each run's uptime")
    doc.setdefault("runs", {})[a.label] = entry
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(json.dumps(entry, indent=1, sort_keys=True))
    return 0 if all(s["returncode"] == 0 for s in stages.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
