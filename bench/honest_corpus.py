"""How many honest programs an executor refuses (issue 33, item 3).

Runs the honest corpus (bench/honest_programs.py) and every program of the CPU demo's stored replies
through one backend of an executor and writes, as JSON: the count of each outcome, the refusals
(outcomes the paper's taxonomy calls a sandbox rejection) with their messages, and the corpus
programs that did not give their expected answer. ``--executor-src DIR`` takes the ``executor``
package from ``DIR`` instead of this checkout, e.g. main's (``git archive main executor | tar -x
-C DIR``), for the before/after figure; the container backend then needs an image built from
those sources (``--image``).

    .venv/bin/python -m bench honest-corpus --backend process --out runs/bench/honest-corpus.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.honest_programs import CORPUS, REPO, demo_programs


def main(
    backend: str = "process",
    executor_src: Path | None = None,
    image: str | None = None,
    workers: int = 2,
    out: Path | None = None,
) -> int:
    """Run the corpus through ``backend``; ``executor_src``: re-run this in a subprocess whose ``executor`` package
    is the one in that directory (first on PYTHONPATH; ``-P`` keeps the working directory off the path)."""
    if executor_src is not None:
        src = Path(executor_src).resolve()
        if not (src / "executor" / "__init__.py").is_file():
            raise ValueError(f"--executor-src {src}: no executor package there")
        cmd = [sys.executable, "-P", "-m", "bench", "honest-corpus", "--backend", backend, "--workers", str(workers)]
        cmd += ["--image", image] if image else []
        cmd += ["--out", str(Path(out).resolve())] if out else []
        env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{REPO}", "MATHSOLVER_EXECUTOR_SRC": str(src)}
        return subprocess.run(cmd, env=env, cwd="/").returncode
    import executor
    from executor.api import Executor
    from executor.outcomes import TAXONOMY

    expected_src = os.environ.get("MATHSOLVER_EXECUTOR_SRC")
    if expected_src and Path(executor.__file__).resolve().parent.parent != Path(expected_src):
        raise RuntimeError(f"the executor package came from {executor.__file__}, not from {expected_src}")
    refusal = {o.value for o, label in TAXONOMY.items() if label == "sandbox_rejection"}
    programs = [("corpus", h.name, h.source, h.answer) for h in CORPUS]
    programs += [("cpu-demo", name, src, None) for name, src in demo_programs()]
    opts = {"image": image} if image else {}
    started = time.monotonic()
    with Executor(backend=backend, workers=workers, **opts) as ex:
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
            wrong.append(
                {"name": name, "outcome": r.outcome, "answer": r.answer, "expected": expected, "error": r.error}
            )
    total = {g: sum(c.values()) for g, c in counts.items()}
    report = {
        "executor_src": str(Path(executor.__file__).resolve().parent),
        "backend": described.get("backend"),
        "policy_hash": described.get("policy_hash"),
        "image": described.get("image"),
        "programs": total,
        "outcomes": counts,
        "refused": {g: sum(1 for x in refused if x["group"] == g) for g in counts},
        "refusal_rate": {g: round(sum(1 for x in refused if x["group"] == g) / total[g], 4) for g in counts},
        "refusals": refused,
        "corpus_not_answering_as_expected": wrong,
        "seconds": round(seconds, 1),
        "load_1min": os.getloadavg()[0],
    }
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0
