"""Did it reproduce? Each of the paper's numbers beside ours, with a verdict.

The paper's values come from `paper_values.json` (extracted from the .tex by scripts/extract_paper_values.py,
with table, row, column and line). For one analysis (harness.analysis.results_analysis) every value that maps
onto something the kit computes gets: paper value, ours, difference, the tolerance used and a verdict:

* **inside** / **outside**: ours lies in / out of the tolerance band. The band is the paper's own
  uncertainty where it prints one (Table 2's and the text's 95% calculator-cluster intervals); for an
  accuracy the .tex gives none (its seed SDs are in s1, whose body is not in the available source), so the
  band is the binomial 95% half-width at the paper's n; for a value that holds by construction (the
  Gold-Solve library) it is half a unit of the last printed digit; for a count it is exact.
* **not comparable: <reasons>**: the setting differs from the paper's, so the arithmetic is shown but no
  verdict is drawn: synthetic (rehearsal) records, a different model or checkpoint, a different dataset
  (the v1.0 dev rows under their unit convention, the one-shot split, an unknown file), fewer cases or
  fewer seeds than the paper's five. The model-free Gold-Solve library is compared wherever the paper's
  value holds by construction: every case of a balanced split of the Verified benchmark (test or one-shot).
* **no result**: the results root has nothing to compare with.

`ledger_rows` sets table s14's settings (the run manifests) beside the settings the paper states.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.arrays import OUTCOME_CODE
from harness.analysis.stats.paired import accuracy
from harness.arms.registry import model_free_arms
from harness.data.conventions import KNOWN_DATASETS
from harness.data.pins import pinned_sha256
from harness.model.rehearsal.labels import MODEL_FREE, is_synthetic_model

VALUES_FILE = Path(__file__).with_name("paper_values.json")
PAPER_SEEDS = (42, 43, 44, 45, 46)
ONE_SHOT_SHA = next(k.sha256 for k in KNOWN_DATASETS if "one-shot" in k.label)
MODEL_FREE_ARMS = model_free_arms()   # from the arm registry: the arms that call no model (Gold-Solve)
INSIDE, OUTSIDE, NOT_COMPARABLE, NO_RESULT = "inside", "outside", "not comparable", "no result"
SYNTHETIC = "synthetic (rehearsal records, never a model)"
NOTHING_RAN = "none"
GAP_DEFAULT_PP = 2.0  # a paired gap the paper prints without an interval

TOLERANCES = ("Tolerances: the paper's 95% calculator-cluster interval where it prints one (Table 2, the text); for an "
              "accuracy, the binomial 95% half-width at the paper's n plus half a unit of the printed digit (the .tex "
              "prints no seed SD: s1's body is not in it); for the Gold-Solve library's values, which hold by "
              "construction, half a unit of the printed digit; for a gap printed without an interval, "
              f"\u00b1{GAP_DEFAULT_PP:g} pp (the kit's default); for a count, exact.")

# Table 1 and 2 rows (paper wording) -> the kit's arms.
ROW_ARMS = {
    "Note only": "note-only", "Page without formula": "page-no-formula", "Open-book arithmetic": "open-book",
    "Extract-Solve library": "extract-lib", "Gold-Solve library": "gold-lib", "Program-Solve": "program-solve",
    "+ syntax (exploratory)": "program-solve-syntax", "Blind Program-Solve": "blind",
}
GAP_ROWS = {
    "Program-Solve \u2212 Open-book arithmetic": ("program-solve", "open-book"),
    "Program-Solve \u2212 Gold-Solve library": ("program-solve", "gold-lib"),
    "Blind Program-Solve \u2212 Extract-Solve library": ("blind", "extract-lib"),
    "Program-Solve + syntax \u2212 Open-book arithmetic": ("program-solve-syntax", "open-book"),
    "Program-Solve + syntax \u2212 Gold-Solve library": ("program-solve-syntax", "gold-lib"),
}


@lru_cache(maxsize=1)
def paper_values() -> dict:
    """The committed values file (the kit never reads the .tex at run time)."""
    return json.loads(VALUES_FILE.read_text(encoding="utf-8"))


# ---- what the results are ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetKind:
    kind: str  # "verified" | "one-shot" | "v1.0" | "unknown"
    label: str
    balanced: bool

    def reason(self, n_cases: int, model_free: bool) -> str | None:
        """Why this dataset keeps a value from being compared, or None."""
        if self.kind == "verified":
            return None if n_cases == 1100 or (model_free and self.balanced) else \
                f"fewer cases ({n_cases} of the paper's 1,100)"
        if self.kind == "one-shot" and model_free and self.balanced:
            return None
        if self.kind == "v1.0":
            return f"dev rows ({self.label}; v1.0 unit convention, a documented deviation)"
        return f"different dataset ({self.label})"


def dataset_kind(an: Analysis) -> DatasetKind:
    d = an.data
    name, _, sha12 = (d.dataset or "unnamed").partition("@")
    sizes = d.cluster_sizes
    balanced = len(d.calculators) == 55 and bool(sizes.size) and int(sizes.min()) == int(sizes.max())
    verified = pinned_sha256("verified")
    if sha12 and verified and verified.startswith(sha12):
        return DatasetKind("verified", f"MedCalc-Bench Verified test split, {d.n_cases} cases", balanced)
    if sha12 and ONE_SHOT_SHA.startswith(sha12):
        return DatasetKind("one-shot", f"Verified one-shot split, {d.n_cases} cases", balanced)
    for k in KNOWN_DATASETS:
        if sha12 and k.sha256.startswith(sha12):
            return DatasetKind("v1.0", k.label, balanced)
    return DatasetKind("unknown", f"{name}, {d.n_cases} cases, not a file the kit knows", balanced)


def _same_model(ours: str, paper: str) -> bool:
    return ours.rsplit("/", 1)[-1].lower() == paper.lower()


def candidate_models(an: Analysis, paper_model: str | None, arms: tuple[str, ...]) -> list[str]:
    """Our models to set beside a paper column: the library for a model-free arm; the paper's checkpoint when
    present; else every model that ran the arms (each then 'not comparable', with its arithmetic shown)."""
    d = an.data
    if all(a in MODEL_FREE_ARMS for a in arms):
        libs = [m for m in d.models if m == MODEL_FREE and all(d.has(m, a) for a in arms)]
        return libs or [m for m in d.models if all(d.has(m, a) for a in arms)][:1]
    ran = [m for m in d.models if m != MODEL_FREE]
    if paper_model:
        same = [m for m in ran if _same_model(m, paper_model)]
        if same:
            return same
    return ran


def comparability(an: Analysis, model: str, paper_model: str | None, arms: tuple[str, ...], n_cases: int,
                  kind: DatasetKind) -> list[str]:
    """Every reason this (model, arms) result is not the paper's setting; [] when it is."""
    model_free = all(a in MODEL_FREE_ARMS for a in arms)
    reasons = []
    if is_synthetic_model(model) and not model_free:  # model-free records are neither real nor synthetic
        reasons.append(SYNTHETIC)
    if not model_free and paper_model and not _same_model(model, paper_model):
        reasons.append(f"different model ({model}, not {paper_model})")
    ds = kind.reason(n_cases, model_free)
    if ds:
        reasons.append(ds)
    if not model_free:
        seeds = sorted({s for a in arms if an.data.has(model, a)
                        for s, ok in zip(an.data.seeds, an.data.seed_mask(model, a)) if ok})
        if len(seeds) < len(PAPER_SEEDS):
            reasons.append(f"fewer seeds ({len(seeds)} of 5)")
    return reasons


