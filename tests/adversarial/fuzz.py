"""The executor's adversary at scale (issue 40): ``make fuzz-executor N=...``.

Every program of the generator (generator.py: the adversarial and honest corpora rewritten
through every syntactic form, and hypothesmith's grammar) is run

* on two fresh process pools with every layer on, each its own supervisor and zygote: the first
  runs each batch in order on one worker, the second in a shuffled order over ``B_WORKERS``
  workers (issue 46: a history effect the same in both pools was never seen when both ran the
  same order); the determinism oracle compares their results field by field
  (``result.DETERMINISTIC_FIELDS``);
* (hostile rewrites, walks from an allowed module, memory-pressure programs: generator.py) on a
  pool with layer 2 off, where layer 1 must stand alone against the real modules;
* (memory-pressure programs) every configuration must end them with a result line (MEMORY_LIMIT,
  OK, PROGRAM_ERROR, OUTPUT_LIMIT; a time limit under load), never CRASH (``memory_results_lost``);
* (a sample, ``--container-share``) on the container backend, compared with the first pool;
* (honest and grammar programs) in plain CPython (reference.py), to count what CPython runs and
  the executor refuses;

with the canaries planted (canaries.py). A result containing a secret, a canary touched, or a
verdict the program forged is an **escape**; two pools disagreeing outside the recorded residuals
is **nondeterministic**; a program CPython completes that the executor does not answer the same
is a **refusal**, counted by why (a documented static rule, the builtins layer, a limit, the
sandbox), and those of honest-shaped programs (the honest corpus through forms an honest program
takes) separately: their bar is 0.

Recorded residuals (SECURITY.md, "Determinism"): whether a program near a limit ends by one limit
or another (both outcomes limits: CPU, wall clock, memory, line cap, a C-stack crash); values
derived from addresses where the result records ``address_layout: randomised`` (the container);
and the two CPython builds (host 3.11.7, image 3.11.2) between backends. Each is counted and
listed with examples, never silently dropped.

    python -m tests.adversarial.fuzz --n 100000 --out runs/bench/fuzz-executor.json [--seed 0]
        [--grammar 2000] [--container-share 0.02] [--batch 64]

A progress line goes to stderr at least every 30 s. ``run(...)`` is the same run as a function:
the test suite runs a bounded slice of it (tests/executor/test_executor_adversary.py).
"""

from __future__ import annotations

import argparse
import collections
import datetime as _dt
import json
import os
import random
import re
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from executor.outcomes import Outcome
from executor.result import DETERMINISTIC_FIELDS
from tests.adversarial import generator
from tests.adversarial.canaries import ALL_LAYERS, STATIC_ALONE, Canaries
from tests.adversarial.reference import Reference
from tests.fixtures_executor import TEST_LIMITS, make_executor

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "runs" / "bench" / "fuzz-executor.json"
PROGRESS_SECONDS = 30.0
LIMIT_OUTCOMES = frozenset(
    {
        Outcome.CPU_LIMIT.value,
        Outcome.TIMEOUT_WALL.value,
        Outcome.MEMORY_LIMIT.value,
        Outcome.LINE_CAP.value,
        Outcome.CRASH.value,
    }
)
SANDBOX_OUTCOMES = frozenset(
    {Outcome.SANDBOX_VIOLATION.value, Outcome.INFRA_ERROR.value, Outcome.PERSISTENT_INFRA_ERROR.value}
)
# forms a model's honest program may take (no by-name attribute access, no class, no forbidden
# name, no import of a module outside the allowed ones): an honest program through them must be
# answered as CPython answers it
B_WORKERS = 3  # pool b's size (pool a has one worker)
LAYER_1_ALONE_FAMILIES = frozenset({"hostile", "walk", "memory"})
# a memory-pressure program whose result line was lost (the child died without one, or wrote a
# broken one); a CPU or wall-clock limit met first under load is a recorded residual, not a loss
MEMORY_LOST = frozenset(
    {
        Outcome.CRASH.value,
        Outcome.INFRA_ERROR.value,
        Outcome.SANDBOX_VIOLATION.value,
        getattr(Outcome, "PERSISTENT_INFRA_ERROR", Outcome.INFRA_ERROR).value,
    }
)
HONEST_FORMS = frozenset(
    {
        *generator.EXPRESSION_FORMS,
        *generator.HOISTED_FORMS,
        *generator.NAME_FORMS,
        *generator.CALL_FORMS,
        *generator.STATEMENT_FORMS,
        "format_field_literal",
        "import_alias",
        "import_in_a_function",
        "import_star",
    }
    - {"class_body", "class_scope"}
)
KEEP_EXAMPLES = 5


