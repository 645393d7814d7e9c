"""Benchmark: every scorer on every adversarial reply of about 100 kB (tests/scoring/adversarial_replies.py)
for a decimal, an integer, a date and a gestational-age case; the slowest call per scorer and in all.
Writes JSON (default bench/scoring.json). Target: every call under 1 s (before the answer readers were
made linear, a 20 kB digit run took 10-17 s under the medcalc scorers, so 100 kB took minutes)."""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.scoring.scorers import SCORERS, Gold, score_reply  # noqa: E402
from tests.scoring.adversarial_replies import SIZE, adversarial_replies  # noqa: E402

GOLDS = {
    "decimal": Gold("decimal", "25.238", "23.9761", "26.4999", 2, "2-1"),
    "integer": Gold("integer", "4", "4", "4", 4, "4-41"),
    "date": Gold("date", "01/09/2007", "01/09/2007", "01/09/2007", 13, "13-929"),
    "weeks_days": Gold("weeks_days", "('3 weeks', '4 days')", None, None, 69, "69-1030"),
}
TARGET_S = 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="bench/scoring.json")
    ap.add_argument("--size", type=int, default=SIZE, help="reply length in characters (default %(default)s)")
    args = ap.parse_args()
    rows = []
    for name, reply in adversarial_replies(args.size).items():
        for kind, gold in GOLDS.items():
            for scorer in SCORERS:
                t0 = time.perf_counter()
                s = score_reply(reply, gold, scorer)
                rows.append({"reply": name, "chars": len(reply), "case": kind, "scorer": scorer,
                             "seconds": round(time.perf_counter() - t0, 4), "correct": s.correct, "code": s.code})
    worst = max(rows, key=lambda r: r["seconds"])
    per_scorer = {sc: max(r["seconds"] for r in rows if r["scorer"] == sc) for sc in SCORERS}
    out = {
        "benchmark": "scorers on adversarial replies",
        "reply_chars": args.size, "calls": len(rows), "target_seconds_per_call": TARGET_S,
        "max_seconds_per_scorer": per_scorer, "slowest": worst, "meets_target": worst["seconds"] < TARGET_S,
        "total_seconds": round(sum(r["seconds"] for r in rows), 3),
        "load_average": os.getloadavg(), "python": platform.python_version(), "machine": platform.machine(),
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"scoring benchmark: {len(rows)} calls on {args.size:,}-character replies, slowest {worst['seconds']} s "
          f"({worst['scorer']} on {worst['reply']} / {worst['case']}), per scorer {per_scorer}; -> {args.out}")
    return 0 if out["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