# ---- our numbers ---------------------------------------------------------------------------------------
def _cases(an: Analysis, subset: str) -> np.ndarray | None:
    if subset == "full":
        return None
    if subset == "impl":
        return an.impl_mask()
    return an.data.case_mask({c for c, g in an.audit.items() if g == subset})


def our_accuracy(an: Analysis, model: str, arm: str, subset: str) -> tuple[float, int] | None:
    acc = accuracy(an.data, model, arm, _cases(an, subset))
    return None if acc is None else (acc["mean"], acc["cases"])


def our_outcome_share(an: Analysis, model: str, arm: str, share: str) -> tuple[float, int] | None:
    d = an.data
    if not d.has(model, arm):
        return None
    out = d.outcome[d.m(model), d.a(arm)]
    cor = d.correct[d.m(model), d.a(arm)]
    have = out >= 0
    if share == "none":
        hit = have & (out != OUTCOME_CODE["answered"])
    else:
        hit = have & (out == OUTCOME_CODE["answered"]) & (cor == 0)
    return 100.0 * hit.sum() / max(int(have.sum()), 1), int(have.any(axis=0).sum())


# ---- one row per compared number -----------------------------------------------------------------------
def _band(paper: float, how: str, n: int, digits: int, lo=None, hi=None) -> tuple[float, float, str]:
    if lo is not None:
        return lo, hi, f"paper's 95% cluster CI [{lo:.2f}, {hi:.2f}]"
    if how == "construction":
        h = 0.5 * 10 ** -digits
        return paper - h, paper + h, f"\u00b1{h:g} rounding (holds by construction)"
    if how == "count":
        return paper, paper, "exact (a count)"
    if how == "gap":
        return paper - GAP_DEFAULT_PP, paper + GAP_DEFAULT_PP, \
            f"\u00b1{GAP_DEFAULT_PP:g} pp kit default (no interval printed)"
    p = min(max(paper / 100.0, 0.0), 1.0)
    h = 100 * 1.96 * math.sqrt(p * (1 - p) / n) + 0.5 * 10 ** -digits
    return paper - h, paper + h, f"\u00b1{h:.2f} binomial 95% at n={n:,}"


