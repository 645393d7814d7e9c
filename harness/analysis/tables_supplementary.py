"""The paper's tables that need more than correctness arrays: Table 1's lower block (other
checkpoints), s7, s8, s9, s14/s14b, s15/s15b (with the failure-audit annotation sheet) and s17/s17b.

Sources, as the paper's captions state them:
* table1-other, s7: per-case correctness (the analysis arrays).
* s8: the stored records (the programs as the model wrote them).
* s9, s17, s17b: the formula catalogue's audit fields (harness.calculators.catalogue.CATALOGUE); the benchmark's
  category of each calculator (the results' dataset) gives "use".
* s14, s14b: the run manifests in the results root (harness.run.manifest, typed) and executor.policy.
* s15, s15b: record outcomes, plus a filled annotation sheet for the wrong values
  (<results>/annotations/s15-failure-audit.csv; `harness tables` writes the unfilled sheet,
  s15-annotation-sheet.csv, next to the tables).
Each builder takes the `Analysis` (harness.analysis.results_analysis) and returns a `Table` or raises `Omit`
with why (harness.analysis.table_format); harness.analysis.tables writes and lists them (this module does
not import it).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from executor import policy
from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import SECTION, Omit, Table, fmt
from harness.data.dataset import load_dataset
from harness.calculators.catalogue import CATALOGUE
from harness.run.manifest import ManifestError, RunManifest, run_manifests
from harness.run.runner import NO_MODEL
from harness.run.store import iter_result_files, model_slug, results_location

# The paper's two main checkpoints (Table 1, upper block). Every other model with both Program-Solve
# and Open-book arithmetic goes to the lower block.
MAIN_CHECKPOINTS = ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-32B-Instruct")
S7_MIN_PAIRS = 10
S7_TOP = 6
S8_RULE = (2, 42, "Qwen/Qwen2.5-7B-Instruct")  # Cockcroft-Gault, seed 42, the 7B model
S15_ARM = "program-solve"
S15_PER_STRATUM = 20
ANNOTATION_FILE = Path("annotations") / "s15-failure-audit.csv"
SHEET_NAME = "s15-annotation-sheet.csv"
NOT_ANNOTATED = "not yet annotated"
# Outcome-decided categories of s15, in the order of the paper's taxonomy.
OUTCOME_CATEGORIES = {
    "no_program": "No program written",
    "sandbox_rejection": "Sandbox rejection",
    "raised_error": "Raised an error",
    "wrong_return_kind": "Wrong return kind",
    "unreadable_value": "Value the scorer could not read",
}
# Categories a reader assigns to a wrong value (and to an error row, whose cause also needs reading).
# The paper's category list is elided in the available source: this list is the kit's reconstruction.
READING_CATEGORIES = (
    "variable misread from the note",
    "unit conversion",
    "formula branch or convention",
    "formula text not followed",
    "rounding or date arithmetic",
    "gold answer questionable",
    "other",
)


def _is_main(model: str) -> bool:
    return model in MAIN_CHECKPOINTS


_model_label = model_label


# ---- Table 1, lower block ---------------------------------------------------------------------------
def other_checkpoints(an: Analysis) -> list[str]:
    """Models of the lower block: not one of the paper's two main checkpoints, with both arms."""
    d = an.data
    return [m for m in d.models if not _is_main(m) and d.has(m, "program-solve") and d.has(m, "open-book")]


def _full_acc(an: Analysis, model: str, arm: str) -> float:
    block = an.data.block(model, arm)
    per_seed = np.nanmean(block[an.data.seed_mask(model, arm)], axis=1)
    return 100.0 * float(np.mean(per_seed))


