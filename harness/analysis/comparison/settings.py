"""Comparable means comparable: every setting the paper states or a run manifest records, per (model, arm).

A number of the user's gets a verdict only when each (model, arm) behind it ran in the paper's setting. The
setting is read from the run manifests (harness.run.manifest: one per `harness run`, its arms as configs) and
set against what the paper states, and where the paper states nothing, against what the kit pins for a
reproduction. Each expectation names its source:

* scorer: the paper's Scoring paragraph, which the kit implements as the `paper` scorer;
* unit convention: the dataset's own (harness.data.conventions: the Verified split converts with plain arithmetic);
* arm settings (temperature, output-token cap, samples, note budget, prompt templates, solver and its options,
  formula and variable access, the worked example): the kit's arm spec (harness.arms.registry), whose temperatures,
  caps and note budgets are the paper's (tests/analysis/test_compare.py holds the spec to the paper's .tex lines);
* formula version: the benchmark's own (no `--formula-version`);
* model server, weights revision, dtype, quantization, tensor parallelism, context length, generation config,
  batch-invariant kernels, request seeds: vLLM as `make reproduce` serves the paper's checkpoints
  (containers/vllm/models.lock.json, serving.json; the paper states bf16, AWQ 4-bit and tensor parallel 1);
* vLLM version: the release the kit pins (containers/vllm/image.lock.json, read at run time; the paper names none);
* executor limits: the paper's 256 MB and 5 s (.tex line 124), the rest the kit's policy (executor/policy.py).

A setting that differs makes the numbers of that (model, arm) *not comparable*, naming the field; a setting the
manifests do not record does too ("not recorded": a model-free run has no server, a server the kit did not start
states no flags). The manifests are typed (harness.run.manifest.RunManifest): a field this module reads is a field
of the type, so a renamed one is a load error naming the file, never a silent "not recorded". `ledger_rows` gives
the same checks per setting, for the settings table.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass

from executor import policy as executor_policy
from harness.arms.registry import ARMS
from harness.core.units import EXACT
from harness.data.pins import DatahubError, entry as pin_entry
from harness.model.vllm import locks as vllm
from harness.model.rehearsal.labels import MODEL_FREE
from harness.run.manifest import RunManifest
from harness.analysis.comparison.values import number, paper_cases, paper_checkpoints, setting
from harness.calculators.catalogue import CATALOGUE
from harness.analysis.stats.labels import HYBRIDS, model_label

_SHA256 = re.compile(r"[0-9a-f]{64}")
PAPER_SCORER = "paper"   # harness/scoring/paper.py: the paper's Scoring paragraph
ARM_FIELDS = {  # arm config field -> (what it is, the paper's .tex setting that states it, if any)
    "temperature": ("temperature", "temperatures"), "max_tokens": ("output-token cap", "token-caps"),
    "samples": ("samples per case", None), "note_words": ("note budget (words)", "note-budgets"),
    "solver": ("solver", None), "solver_options": ("solver options", None), "prompt": ("prompt family", None),
    "templates": ("prompt templates", None), "gold_variables": ("gold variables", None),
    "formula": ("formula text", None), "syntax": ("syntax lines", None), "example": ("worked example", None),
}
SERVER_FLAGS = {"dtype": "dtype", "quantization": "quantization", "tensor_parallel_size": "tensor parallelism",
                "max_model_len": "context length", "generation_config": "generation config"}


@dataclass(frozen=True)
class Check:
    """One setting of one (model, arm): what was expected (and from where), what the manifests record, and
    whether they agree (None: not recorded)."""

    field: str
    expected: str
    source: str
    ours: str
    ok: bool | None
    subject: str = ""   # the stored (model, arm) it is about, for the settings table

    def reason(self) -> str:
        if self.ok is None:
            return f"{self.field} not recorded in the run manifest (expected {self.expected})"
        return f"{self.field} {self.ours}, not {self.expected} ({self.source})"


def components(arm: str) -> tuple[str, ...]:
    """The stored arms behind an arm of the analysis (a hybrid is its library and its fallback)."""
    for name, lib, fb in HYBRIDS:
        if name == arm:
            return lib, fb
    return (arm,)


def model_key(paper_model: str | None) -> str | None:
    """The kit's lock key (containers/vllm/models.lock.json) of a paper checkpoint, by its repository name."""
    if not paper_model:
        return None
    for key in vllm.all_model_keys():
        if vllm.model_entry(key)["repo"].rsplit("/", 1)[-1].lower() == paper_model.lower():
            return key
    return None