def _row(source, where, line, what, paper, digits, ours, n_ours, band, reasons, model, unit) -> dict:
    lo, hi, tol = band
    if ours is None:
        verdict = NO_RESULT
    elif reasons:
        verdict = f"{NOT_COMPARABLE}: " + "; ".join(reasons)
    else:
        verdict = INSIDE if lo - 1e-9 <= round(ours, digits) <= hi + 1e-9 else OUTSIDE
    return {"source": source, "where": where, "line": line, "what": what, "model": model or "", "unit": unit,
            "paper": paper, "digits": digits, "ours": ours, "n_ours": n_ours,
            "difference": None if ours is None else ours - paper, "band_lo": lo, "band_hi": hi,
            "tolerance": tol, "verdict": verdict}


def _accuracy_rows(an, kind, source, where, line, what, arm, paper_model, subset, paper, digits, n_paper,
                   construction=False):
    rows = []
    for m in candidate_models(an, paper_model, (arm,)) or [None]:
        got = our_accuracy(an, m, arm, subset) if m else None
        ours, n = got if got else (None, 0)
        reasons = comparability(an, m, paper_model, (arm,), an.data.n_cases, kind) if m else []
        how = "construction" if construction else "accuracy"
        shown = f"{MODEL_FREE} (no model; records filed under {m})" if arm in MODEL_FREE_ARMS and m and m != MODEL_FREE \
            else m
        rows.append(_row(source, where, line, what, paper, digits, ours, n,
                         _band(paper, how, n_paper, digits), reasons, shown, "%"))
    return rows


def _gap_rows(an, kind, source, where, line, what, solver, reference, paper_model, subset, paper, digits,
              lo=None, hi=None):
    rows = []
    for m in candidate_models(an, paper_model, (solver, reference)) or [None]:
        g = an.gap(m, solver, reference, subset) if m else None
        ours = None if g is None else float(g["gap"])
        n = 0 if g is None else int(g["n_cases"])
        reasons = comparability(an, m, paper_model, (solver, reference), an.data.n_cases, kind) if m else []
        rows.append(_row(source, where, line, what, paper, digits, ours, n,
                         _band(paper, "gap", 1100, digits, lo, hi), reasons, m, "pp"))
    return rows