def table1_other(an: Analysis) -> Table:
    models = other_checkpoints(an)
    if not models:
        raise Omit("no model outside the paper's main checkpoints (Qwen2.5-7B, Qwen2.5-32B) ran both "
                    "Program-Solve and Open-book arithmetic")
    rows = []
    for m in models:
        code, arith = _full_acc(an, m, "program-solve"), _full_acc(an, m, "open-book")
        rows.append([m.rsplit("/", 1)[-1], fmt(code), fmt(arith), f"{code - arith:+.2f}"])
    return Table("table1-other", "Accuracy ladder, lower block: other checkpoints",
                  ["Other checkpoints", "Code, full", "Arithmetic, full", "Gap (pp)"], rows,
                  ["Accuracy (%) on the cases each arm ran, mean over seeds. Code: Program-Solve; Arithmetic: "
                   "Open-book arithmetic; gap: code minus arithmetic. Lower block of Table 1: every model other "
                   f"than {' and '.join(MAIN_CHECKPOINTS)}."], "lrrr")


# ---- s7: what recall loses ----------------------------------------------------------------------------
def recall_losses(an: Analysis, min_pairs: int = S7_MIN_PAIRS, top: int = S7_TOP) -> dict[str, list[dict]]:
    """model -> calculators the blind arm loses on every seed: pairs (seed, case) with Program-Solve
    correct and Blind not, >= min_pairs pairs and >= 1 pair at every seed both arms ran; top by pairs."""
    d = an.data
    out: dict[str, list[dict]] = {}
    for m in d.models:
        if not (d.has(m, "program-solve") and d.has(m, "blind")):
            continue
        ps, bl = d.block(m, "program-solve"), d.block(m, "blind")
        seeds = d.seed_mask(m, "program-solve") & d.seed_mask(m, "blind")
        both = ~np.isnan(ps) & ~np.isnan(bl)
        lost = both & (ps == 1) & (bl == 0)
        rows = []
        for k, cid in enumerate(d.calculators):
            cases = d.cluster == k
            per_seed = lost[:, cases].sum(axis=1)
            pairs = int(per_seed[seeds].sum())
            if pairs < min_pairs or not np.all(per_seed[seeds] >= 1):
                continue
            n = int(both[seeds][:, cases].sum())
            rows.append({"calculator_id": cid, "name": d.calculator_names.get(cid, str(cid)), "pairs": pairs,
                         "evaluated": n, "ps": 100 * float(np.nansum(ps[seeds][:, cases]) / max(n, 1)),
                         "blind": 100 * float(np.nansum(bl[seeds][:, cases]) / max(n, 1))})
        rows.sort(key=lambda r: (-r["pairs"], r["calculator_id"]))
        out[m] = rows[:top]
    return out


def table_s7(an: Analysis, min_pairs: int = S7_MIN_PAIRS, top: int = S7_TOP) -> Table:
    losses = recall_losses(an, min_pairs, top)
    if not losses:
        raise Omit("Program-Solve and Blind Program-Solve did not both run for any model")
    rows = []
    for m, items in losses.items():
        if not items:
            rows.append([_model_label(m), f"(no calculator reaches {min_pairs} pairs lost at every seed)", "", "", ""])
        for r in items:
            rows.append([_model_label(m), f"{r['name']} ({r['calculator_id']})", str(r["pairs"]),
                         fmt(r["ps"]), fmt(r["blind"])])
    return Table("s7", "What recall loses: calculators the blind arm loses on every seed",
                  ["Model", "Calculator", "Pairs", "Prog. acc.", "Blind acc."], rows,
                  [f"Pairs: case-seed pairs where Program-Solve (formula and gold variables given) is correct and "
                   f"Blind Program-Solve is not; listed when at least {min_pairs} pairs and at least one at every "
                   f"seed both arms ran; top {top} per model. Accuracy (%) on those calculators' case-seed rows."],
                  "llrrr")


# ---- s8: one worked case ----------------------------------------------------------------------------
def _root(an: Analysis) -> Path:
    if an.results_dir is None:
        raise Omit("the analysis was not read from a results root (no records or manifests to read)")
    return an.results_dir


def _records(an: Analysis, *arms: str) -> list[dict]:
    """The stored records of `arms` for the analysed cases (only those arms' files, read once per analysis)."""
    _root(an)
    return an.records(*arms)


