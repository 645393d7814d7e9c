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

Settings are read from the records as well as from the manifests. Each record states the hash of its arm's config,
the model revision, the client profile, the scorer, the dataset's sha256, its seed and whether it is synthetic, and
its requests state their decoding (harness.analysis.stats.arrays.file_settings, read in the analysis's one pass).
A record that states another value than the run manifests that cover it makes that (model, arm) not comparable,
naming the field and a file ("records made at temperature 0.7 under a manifest that states 0.0"): where the
records' arm config hash is the manifest's arm config with one field changed to a value the records' requests or
the kit's spec carry, that field is named. The records' request fields are set against the paper's requests
(temperature and output-token cap only).

Every field a run manifest records is declared here (`MANIFEST_FIELDS`): read by a check (its label, which the
reasons and the settings table name) or stated to decide no number, and why; tests/analysis/test_compare_properties.py
walks the manifest type and fails on a field declared nowhere. And before any setting, the files' integrity
(harness.analysis.comparison.integrity): a file changed after it was written is the first reason.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from executor import policy as executor_policy
from harness.analysis.comparison.integrity import Integrity
from harness.analysis.comparison.values import number, paper_cases, paper_checkpoints, setting
from harness.analysis.stats.arrays import REQUEST_FIELDS, CorrectnessArrays, ResultFile
from harness.analysis.stats.labels import HYBRIDS, model_label
from harness.arms.prompts import template_hashes
from harness.arms.registry import ARMS
from harness.arms.spec import DOCUMENTATION_FIELDS, config_hash
from harness.calculators.catalogue import CATALOGUE
from harness.core.typed_json import to_json
from harness.core.units import EXACT
from harness.data.pins import DatahubError
from harness.data.pins import entry as pin_entry
from harness.model.client import SERVER_PROFILES
from harness.model.rehearsal.labels import MODEL_FREE
from harness.model.server_info import ServerInfo
from harness.model.vllm import locks as vllm
from harness.model.vllm.launcher import VllmLauncher
from harness.run.manifest import ManifestFile, RunManifest
from harness.run.store import model_slug, results_location

_SHA256 = re.compile(r"[0-9a-f]{64}")
PAPER_SCORER = "paper"  # harness/scoring/paper.py: the paper's Scoring paragraph
ARM_FIELDS = {  # arm config field -> (what it is, the paper's .tex setting that states it, if any)
    "temperature": ("temperature", "temperatures"),
    "max_tokens": ("output-token cap", "token-caps"),
    "samples": ("samples per case", None),
    "note_words": ("note budget (words)", "note-budgets"),
    "solver": ("solver", None),
    "solver_options": ("solver options", None),
    "prompt": ("prompt family", None),
    "templates": ("prompt templates", None),
    "gold_variables": ("gold variables", None),
    "formula": ("formula text", None),
    "syntax": ("syntax lines", None),
    "example": ("worked example", None),
}
ARM_SPEC_FIELDS = {
    "needs_model": "uses a model",
    "needs_executor": "uses the executor",
    "covered_only": "library-covered cases only",
}  # compared with the kit's spec, no paper line
SERVER_FLAGS = {
    "dtype": "dtype",
    "quantization": "quantization",
    "tensor_parallel_size": "tensor parallelism",
    "max_model_len": "context length",
    "generation_config": "generation config",
}
NOT_SERVER_FLAGS = ("port", "host")  # where the server listens: no answer depends on it
PAPER_REQUEST_FIELDS = ("max_tokens", "model", "temperature")  # the paper's requests set temperature and the cap
INTEGRITY = "integrity"

# Every field of a run manifest (harness.run.manifest.RunManifest), by path ("arms.*" for each arm's config, "executor.*"
# for the executor's fields not named; a dict field as a whole): (the label of the check that reads it, what it is set
# against, which of the manifest's arms it decides) or ("-", why it decides no number, ""). Scopes: "arm" (that arm),
# "run" (every arm of the manifest), "templates" (the arms using that template), "model" (the arms that call a model of
# the paper's), "vllm" (those, served by vLLM), "executor" (the arms that run programs), "convention" (the arms whose
# solver depends on the unit convention), "everything" (every number of the comparison). A field missing here fails
# tests/analysis/test_compare_properties.py, so a field added to the manifest is declared before it is shipped.
_NO = "-"
MANIFEST_FIELDS: dict[str, tuple[str, str, str]] = {
    "run_id": (_NO, "the run's name", ""),
    "origin": (
        _NO,
        "when, where and by which command and checkout it ran: provenance (harness verify rescores every "
        "record with this kit)",
        "",
    ),
    "dataset.name": (_NO, "a label: the sha256 says which file", ""),
    "dataset.path": (_NO, "where the file was", ""),
    "dataset.sha256": ("dataset (records' dataset_sha256)", "the records'; they decide the dataset", "run"),
    "dataset.revision": ("dataset revision", "the paper's revision, where recorded", "run"),
    "dataset.n_cases": (_NO, "the file's row count: the sha256 decides the file, each number counts its own cases", ""),
    "arms.*.name": ("arm", "an arm of the kit's registry", "arm"),
    **{
        f"arms.*.{k}": (_NO, "documentation (never hashed: harness.arms.spec.DOCUMENTATION_FIELDS)", "")
        for k in DOCUMENTATION_FIELDS
    },
    **{
        f"arms.*.{k}": (what, "the kit's arm spec" + (" (the paper's .tex)" if stated else ""), "arm")
        for k, (what, stated) in ARM_FIELDS.items()
    },
    **{f"arms.*.{k}": (what, "the kit's arm spec", "arm") for k, what in ARM_SPEC_FIELDS.items()},
    "arms.*.formula_versions": ("formula version", "the benchmark's", "arm"),
    "arms.*.convention": ("unit convention", "the Verified split's own", "arm+convention"),
    "arm_config_hashes": (
        "arm config hash (run manifest)",
        "the hash of the manifest's own arm config, and the records' arm_config_hash",
        "arm",
    ),
    "prompts": ("prompt templates (run manifest's prompts)", "the kit's templates", "templates"),
    "seeds": ("seeds (records)", "every record's seed is one the manifest states", "run"),
    "scorer": ("scorer", "the paper's Scoring paragraph; and the records'", "run"),
    "case_ids": ("cases (records)", "every record's case is one the manifest states", "run"),
    "model.id": ("run manifest", "the records' model", "run"),
    "model.revision": ("model revision", "the weights' lock entry; and the records'", "run"),
    "model.server_profile": ("request fields", "the paper's requests; and the records'", "run"),
    "client.base_url": (_NO, "where the server listened", ""),
    "client.model": (_NO, "the served name the requests used", ""),
    "client.model_revision": ("model revision", "the manifest's model revision", "model"),
    "client.profile": ("request fields (run manifest's client)", "the kit's profile of that name", "model"),
    "client.concurrency": (_NO, "requests in flight: server batching, which the rerun tolerance covers", ""),
    "client.timeout_s": (_NO, "a request that times out is a retried or failed row, counted", ""),
    "client.max_retries": (_NO, "a failed row is counted", ""),
    "client.cache_dir": (_NO, "where replies were cached", ""),
    "server.launcher": (
        _NO,
        "how the server was started: what answered (`server`: its launcher's description or GET /version) decides",
        "",
    ),
    "server.base_url": (_NO, "where the server listened", ""),
    "server.model_id": (_NO, "the served name", ""),
    "server.server_profile": ("request fields", "the manifest's model's client profile", "vllm"),
    "server.server": ("model server", "vLLM", "model"),
    "server.server_version": ("vLLM version", "the kit's pinned release", "vllm"),
    "server.revision": ("model revision", "the weights' lock entry", "vllm"),
    "server.weights": (_NO, "a weights file a llama.cpp server names (vLLM serves by revision)", ""),
    "server.command": (_NO, "how it was started (wrapping, paths, port); its settings are `flags`", ""),
    "server.args": (_NO, "the server's flags as typed: the settings `flags` holds, which are checked", ""),
    "server.env": ("server environment", "the kit's launcher for the checkpoint", "vllm"),
    "server.flags": ("server flags", "containers/vllm/serving.json, each flag (flag_label)", "vllm"),
    "server.image": ("server image", "the kit's pinned image", "vllm"),
    "server.model": (_NO, "the weights' lock entry as recorded: its revision is checked", ""),
    "server.determinism.batch_invariant": ("batch-invariant kernels", "the paper's default kernels", "vllm"),
    "server.determinism.note": (_NO, "words", ""),
    "server.determinism.env": ("server environment", "the kit's launcher for the checkpoint", "vllm"),
    "server.contract": (_NO, "the vLLM contract file read (its version stands in when the server states none)", ""),
    "server.generation_config_meaning": (_NO, "words", ""),
    "server.sampling_defaults_logged": (
        _NO,
        "what the server logged the generation config gave: the generation config flag decides it",
        "",
    ),
    "server.sampling_defaults": (
        _NO,
        "what the started server filled in from the weights' generation config: the "
        "generation config flag and the weights' revision decide it",
        "",
    ),
    "server.synthetic": ("synthetic", "a rehearsal server's records are compared nowhere", "everything"),
    "server.log": (_NO, "where the server logged", ""),
    "server.kernels_logged": (
        _NO,
        "which attention kernels the started server logged: the flags and the environment that choose them are checked",
        "",
    ),
    "server.served_model.id": (_NO, "the served name GET /v1/models answered", ""),
    "server.served_model.root": (
        _NO,
        "the weights the server says it loaded (a path or a repository): the revision is checked",
        "",
    ),
    "server.served_model.max_model_len": ("context length", "containers/vllm/serving.json", "vllm"),
    "server.served_model.owned_by": (_NO, "words", ""),
    "server.facts": (_NO, "launcher facts no stage reads", ""),
    "executor.limits": (
        "executor limits",
        "the paper's 256 MB and 5 s, the rest the kit's policy (limit_label)",
        "executor",
    ),
    "executor.policy_hash": (
        _NO,
        "which programs the kit's policy refuses, not what an honest program computes "
        "(the limits the paper states are checked)",
        "",
    ),
    "executor.*": (
        _NO,
        "how the executor ran (backend, workers, recycling, isolation layers, supervisor, container, "
        "seccomp, selftest, counters): the deterministic fields of a result do not depend on it "
        "(executor/result.py DETERMINISTIC_FIELDS)",
        "",
    ),
    "convention.name": ("unit convention", "the Verified split's own", "convention"),
    "convention.source": (_NO, "words: why that convention", ""),
    "convention.reason": (_NO, "words: why that convention", ""),
    "convention.rounding": (_NO, "part of the named convention", ""),
    "order": (_NO, "the request order: no record depends on it (harness.run.schedule)", ""),
    "synthetic": ("synthetic", "a rehearsal's records are compared nowhere", "everything"),
    "summaries": (_NO, "what the run did, counted; the records are read", ""),
    "requests_sent": (_NO, "counted", ""),
    "cache_hits": (_NO, "counted", ""),
    "kind": (_NO, "the manifest's kind (its reader checks it)", ""),
    "manifest_schema": (_NO, "the manifest's schema (its reader checks it)", ""),
}

# What each record states, the field the check names, and what the covering run manifests state for it.
RECORD_CHECKS = {
    "arm_config_hash": ("arm config (records' arm_config_hash)", lambda m, arm: [m.arm_config_hashes.get(arm)]),
    "model_revision": ("model revision (records)", lambda m, arm: [m.model.revision]),
    "server_profile": ("request fields (records' server profile)", lambda m, arm: [m.model.server_profile]),
    "scorer": ("scorer (records)", lambda m, arm: [m.scorer]),
    "dataset_sha256": ("dataset (records' dataset_sha256)", lambda m, arm: [m.dataset.sha256]),
    "synthetic": ("synthetic (records)", lambda m, arm: [m.synthetic]),
    "seed": ("seeds (records)", lambda m, arm: list(m.seeds)),
    "model": ("model (records)", lambda m, arm: [m.model.id]),
    # the model the server answered as: the model the manifest ran (its id, or the served name its client, server or
    # GET /v1/models recorded); none where no server was asked (a model-free arm) or the server named none
    "server_model": (
        "server model (records)",
        lambda m, arm: (
            [None]
            + (
                [
                    n
                    for n in (
                        m.model.id,
                        m.client.model if m.client else None,
                        m.server.model_id if m.server else None,
                        m.server.served_model.id if m.server and m.server.served_model else None,
                    )
                    if n
                ]
                if ARMS.get(arm) is not None and ARMS[arm].needs_model
                else []
            )
        ),
    ),
}


@dataclass(frozen=True)
class Check:
    """One setting of one (model, arm): what was expected (and from where), what the manifests record, and
    whether they agree (None: not recorded)."""

    field: str
    expected: str
    source: str
    ours: str
    ok: bool | None
    subject: str = ""  # the stored (model, arm) it is about, for the settings table
    why: str | None = None  # the reason in full where "field ours, not expected" does not say it

    def reason(self) -> str:
        if self.why is not None:
            return self.why
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


def _text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in sorted(value.items())) + "}" if value else "none"
    text = str(value)
    return text[:12] if _SHA256.fullmatch(text) else text  # a template hash: its first 12 hex digits