def honest_shaped(program: generator.Program) -> bool:
    return program.family == "honest" and set(program.forms) <= HONEST_FORMS


def deterministic_key(result) -> dict:
    data = result.to_dict()
    return {k: data[k] for k in DETERMINISTIC_FIELDS}


def differences(a, b) -> list[str]:
    ka, kb = deterministic_key(a), deterministic_key(b)
    return [k for k in DETERMINISTIC_FIELDS if json.dumps(ka[k]) != json.dumps(kb[k])]


def residual(a, b, across_backends: bool) -> str | None:
    """The recorded residual that explains two differing results, or None."""
    if a.outcome in LIMIT_OUTCOMES and b.outcome in LIMIT_OUTCOMES:
        return "near a limit (which limit ends it depends on speed and load)"
    if "randomised" in (a.address_layout, b.address_layout):
        return "address layout randomised (a value derived from an address)"
    if across_backends:
        return "two CPython builds (host venv and image)"
    return None


_QUOTED = re.compile(r"'[^']*'")


def refusal_category(result, verdict: list) -> str | None:
    """Why the executor did not give what plain CPython gives for a program CPython completes
    (``verdict``, reference.py), or None when they agree."""
    ref_outcome, detail = verdict
    if ref_outcome == "LIMIT":
        return None  # CPython did not complete either
    if result.outcome == ref_outcome == Outcome.OK.value and result.answer == detail:
        return None
    if result.outcome == ref_outcome == Outcome.BAD_RETURN_KIND.value:
        return None
    if result.outcome == ref_outcome == Outcome.PROGRAM_ERROR.value and (
        (detail == "no answer" and "did not assign" in (result.error or ""))
        or (result.error or "").startswith(f"{detail}:")
        or result.error == detail
    ):
        return None
    if ref_outcome == Outcome.PROGRAM_ERROR.value and detail != "no answer":
        if result.outcome == Outcome.REJECTED_STATIC.value:
            return "static rule: " + _rule(result.error)
        return None  # CPython failed too; the executor failing otherwise is not a refusal
    # CPython completed (an answer, no answer or a wrong kind)
    if result.outcome == Outcome.REJECTED_STATIC.value:
        return "static rule: " + _rule(result.error)
    if result.outcome in SANDBOX_OUTCOMES or result.outcome == Outcome.CRASH.value:
        return f"sandbox: {result.outcome}"
    if result.outcome in LIMIT_OUTCOMES or result.outcome == Outcome.OUTPUT_LIMIT.value:
        return f"limit: {result.outcome}"
    if result.outcome == Outcome.PROGRAM_ERROR.value:
        return "fails where CPython completes: " + _QUOTED.sub("'...'", (result.error or "").split(" (line")[0])[:120]
    return f"answers otherwise: {result.outcome} vs {ref_outcome}"


def _rule(error: str | None) -> str:
    text = (error or "").removeprefix("rejected by the executor policy: ").split(" (line")[0]
    return _QUOTED.sub("'...'", text)[:100]