def worked_case(an: Analysis) -> tuple[dict, dict, str] | None:
    """(program-solve record, blind record, rule used). Rule: Cockcroft-Gault, seed 42, Qwen2.5-7B;
    fallback: among (model, seed, case) with both programs written, prefer Program-Solve correct and
    Blind not, then Program-Solve correct, then any; first by model, seed, case id."""
    recs = _records(an, "program-solve", "blind")
    idx = {(r["model"], r["arm"], int(r["seed"]), r["case_id"]): r for r in recs
           if r.get("arm") in ("program-solve", "blind")}
    calc, seed, model = S8_RULE
    for (m, arm, s, case), r in sorted(idx.items()):
        if (m, s, arm) == (model, seed, "program-solve") and int(r["calculator_id"]) == calc:
            other = idx.get((m, "blind", s, case))
            if other is not None:
                return r, other, f"the paper's case: calculator {calc}, seed {seed}, {model}"
    pairs = []
    for (m, arm, s, case), r in idx.items():
        other = idx.get((m, "blind", s, case))
        if arm == "program-solve" and other is not None and r.get("program") and other.get("program"):
            rank = 0 if (r["correct"] and not other["correct"]) else 1 if r["correct"] else 2
            pairs.append((rank, m, s, case, r, other))
    if not pairs:
        return None
    rank, m, s, case, r, other = min(pairs, key=lambda p: p[:4])
    why = ["Program-Solve correct and Blind not", "Program-Solve correct", "no pair with Program-Solve correct"][rank]
    return r, other, (f"fallback (the paper's case, calculator {calc} at seed {seed} for {model}, is not in these "
                      f"results): first model, seed and case with both programs written and {why}")


def _answer_text(rec: dict) -> str:
    ans = rec.get("answer")
    return "none" if ans is None else json.dumps(ans)


def table_s8(an: Analysis) -> Table:
    found = worked_case(an)
    if found is None:
        raise Omit("no case has both a Program-Solve and a Blind Program-Solve program")
    ps, bl, rule = found
    a = _program_lines(ps.get("program") or "")
    b = _program_lines(bl.get("program") or "")
    rows = [[x.replace("\t", "    "), y.replace("\t", "    ")]
            for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b)))]
    rows.append([SECTION, "Outcome"])
    rows.append([f"returned {_answer_text(ps)}: {ps['outcome']}, {'correct' if ps['correct'] else 'wrong'}",
                 f"returned {_answer_text(bl)}: {bl['outcome']}, {'correct' if bl['correct'] else 'wrong'}"])
    gold = (ps.get("gold") or {}).get("answer", "?")
    return Table("s8", f"One case, formula given against formula recalled: {ps.get('calculator_name', '')} "
                  f"(case {ps['case_id']}), seed {ps['seed']}, {_model_label(ps['model'])}, gold {gold}",
                  ["Formula given (Program-Solve)", "Formula recalled (Blind Program-Solve)"], rows,
                  [f"Chosen by rule: {rule}.", "Both programs as the model wrote them (one line per row; a line "
                   f"repeated over and over is shown once with its count, and a program longer than "
                   f"{S8_MAX_LINES} lines is cut, as a small model's degenerate output can be: the record holds it "
                   "whole); the outcome row gives the executor's return value and the scorer's verdict."], "ll")


S8_MAX_LINES = 40   # a program shown in s8; a degenerate one (thousands of lines) would fill the report


def _program_lines(program: str) -> list[str]:
    """A program's lines for s8: runs of a repeated line (or of a repeated group of up to 4 lines) collapsed to
    one copy and a count, at most S8_MAX_LINES lines, the cut said."""
    lines = [x.replace("\t", "    ") for x in program.rstrip("\n").split("\n")]
    out: list[str] = []
    i = 0
    while i < len(lines):
        for width in range(1, 5):
            group = lines[i:i + width]
            reps = 1
            while lines[i + reps * width:i + (reps + 1) * width] == group:
                reps += 1
            if reps >= 3 and len(group) == width:
                out += group + [f"[... the {'line' if width == 1 else f'{width} lines'} above repeated "
                                f"{reps - 1} more times]"]
                i += reps * width
                break
        else:
            out.append(lines[i])
            i += 1
    if len(out) > S8_MAX_LINES:
        out = out[:S8_MAX_LINES - 1] + [f"[... {len(out) - S8_MAX_LINES + 1} more lines not shown]"]
    return out


