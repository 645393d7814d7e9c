"""Benchmark: every scorer on every adversarial reply of about 100 kB (bench/adversarial_replies.py) for a decimal,
an integer, a date and a gestational-age case; the slowest call per scorer and in all. Writes JSON
(`make bench-scoring`: runs/bench/scoring.json). Target: every call under 1 s (before the answer readers were made
linear, a 20 kB digit run took 10-17 s under the medcalc scorers, so 100 kB took minutes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.adversarial_replies import SIZE, adversarial_replies
from bench.machine import Machine
from bench.targets import Target
from harness.scoring.scorers import SCORERS, Gold, score_reply

GOLDS = {
    "decimal": Gold("decimal", "25.238", "23.9761", "26.4999", 2, "2-1"),
    "integer": Gold("integer", "4", "4", "4", 4, "4-41"),
    "date": Gold("date", "01/09/2007", "01/09/2007", "01/09/2007", 13, "13-929"),
    "weeks_days": Gold("weeks_days", "('3 weeks', '4 days')", None, None, 69, "69-1030"),
}
TARGET = Target("seconds_per_call", "<", 1.0, label="target_seconds_per_call")


def main(out: Path, size: int = SIZE) -> int:
    machine = Machine()
    rows = []
    for name, reply in adversarial_replies(size).items():
        for kind, gold in GOLDS.items():
            for scorer in SCORERS:
                t0 = time.perf_counter()
                s = score_reply(reply, gold, scorer)
                rows.append(
                    {
                        "reply": name,
                        "chars": len(reply),
                        "case": kind,
                        "scorer": scorer,
                        "seconds": round(time.perf_counter() - t0, 4),
                        "correct": s.correct,
                        "code": s.code,
                    }
                )
    worst = max(rows, key=lambda r: r["seconds"])
    per_scorer = {sc: max(r["seconds"] for r in rows if r["scorer"] == sc) for sc in SCORERS}
    report = {
        "benchmark": "scorers on adversarial replies",
        "reply_chars": size,
        "calls": len(rows),
        TARGET.key: TARGET.bound,
        "max_seconds_per_scorer": per_scorer,
        "slowest": worst,
        "meets_target": TARGET.met(worst["seconds"]),
        "total_seconds": round(sum(r["seconds"] for r in rows), 3),
        "load_average": machine.loadavg_start,
        "python": machine.python,
        "machine": machine.arch,
        "rows": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(
        f"scoring benchmark: {len(rows)} calls on {size:,}-character replies, slowest {worst['seconds']} s "
        f"({worst['scorer']} on {worst['reply']} / {worst['case']}), per scorer {per_scorer}; -> {out}"
    )
    return 0 if report["meets_target"] else 1