@dataclass
class Tally:
    """What a run found: counts, and examples of each kind (every escape and nondeterministic
    program in full, up to ``limit`` of them)."""

    limit: int = 200
    tried: int = 0
    by_family: collections.Counter = field(default_factory=collections.Counter)
    runs: collections.Counter = field(default_factory=collections.Counter)
    outcomes: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    escapes: list = field(default_factory=list)
    escape_count: int = 0
    nondeterministic: list = field(default_factory=list)
    nondeterministic_count: int = 0
    memory_lost: list = field(default_factory=list)
    memory_lost_count: int = 0
    residuals: collections.Counter = field(default_factory=collections.Counter)
    residual_examples: dict = field(default_factory=lambda: collections.defaultdict(list))
    refusals: collections.Counter = field(default_factory=collections.Counter)
    refusal_examples: dict = field(default_factory=lambda: collections.defaultdict(list))
    honest_shaped: int = 0
    honest_shaped_refusals: collections.Counter = field(default_factory=collections.Counter)
    honest_shaped_examples: list = field(default_factory=list)
    cpython_completed: int = 0
    notable: dict = field(default_factory=lambda: collections.defaultdict(list))

    def outcome(self, program, config: str, result) -> None:
        """Count an outcome; keep examples of those a reviewer looks at (a sandbox violation, a
        crash, an infrastructure failure the program caused)."""
        self.outcomes[config][result.outcome] += 1
        if result.outcome in SANDBOX_OUTCOMES or result.outcome == Outcome.CRASH.value:
            key = f"{config}: {result.outcome}"
            if len(self.notable[key]) < KEEP_EXAMPLES * 4:
                self.notable[key].append(
                    {
                        "program": program.label,
                        "error": result.error,
                        "signal": result.signal,
                        "exit_code": result.exit_code,
                        "source": program.source,
                    }
                )

    def escape(self, program, config: str, found: list[str], result) -> None:
        self.escape_count += 1
        if len(self.escapes) < self.limit:
            self.escapes.append(
                {
                    "program": program.label,
                    "configuration": config,
                    "found": found,
                    "outcome": result.outcome if result is not None else None,
                    "source": program.source,
                }
            )

    def nondeterminism(self, program, what: str, fields: list[str], a, b) -> None:
        self.nondeterministic_count += 1
        if len(self.nondeterministic) < self.limit:
            self.nondeterministic.append(
                {
                    "program": program.label,
                    "between": what,
                    "fields": fields,
                    "a": deterministic_key(a),
                    "b": deterministic_key(b),
                    "source": program.source,
                }
            )

    def memory_result(self, program, config: str, result) -> None:
        """A memory-pressure program must end with its result line (MEMORY_LIMIT, OK,
        PROGRAM_ERROR, OUTPUT_LIMIT, or a time limit under load): issue 46, never CRASH."""
        if result.outcome not in MEMORY_LOST:
            return
        self.memory_lost_count += 1
        if len(self.memory_lost) < self.limit:
            self.memory_lost.append(
                {
                    "program": program.label,
                    "configuration": config,
                    "outcome": result.outcome,
                    "exit_code": result.exit_code,
                    "error": result.error,
                    "source": program.source,
                }
            )

    def explained(self, program, name: str, what: str, a, b) -> None:
        self.residuals[name] += 1
        if len(self.residual_examples[name]) < KEEP_EXAMPLES:
            self.residual_examples[name].append(
                {
                    "program": program.label,
                    "between": what,
                    "outcomes": [a.outcome, b.outcome],
                    "source": program.source,
                }
            )

    def refusal(self, program, category: str, result, verdict) -> None:
        self.refusals[category] += 1
        if len(self.refusal_examples[category]) < KEEP_EXAMPLES:
            self.refusal_examples[category].append(
                {
                    "program": program.label,
                    "executor": [result.outcome, result.error],
                    "cpython": verdict,
                    "source": program.source,
                }
            )
        # the honest bar (0): an honest-shaped program that plain CPython answers gets that answer. A rewrite can
        # break an honest program (it unbinds `__name__`, calls what `.format` returned): CPython answers nothing
        # then, and the executor refusing it is counted above with every other refusal, not against the bar
        if honest_shaped(program) and verdict[0] == Outcome.OK.value and not category.startswith("limit:"):
            self.honest_shaped_refusals[category] += 1
            if len(self.honest_shaped_examples) < self.limit:
                self.honest_shaped_examples.append(
                    {
                        "program": program.label,
                        "category": category,
                        "executor": [result.outcome, result.error],
                        "cpython": verdict,
                        "source": program.source,
                    }
                )


