"""The paper's values as the kit holds them: `harness/analysis/paper_values.json` (written from the .tex by
scripts/extract_paper_values.py; the kit never reads the .tex at run time).

The file has five parts: `cells` (Table 1 and Table 2, cell by cell), `text_numbers` (the numbers the prose
states, each group with how the kit computes them or None), `claims` (what the paper says about its numbers, as
checks, each anchored to its .tex line), `settings` (the run settings the text states) and `left_out` (the
supplementary tables whose bodies the source lacks). Everything the comparison needs from the paper is read
here: the paper's seeds, its cases per calculator, a number by reference (`number(ref)`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

VALUES_FILE = Path(__file__).resolve().parent.parent / "paper_values.json"


@lru_cache(maxsize=1)
def paper_values() -> dict:
    """The committed values file."""
    return json.loads(VALUES_FILE.read_text(encoding="utf-8"))


def setting(ident: str) -> dict:
    """A stated setting: its values, line and raw text (`setting:<ident>` in the file)."""
    for s in paper_values()["settings"]:
        if s["id"] == f"setting:{ident}":
            return s
    raise KeyError(f"{VALUES_FILE.name} has no setting {ident!r}")


def paper_seeds() -> tuple[int, ...]:
    """The paper's seeds, 42 to 46 as the Method states them."""
    v = setting("seeds")["values"]
    return tuple(range(int(v["first"]), int(v["last"]) + 1))


def cases_per_calculator() -> int:
    """Cases per calculator of the paper's split (the benchmark is balanced: 20)."""
    return int(setting("balance")["values"]["cases_per_calculator"])


def paper_cases() -> int:
    """The paper's number of test cases (1,100)."""
    return int(setting("dataset")["values"]["cases"])


@lru_cache(maxsize=1)
def _numbers() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for c in paper_values()["cells"]:
        out[c["id"]] = {"value": c["value"], "digits": c["digits"], "line": c["line"], "n_cases": c["n_cases"]}
        if "lo" in c:
            out[c["id"] + "#lo"] = {"value": c["lo"], "digits": c["digits"], "line": c["line"]}
            out[c["id"] + "#hi"] = {"value": c["hi"], "digits": c["digits"], "line": c["line"]}
    for t in paper_values()["text_numbers"]:
        for n in t["numbers"]:
            out[f"{t['id']}#{n['name']}"] = {"value": n["value"], "digits": n["digits"], "line": n["line"]}
    return out


def number(ref: str) -> dict:
    """A paper number by reference: a cell id (`#lo`/`#hi` for its interval ends) or `<text id>#<name>`;
    {value, digits, line} (a cell also gives its n_cases)."""
    try:
        return _numbers()[ref]
    except KeyError:
        raise KeyError(f"{VALUES_FILE.name} holds no number {ref!r}") from None


def claims() -> list[dict]:
    return paper_values()["claims"]


def source_line() -> str:
    s = paper_values()["source"]
    return f"{s['file']} (sha256 {s['sha256'][:12]}), values extracted by {s['extractor']}"


@lru_cache(maxsize=1)
def paper_checkpoints() -> tuple[str, ...]:
    """The checkpoints the paper reports (Table 1's columns and its lower block's rows)."""
    return tuple(dict.fromkeys(c["model"] for c in paper_values()["cells"] if c.get("model")))
