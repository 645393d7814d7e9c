"""Time the post-run stages at a larger record count than was run: copy a rehearsal result set's seeds
onto new seed numbers (seed and key rewritten, everything else unchanged), then run stats, tables, figures,
report, checksums and verify on the copy. For stage timing only: the copy says so in `scaled_copy.json`,
and its records stay synthetic (rehearsal models), so it can never pass for a result.

    python -m harness.reproduce.rehearsal.scale RESULTS OUT --seeds 42-46 [--bench scaled.json]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

from harness.core.canonical_json import json_file_text, record_line
from harness.core.seeds import parse_seeds
from harness.reproduce.rehearsal.pipeline import loadavg, post_run_stages


def scaled_copy(src: Path, dst: Path, seeds: list[int]) -> dict:
    if dst.exists():
        shutil.rmtree(dst)
    have = sorted({int(p.stem[4:]) for p in src.glob("*/*/seed*.jsonl")})
    if not have:
        raise SystemExit(f"scale: no results under {src}")
    records = 0
    for path in sorted(src.glob("*/*/seed*.jsonl")):
        old_seed = int(path.stem[4:])
        for i, new_seed in enumerate(seeds):
            if have[i % len(have)] != old_seed:
                continue
            out = dst / path.parent.relative_to(src) / f"seed{new_seed}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(path, encoding="utf-8") as fin, open(out, "w", encoding="utf-8") as fout:
                for line in fin:
                    rec = json.loads(line)
                    if new_seed != old_seed:
                        rec["key"] = hashlib.sha256(f"{rec['key']}:{new_seed}".encode()).hexdigest()
                        rec["seed"] = new_seed
                    fout.write(record_line(rec))
                    records += 1
    for m in src.glob("manifest-*.json"):
        shutil.copy(m, dst / m.name)
    info = {"synthetic": True, "scaled_copy_of": str(src), "source_seeds": have, "seeds": seeds, "records": records,
            "note": "seeds beyond the source's are copies of its seeds with seed and key rewritten: for timing the "
                    "post-run stages at this record count only"}
    (dst.parent / "scaled_copy.json").write_text(json.dumps(info, indent=1) + "\n")
    return info


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="rehearse-scale", description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--seeds", default="42-46")
    p.add_argument("--bench", type=Path, default=None)
    a = p.parse_args(argv)
    info = scaled_copy(a.results, a.out / "results", parse_seeds(a.seeds))
    load0 = loadavg()
    stages = post_run_stages(a.out / "results", a.out, a.out / "stages.log")
    post = ("stats", "tables", "figures", "report", "verify")
    report = {**info, "stages": stages, "post_run_wall_s": round(sum(stages[s]["wall_s"] for s in post), 2),
              "result_bytes": sum(p.stat().st_size for p in (a.out / "results").glob("*/*/seed*.jsonl")),
              "loadavg_start": load0, "loadavg_end": loadavg()}
    text = json_file_text(report, indent=1)
    (a.bench or a.out / "scaled-stages.json").write_text(text)
    print(text)
    return 0 if all(v.get("returncode", 0) == 0 for v in stages.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