def _text(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in sorted(value.items())) + "}" if value else "none"
    text = str(value)
    return text[:12] if _SHA256.fullmatch(text) else text   # a template hash: its first 12 hex digits


class RunSettings:
    """The run manifests of a result set, asked per (model, arm)."""

    def __init__(self, manifests: list[RunManifest]):
        self.manifests = list(manifests)

    def covering(self, model: str, arm: str) -> list[RunManifest]:
        """The run manifests that ran `arm` for `model` (a model-free arm: any run of it, whatever model it named)."""
        free = ARMS.get(arm) is not None and not ARMS[arm].needs_model
        return [m for m in self.manifests if arm in m.arms and (free or m.model.id == model)]

    def synthetic(self) -> bool:
        return any(m.synthetic for m in self.manifests)

    # ---- the checks ---------------------------------------------------------------------------------------
    def checks(self, model: str, arm: str, paper_model: str | None) -> list[Check]:
        """Every setting of `arm` as `model` ran it (each stored component of a hybrid), against the paper's."""
        out: list[Check] = []
        for part in components(arm):
            who = MODEL_FREE if ARMS.get(part) is not None and not ARMS[part].needs_model else model
            found = self.covering(who, part)
            subject = f"{model_label(who)} {part}"
            if not found:
                out.append(Check(f"{part}: run manifest", "a run manifest naming this arm", "harness run writes one",
                                 "none", None, subject))
                continue
            for m in found:
                out += [dataclasses.replace(c, subject=subject) for c in self._manifest_checks(m, part, paper_model)]
        return _dedupe(out)

    def reasons(self, model: str, arm: str, paper_model: str | None) -> list[str]:
        return [c.reason() for c in self.checks(model, arm, paper_model) if c.ok is not True]

    def _manifest_checks(self, m: RunManifest, arm: str, paper_model: str | None) -> list[Check]:
        cfg = m.arms[arm]
        spec = ARMS.get(arm)
        out = [Check("scorer", PAPER_SCORER, f"the paper's Scoring paragraph (.tex line {setting('scoring')['line']})",
                     _text(m.scorer), m.scorer == PAPER_SCORER)]
        if spec is None:
            return out + [Check(f"{arm}: arm", "an arm of the kit's registry", "harness/arms/registry.py", arm, False)]
        kit = spec.config()
        for key, (what, stated) in ARM_FIELDS.items():
            where = f"the kit's arm spec for {arm}" + (f"; the paper, .tex line {setting(stated)['line']}"
                                                        if stated else "")
            ours = getattr(cfg, key)
            out.append(Check(what, _text(kit.get(key)), where, _text(ours), ours == kit.get(key)))
        out.append(Check("formula version", "the benchmark's", "the paper scores every arm against the benchmark's "
                         "formulas", _text(cfg.formula_versions) if cfg.formula_versions else "the benchmark's",
                         not cfg.formula_versions))
        if spec.solver.uses_convention:
            got = cfg.convention or m.convention.name
            out.append(Check("unit convention", EXACT.name, "the Verified split's own: plain arithmetic "
                             "(harness/data/conventions.py)", _text(got), got == EXACT.name))
        if spec.formula:
            out.append(catalogue_check())
        if cfg.needs_model:
            out += _server_checks(m, paper_model)
        if cfg.needs_executor:
            out += _executor_checks(m)
        return out


