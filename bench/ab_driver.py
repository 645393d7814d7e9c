#!/usr/bin/env python3
"""One side of the executor A/B in ``make bench-executor`` (bench/executor.py, section ``ab``): start
one worker of one backend of the executor package found in ``--src``, time its start-up, then run
programs back to back and time each. Prints one JSON object. Run in a subprocess per side, so that two
versions of the ``executor`` package never meet in one interpreter; the side's package is the one on
PYTHONPATH, and ``-P`` keeps bench/ (whose executor.py is the benchmark) off the path:

    PYTHONPATH=DIR python3 -P bench/ab_driver.py --src DIR --backend process|container [--image TAG] [--n 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import TypedDict


class _BackendOpts(TypedDict, total=False):
    image: str
    runtime: str


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="directory holding the executor package")
    ap.add_argument("--backend", choices=["process", "container"], required=True)
    ap.add_argument("--image", default=None)
    ap.add_argument("--runtime", default=None)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--programs", required=True, help="JSON object {mix name: [program, ...]}")
    args = ap.parse_args(argv)
    import executor
    from executor.api import Executor

    where = os.path.dirname(os.path.dirname(os.path.abspath(executor.__file__)))
    if os.path.realpath(where) != os.path.realpath(args.src):
        ap.error(
            f"the executor package came from {where}, not from --src {args.src} (run with PYTHONPATH=--src and -P)"
        )

    mixes = json.loads(args.programs)
    opts: _BackendOpts = {"image": args.image} if args.image else {}
    if args.runtime and args.backend == "container":
        opts["runtime"] = args.runtime
    t = time.perf_counter()
    with Executor(backend=args.backend, workers=1, **opts) as ex:
        out_mixes: dict[str, dict[str, object]] = {}
        out = {"startup_ms": round((time.perf_counter() - t) * 1000, 1), "mixes": out_mixes}
        for mix, programs in mixes.items():
            for src in programs[:3]:
                ex.run(src)  # warm: the first spares of a fresh supervisor
            lat: list[float] = []
            cpu: list[float] = []
            outcomes: dict[str, int] = {}
            for i in range(args.n):
                t = time.perf_counter()
                r = ex.run(programs[i % len(programs)])
                lat.append((time.perf_counter() - t) * 1000)
                if r.cpu_ms is not None:
                    cpu.append(r.cpu_ms)
                outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
            lat.sort()
            # the child's own CPU time (rusage, from the result): what the program's path costs,
            # much less moved by other jobs on a shared machine than the latency is
            out_mixes[mix] = {
                "median_ms": round(statistics.median(lat), 3),
                "p95_ms": round(lat[min(len(lat) - 1, round(0.95 * len(lat)) - 1)], 3),
                "median_cpu_ms": round(statistics.median(cpu), 3) if cpu else None,
                "outcomes": outcomes,
            }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