class Fuzzer:
    """The pools, the reference and the canaries of one run; ``run(programs)`` fills a Tally."""

    def __init__(self, limits: dict | None = None, container_share: float = 0.0, static_alone: bool = True):
        self.limits = dict(TEST_LIMITS if limits is None else limits)
        self.canaries = Canaries()
        memory = self.canaries.memory
        # the determinism oracle (issue 46): pool a runs each batch in order on one worker, pool b
        # in a shuffled order over B_WORKERS workers, so a result that depends on what ran before
        # it in a pool (or on which worker) differs between them
        self.pools = {
            "all_layers_a": make_executor("process", limits=self.limits, canary=memory),
            "all_layers_b": make_executor("process", limits=self.limits, canary=memory, workers=B_WORKERS),
        }
        if static_alone:
            self.pools["static_alone"] = make_executor(
                "process", disabled_layers=("builtins",), limits=self.limits, canary=memory
            )
        self.container_share = container_share
        if container_share > 0:
            self.pools["container"] = make_executor("container", limits=self.limits, canary=memory)
        self.reference = Reference(
            {"cpu_seconds": self.limits["cpu_seconds"], "wall_seconds": self.limits["wall_seconds"]}
        )
        self._threads = ThreadPoolExecutor(max_workers=len(self.pools) + 1)

    def close(self) -> None:
        self._threads.shutdown()
        for pool in self.pools.values():
            pool.close()
        self.reference.close()
        self.canaries.close()

    def __enter__(self) -> Fuzzer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run_pool(self, name: str, batch: list, shuffle: int | None = None) -> list:
        """Run ``batch`` on a pool: in order, one program after another, or (``shuffle``: the
        seed of a permutation) in a shuffled order through ``run_many`` over all its workers."""
        ex = self.pools[name]
        if shuffle is None:
            return [ex.run(self.canaries.substitute(p.source)) for p in batch]
        order = list(range(len(batch)))
        random.Random(shuffle).shuffle(order)
        results = ex.run_many([self.canaries.substitute(batch[i].source) for i in order])
        out = [None] * len(batch)
        for i, result in zip(order, results):
            out[i] = result
        return out

    def run_batch(self, batch: list, tally: Tally, start_index: int) -> None:
        sample = max(1, round(1 / self.container_share)) if self.container_share > 0 else 0
        # layer 1 alone against the real modules: the hostile rewrites, the walks from an allowed
        # module and the memory-pressure programs (issue 46: only the hostile rewrites before)
        hostile = [p for p in batch if p.family in LAYER_1_ALONE_FAMILIES]
        checked = [p for p in batch if p.family not in ("hostile", "walk")]
        in_container = [p for i, p in enumerate(batch) if sample and (start_index + i) % sample == 0]
        jobs = {
            "all_layers_a": self._threads.submit(self._run_pool, "all_layers_a", batch),
            "all_layers_b": self._threads.submit(self._run_pool, "all_layers_b", batch, start_index + 1),
            "reference": self._threads.submit(
                self.reference.run, [self.canaries.substitute(p.source) for p in checked]
            ),
        }
        if "static_alone" in self.pools and hostile:
            jobs["static_alone"] = self._threads.submit(self._run_pool, "static_alone", hostile)
        if in_container:
            jobs["container"] = self._threads.submit(self._run_pool, "container", in_container)
        done = {k: j.result() for k, j in jobs.items()}
        touched = self._touched()
        a_results, b_results = done["all_layers_a"], done["all_layers_b"]
        static = dict(zip(map(id, hostile), done.get("static_alone", [])))
        container = dict(zip(map(id, in_container), done.get("container", [])))
        verdicts = dict(zip(map(id, checked), done["reference"]))
        for program, a, b in zip(batch, a_results, b_results):
            tally.tried += 1
            tally.by_family[program.family] += 1
            self._observe(program, "all_layers_a", a, ALL_LAYERS, tally)
            self._observe(program, "all_layers_b", b, ALL_LAYERS, tally)
            if program.family == "memory":
                for config, result in (("all_layers_a", a), ("all_layers_b", b)):
                    tally.memory_result(program, config, result)
            self._compare(program, "all_layers_a/all_layers_b", a, b, False, tally)
            if id(program) in static:
                self._observe(program, "static_alone", static[id(program)], STATIC_ALONE, tally)
                if program.family == "memory":
                    tally.memory_result(program, "static_alone", static[id(program)])
            if id(program) in container:
                self._observe(program, "container", container[id(program)], ALL_LAYERS, tally)
                if program.family == "memory":
                    tally.memory_result(program, "container", container[id(program)])
                self._compare(program, "container/all_layers_a", container[id(program)], a, True, tally)
            if id(program) in verdicts:
                verdict = verdicts[id(program)]
                if verdict[0] != "LIMIT" and not (verdict[0] == "PROGRAM_ERROR" and verdict[1] != "no answer"):
                    tally.cpython_completed += 1
                if honest_shaped(program):
                    tally.honest_shaped += 1
                category = refusal_category(a, verdict)
                if category:
                    tally.refusal(program, category, a, verdict)
        for config, found in touched.items():
            for program in self._culprits(batch, config):
                tally.escape(program, config, found, None)
        tally.runs.update({k: len(v) for k, v in done.items()})

    def _observe(self, program, config: str, result, layers, tally: Tally) -> None:
        """Count the outcome and check the canaries that hold with these layers on."""
        tally.outcome(program, config, result)
        found = self.canaries.escapes(result, layers)
        if found:
            tally.escape(program, config, found, result)

    def _touched(self) -> dict[str, list[str]]:
        """File and listener canaries touched by anyone in the batch (they name no result)."""
        found = [f for f in self.canaries.escapes({}, ALL_LAYERS) if f]
        return {"batch": found} if found else {}

    def _culprits(self, batch: list, _config: str) -> list:
        """Rerun a batch that touched a canary one program at a time, to name who did."""
        who = []
        for program in batch:
            for name in [n for n in ("all_layers_a", "static_alone") if n in self.pools]:
                if name == "static_alone" and program.family != "hostile":
                    continue
                self.pools[name].run(self.canaries.substitute(program.source))
                if self.canaries.escapes({}, ALL_LAYERS):
                    who.append(program)
                    break
        return who

    def _compare(self, program, what: str, a, b, across_backends: bool, tally: Tally) -> None:
        fields = differences(a, b)
        if not fields:
            return
        reason = residual(a, b, across_backends)
        if reason:
            tally.explained(program, reason, what, a, b)
        else:
            tally.nondeterminism(program, what, fields, a, b)