class RunSettings:
    """The run manifests of a result set (with their files), its results files' settings and their integrity,
    asked per (model, arm)."""

    def __init__(
        self,
        manifests: Sequence[ManifestFile | RunManifest],
        files: Sequence[ResultFile] = (),
        integrity: Integrity | None = None,
        data: CorrectnessArrays | None = None,
    ):
        self.files_of_manifest = [(f.path, f.manifest) if isinstance(f, ManifestFile) else (None, f) for f in manifests]
        self.manifests = [m for _, m in self.files_of_manifest]
        self.integrity, self.data = integrity, data
        self.results: dict[tuple[str, str], list[ResultFile]] = {}
        self._checks: dict[tuple, list[Check]] = {}
        for f in files:
            loc = results_location(f.path)
            self.results.setdefault((loc.model_dir, loc.arm), []).append(f)

    def covering(self, model: str, arm: str) -> list[RunManifest]:
        """The run manifests that ran `arm` for `model` (a model-free arm: any run of it, whatever model it named)."""
        free = ARMS.get(arm) is not None and not ARMS[arm].needs_model
        return [m for m in self.manifests if arm in m.arms and (free or m.model.id == model)]

    def synthetic(self) -> bool:
        return any(m.synthetic or (m.server is not None and m.server.synthetic) for m in self.manifests) or any(
            json.loads(v) is True for fs in self.results.values() for f in fs for v in f.settings.get("synthetic", {})
        )

    # ---- the checks ---------------------------------------------------------------------------------------
    def checks(self, model: str, arm: str, paper_model: str | None) -> list[Check]:
        """Every setting of `arm` as `model` ran it (each stored component of a hybrid), against the paper's: the
        files' integrity first, then the manifests' settings, then the records' against the manifests'."""
        if (model, arm, paper_model) not in self._checks:
            self._checks[(model, arm, paper_model)] = self._all_checks(model, arm, paper_model)
        return self._checks[(model, arm, paper_model)]

    def _all_checks(self, model: str, arm: str, paper_model: str | None) -> list[Check]:
        out: list[Check] = []
        for part in components(arm):
            who = MODEL_FREE if ARMS.get(part) is not None and not ARMS[part].needs_model else model
            found = self.covering(who, part)
            subject = f"{model_label(who)} {part}"
            out += [dataclasses.replace(c, subject=subject) for c in self._integrity_checks(who, part, found)]
            if not found:
                out.append(
                    Check(
                        "run manifest",
                        "a run manifest naming this arm",
                        "harness run writes one",
                        "none",
                        None,
                        subject,
                        why=f"run manifest: none states {part} for {model_label(who)} (harness run writes one)",
                    )
                )
                continue
            for m in found:
                out += [dataclasses.replace(c, subject=subject) for c in self._manifest_checks(m, part, paper_model)]
            out += [dataclasses.replace(c, subject=subject) for c in self._record_checks(who, part, found, paper_model)]
        return _dedupe(out)

    def reasons(self, model: str, arm: str, paper_model: str | None) -> list[str]:
        return [c.reason() for c in self.checks(model, arm, paper_model) if c.ok is not True]

    def _integrity_checks(self, who: str, part: str, found: list[RunManifest]) -> list[Check]:
        if self.integrity is None:
            return []
        missing = self.integrity.missing_sums()
        if missing:
            return [
                Check(
                    INTEGRITY,
                    "the files as written (SHA256SUMS)",
                    "harness.core.sums",
                    "no SHA256SUMS",
                    None,
                    why=missing,
                )
            ]
        paths = [p for p, m in self.files_of_manifest if p is not None and any(m is f for f in found)]
        return [
            Check(INTEGRITY, "the files as written (SHA256SUMS)", str(self.integrity.sums), "changed", False, why=w)
            for w in self.integrity.problems_for(who, part, [Path(p).resolve() for p in paths])
        ]

    def _manifest_checks(self, m: RunManifest, arm: str, paper_model: str | None) -> list[Check]:
        cfg = m.arms[arm]
        spec = ARMS.get(arm)
        out = [
            Check(
                "scorer",
                PAPER_SCORER,
                f"the paper's Scoring paragraph (.tex line {setting('scoring')['line']})",
                _text(m.scorer),
                m.scorer == PAPER_SCORER,
            )
        ]
        if spec is None or cfg.name != arm:
            return out + [Check("arm", "an arm of the kit's registry", "harness/arms/registry.py", cfg.name, False)]
        kit = spec.config()
        for key, (what, stated) in ARM_FIELDS.items():
            where = f"the kit's arm spec for {arm}" + (
                f"; the paper, .tex line {setting(stated)['line']}" if stated else ""
            )
            ours = getattr(cfg, key)
            out.append(Check(what, _text(kit.get(key)), where, _text(ours), ours == kit.get(key)))
        for key, what in ARM_SPEC_FIELDS.items():
            ours = getattr(cfg, key)
            out.append(
                Check(what, _text(kit.get(key)), f"the kit's arm spec for {arm}", _text(ours), ours == kit.get(key))
            )
        out.append(
            Check(
                "formula version",
                "the benchmark's",
                "the paper scores every arm against the benchmark's formulas",
                _text(cfg.formula_versions) if cfg.formula_versions else "the benchmark's",
                not cfg.formula_versions,
            )
        )
        if not spec.solver.uses_convention:
            out.append(
                Check(
                    "unit convention",
                    "none (the arm depends on none)",
                    f"the kit's arm spec for {arm}",
                    _text(cfg.convention),
                    cfg.convention is None,
                )
            )
        else:
            got = cfg.convention or m.convention.name
            out.append(
                Check(
                    "unit convention",
                    EXACT.name,
                    "the Verified split's own: plain arithmetic (harness/data/conventions.py)",
                    _text(got),
                    got == EXACT.name,
                )
            )
            if m.convention.name != got:
                out.append(
                    Check(
                        "unit convention",
                        got,
                        "the arm's own, which the run's should be",
                        f"{m.convention.name} (the run's)",
                        False,
                    )
                )
        stated, own = m.arm_config_hashes.get(arm), config_hash(to_json(cfg))
        out.append(
            Check(
                "arm config hash (run manifest)",
                "the hash of its own arm config",
                "harness.arms.spec.config_hash",
                _text(stated),
                stated == own,
                why=None
                if stated == own
                else f"arm config hash (run manifest): {_text(stated)} is not the "
                f"hash of the manifest's own {arm} config ({own[:12]}): the manifest contradicts itself",
            )
        )
        kit_templates = template_hashes(cfg.templates)
        differ = sorted(t for t in cfg.templates if m.prompts.get(t) != kit_templates.get(t))
        out.append(
            Check(
                "prompt templates (run manifest's prompts)",
                "the kit's templates",
                "harness/arms/prompts.py",
                ", ".join(differ) + " differ" if differ else "the kit's",
                not differ,
            )
        )
        if m.dataset.revision is not None:
            want = setting("dataset-revision")["values"]["revision"]
            out.append(
                Check(
                    "dataset revision",
                    want,
                    f"the paper (.tex line {setting('dataset-revision')['line']})",
                    _text(m.dataset.revision),
                    m.dataset.revision.startswith(want),
                )
            )
        if spec.formula:
            out.append(catalogue_check())
        if cfg.needs_model:
            out += _server_checks(m, paper_model)
        if cfg.needs_executor:
            out += _executor_checks(m)
        return out

    def _record_checks(self, who: str, part: str, found: list[RunManifest], paper_model: str | None) -> list[Check]:
        """The records' own settings against the manifests that cover them (module docstring)."""
        files = self.results.get((model_slug(who), part), [])
        seen: dict[str, dict[str, str]] = {}  # setting -> its JSON value -> the first file stating it
        for f in files:
            for name, values in f.settings.items():
                for v in values:
                    line = f.lines.get(name, {}).get(v)
                    seen.setdefault(name, {}).setdefault(v, "/".join(f.path.parts[-3:]) + (f":{line}" if line else ""))
        out: list[Check] = []
        for name, (label, of_manifest) in RECORD_CHECKS.items():
            allowed = {json.dumps(v, sort_keys=True, ensure_ascii=False) for m in found for v in of_manifest(m, part)}
            bad = {v: where for v, where in seen.get(name, {}).items() if v not in allowed}
            if not bad:
                out.append(Check(label, "the run manifest's", "the records", "the run manifest's", True))
                continue
            stated = " or ".join(sorted(_text(json.loads(v)) for v in allowed)) or "none"
            for v, where in sorted(bad.items()):
                why = (
                    f"{label}: the records state {_text(json.loads(v))} (e.g. {where}), the run manifest "
                    f"{stated}: records and manifest disagree"
                )
                if name == "arm_config_hash":
                    named = _named_field(json.loads(v), found, part, seen)
                    if named:
                        why += f" ({named})"
                out.append(Check(label, stated, "the run manifest", _text(json.loads(v)), False, why=why))
        out += self._recomputed_checks(files)
        out += self._sampling_checks(files, found, part)
        if self.data is not None:
            out += self._case_check(who, part, found)
        if ARMS.get(part) is not None and ARMS[part].needs_model and model_key(paper_model) is not None:
            want = sorted(set(PAPER_REQUEST_FIELDS) | set(SERVER_PROFILES.lookup("vllm").extra))
            got = sorted({v for v in seen.get(REQUEST_FIELDS, {})})
            bad = [json.loads(v) for v in got if json.loads(v) != want]
            out.append(
                Check(
                    "request fields (records' requests)",
                    ", ".join(want),
                    "the paper's requests set only "
                    "temperature and the output-token cap (Appendix, Arm protocols and settings)",
                    "; ".join(", ".join(b) for b in bad) if bad else ", ".join(want),
                    not bad,
                )
            )
        return out

    def _recomputed_checks(self, files: list[ResultFile]) -> list[Check]:
        """Every field the records state otherwise than the kit recomputes it (harness.run.recompute, in the analysis's
        one read: the rescoring `harness verify` uses), and a split the kit cannot open: the first record named by file
        and line, the records counted."""
        out: list[Check] = []
        counts: dict[str, int] = {}
        first: dict[str, str] = {}
        for f in files:
            r = f.recomputed
            if r.split_missing is not None:
                why = (
                    f"split missing: {f.path.parts[-3]}/{f.path.parts[-2]}/{f.path.name} names the split "
                    f"{r.split_missing}, which the kit cannot open ({r.split_reason}): its records' correctness, "
                    "cases and gold cannot be recomputed (`harness data fetch` gets the pinned split)"
                )
                out.append(
                    Check(
                        "split (records' dataset)",
                        "a split the kit can open",
                        "harness.run.recompute",
                        f"{r.split_missing} missing",
                        False,
                        why=why,
                    )
                )
            for name, n in r.counts.items():
                counts[name] = counts.get(name, 0) + n
            for line, name, stored, recomputed in r.shown:
                first.setdefault(
                    name, f"{'/'.join(f.path.parts[-3:])}:{line}: {name} stored {stored}, recomputed {recomputed}"
                )
        for name, n in sorted(counts.items()):
            out.append(
                Check(
                    f"recomputed {name} (records)",
                    "what the kit recomputes",
                    "harness.run.recompute",
                    f"{n:,} records differ",
                    False,
                    why=f"recomputed {name}: {n:,} record(s) state it otherwise than the kit recomputes it "
                    f"(e.g. {first.get(name, '?')}): records not comparable",
                )
            )
        return out

    def _sampling_checks(self, files: list[ResultFile], found: list[RunManifest], part: str) -> list[Check]:
        """The decoding each file's requests went out with against its arm's config in the covering manifests: the
        arm's temperature must be among them, and every one the arm's own or a solver option's (a greedy extraction
        or repair call of a sampled arm: 0.0 where the solver makes one); the output-token caps likewise."""
        out: list[Check] = []
        for m in found:
            cfg = m.arms[part]
            opts = cfg.solver_options or {}
            temps = {float(cfg.temperature)} | {float(v) for k, v in opts.items() if "temperature" in k}
            if any(k.startswith(("extract", "repair")) for k in opts) or cfg.solver in ("recalled", "router"):
                temps.add(0.0)
            caps = {cfg.max_tokens} | {v for k, v in opts.items() if k.endswith("max_tokens")}
            for f in files:
                rel = "/".join(f.path.parts[-3:])
                first = {
                    float(json.loads(v)): line
                    for v, line in f.lines.get("request.temperature", {}).items()
                    if json.loads(v) is not None
                }
                bad = sorted(t for t in first if t not in temps)
                if first and float(cfg.temperature) not in first and not bad:
                    bad = sorted(first)
                for t in bad:
                    out.append(
                        Check(
                            "sampling (records' requests)",
                            f"temperature {_text(cfg.temperature)}",
                            "the run manifest's arm config",
                            f"temperature {t:g}",
                            False,
                            why=f"sampling (records' requests): {rel}:{first[t]}: request temperature {t:g}, "
                            f"the {part} arm's config in the run manifest states {cfg.temperature:g}: "
                            "records and manifest disagree",
                        )
                    )
                for v, line in f.lines.get("request.max_tokens", {}).items():
                    cap = json.loads(v)
                    if cap is not None and cap not in caps:
                        out.append(
                            Check(
                                "sampling (records' requests)",
                                f"output-token cap {_text(cfg.max_tokens)}",
                                "the run manifest's arm config",
                                f"output-token cap {cap}",
                                False,
                                why=f"sampling (records' requests): {rel}:{line}: request max_tokens {cap}, "
                                f"the {part} arm's config in the run manifest states {cfg.max_tokens}: "
                                "records and manifest disagree",
                            )
                        )
        if not out:
            out.append(
                Check(
                    "sampling (records' requests)",
                    "the run manifest's arm config",
                    "the records",
                    "the run manifest's",
                    True,
                )
            )
        return _dedupe(out)

    def _case_check(self, who: str, part: str, found: list[RunManifest]) -> list[Check]:
        d = self.data
        # a model-free arm's run is shared by every model of the analysis (harness.analysis.stats.arrays)
        holder = who if who in d.models else next((m for m in d.models if d.has(m, part)), None)
        if holder is None or part not in d.arms:
            return []
        have = ~np.all(np.isnan(d.block(holder, part)), axis=0)
        stated = set().union(*(set(m.case_ids) for m in found))
        extra = [c for c, ok in zip(d.case_ids, have) if ok and c not in stated]
        if not extra:
            return [Check("cases (records)", "the run manifest's", "the records", "the run manifest's", True)]
        return [
            Check(
                "cases (records)",
                "the run manifest's case_ids",
                "the run manifest",
                f"{len(extra)} others",
                False,
                why=f"cases (records): {len(extra):,} recorded case(s) the run manifest does not state "
                f"(e.g. {extra[0]}): records and manifest disagree",
            )
        ]