def _construction(arm: str, subset: str, value: float) -> bool:
    """The Gold-Solve library's values hold by construction: 100 on its cases, 40 on a balanced full set."""
    return arm in MODEL_FREE_ARMS and ((subset == "impl" and value == 100.0) or (subset == "full" and value == 40.0))


def compare_cells(an: Analysis, kind: DatasetKind) -> list[dict]:
    rows = []
    for c in paper_values()["cells"]:
        source = "Table 1" if c["table"] == "tab:ladder" else "Table 2"
        where = f"{c['row']} | {c['column']}"
        if c["kind"] == "accuracy":
            arm = ROW_ARMS.get(c["row"]) or c.get("arm")
            rows += _accuracy_rows(an, kind, source, where, c["line"], c["row"] if c["block"] == "upper" else
                                   f"{c['row']} {c['column']}", arm, c["model"], c["subset"], c["value"], c["digits"],
                                   c["n_cases"], _construction(arm, c["subset"], c["value"]))
        else:
            solver, reference = GAP_ROWS.get(c["row"], ("program-solve", "open-book"))
            rows += _gap_rows(an, kind, source, where, c["line"], c["row"], solver, reference, c["model"], "all",
                              c["value"], c["digits"], c.get("lo"), c.get("hi"))
    return rows


def compare_claims(an: Analysis, kind: DatasetKind) -> list[dict]:
    rows = []
    for cl in paper_values()["claims"]:
        specs = cl["compare"] or []
        nums = {n["name"]: n for n in cl["numbers"]}
        source = f"text ({cl['id'].removeprefix('text:')})"
        order = list(nums)
        i = 0
        for spec in specs:
            k = spec["kind"]
            if k == "gap":
                gap, lo, hi = (nums[order[i]], None, None)
                has_ci = i + 2 < len(order) and order[i + 1].startswith("lo") and order[i + 2].startswith("hi")
                if has_ci:
                    lo, hi = nums[order[i + 1]]["value"], nums[order[i + 2]]["value"]
                rows += _gap_rows(an, kind, source, f"{cl['what']} [{gap['name']}]", gap["line"],
                                  f"{spec['solver']} \u2212 {spec['reference']}" + (
                                      "" if spec["subset"] == "all" else f" ({spec['subset']})"),
                                  spec["solver"], spec["reference"], spec["model"], spec["subset"], gap["value"],
                                  gap["digits"], lo, hi)
                i += 3 if has_ci else 1
            elif k == "accuracy":
                n = nums[order[i]]
                subset = spec["subset"]
                n_paper = {"full": 1100, "impl": 440}.get(subset, 80)
                rows += _accuracy_rows(an, kind, source, f"{cl['what']} [{n['name']}]", n["line"],
                                       f"{spec['arm']} ({subset})", spec["arm"], spec["model"], subset, n["value"],
                                       n["digits"], n_paper, _construction(spec["arm"], subset, n["value"]))
                i += 1
            elif k == "outcome_share":
                n = nums[order[i]]
                for m in candidate_models(an, spec["model"], (spec["arm"],)) or [None]:
                    got = our_outcome_share(an, m, spec["arm"], spec["share"]) if m else None
                    ours, nc = got if got else (None, 0)
                    reasons = comparability(an, m, spec["model"], (spec["arm"],), an.data.n_cases, kind) if m else []
                    rows.append(_row(source, f"{cl['what']} [{n['name']}]", n["line"],
                                     f"{spec['arm']} {spec['share']} share of case-seed rows", n["value"], n["digits"],
                                     ours, nc, _band(n["value"], "accuracy", 5500, n["digits"]), reasons, m, "%"))
                i += 1
            elif k == "covered_cases":
                n = nums[order[i]]
                lib = candidate_models(an, None, ("gold-lib",))
                m = lib[0] if lib else None
                ours = float(an.impl_mask().sum()) if m else None
                reasons = [] if an.data.n_cases == 1100 and kind.kind == "verified" else \
                    [f"the paper's count is of 1,100 cases, these results have {an.data.n_cases} "
                     "(the share is compared in the Gold-Solve accuracy rows)"]
                shown = m if m in (None, MODEL_FREE) else f"{MODEL_FREE} (no model; records filed under {m})"
                rows.append(_row(source, f"{cl['what']} [{n['name']}]", n["line"], "cases the library covers",
                                 n["value"], 0, ours, an.data.n_cases if m else 0,
                                 _band(n["value"], "count", 0, 0), reasons, shown, "cases"))
                i += 1
    return rows


