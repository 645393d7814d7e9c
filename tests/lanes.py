"""The suite's lanes: which pytest process runs a test, decided by what the test uses, never by its file.

A test is marked with the real component it needs (`docker`, `slurm`, `model`, `vllm`) when it, or any fixture it
depends on, uses one of the RESOURCES fixtures below (tests/conftest.py applies the marks at collection, whatever
the file says); a parametrised fixture or test whose container case asks for a resource at run time carries the
mark on that parameter (`tests.fixtures_executor.BACKENDS`). Its lane is the last of LANES whose marker it carries,
`unit` when none:

    unit    no real component: pytest-xdist, one worker per core (`make test-fast` runs this lane alone)
    docker  dockerd (+ runsc and the executor image)                    serial
    slurm   the one-node SLURM cluster (make slurm)                     serial
    model   the CPU model server (llama.cpp, the tests' 0.5B GGUF)      serial, one server for the lane
    vllm    the real vLLM CPU twin                                      serial, one server for the lane

`pytest --lane NAME` runs one lane (`--lane all`, the default, runs everything in one process, as before);
`make test` runs every lane (scripts/test-lanes.sh) and `python -m tests.lanes report DIR` sums up their JUnit
files: the counts and wall time of every lane, the slowest tests and the per-file totals (DIR/lanes.json, one line
appended to DIR/history.jsonl per run), from which further splits are decided.

A resource fixture calls `claim(request, marker)`: set up in a lane that cannot hold it (a test asked for it at
run time without the mark), the test fails and names the fix, so a heavy server never starts in the xdist lane.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

# In order of precedence: a test carrying several markers runs in the last lane among them (a test that needs the
# model server and docker runs with the model server); a lane holds its own resource and those before it.
LANES = ("unit", "docker", "slurm", "model", "vllm")
RESOURCES = {
    "dockerd": "docker",
    "container_backend": "docker",
    "slurm_cluster": "slurm",
    "model_server": "model",
    "vllm_cpu_server": "vllm",
}


def lane_of(markers) -> str:
    """The lane of a test carrying `markers` (names)."""
    names = set(markers)
    return next((lane for lane in reversed(LANES) if lane in names), "unit")


def markers_from_fixtures(fixturenames) -> set[str]:
    """The markers a test earns by the fixtures it uses (its fixture closure)."""
    return {marker for fixture, marker in RESOURCES.items() if fixture in fixturenames}


def admits(lane: str, marker: str) -> bool:
    """Whether a lane's process may set up the resource of `marker` (its own or one before it)."""
    return lane == "all" or LANES.index(marker) <= LANES.index(lane)


# --- the report of a `make test` run --------------------------------------------------------------------------


