#!/usr/bin/env python3
"""How many honest programs an executor refuses (issue 33, item 3).

Runs the honest corpus (tests/honest/corpus.py) and every program of the CPU demo's stored replies
through one backend of an executor and writes, as JSON: the count of each outcome, the refusals
(outcomes the paper's taxonomy calls a sandbox rejection) with their messages, and the corpus
programs that did not give their expected answer. ``--executor-src DIR`` takes the ``executor``
package from ``DIR`` instead of this checkout, e.g. main's (``git archive main executor | tar -x
-C DIR``), for the before/after figure; the container backend then needs an image built from
those sources (``--image``).

    .venv/bin/python scripts/executor_honest_corpus.py --backend process --out bench/honest-corpus.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["process", "container"], default="process")
    ap.add_argument("--executor-src", default=None, help="directory holding the executor package to measure")
    ap.add_argument("--image", default=None, help="executor image (container backend)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None, help="write the JSON here (default: stdout)")
    args = ap.parse_args(argv)
    if args.executor_src:
        src = Path(args.executor_src).resolve()
        if not (src / "executor" / "__init__.py").is_file():
            ap.error(f"--executor-src {src}: no executor package there")
        sys.path.insert(0, str(src))
    sys.path.insert(1 if args.executor_src else 0, str(REPO))
    from executor.api import Executor
    from executor.outcomes import TAXONOMY
    from tests.honest.corpus import CORPUS, demo_programs

    import executor
    refusal = {o.value for o, label in TAXONOMY.items() if label == "sandbox_rejection"}
    programs = [("corpus", h.name, h.source, h.answer) for h in CORPUS]
    programs += [("cpu-demo", name, src, None) for name, src in demo_programs()]
    opts = {"image": args.image} if args.image else {}
    started = time.monotonic()
    with Executor(backend=args.backend, workers=args.workers, **opts) as ex:
        described = ex.describe()
        results = ex.run_many([p[2] for p in programs])
    seconds = time.monotonic() - started
    counts: dict[str, dict[str, int]] = {"corpus": {}, "cpu-demo": {}}
    refused, wrong = [], []
    for (group, name, _src, expected), r in zip(programs, results):
        counts[group][r.outcome] = counts[group].get(r.outcome, 0) + 1
        if r.outcome in refusal:
            refused.append({"group": group, "name": name, "outcome": r.outcome, "error": r.error})
        elif group == "corpus" and (r.outcome, r.answer) != ("OK", expected):
            wrong.append({"name": name, "outcome": r.outcome, "answer": r.answer, "expected": expected,
                          "error": r.error})
    total = {g: sum(c.values()) for g, c in counts.items()}
    report = {
        "executor_src": str(Path(executor.__file__).resolve().parent),
        "backend": described.get("backend"), "policy_hash": described.get("policy_hash"),
        "image": described.get("image"), "programs": total, "outcomes": counts,
        "refused": {g: sum(1 for x in refused if x["group"] == g) for g in counts},
        "refusal_rate": {g: round(sum(1 for x in refused if x["group"] == g) / total[g], 4) for g in counts},
        "refusals": refused, "corpus_not_answering_as_expected": wrong,
        "seconds": round(seconds, 1), "load_1min": os.getloadavg()[0],
    }
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