def run(
    n: int,
    seed: int = 0,
    grammar: int = 0,
    container_share: float = 0.0,
    batch: int = 64,
    limits: dict | None = None,
    progress=None,
    static_alone: bool = True,
    as_is: bool = True,
    quick: bool = False,
    out: Path | None = None,
) -> dict:
    """Generate ``n`` programs and run them all; the report (``report``'s keys). The next batch
    is generated while the last one runs (the pools' threads wait on their supervisors). With
    ``out``, the report so far is written there after a batch at most every PROGRESS_SECONDS
    (``"complete": false``) and once more at the end, also when the run is interrupted
    (Ctrl-C, SIGTERM): nothing it found is lost."""
    from bench.machine import Machine

    machine = Machine()
    started = time.monotonic()
    tally = Tally()
    lock = threading.Lock()  # the tally between the batch thread and the progress and report writers
    settings = {
        "n": n,
        "seed": seed,
        "grammar": grammar,
        "container_share": container_share,
        "batch": batch,
        "limits": dict(TEST_LIMITS if limits is None else limits),
        "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    written = [started]

    def write(complete: bool) -> dict:
        with lock:
            result = report(tally, machine, time.monotonic() - started, settings)
        result["complete"] = complete
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            partial = out.with_suffix(".tmp")
            partial.write_text(json.dumps(result, indent=2, default=str) + "\n")
            partial.replace(out)
        return result

    def batches():
        pending: list = []
        for program in generator.programs(n, seed=seed, grammar=grammar, as_is=as_is, quick=quick):
            pending.append(program)
            if len(pending) == batch:
                yield pending
                pending = []
        if pending:
            yield pending

    def step(fuzzer, programs, index):
        with lock:
            fuzzer.run_batch(programs, tally, index)
        if out is not None and time.monotonic() - written[0] >= PROGRESS_SECONDS:
            written[0] = time.monotonic()
            write(False)

    stop = threading.Event()

    def report_progress():  # a line every PROGRESS_SECONDS, however long a batch takes
        while not stop.wait(PROGRESS_SECONDS):
            progress(_progress_line(tally, n, time.monotonic() - started))

    if progress:
        threading.Thread(target=report_progress, daemon=True).start()
    driver = ThreadPoolExecutor(max_workers=1)
    complete = False
    try:
        with Fuzzer(limits, container_share, static_alone) as fuzzer:
            running, index = None, 0
            try:
                for programs in batches():
                    if running is not None:
                        running.result()
                    running = driver.submit(step, fuzzer, programs, index)
                    index += len(programs)
                if running is not None:
                    running.result()
                complete = True
            finally:
                if running is not None:
                    running.result()  # the batch under way finishes before the pools close
    except KeyboardInterrupt:
        if progress:
            progress("fuzz-executor: interrupted; the report holds what was run")
    finally:
        driver.shutdown()
        stop.set()
        machine.finish()
        result = write(complete)
        if progress:
            progress(_progress_line(tally, n, result["seconds"]))
    return result


def _progress_line(tally: Tally, n: int, seconds: float) -> str:
    rate = tally.tried / seconds if seconds else 0.0
    return (
        f"fuzz-executor: {tally.tried:,}/{n:,} programs in {seconds:,.0f} s ({rate:.1f}/s), escapes "
        f"{tally.escape_count}, nondeterministic {tally.nondeterministic_count}, honest-shaped refused "
        f"{sum(tally.honest_shaped_refusals.values())}, load {os.getloadavg()[0]:.2f}"
    )


def report(tally: Tally, machine, seconds: float, settings: dict) -> dict:
    return {
        "started_at": settings.get("started_at"),
        "settings": settings,
        "machine": {
            "cores": machine.cores,
            "platform": machine.platform,
            "python": machine.python,
            "loadavg_start": machine.loadavg_start,
            "loadavg_end": machine.loadavg_end,
            "loadavg_now": [round(x, 2) for x in os.getloadavg()],
        },
        "seconds": round(seconds, 1),
        "programs_per_second": round(tally.tried / seconds, 2) if seconds else None,
        "programs": {
            "tried": tally.tried,
            "by_family": dict(tally.by_family),
            "runs": dict(tally.runs),
            "cpython_completed": tally.cpython_completed,
            "honest_shaped": tally.honest_shaped,
        },
        "escapes": {"count": tally.escape_count, "cases": tally.escapes},
        "memory_results_lost": {"count": tally.memory_lost_count, "cases": tally.memory_lost},
        "nondeterministic": {
            "count": tally.nondeterministic_count,
            "cases": tally.nondeterministic,
            "recorded_residuals": dict(tally.residuals),
            "residual_examples": dict(tally.residual_examples),
        },
        "refusals_of_cpython_runnable": {
            "count": sum(tally.refusals.values()),
            "honest_shaped": {
                "count": sum(tally.honest_shaped_refusals.values()),
                "by_category": dict(tally.honest_shaped_refusals),
                "cases": tally.honest_shaped_examples,
            },
            "by_category": dict(tally.refusals.most_common()),
            "examples": dict(tally.refusal_examples),
        },
        "outcomes": {k: dict(v) for k, v in tally.outcomes.items()},
        "notable_outcomes": dict(tally.notable),
    }


def _interrupt(_signum, _frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fuzz-executor", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="programs to generate and run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--grammar",
        type=int,
        default=None,
        help="how many of them come from hypothesmith's grammar (default: 2 %%, at most 2,000)",
    )
    ap.add_argument(
        "--container-share",
        type=float,
        default=None,
        help="share also run on the container backend (default 0.02 where docker and runsc work, else 0)",
    )
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.n < 1 or args.batch < 1:
        ap.error("--n and --batch must be at least 1")
    grammar = min(2000, args.n // 50) if args.grammar is None else args.grammar
    share = args.container_share
    if share is None:
        from tests.fixtures_container import container_backend_problem

        problem = container_backend_problem()
        share = 0.0 if problem else 0.02
        if problem:
            print(f"fuzz-executor: container backend skipped: {problem}", file=sys.stderr)
    print(
        f"fuzz-executor: {args.n:,} programs ({grammar:,} from hypothesmith), seed {args.seed}, container share "
        f"{share}, load {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )
    signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: the report is written, the pools closed
    result = run(
        args.n,
        args.seed,
        grammar,
        share,
        args.batch,
        out=args.out,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    result["command"] = " ".join(["python -m tests.adversarial.fuzz", *(argv if argv is not None else sys.argv[1:])])
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(
        f"fuzz-executor: wrote {args.out}: {result['programs']['tried']:,} programs, {result['escapes']['count']} "
        f"escapes, {result['nondeterministic']['count']} nondeterministic, "
        f"{result['refusals_of_cpython_runnable']['count']} refusals of CPython-runnable programs "
        f"({result['refusals_of_cpython_runnable']['honest_shaped']['count']} honest-shaped)",
        file=sys.stderr,
    )
    return (
        1
        if (
            result["escapes"]["count"]
            or result["nondeterministic"]["count"]
            or result["memory_results_lost"]["count"]
            or not result["complete"]
        )
        else 0
    )


if __name__ == "__main__":
    sys.exit(main())