def _server_checks(m: RunManifest, paper_model: str | None) -> list[Check]:
    key = model_key(paper_model)
    if key is None:
        return []  # not a checkpoint of the paper: the model itself is the reason
    server = m.server
    launcher = server.launcher if server is not None else None
    out = [Check("model server", "vllm", f"the paper serves its checkpoints through vLLM (.tex line "
                 f"{setting('tensor-parallel')['line']})", _text(launcher), launcher == "vllm" if launcher else None)]
    if server is None or launcher != "vllm":
        return out
    lock, want = vllm.model_entry(key), vllm.serving_flags(key)
    revision = m.model.revision
    out.append(Check("model revision", lock["revision"], f"containers/vllm/models.lock.json {key} (the paper states "
                     "none)", _text(revision), revision == lock["revision"] if revision else None))
    for flag, what in SERVER_FLAGS.items():   # a flag the pinned set leaves out (7B: quantization) is unset
        out.append(Check(what, _text(want.get(flag)), f"containers/vllm/serving.json {key} (the paper: 7B bf16, 32B "
                         "AWQ 4-bit, tensor parallel 1, Mistral 2)", _text(server.flags.get(flag)),
                         server.flags.get(flag) == want.get(flag)))
    pinned = vllm.image_lock().get("vllm_version")
    ran = server.server_version or (server.contract.vllm_version if server.contract else None)
    out.append(Check("vLLM version", _text(pinned), "containers/vllm/image.lock.json (the paper names none)",
                     _text(ran), ran == pinned if ran else None))
    invariant = server.determinism.batch_invariant if server.determinism else None
    out.append(Check("batch-invariant kernels", "off", "the paper ran vLLM's default kernels "
                     "(containers/vllm/serving.json)", "on" if invariant else "off" if invariant is False else "none",
                     (not invariant) if invariant is not None else None))
    profile = m.model.server_profile
    out.append(Check("request fields", "vllm (temperature and output-token cap only)", "the paper's requests set "
                     "only those (Appendix, Arm protocols and settings)", _text(profile),
                     profile == "vllm" if profile else None))
    return out


def _executor_checks(m: RunManifest) -> list[Check]:
    ex = m.executor
    if ex is None:
        return [Check("executor limits", "recorded", "harness run records the executor", "none", None)]
    limits = ex.limits
    paper = setting("executor-memory")
    mb = f"{paper['values']['memory_mb']:g} MB"
    out = [Check("executor memory", mb, f"the paper, .tex line {paper['line']}",
                 f"{int(limits['address_space_bytes']) // 2**20} MB" if "address_space_bytes" in limits else "none",
                 int(limits["address_space_bytes"]) == int(paper["values"]["memory_mb"]) * 2**20
                 if "address_space_bytes" in limits else None),
           Check("executor wall clock", f"{paper['values']['wall_s']:g} s", f"the paper, .tex line {paper['line']}",
                 f"{float(limits['wall_seconds']):g} s" if "wall_seconds" in limits else "none",
                 float(limits["wall_seconds"]) == float(paper["values"]["wall_s"]) if "wall_seconds" in limits
                 else None)]
    for name, value in executor_policy.LIMITS.items():
        if name in ("address_space_bytes", "wall_seconds"):
            continue
        out.append(Check(f"executor {name}", _text(value), "the kit's executor/policy.py LIMITS",
                         _text(limits.get(name)), limits.get(name) == value if name in limits else None))
    return out


def _counts(ref: str, names: tuple[str, ...]) -> list[int]:
    return [int(number(f"{ref}#{n}")["value"]) for n in names]


def catalogue_check() -> Check:
    """The formula texts the formula-reading arms show: the kit's catalogue's completeness audit against the paper's
    (10 could not reproduce the benchmark's number, 28 wrong or incomplete, 27 complete)."""
    got = Counter(e.completeness for e in CATALOGUE.values())
    unable, incomplete = _counts("text:limitations:formula-audit", ("unable", "incomplete"))
    (complete,) = _counts("text:caption:s17b-counts", ("complete",))
    want = (unable, incomplete, complete)
    ours = (got["could_not_reproduce"], got["could_not_reproduce"] + got["omitted"], got["complete"])
    return Check("formula texts (completeness audit)", "{} could not reproduce, {} wrong or incomplete, {} complete"
                 .format(*want), "the paper, .tex lines {}, {}".format(number("text:limitations:formula-audit#unable")[
                     "line"], number("text:caption:s17b-counts#complete")["line"]),
                 "{} could not reproduce, {} wrong or incomplete, {} complete".format(*ours), ours == want)