# ---- s9, s17, s17b: the formula catalogue -------------------------------------------------------------
def _catalogue():
    return dict(CATALOGUE)


def _categories(an: Analysis) -> dict[int, str]:
    """calculator id -> the benchmark's category (lab, physical, ...), from the bundled slice, which holds every
    calculator (part of the kit: a missing or broken file raises)."""
    out: dict[int, str] = {}
    for c in load_dataset("bundled-test").cases:
        out.setdefault(int(c.calculator_id), c.category)
    return out


def _provenance_note(entries, field: str) -> list[str]:
    recon = sorted(e.calculator_id for e in entries if "reconstruction" in e.provenance.get(field, ""))
    if not recon:
        return []
    return [f"Reconstruction, not the paper's: the {field.replace('_', ' ')} of calculators "
            f"{', '.join(map(str, recon))} is the kit's own reading (the paper's table body is elided in the "
            "available source; counts match the paper). See harness/calculators/catalogue.py."]


def table_s9(an: Analysis) -> Table:
    cat = _catalogue()
    uses = _categories(an)
    concern = [e for e in cat.values() if e.audit_group != "no_issue"]
    others = [e for e in cat.values() if e.audit_group == "no_issue"]
    rows = [[SECTION, f"The {len(concern)} calculators with a concern"]]
    for e in sorted(concern, key=lambda e: (e.audit_group != "replaced", e.calculator_id)):
        kind = e.flags.get("concern") or ""
        if e.replaced_by_guideline:
            kind += f"; replaced by {e.flags.get('replacing_guideline') or 'a guideline'}"
        rows.append([f"{e.name} ({e.calculator_id})", f"{kind}; use: {uses.get(e.calculator_id, 'unknown')}",
                     f"{e.guideline_version} ({e.guideline_date})", e.flags.get("note", ""), e.source])
    rows.append([SECTION, f"The {len(others)} others (no issue identified), counted by use"])
    for use, n in sorted(Counter(uses.get(e.calculator_id, "unknown") for e in others).items()):
        rows.append([use, "", "", f"{n} calculators", ""])
    notes = ["Concern types: version, use, coefficient. Use: the benchmark's category of the calculator. "
             "Gold answers are the calculator's own output, so a replaced formula still scores correct.",
             *_provenance_note(concern + others, "audit_group")]
    return Table("s9", f"Literature audit of the {len(cat)} calculators",
                  ["Formula", "Type and use", "Guideline body and date", "Concern", "Sources"], rows, notes, "lllll")


def _completeness_table(name: str, title: str, status: str, an: Analysis):
    cat = _catalogue()
    chosen = [e for e in cat.values() if e.completeness == status]
    counts = Counter(e.completeness for e in cat.values())
    rows = [[f"{e.name} ({e.calculator_id})", e.repair] for e in sorted(chosen, key=lambda e: e.calculator_id)]
    notes = [f"Of {len(cat)} supplied formula texts: {counts.get('could_not_reproduce', 0)} could not reproduce the "
             f"benchmark's number, {counts.get('omitted', 0)} omitted a constant, unit, branch or convention, "
             f"{counts.get('complete', 0)} complete (unchanged).", *_provenance_note(chosen, "completeness")]
    return Table(name, title, ["Calculator", "Repair"], rows, notes, "ll")


def table_s17(an: Analysis) -> Table:
    return _completeness_table("s17", "Completeness audit, part one: texts that could not reproduce the benchmark's "
                               "number", "could_not_reproduce", an)


def table_s17b(an: Analysis) -> Table:
    return _completeness_table("s17b", "Completeness audit, part two: incomplete texts", "omitted", an)


# ---- s14, s14b: the reproducibility ledger ------------------------------------------------------------
def load_manifests(results_dir) -> list[RunManifest]:
    """The run manifests (one per `harness run`) in a results root, typed; a manifest that cannot be read omits the
    ledger tables with the reader's error, which names the file."""
    try:
        return run_manifests(results_dir)
    except ManifestError as exc:
        raise Omit(str(exc)) from None