def comparison_rows(an: Analysis) -> list[dict]:
    kind = dataset_kind(an)
    return compare_cells(an, kind) + compare_claims(an, kind)


def not_mapped() -> list[dict]:
    """The text's claims the kit has no computation for, with what they are."""
    return [{"id": c["id"], "line": c["line"], "what": c["what"],
             "values": ", ".join(n["raw"] for n in c["numbers"])}
            for c in paper_values()["claims"] if not c["compare"]]


# ---- the ledger: s14's settings against the paper's ------------------------------------------------------
def _setting(ident: str) -> dict:
    return next(s for s in paper_values()["settings"] if s["id"] == f"setting:{ident}")["values"]


def ledger_rows(manifests: list[dict], draws: int) -> list[dict]:
    """One row per setting the paper states: paper, ours (from the run manifests), and the mismatch named."""
    rows = []

    def add(setting, paper, ours, mismatch):
        idle = not ours or ours.startswith(NOTHING_RAN)
        rows.append({"setting": setting, "paper": paper, "ours": ours or f"{NOTHING_RAN} (no model arm ran)",
                     "status": f"MISMATCH: {mismatch}" if mismatch else
                     "not applicable: nothing in these results uses it" if idle else "matches"})

    ds = {(m.get("dataset") or {}).get("name"): m.get("dataset") or {} for m in manifests}
    rev = _setting("dataset-revision")["revision"]
    ours = "; ".join(f"{n} ({d.get('n_cases')} cases, revision {d.get('revision') or 'none'})" for n, d in ds.items())
    bad = [n for n, d in ds.items() if n != "verified" or d.get("n_cases") != 1100
           or not str(d.get("revision") or "").startswith(rev)]
    add("Dataset", f"MedCalc-Bench Verified test split, 1,100 cases, {_setting('dataset')['calculators']:.0f} "
        f"calculators, revision {rev}", ours, bad and f"{', '.join(map(str, bad))} is not the paper's split/revision")
    paper_models = ("Qwen2.5-7B-Instruct", _setting("models")["model_32b"], "Mistral-7B-Instruct-v0.3",
                    "Phi-3.5-mini-instruct")
    used = sorted({(m.get("model") or {}).get("id") for m in manifests if (m.get("model") or {}).get("id") != MODEL_FREE
                   and (m.get("model") or {}).get("id")})
    other = [u for u in used if not any(_same_model(u, p) for p in paper_models)]
    add("Models", ", ".join(paper_models) + " (revisions not stated)", ", ".join(used) or NOTHING_RAN + " (library only)",
        other and f"{', '.join(other)} is not a checkpoint of the paper")
    revs = sorted({f"{(m.get('model') or {}).get('id')} @ {(m.get('model') or {}).get('revision')}" for m in manifests
                   if (m.get("model") or {}).get("id") not in (None, MODEL_FREE)})
    add("Model revisions", "not stated by the paper", ", ".join(revs) or NOTHING_RAN + " (library only)", None)
    rows[-1]["status"] = "not checked: the paper states no revision" if revs else rows[-1]["status"]
    tps = sorted({_flag((m.get("server") or {}).get("command") or [], "--tensor-parallel-size") for m in manifests
                  if (m.get("model") or {}).get("id") not in (None, MODEL_FREE)} - {None})
    add("Tensor parallelism", f"{_setting('tensor-parallel')['tp']:.0f} per Qwen model (Mistral: 2)",
        ", ".join(tps) or NOTHING_RAN + " (no vLLM server)",
        tps and any(t not in ("1", "2") for t in tps) and f"tensor parallel {', '.join(tps)}")
    seeds = sorted({int(s) for m in manifests for s in m.get("seeds") or []})
    s = _setting("seeds")
    want = list(range(int(s["first"]), int(s["last"]) + 1))
    add("Seeds", f"{want[0]} to {want[-1]}", ", ".join(map(str, seeds)), seeds != want and
        f"seeds {', '.join(map(str, sorted(set(want) - set(seeds)))) or 'none'} missing"
        + (f", extra {', '.join(map(str, sorted(set(seeds) - set(want))))}" if set(seeds) - set(want) else ""))
    t = _setting("temperatures")
    caps = _setting("token-caps")
    budgets = _setting("note-budgets")
    arms = {}
    for m in manifests:
        for name, a in (m.get("arms") or {}).items():
            if a.get("needs_model"):
                arms.setdefault(name, set()).add((a.get("temperature"), a.get("samples", 1), a.get("max_tokens"),
                                                  a.get("note_words")))
    bad_t = sorted(n for n, vs in arms.items() for (temp, samples, _, _) in vs
                   if float(temp or 0) != (t["sampled"] if (samples or 1) > 1 else t["greedy"]))
    add("Temperatures", f"{t['greedy']:g} for single calls (greedy), {t['sampled']:g} for sampled candidates",
        "; ".join(f"{n}: {', '.join(str(v[0]) for v in sorted(vs, key=str))}" for n, vs in sorted(arms.items())),
        bad_t and f"arms {', '.join(bad_t)} differ")
    cap_of = {"program-solve": caps["program-solve"], "program-solve-syntax": caps["program-solve"],
              "blind": caps["blind"], "blind-vote": caps["blind"], "blind-repair": caps["blind"],
              "blind-repair-vote": caps["blind"]}
    bad_c = sorted(n for n, vs in arms.items() if n in cap_of for v in vs if v[2] != cap_of[n])
    add("Output-token caps", f"Program-Solve and + syntax {caps['program-solve']}, Blind Program-Solve and its "
        f"variants {caps['blind']}", "; ".join(f"{n}: {', '.join(str(v[2]) for v in vs)}" for n, vs in
                                               sorted(arms.items()) if n in cap_of) or NOTHING_RAN + " (no program arm ran)",
        bad_c and f"arms {', '.join(bad_c)} differ")
    bud_of = {"note-only": budgets["note_only"], "page-no-formula": budgets["page_no_formula"]}
    bad_b = sorted(n for n, vs in arms.items() if n in bud_of for v in vs if v[3] != bud_of[n])
    add("Note budgets (words)", f"Note only {budgets['note_only']:g}, Page without formula "
        f"{budgets['page_no_formula']:g}", "; ".join(f"{n}: {', '.join(str(v[3]) for v in vs)}" for n, vs in
                                                    sorted(arms.items()) if n in bud_of) or NOTHING_RAN + " (neither arm ran)",
        bad_b and f"arms {', '.join(bad_b)} differ")
    ex = _setting("executor-memory")
    lims = [(m.get("executor") or {}).get("limits") or {} for m in manifests if m.get("executor")]
    mem = sorted({str(int(x["address_space_bytes"]) // 2**20) for x in lims if "address_space_bytes" in x})
    wall = sorted({f"{float(x['wall_seconds']):g}" for x in lims if "wall_seconds" in x})
    add("Executor memory (MB)", f"{ex['memory_mb']:g}", ", ".join(mem) or NOTHING_RAN + " (no executor run)",
        mem and mem != [f"{ex['memory_mb']:g}"] and f"{', '.join(mem)} MB")
    add("Executor wall clock (s)", f"{ex['wall_s']:g}", ", ".join(wall) or NOTHING_RAN + " (no executor run)",
        wall and wall != [f"{ex['wall_s']:g}"] and f"{', '.join(wall)} s")
    want_d = _setting("bootstrap-draws")["draws"]
    add("Bootstrap draws", f"{want_d:,}", f"{draws:,}", draws != want_d and f"{draws:,} draws")
    return rows


def _flag(cmd: list, name: str) -> str | None:
    args = [str(a) for a in cmd]
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


# ---- output ---------------------------------------------------------------------------------------------
CSV_FIELDS = ("source", "where", "line", "what", "model", "unit", "paper", "ours", "difference", "band_lo",
              "band_hi", "tolerance", "verdict", "n_ours")


def _num(v, digits=2) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def rows_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in rows:
        w.writerow([_num(r[f], r["digits"]) if f in ("paper", "ours", "band_lo", "band_hi") else
                    _num(r[f], r["digits"]) if f == "difference" and r[f] is not None else
                    ("" if r[f] is None else r[f]) for f in CSV_FIELDS])
    return buf.getvalue()


def verdict_counts(rows: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r["verdict"].split(":")[0]] = out.get(r["verdict"].split(":")[0], 0) + 1
    return out


def _md_cell(s) -> str:
    return str(s).replace("|", "\\|")


def rows_markdown(rows: list[dict], ledger: list[dict], kind: DatasetKind) -> str:
    shown = [r for r in rows if r["verdict"] != NO_RESULT]
    counts = verdict_counts(rows)
    pv = paper_values()
    lines = ["# Did it reproduce? The paper's numbers beside these results", "",
             f"Paper: {pv['source']['file']} (sha256 {pv['source']['sha256'][:12]}), values extracted by "
             f"{pv['source']['extractor']}. Results: {kind.label}.", "",
             "Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ".", "",
             "How to read: **inside**/**outside** compare ours with the paper's value within the stated tolerance "
             "(the paper's own 95% calculator-cluster interval where it prints one). **not comparable** names why "
             "the setting differs (synthetic records, another model, another dataset, fewer cases or seeds); the "
             "arithmetic is shown, no verdict is drawn. **no result**: nothing in these results to compare "
             "(listed in the CSV only).", "", TOLERANCES, "",
             "| Source | Line | Row, column | Model | Paper | Ours | Ours \u2212 paper | Tolerance | Verdict |",
             "| :--- | ---: | :--- | :--- | ---: | ---: | ---: | :--- | :--- |"]
    for r in shown:
        d = r["digits"]
        lines.append(f"| {r['source']} | {r['line']} | {_md_cell(r['where'])} | {_md_cell(r['model'])} | "
                     f"{_num(r['paper'], d)} | {_num(r['ours'], d)} | {r['difference']:+.{d}f} | "
                     f"{_md_cell(r['tolerance'])} | {_md_cell(r['verdict'])} |")
    if not shown:
        lines.append("| \u2013 | | nothing in these results maps onto a paper value | | | | | | |")
    lines += ["", f"{len(rows) - len(shown)} paper values have no result here (see the CSV).", "",
              "## Run settings against the paper's (table s14 and the text)", "",
              "| Setting | Paper | Ours | Status |", "| :--- | :--- | :--- | :--- |"]
    lines += [f"| {r['setting']} | {_md_cell(r['paper'])} | {_md_cell(r['ours'])} | {_md_cell(r['status'])} |"
              for r in ledger]
    left = pv["left_out"]
    lines += ["", "## Not compared", "",
              f"- {len(left)} supplementary tables ({', '.join(x['table'].removeprefix('tab:') for x in left)}): "
              "their bodies are not in the available .tex, so no cell could be extracted.",
              *[f"- text line {c['line']} ({c['id'].removeprefix('text:')}): {c['what']} ({c['values']}); the kit "
                "computes no matching number." for c in not_mapped()], ""]
    return "\n".join(lines)


@dataclass
class ComparisonFiles:
    rows: list[dict]
    ledger: list[dict]
    kind: DatasetKind
    markdown: Path
    csv: Path
    ledger_csv: Path
    figure: Path | None


def write_comparison(an: Analysis, out_dir, manifests: list[dict]) -> ComparisonFiles:
    """comparison.md, comparison.csv, comparison-ledger.csv and comparison.png under `out_dir`."""
    from harness.analysis.compare_figure import comparison_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kind = dataset_kind(an)
    rows = comparison_rows(an)
    ledger = ledger_rows(manifests, an.resampler.describe()["draws"])
    md, cs, lc = out / "comparison.md", out / "comparison.csv", out / "comparison-ledger.csv"
    md.write_text(rows_markdown(rows, ledger, kind), encoding="utf-8")
    cs.write_text(rows_csv(rows), encoding="utf-8")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("setting", "paper", "ours", "status"))
    w.writerows((r["setting"], r["paper"], r["ours"], r["status"]) for r in ledger)
    lc.write_text(buf.getvalue(), encoding="utf-8")
    fig = comparison_figure(rows, out / "comparison.png")
    return ComparisonFiles(rows, ledger, kind, md, cs, lc, fig)


def comparison_html(files: ComparisonFiles) -> list[str]:
    """The report's section: verdict counts, how to read them, the figure, the compared rows and the ledger."""
    import base64
    import html

    e = html.escape
    counts = verdict_counts(files.rows)
    shown = [r for r in files.rows if r["verdict"] != NO_RESULT]
    parts = ["<h2>Did it reproduce? The paper's numbers beside these</h2>",
             f'<p class="meta">Results: {e(files.kind.label)}. Verdicts: '
             + e(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
             + f". Files: {e(files.markdown.name)}, {e(files.csv.name)}, {e(files.ledger_csv.name)} in "
             f"{e(str(files.markdown.parent))}.</p>",
             "<p>Inside / outside: ours within / beyond the stated tolerance around the paper's value (its own 95% "
             "calculator-cluster interval where it prints one). Not comparable: the setting differs and the reason "
             "is named (synthetic records, another model, another dataset, fewer cases or seeds); the arithmetic is "
             f"shown but no verdict drawn. {e(TOLERANCES)}</p>"]
    if files.figure is not None:
        data = base64.b64encode(files.figure.read_bytes()).decode("ascii")
        parts.append(f'<figure><img alt="paper against ours" src="data:image/png;base64,{data}">'
                     "<figcaption>Paper against ours, one point per compared number; identity line; bars: the "
                     "tolerance band at the paper's value.</figcaption></figure>")
    head = ("Source", "Line", "Row, column", "Model", "Paper", "Ours", "Ours \u2212 paper", "Tolerance", "Verdict")
    parts.append('<div class="wrap"><table class="res"><thead><tr>' + "".join(f"<th>{e(h)}</th>" for h in head)
                 + "</tr></thead><tbody>")
    for r in shown:
        d = r["digits"]
        cells = (r["source"], r["line"], r["where"], r["model"], _num(r["paper"], d), _num(r["ours"], d),
                 f"{r['difference']:+.{d}f}", r["tolerance"], r["verdict"])
        parts.append("<tr>" + "".join(f'<td style="white-space:normal">{e(str(c))}</td>' for c in cells) + "</tr>")
    parts.append("</tbody></table></div>")
    parts.append('<div class="wrap"><table class="res"><caption>Run settings against the paper\'s (s14 and the text)</caption><thead>'
                 "<tr><th>Setting</th><th>Paper</th><th>Ours</th><th>Status</th></tr></thead><tbody>")
    parts += [f'<tr><td>{e(r["setting"])}</td><td style="white-space:normal">{e(r["paper"])}</td>'
              f'<td style="white-space:normal">{e(r["ours"])}</td><td style="white-space:normal">{e(r["status"])}'
              "</td></tr>" for r in files.ledger]
    parts.append("</tbody></table></div>")
    return parts