def identity_rows(model_rows: list[tuple[str, bool]], dataset: str, dataset_ok: bool, draws: int) -> list[dict]:
    """The settings table's first rows: the models, the dataset, the calculator audit, the bootstrap draws."""
    flagged, replaced = _counts("text:limitations:audit-flags", ("flagged", "replaced"))
    (clean,) = _counts("text:results:audit-clean-count", ("no_issue",))
    groups = Counter(e.audit_group for e in CATALOGUE.values())
    ours = (groups["replaced"] + groups["other_concern"], groups["replaced"], groups["no_issue"])
    others = [m for m, ok in model_rows if not ok]
    want_draws = int(setting("bootstrap-draws")["values"]["draws"])
    return [
        {"setting": "models", "paper": ", ".join(paper_checkpoints()) + " (the paper's checkpoints)",
         "ours": ", ".join(m for m, _ in model_rows) or "none (library only)",
         "status": f"differs: {', '.join(others)} {'is' if len(others) == 1 else 'are'} none of the paper's "
                   "checkpoints: shown, never judged" if others else "matches"},
        {"setting": "dataset", "paper": f"MedCalc-Bench Verified test split, {paper_cases():,} cases, revision "
                                        f"{setting('dataset-revision')['values']['revision']} (.tex lines "
                                        f"{setting('dataset')['line']}, {setting('dataset-revision')['line']})",
         "ours": dataset, "status": "matches" if dataset_ok else "differs: no number is judged"},
        {"setting": "calculator audit (s9)", "paper": f"{flagged} flagged, {replaced} replaced by a guideline, {clean} "
                                                       "with no issue (.tex lines 293-294, 217)",
         "ours": "{} flagged, {} replaced, {} with no issue (the kit's catalogue; beyond the four replaced, which "
                 "calculators is its own reading)".format(*ours),
         "status": "matches (counts)" if ours == (flagged, replaced, clean) else
                   "differs: the replaced calculators' numbers are not the paper's"},
        {"setting": "bootstrap draws", "paper": f"{want_draws:,} (.tex line {setting('bootstrap-draws')['line']})",
         "ours": f"{draws:,}", "status": "matches" if draws == want_draws else
         "differs: interval ends carry more Monte Carlo error; the claims' tolerance includes it"},
    ]


def _dedupe(checks: list[Check]) -> list[Check]:
    seen, out = set(), []
    for c in checks:
        if (c.field, c.ours, c.ok, c.subject) not in seen:
            seen.add((c.field, c.ours, c.ok, c.subject))
            out.append(c)
    return out


# ---- the settings table -----------------------------------------------------------------------------------
def ledger_rows(settings: RunSettings, pairs: list[tuple[str, str, str | None]]) -> list[dict]:
    """One row per setting and expectation over every (model, arm, paper model) the comparison looked at: expected
    (and where from), what the manifests record, and whether it matches; a difference names the model and arm it
    makes not comparable. Settings whose expectation differs by arm or model (a token cap, a dtype) get a row each."""
    rows: dict[tuple, dict] = {}
    for model, arm, paper_model in pairs:
        for c in settings.checks(model, arm, paper_model):
            field = c.field.split(": ", 1)[-1]
            r = rows.setdefault((field, c.expected, c.source), {"setting": field, "expected": c.expected,
                                                                "source": c.source, "ours": set(), "who": set(),
                                                                "differs": [], "unrecorded": []})
            r["ours"].add(c.ours)
            r["who"].add(c.subject)
            if c.ok is False:
                r["differs"].append(c.subject)
            elif c.ok is None:
                r["unrecorded"].append(c.subject)
    split = {field for field, *_ in rows if sum(k[0] == field for k in rows) > 1}
    out = []
    for (field, _, _), r in rows.items():
        status = ("differs for " + ", ".join(sorted(set(r["differs"]))) + ": not comparable" if r["differs"] else
                  "not recorded for " + ", ".join(sorted(set(r["unrecorded"]))) + ": not comparable"
                  if r["unrecorded"] else "matches")
        name = field + (f" ({', '.join(sorted(r['who']))})" if field in split else "")
        out.append({"setting": name, "paper": f"{r['expected']} ({r['source']})",
                    "ours": ", ".join(sorted(r["ours"])), "status": status})
    return out


def dataset_revision_problem() -> str | None:
    """Why the pinned Verified split is not the revision the paper read, or None."""
    want = setting("dataset-revision")["values"]["revision"]
    try:
        got = str(pin_entry("verified").get("revision") or "")
    except DatahubError as exc:
        return f"the pins file could not be read ({exc})"
    if not got.startswith(want):
        return (f"the pinned Verified revision is {got or 'not recorded'}, the paper read {want} "
                f"(.tex line {setting('dataset-revision')['line']})")
    return None