def _span(per_model: dict[str, set[str]]) -> str:
    """One value when every model agrees, else 'model: value' per model."""
    values = {v for vs in per_model.values() for v in vs}
    if not values:
        return "not recorded"
    if len(values) == 1 and all(len(vs) == 1 for vs in per_model.values()):
        return next(iter(values))
    return "; ".join(f"{_model_label(m)}: {', '.join(sorted(vs)) or 'not recorded'}"
                     for m, vs in sorted(per_model.items()))


# s14's settings rows, in this order whatever order the manifests come in (a resumed or merged run has
# more manifests than an uninterrupted one; the table must not show how the run was split).
S14_FIELDS = ("Dataset", "Dataset sha256", "Seeds", "Scorer", "Executor image digest", "Model id and revision",
              "Server", "Server flags", "Model file sha256", "Sampling fields sent / server defaults",
              "Seed sent to server")


def _stored_seeds(root: Path) -> dict[tuple[str, str], set[int]]:
    """{(model directory, arm): seeds whose results file holds records} (the store's layout, no record read)."""
    out: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p in iter_result_files(root):
        if p.stat().st_size:
            where = results_location(p)
            out[(where.model_dir, where.arm)].add(where.seed)
    return out


def table_s14(an: Analysis) -> Table:
    """The run settings as sets of values per model: the union of the seeds, one row per setting in a fixed
    order; nothing counts or orders the manifests, so one run, the same run resumed after a kill and the
    same run sharded and merged (`harness merge` carries the shards' manifests) give the same bytes."""
    manifests = load_manifests(_root(an))
    if not manifests:
        raise Omit("no run manifests in the results root")
    fields: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    seeds: dict[str, set[int]] = defaultdict(set)
    arm_settings: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    stored = _stored_seeds(_root(an))
    for man in manifests:
        mid = man.model.id if man.uses_model else "library (no model)"
        slug = model_slug(mid) if man.uses_model else NO_MODEL
        ds = man.dataset
        fields["Dataset"][mid].add(f"{ds.name} ({ds.n_cases} cases), revision "
                                   f"{ds.revision or 'none (bundled file)'}")
        fields["Dataset sha256"][mid].add(ds.sha256)
        for name in man.arms:     # the seeds records were stored for, not the seeds asked for
            seeds[mid] |= stored.get((slug, name), set())
        fields["Scorer"][mid].add(man.scorer)
        if man.executor is not None:
            fields["Executor image digest"][mid].add(man.executor.image_id or
                                                     f"none ({man.executor.backend} backend)")
        for name, arm in man.arms.items():
            if not arm.needs_model:
                arm_settings[arm.title][mid].add("no model request")
                continue
            arm_settings[arm.title][mid].add(
                f"temperature {arm.temperature}, max tokens {arm.max_tokens}, note "
                f"{'whole' if arm.note_words is None else f'{arm.note_words} words'}, samples {arm.samples}")
    for mid, ss in seeds.items():
        fields["Seeds"][mid].add(", ".join(map(str, sorted(ss))) or "none stored")
    for man in (m for m in manifests if m.uses_model):
        mid = man.model.id
        fields["Model id and revision"][mid].add(f"{mid} @ {man.model.revision or 'revision not recorded'}")
        server, client = man.server, man.client
        profile = client.profile if client is not None else None
        fields["Server"][mid].add(" ".join(x for x in ((server.server if server else None)
                                                       or (profile.name if profile else None),
                                                       server.server_version if server else None) if x)
                                  or "not recorded")
        fields["Server flags"][mid].add(" ".join(server.args) if server and server.args else "not recorded")
        if server is not None and server.weights is not None and server.weights.sha256:
            fields["Model file sha256"][mid].add(server.weights.sha256)
        applied = (server.sampling_defaults if server else {}) or (profile.extra if profile else {})
        fields["Sampling fields sent / server defaults"][mid].add(
            ", ".join(f"{k}={v}" for k, v in sorted(applied.items())) or "none beyond temperature and max tokens")
        fields["Seed sent to server"][mid].add("yes" if profile is not None and profile.send_seed else "no")
    rows = [[k, _span(fields[k])] for k in S14_FIELDS if k in fields]
    rows.append([SECTION, "Per arm: temperature, output-token cap, note budget, samples"])
    rows += [[arm, _span(v)] for arm, v in sorted(arm_settings.items())]
    return Table("s14", "Reproducibility ledger, run settings", ["Setting", "Value"], rows,
                  ["From the run manifests in the results root (a resumed run's and every merged shard's "
                   "included); seeds are their union. One value spans the models unless the row lists them; "
                   "server flags are the server's own, without host, port or local paths."], "ll")