def _named_field(record_hash: str, found: list[RunManifest], arm: str, seen: dict) -> str | None:
    """Which field of the manifest's arm config, set to a value the records' requests or the kit's spec carry,
    gives the records' arm config hash: 'the records' hash is the manifest's config at temperature 0.7'."""
    kit = ARMS[arm].config() if arm in ARMS else {}
    observed = {
        "temperature": [json.loads(v) for v in seen.get("request.temperature", {})],
        "max_tokens": [json.loads(v) for v in seen.get("request.max_tokens", {})],
    }
    for m in found:
        cfg = to_json(m.arms[arm])
        for key, (what, _) in {**ARM_FIELDS, **{k: (w, None) for k, w in ARM_SPEC_FIELDS.items()}}.items():
            for value in [*observed.get(key, []), kit.get(key)]:
                if value is not None and value != cfg.get(key) and config_hash({**cfg, key: value}) == record_hash:
                    return f"the records' hash is the manifest's {arm} config with {what} {_text(value)}"
    return None


def _server_checks(m: RunManifest, paper_model: str | None) -> list[Check]:
    key = model_key(paper_model)
    if key is None:
        return []  # not a checkpoint of the paper: the model itself is the reason
    server = m.server
    # What answered decides, never the launcher's name: a server that says it is vLLM (its launcher's description, or
    # GET /version: a user's own endpoint under the external launcher) is judged as one; what its launcher could not
    # record (flags, environment) is "not recorded", never "differs".
    vllm_served = server is not None and server.server == "vLLM"
    shown = "vllm" if vllm_served else server.launcher if server is not None else None
    said = (
        f"model server {shown}, not vllm (the server says it is {server.server})"
        if server is not None and not vllm_served and server.server
        else None
    )
    out = [
        Check(
            "model server",
            "vllm",
            f"the paper serves its checkpoints through vLLM (.tex line {setting('tensor-parallel')['line']})",
            _text(shown),
            vllm_served if shown else None,
            why=said,
        )
    ]
    profile = m.model.server_profile
    out.append(
        Check(
            "request fields",
            "vllm (temperature and output-token cap only)",
            "the paper's requests set only those (Appendix, Arm protocols and settings)",
            _text(profile),
            profile == "vllm" if profile else None,
        )
    )
    if m.client is not None:
        want = SERVER_PROFILES.lookup(profile).describe() if profile in SERVER_PROFILES else None
        got = to_json(m.client.profile)
        out.append(
            Check(
                "request fields (run manifest's client)",
                f"the kit's {profile} profile",
                "harness/model/client.py SERVER_PROFILES",
                _text(got),
                got == want,
            )
        )
        out.append(
            Check(
                "model revision",
                "the manifest's model revision",
                "the run manifest's model",
                _text(m.client.model_revision),
                m.client.model_revision == m.model.revision,
            )
        )
    if not vllm_served:
        return out
    lock, want = vllm.model_entry(key), vllm.serving_flags(key)
    revision = m.model.revision
    out.append(
        Check(
            "model revision",
            lock["revision"],
            f"containers/vllm/models.lock.json {key} (the paper states none)",
            _text(revision),
            revision == lock["revision"] if revision else None,
        )
    )
    out.append(
        Check(
            "model revision",
            lock["revision"],
            f"containers/vllm/models.lock.json {key}: the server's",
            _text(server.revision),
            server.revision == lock["revision"] if server.revision else None,
        )
    )
    out.append(
        Check(
            "request fields",
            "the manifest's model's profile",
            "the run manifest's model",
            _text(server.server_profile),
            server.server_profile == profile,
        )
    )
    flags = sorted((set(want) | set(server.flags)) - set(NOT_SERVER_FLAGS))
    for flag in flags:  # a flag the pinned set leaves out (7B: quantization) is unset
        what = flag_label(flag)
        out.append(
            Check(
                what,
                _text(want.get(flag)),
                f"containers/vllm/serving.json {key} (the paper: 7B bf16, 32B AWQ 4-bit, tensor parallel 1, Mistral 2)",
                _text(server.flags.get(flag)),
                server.flags.get(flag) == want.get(flag) if server.flags else None,
            )
        )
    served = server.served_model.max_model_len if server.served_model else None
    if served is not None:  # what the server itself answered (GET /v1/models): the one evidence an endpoint gives
        out.append(
            Check(
                SERVER_FLAGS["max_model_len"],
                _text(want.get("max_model_len")),
                f"containers/vllm/serving.json {key}: the server's own answer at GET /v1/models",
                _text(served),
                served == want.get("max_model_len"),
            )
        )
    for flag in SERVER_FLAGS:
        if flag not in flags:
            out.append(Check(SERVER_FLAGS[flag], "none", f"containers/vllm/serving.json {key}", "none", True))
    pinned = vllm.image_lock().get("vllm_version")
    ran = server.server_version or (server.contract.vllm_version if server.contract else None)
    out.append(
        Check(
            "vLLM version",
            _text(pinned),
            "containers/vllm/image.lock.json (the paper names none)",
            _text(ran),
            ran == pinned if ran else None,
        )
    )
    invariant = server.determinism.batch_invariant if server.determinism else None
    out.append(
        Check(
            "batch-invariant kernels",
            "off",
            "the paper ran vLLM's default kernels (containers/vllm/serving.json)",
            "on" if invariant else "off" if invariant is False else "none",
            (not invariant) if invariant is not None else None,
        )
    )
    kit = _launcher_description(key, vllm.vllm_dir())
    env = {**server.env, **(server.determinism.env if server.determinism else {})}
    kit_env = {**kit.env, **(kit.determinism.env if kit.determinism else {})}
    out.append(
        Check(
            "server environment",
            _text(kit_env),
            f"the kit's vLLM launcher for {key}",
            _text(env),
            env == kit_env if env else None,
        )
    )
    out.append(
        Check(
            "server image",
            _text(kit.image),
            "containers/vllm/image.lock.json",
            _text(server.image),
            server.image == kit.image if server.image else None,
        )
    )
    return out