def read_junit(path: Path) -> list[dict]:
    """One dict per test case of a JUnit file: id, file, seconds, outcome (passed, failed, error, skipped)."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                break
        classname, name = case.get("classname", ""), case.get("name", "")
        parts = classname.split(".")
        while len(parts) > 1 and parts[-1][:1].isupper():  # a test class: the file is its module's
            parts.pop()
        out.append(
            {
                "id": f"{classname}::{name}",
                "file": "/".join(parts) + ".py",
                "seconds": float(case.get("time") or 0.0),
                "outcome": outcome,
            }
        )
    return out


def summarise(out_dir: Path, top: int = 30) -> dict:
    """The lanes of one run: per lane the counts, its exit status and wall seconds (lane-<name>.json, written by
    scripts/test-lanes.sh, with the share of the machine's CPU time that was busy while it ran), the slowest tests
    and the seconds per file over all lanes."""
    lanes, cases = {}, []
    for lane in LANES:
        junit = out_dir / f"{lane}.xml"
        status_file = out_dir / f"lane-{lane}.json"
        if not junit.exists() and not status_file.exists():
            continue
        status = json.loads(status_file.read_text()) if status_file.exists() else {}
        mine = read_junit(junit) if junit.exists() else []
        counts = defaultdict(int)
        for c in mine:
            counts[c["outcome"]] += 1
            cases.append({**c, "lane": lane})
        lanes[lane] = {
            "tests": len(mine),
            **{k: counts[k] for k in ("passed", "failed", "error", "skipped")},
            "exit_status": status.get("exit_status"),
            "wall_s": status.get("wall_s"),
            "workers": status.get("workers"),
            "machine_busy_pct": status.get("machine_busy_pct"),
            "test_seconds": round(sum(c["seconds"] for c in mine), 1),
        }
    per_file: dict[str, float] = defaultdict(float)
    for c in cases:
        per_file[c["file"]] += c["seconds"]
    slowest = sorted(cases, key=lambda c: -c["seconds"])[:top]
    return {
        "lanes": lanes,
        "slowest": [{"id": c["id"], "lane": c["lane"], "seconds": round(c["seconds"], 2)} for c in slowest],
        "per_file_s": {f: round(s, 1) for f, s in sorted(per_file.items(), key=lambda kv: -kv[1])},
    }


def lane_failed(entry: dict) -> bool:
    """A lane fails on a failed or erroring test or a non-zero exit (5, nothing collected, is an empty lane)."""
    return bool(entry["failed"] or entry["error"]) or entry["exit_status"] not in (0, 5, None)


def format_report(summary: dict, wall_s: float | None = None) -> str:
    rows = [
        "lane     tests  passed  failed  errors  skipped  workers  wall s  test s  CPU busy  status",
        "-------  -----  ------  ------  ------  -------  -------  ------  ------  --------  ------",
    ]
    for lane, e in summary["lanes"].items():
        busy = f"{e['machine_busy_pct']}%" if e.get("machine_busy_pct") is not None else "-"
        rows.append(
            f"{lane:<7}  {e['tests']:>5}  {e['passed']:>6}  {e['failed']:>6}  {e['error']:>6}  "
            f"{e['skipped']:>7}  {e['workers'] or 1:>7}  {e['wall_s'] or 0:>6.0f}  {e['test_seconds']:>6.0f}  "
            f"{busy:>8}  {'FAILED' if lane_failed(e) else 'ok'}"
        )
    total = {k: sum(e[k] for e in summary["lanes"].values()) for k in ("tests", "passed", "failed", "error", "skipped")}
    rows.append(
        f"{'all':<7}  {total['tests']:>5}  {total['passed']:>6}  {total['failed']:>6}  {total['error']:>6}  "
        f"{total['skipped']:>7}" + (f"           {wall_s:>6.0f}" if wall_s is not None else "")
    )
    return "\n".join(rows)


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return None


def report(
    out_dir: Path, wall_s: float | None = None, load_start: str | None = None, lanes: tuple[str, ...] = LANES
) -> int:
    """Print the lanes' table and the summary line CI looks for; write lanes.json and append to history.jsonl.
    Exit status 1 when any lane failed or one of `lanes` did not run."""
    summary = summarise(out_dir)
    summary.update(
        date=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        commit=_git_commit(),
        wall_s=wall_s,
        cpus=os.cpu_count(),
        loadavg_start=load_start,
        loadavg_end=" ".join(Path("/proc/loadavg").read_text().split()[:3]),
    )
    (out_dir / "lanes.json").write_text(json.dumps(summary, indent=1) + "\n")
    with open(out_dir / "history.jsonl", "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {k: summary[k] for k in ("date", "commit", "wall_s", "cpus", "loadavg_start", "loadavg_end", "lanes")}
            )
            + "\n"
        )
    print(format_report(summary, wall_s))
    failed = [lane for lane, e in summary["lanes"].items() if lane_failed(e)]
    total = {k: sum(e[k] for e in summary["lanes"].values()) for k in ("passed", "failed", "error", "skipped")}
    print(
        f"{total['passed']} passed, {total['failed']} failed, {total['error']} errors, {total['skipped']} skipped "
        f"in {len(summary['lanes'])} lanes"
        + (f", {wall_s:.0f} s" if wall_s is not None else "")
        + f" (load {summary['loadavg_start']} -> {summary['loadavg_end']}); durations: {out_dir / 'lanes.json'}"
    )
    if failed:
        print(f"lanes FAILED: {', '.join(failed)}", file=sys.stderr)
    missing = [lane for lane in lanes if lane not in summary["lanes"]]
    if missing:
        print(f"lanes that did not run: {', '.join(missing)}", file=sys.stderr)
    return 1 if failed or missing else 0


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.lanes")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("names", help="the lanes, in order")
    rep = sub.add_parser("report", help="sum up a run's lanes from their JUnit files in DIR")
    rep.add_argument("dir", type=Path)
    rep.add_argument("--wall", type=float, default=None, help="the run's wall seconds")
    rep.add_argument("--load", default=None, help="the load average when it started")
    rep.add_argument("--lanes", default=" ".join(LANES), help="the lanes that were to run")
    args = parser.parse_args(argv)
    if args.command == "names":
        print(" ".join(LANES))
        return 0
    unknown = [lane for lane in args.lanes.split() if lane not in LANES]
    if unknown:
        parser.error(f"unknown lane(s) {', '.join(unknown)}; the lanes: {', '.join(LANES)}")
    return report(args.dir, args.wall, args.load, tuple(args.lanes.split()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