def table_s14b(an: Analysis) -> Table:
    manifests = load_manifests(_root(an))
    execs = [m.executor for m in manifests if m.executor is not None]
    if not execs:
        raise Omit("no run in these results used the executor (no manifest records one)")
    pol = policy.policy_dict()
    rows = [[SECTION, "Limits the runs used (manifests; executor/policy.py where it differs)"]]
    for name, value in pol["limits"].items():
        recorded = sorted({json.dumps(e.limits.get(name)) for e in execs if e.limits})
        shown = ", ".join(recorded) if recorded else f"{value} (not recorded; executor/policy.py)"
        if recorded and recorded != [json.dumps(value)]:
            shown += f" (executor/policy.py now: {value})"
        rows.append([name, shown])
    rows.append([SECTION, "Layers"])
    rows.append(["1 static check", f"AST rules: {len(pol['forbidden_nodes'])} forbidden node types, "
                 f"{len(pol['forbidden_attributes'])} forbidden attributes, {len(pol['forbidden_names'])} forbidden "
                 f"names; source at most {pol['max_source_chars']} characters"])
    rows.append(["2 restricted interpreter", f"imports: {', '.join(pol['allowed_modules'])}; "
                 f"{len(pol['allowed_builtins'])} builtins plus {', '.join(pol['wrapped_builtins'])}"])
    rows.append(["3 process limits", "rlimits, wall-clock kill, executed-line cap, output caps (above); "
                 "result over a dedicated descriptor"])
    rows.append(["4 seccomp", f"child allow-list of {len(pol['child_syscalls'])} system calls: "
                 f"{', '.join(pol['child_syscalls'])}"])
    layouts = sorted({e.address_layout for e in execs if e.address_layout})
    rows.append(["Determinism", f"str hash seed {pol['hash_seed']} ({pol['hash_algorithm']}); clock frozen at "
                 f"{pol['clock_instant']}; address layout "
                 f"{', '.join(layouts) if layouts else 'not recorded'} (SECURITY.md, Determinism)"])
    used = sorted({e.policy_hash for e in execs})
    now = policy.policy_hash()
    rows.append(["Policy hash", ", ".join(used) + ("" if used == [now] else
                 f" (executor/policy.py now: {now}; the layer rows describe the current policy)")])
    backends = sorted({e.backend + (f" ({(e.runtime or {}).get('name')}, {e.runsc_version})"
                                    if e.backend == "container" else "") for e in execs})
    rows.append(["Backend", ", ".join(backends) or "no executor run recorded"])
    flags = sorted({" ".join(e.run_flags) for e in execs if e.run_flags})
    if flags:
        rows.append(["Container flags", " | ".join(flags)])
    disabled = sorted({d for e in execs for d in e.disabled_layers})
    rows.append(["Disabled layers", ", ".join(disabled) or "none"])
    return Table("s14b", "Reproducibility ledger, executor limits", ["Setting", "Value"], rows,
                  ["Limits, policy hash, backend, runtime and container flags as the run manifests record them; the "
                   "layer rows from executor/policy.py (what `executor policy` prints), which the policy hash pins."],
                  "ll")


# ---- s15, s15b: the failure audit ---------------------------------------------------------------------
def stable_hash(model: str, case_id: str, seed: int) -> str:
    return hashlib.sha256(f"{model}\x1f{case_id}\x1f{int(seed)}".encode()).hexdigest()


def _supported(an: Analysis) -> set[int]:
    return set(an.library)