@cache
def _launcher_description(key: str, pins: Path) -> ServerInfo:
    """What the kit's vLLM launcher would start for a checkpoint (its environment and image), from
    the pins in `pins` (the cache's key: a moved pins directory is read afresh)."""
    return VllmLauncher(key).describe()


def _executor_checks(m: RunManifest) -> list[Check]:
    ex = m.executor
    if ex is None:
        return [Check("executor limits", "recorded", "harness run records the executor", "none", None)]
    limits = ex.limits
    paper = setting("executor-memory")
    mb = f"{paper['values']['memory_mb']:g} MB"
    out = [
        Check(
            "executor memory",
            mb,
            f"the paper, .tex line {paper['line']}",
            f"{int(limits['address_space_bytes']) // 2**20} MB" if "address_space_bytes" in limits else "none",
            int(limits["address_space_bytes"]) == int(paper["values"]["memory_mb"]) * 2**20
            if "address_space_bytes" in limits
            else None,
        ),
        Check(
            "executor wall clock",
            f"{paper['values']['wall_s']:g} s",
            f"the paper, .tex line {paper['line']}",
            f"{float(limits['wall_seconds']):g} s" if "wall_seconds" in limits else "none",
            float(limits["wall_seconds"]) == float(paper["values"]["wall_s"]) if "wall_seconds" in limits else None,
        ),
    ]
    for name, value in executor_policy.LIMITS.items():
        if name in ("address_space_bytes", "wall_seconds"):
            continue
        out.append(
            Check(
                limit_label(name),
                _text(value),
                "the kit's executor/policy.py LIMITS",
                _text(limits.get(name)),
                limits.get(name) == value if name in limits else None,
            )
        )
    for name in sorted(set(limits) - set(executor_policy.LIMITS)):
        out.append(
            Check(
                limit_label(name),
                "none (not a limit of the kit's policy)",
                "executor/policy.py LIMITS",
                _text(limits[name]),
                False,
            )
        )
    return out