def failure_rows(an: Analysis) -> list[dict]:
    """Every Program-Solve record with its outcome category ('wrong_value' when answered and wrong)."""
    out = []
    for r in _records(an, S15_ARM):
        if r.get("arm") != S15_ARM:
            continue
        cat = "correct" if r["correct"] else ("wrong_value" if r["outcome"] == "answered" else r["outcome"])
        out.append({**r, "category": cat})
    return out


def draw_sample(an: Analysis, per_stratum: int = S15_PER_STRATUM) -> list[dict]:
    """Hash-drawn stratified sample: strata (model, wrong value | raised error, supported | not); in each,
    the `per_stratum` rows with the smallest stable hash of (model, case, seed)."""
    supported = _supported(an)
    strata: dict[tuple, list[dict]] = defaultdict(list)
    for r in failure_rows(an):
        if r["category"] in ("wrong_value", "raised_error"):
            sup = "supported" if int(r["calculator_id"]) in supported else "unsupported"
            strata[(r["model"], r["category"], sup)].append(r)
    sample = []
    for key in sorted(strata):
        rows = sorted(strata[key], key=lambda r: stable_hash(r["model"], r["case_id"], r["seed"]))
        for r in rows[:per_stratum]:
            sample.append({"stratum": "/".join(key[1:]), "stratum_size": len(strata[key]), **r})
    return sample


SHEET_COLUMNS = ("model", "case_id", "seed", "hash", "stratum", "stratum_size", "calculator", "gold", "answer",
                 "error", "program", "category", "uncertain", "annotator_note")