def limit_label(name: str) -> str:
    """The field an executor limit's check names."""
    return {"address_space_bytes": "executor memory", "wall_seconds": "executor wall clock"}.get(
        name, f"executor {name}"
    )


def flag_label(flag: str) -> str:
    """The field a server flag's check names."""
    return SERVER_FLAGS.get(flag, f"server flag {flag}")


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
    return Check(
        "formula texts (completeness audit)",
        "{} could not reproduce, {} wrong or incomplete, {} complete".format(*want),
        "the paper, .tex lines {}, {}".format(
            number("text:limitations:formula-audit#unable")["line"], number("text:caption:s17b-counts#complete")["line"]
        ),
        "{} could not reproduce, {} wrong or incomplete, {} complete".format(*ours),
        ours == want,
    )


def identity_rows(model_rows: list[tuple[str, bool]], dataset: str, dataset_ok: bool, draws: int) -> list[dict]:
    """The settings table's first rows: the models, the dataset, the calculator audit, the bootstrap draws."""
    flagged, replaced = _counts("text:limitations:audit-flags", ("flagged", "replaced"))
    (clean,) = _counts("text:results:audit-clean-count", ("no_issue",))
    groups = Counter(e.audit_group for e in CATALOGUE.values())
    ours = (groups["replaced"] + groups["other_concern"], groups["replaced"], groups["no_issue"])
    others = [m for m, ok in model_rows if not ok]
    want_draws = int(setting("bootstrap-draws")["values"]["draws"])
    return [
        {
            "setting": "models",
            "paper": ", ".join(paper_checkpoints()) + " (the paper's checkpoints)",
            "ours": ", ".join(m for m, _ in model_rows) or "none (library only)",
            "status": f"differs: {', '.join(others)} {'is' if len(others) == 1 else 'are'} none of the paper's "
            "checkpoints: shown, never judged"
            if others
            else "matches",
        },
        {
            "setting": "dataset",
            "paper": f"MedCalc-Bench Verified test split, {paper_cases():,} cases, revision "
            f"{setting('dataset-revision')['values']['revision']} (.tex lines "
            f"{setting('dataset')['line']}, {setting('dataset-revision')['line']})",
            "ours": dataset,
            "status": "matches" if dataset_ok else "differs: no number is judged",
        },
        {
            "setting": "calculator audit (s9)",
            "paper": f"{flagged} flagged, {replaced} replaced by a guideline, {clean} "
            "with no issue (.tex lines 293-294, 217)",
            "ours": "{} flagged, {} replaced, {} with no issue (the kit's catalogue; beyond the four replaced, which "
            "calculators is its own reading)".format(*ours),
            "status": "matches (counts)"
            if ours == (flagged, replaced, clean)
            else "differs: the replaced calculators' numbers are not the paper's",
        },
        {
            "setting": "bootstrap draws",
            "paper": f"{want_draws:,} (.tex line {setting('bootstrap-draws')['line']})",
            "ours": f"{draws:,}",
            "status": "matches"
            if draws == want_draws
            else "differs: interval ends carry more Monte Carlo error; the claims' tolerance includes it",
        },
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
            r = rows.setdefault(
                (field, c.expected, c.source),
                {
                    "setting": field,
                    "expected": c.expected,
                    "source": c.source,
                    "ours": set(),
                    "who": set(),
                    "differs": [],
                    "unrecorded": [],
                },
            )
            r["ours"].add(c.ours)
            r["who"].add(c.subject)
            if c.ok is False:
                r["differs"].append(c.subject)
            elif c.ok is None:
                r["unrecorded"].append(c.subject)
    split = {field for field, *_ in rows if sum(k[0] == field for k in rows) > 1}
    out = []
    for (field, _, _), r in rows.items():
        status = (
            "differs for " + ", ".join(sorted(set(r["differs"]))) + ": not comparable"
            if r["differs"]
            else "not recorded for " + ", ".join(sorted(set(r["unrecorded"]))) + ": not comparable"
            if r["unrecorded"]
            else "matches"
        )
        name = field + (f" ({', '.join(sorted(r['who']))})" if field in split else "")
        out.append(
            {
                "setting": name,
                "paper": f"{r['expected']} ({r['source']})",
                "ours": ", ".join(sorted(r["ours"])),
                "status": status,
                "field": field,
                "differs": sorted(set(r["differs"]) | set(r["unrecorded"])),
            }
        )
    return out


def dataset_revision_problem() -> str | None:
    """Why the pinned Verified split is not the revision the paper read, or None."""
    want = setting("dataset-revision")["values"]["revision"]
    try:
        got = str(pin_entry("verified").get("revision") or "")
    except DatahubError as exc:
        return f"the pins file could not be read ({exc})"
    if not got.startswith(want):
        return (
            f"the pinned Verified revision is {got or 'not recorded'}, the paper read {want} "
            f"(.tex line {setting('dataset-revision')['line']})"
        )
    return None