def annotation_sheet(an: Analysis, per_stratum: int = S15_PER_STRATUM) -> str:
    buf = io.StringIO()
    buf.write(f"# s15 failure audit annotation sheet. Fill 'category' with one of: {' | '.join(READING_CATEGORIES)}; "
              "'uncertain' with yes or no. Save as <results>/" + ANNOTATION_FILE.as_posix() + "\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SHEET_COLUMNS)
    for r in draw_sample(an, per_stratum):
        err = ((r.get("executor") or {}).get("error") or "")[:300]
        w.writerow([r["model"], r["case_id"], r["seed"], stable_hash(r["model"], r["case_id"], r["seed"])[:16],
                    r["stratum"], r["stratum_size"], r.get("calculator_name", r["calculator_id"]),
                    (r.get("gold") or {}).get("answer", ""), json.dumps(r.get("answer")), err,
                    r.get("program") or "", "", "", ""])
    return buf.getvalue()


class AnnotationError(ValueError):
    """A filled annotation sheet that does not fit the sample; names the file and row."""


def read_annotations(path: Path, sample: list[dict]) -> dict[tuple, tuple[str, bool]]:
    """(model, case_id, seed) -> (category, uncertain) for the filled rows of a sheet."""
    keys = {(r["model"], r["case_id"], int(r["seed"])) for r in sample}
    out = {}
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    for i, row in enumerate(csv.DictReader(lines), start=2):
        key = (row.get("model"), row.get("case_id"), int(row.get("seed") or -1))
        cat = (row.get("category") or "").strip()
        if not cat:
            continue
        if key not in keys:
            raise AnnotationError(f"{path}: row {i} ({key[0]}, {key[1]}, seed {key[2]}) is not in the drawn sample")
        if cat not in READING_CATEGORIES:
            raise AnnotationError(f"{path}: row {i}: unknown category {cat!r}; use one of {', '.join(READING_CATEGORIES)}")
        out[key] = (cat, (row.get("uncertain") or "").strip().lower() in ("yes", "y", "true", "1"))
    return out


def _annotations(an: Analysis, sample):
    path = _root(an) / ANNOTATION_FILE
    if not path.is_file():
        return {}, None
    try:
        return read_annotations(path, sample), path
    except AnnotationError as exc:
        raise Omit(str(exc)) from None


def table_s15(an: Analysis) -> Table:
    rows_all = failure_rows(an)
    if not rows_all:
        raise Omit("Program-Solve did not run")
    supported = _supported(an)
    sample = draw_sample(an)
    ann, path = _annotations(an, sample)
    rows = []
    for m in sorted({r["model"] for r in rows_all}):
        mine = [r for r in rows_all if r["model"] == m]
        sup = [r for r in mine if int(r["calculator_id"]) in supported]
        count = lambda rs, c: sum(r["category"] == c for r in rs)  # noqa: E731
        rows.append([SECTION, f"{_model_label(m)}: {len(mine)} case-seed rows, {len(sup)} supported"])
        rows.append(["Correct", str(count(mine, "correct")), str(count(sup, "correct"))])
        for code, label in OUTCOME_CATEGORIES.items():
            rows.append([label, str(count(mine, code)), str(count(sup, code))])
        rows.append(["Wrong value", str(count(mine, "wrong_value")), str(count(sup, "wrong_value"))])
        drawn = [s for s in sample if s["model"] == m and s["category"] == "wrong_value"]
        done = [ann[k] for k in ((s["model"], s["case_id"], int(s["seed"])) for s in drawn) if k in ann]
        for cat in READING_CATEGORIES:
            if not drawn:
                continue
            if len(done) < len(drawn):
                rows.append([f"  wrong value: {cat}", NOT_ANNOTATED, NOT_ANNOTATED])
            else:
                k = sum(c == cat for c, _ in done)
                rows.append([f"  wrong value: {cat}", f"{k} of {len(done)} read", ""])
    notes = ["Program-Solve, formula and gold variables given; every case-seed row by category, seeds pooled. "
             "Supported: cases of the calculators the library implements. Outcome-decided categories come from the "
             "records; wrong values are split by reading a hash-drawn stratified sample (Table s15b).",
             "The reading categories are the kit's reconstruction (the paper's list is elided in the available source)."]
    notes.append(f"Annotations: {path}." if path else
                 f"No filled sheet at <results>/{ANNOTATION_FILE.as_posix()}: wrong-value categories are not yet "
                 f"annotated (the sheet to fill is {SHEET_NAME} next to these tables).")
    return Table("s15", "Why Program-Solve fails with formula and gold variables given", ["Category", "Full", "Supported"],
                  rows, notes, "lll")


def table_s15b(an: Analysis) -> Table:
    sample = draw_sample(an)
    if not sample:
        raise Omit("no Program-Solve row with a wrong value or a raised error to sample")
    ann, path = _annotations(an, sample)
    cols = ["Model", "Stratum", "Rows", "Drawn", *READING_CATEGORIES]
    rows = []
    for key in sorted({(s["model"], s["stratum"]) for s in sample}):
        drawn = [s for s in sample if (s["model"], s["stratum"]) == key]
        got = [ann.get((s["model"], s["case_id"], int(s["seed"]))) for s in drawn]
        row = [_model_label(key[0]), key[1], str(drawn[0]["stratum_size"]), str(len(drawn))]
        if any(g is None for g in got):
            row += [NOT_ANNOTATED] * len(READING_CATEGORIES)
        else:
            for cat in READING_CATEGORIES:
                k = sum(c == cat for c, _ in got)
                u = sum(c == cat and unc for c, unc in got)
                row.append(f"{k} ({u})" if u else str(k))
        rows.append(row)
    return Table("s15b", "The annotated sample behind the failure audit", cols, rows,
                  [f"Hash-drawn stratified sample: in each stratum (model, wrong value or raised error, supported or "
                   f"not) the {S15_PER_STRATUM} rows with the smallest sha256 of (model, case, seed). One category "
                   "each; uncertain counts in parentheses. " + (f"Annotations: {path}." if path else
                   f"Not yet annotated: fill {SHEET_NAME} and save it as <results>/{ANNOTATION_FILE.as_posix()}.")],
                  "ll" + "r" * 2 + "l" * len(READING_CATEGORIES))


BUILDERS = {"table1-other": table1_other, "s7": table_s7, "s8": table_s8, "s9": table_s9, "s14": table_s14,
            "s14b": table_s14b, "s15": table_s15, "s15b": table_s15b, "s17": table_s17, "s17b": table_s17b}
