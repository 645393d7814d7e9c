"""What one comparison is about: the analysis, its dataset, its run settings, and the reasons a number or a
claim of the user's is not the paper's setting.

`Context.reasons` is the one place that decides comparability, per number: the result set is not synthetic
(rehearsal records are never a model's, and a set holding them is compared nowhere); the model is the paper's
checkpoint; the dataset is the Verified test split at the paper's revision (the model-free Gold-Solve library,
which holds by construction, also on a balanced Verified split such as the one-shot one); every (model, arm)
behind the number ran in the paper's setting (harness.analysis.comparison.settings); and the number's own cases
and seeds are the paper's (its subset's 20 cases per calculator at each of seeds 42-46; a gap's paired ones).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.analysis.comparison.ours import Stat, expected_cases, subset_calculators
from harness.analysis.comparison.settings import RunSettings, dataset_revision_problem
from harness.analysis.comparison.values import cases_per_calculator, paper_checkpoints, paper_seeds
from harness.analysis.results_analysis import Analysis
from harness.arms.registry import model_free_arms
from harness.data.calculator_ids import CALCULATOR_IDS
from harness.data.conventions import KNOWN_DATASETS
from harness.data.pins import pinned_sha256
from harness.model.rehearsal.labels import MODEL_FREE, is_synthetic_model

SYNTHETIC = "synthetic (rehearsal records, never a model)"
MODEL_FREE_ARMS = model_free_arms()
ONE_SHOT_SHA = next(k.sha256 for k in KNOWN_DATASETS if "one-shot" in k.label)


# Calculator subsets that are the kit's own reading of the paper (harness/calculators/catalogue.py): the paper names
# the four replaced calculators (so 'replaced' and 'not_replaced' are its own), but table s9's body (which 12 have
# another concern, which 39 none) is not in the source, so a number on these two subsets is not on its calculators.
_AUDIT = (
    "the kit's audit groups beyond the four replaced calculators are its own reading (the paper's s9 body, "
    "which names them, is not in the source)"
)
KIT_READING = {s: f"calculator set '{s}': {_AUDIT}" for s in ("no_issue", "other_concern")}


@dataclass(frozen=True)
class DatasetKind:
    kind: str  # "verified" | "one-shot" | "v1.0" | "unknown"
    label: str
    balanced: bool

    def reason(self, model_free: bool) -> str | None:
        """Why this dataset keeps a number from being compared, or None."""
        if self.kind == "verified":
            return dataset_revision_problem()
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


def same_model(ours: str, paper: str) -> bool:
    return ours.rsplit("/", 1)[-1].lower() == paper.lower()


def seeds_text(seeds: Iterable[int]) -> str:
    s = sorted(seeds)
    if s and s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"{s[0]}-{s[-1]}"
    return ", ".join(map(str, s)) or "none"


@dataclass
class Context:
    an: Analysis
    settings: RunSettings
    kind: DatasetKind = field(init=False)
    synthetic: bool = field(init=False)

    def __post_init__(self) -> None:
        self.kind = dataset_kind(self.an)
        self.synthetic = self.settings.synthetic() or any(is_synthetic_model(m) for m in self.an.data.models)
        self.looked_at: set[tuple[str, str, str | None]] = set()

    @property
    def draws(self) -> int:
        return int(self.an.resampler.draws)

    def models_for(self, paper_model: str | None, arms: tuple[str, ...]) -> list[str]:
        """The user's models to set beside a paper column: the library for model-free arms; the paper's checkpoint
        when present; else every model that ran the arms (each then not comparable, its arithmetic shown)."""
        d = self.an.data
        if all(a in MODEL_FREE_ARMS for a in arms):  # one run stands for every model (arrays share it)
            libs = sorted((m for m in d.models if all(d.has(m, a) for a in arms)), key=lambda m: m != MODEL_FREE)
            return libs[:1]
        ran = [m for m in d.models if m != MODEL_FREE and all(d.has(m, a) for a in arms)]
        if paper_model:
            same = [m for m in ran if same_model(m, paper_model)]
            if same:
                return same
        # no run of this checkpoint: a model that is none of the paper's checkpoints is shown (not comparable);
        # another of the paper's checkpoints never stands in for it
        return [m for m in ran if not any(same_model(m, p) for p in paper_checkpoints())]

    def reasons(
        self,
        model: str,
        paper_model: str | None,
        arms: tuple[str, ...],
        stat: Stat | None = None,
        subset: str = "full",
        construction: bool = False,
    ) -> list[str]:
        """Every reason the user's number for (model, arms) on `subset` is not the paper's setting; [] when it is.
        `construction`: a value that holds by construction (the library's 100% on its cases, 40% of a balanced
        set), which any balanced split of the Verified benchmark shows as well as the 1,100 cases do."""
        model_free = all(a in MODEL_FREE_ARMS for a in arms)
        if self.synthetic:  # compared nowhere; its settings still go to the settings table
            self.looked_at.update((model, arm, None) for arm in arms)
            return [SYNTHETIC]
        out = []
        if not model_free and paper_model and not same_model(model, paper_model):
            out.append(f"different model ({model}, not {paper_model})")
        ds = self.kind.reason(model_free)
        if ds:
            out.append(ds)
        own = paper_model if paper_model and same_model(model, paper_model) else None  # its server is the paper's
        for arm in arms:
            self.looked_at.add((model, arm, own))
            out += [f"{arm}: {r}" for r in self.settings.reasons(model, arm, own)]
        if subset in KIT_READING:
            out.append(KIT_READING[subset])
        if stat is not None and not (
            construction and self.kind.balanced and self.kind.kind in ("verified", "one-shot")
        ):
            out += self.coverage(stat, subset, model_free)
        return list(dict.fromkeys(out))

    def coverage(self, stat: Stat, subset: str, model_free: bool) -> list[str]:
        """Missing cases or seeds of one number (its own, not the result set's)."""
        out = []
        want = paper_seeds()
        if not model_free and tuple(sorted(stat.seeds)) != want:
            out.append(f"seeds {seeds_text(stat.seeds)}, the paper's {seeds_text(want)}")
        need = expected_cases(self.an, subset)
        if stat.n_cases < need:
            out.append(f"{stat.n_cases:,} of the paper's {need:,} cases" + ("" if model_free else " at every seed"))
        calcs = stat.extra.get("calcs")
        if calcs is not None:
            out += self.calculator_coverage(calcs, subset, model_free)
        return out

    def calculator_coverage(self, calcs: dict[int, int], subset: str, model_free: bool) -> list[str]:
        """A number's cases by calculator against the paper's: each of the subset's calculators (all 55 for the full
        set) with its 20 cases, no other calculator; anything else is the subset it is, however many cases it has."""
        want = subset_calculators(self.an, subset)
        want = set(CALCULATOR_IDS) if want is None else set(want)
        per = cases_per_calculator()
        at = "" if model_free else " at every seed"
        missing = sorted(c for c in want if calcs.get(c, 0) == 0)
        odd = sorted(c for c in want if 0 < calcs.get(c, 0) != per)
        outside = sorted(c for c in calcs if c not in want)
        if not (missing or odd or outside):
            return []
        parts = []
        if missing:
            parts.append(
                f"calculator{'s' * (len(missing) > 1)} {', '.join(map(str, missing[:5]))}"
                f"{' ...' if len(missing) > 5 else ''} missing"
            )
        for c in odd[:3]:
            parts.append(f"calculator {c} has {calcs[c]} cases, the paper {per}")
        if outside:
            parts.append(
                f"calculator{'s' * (len(outside) > 1)} {', '.join(map(str, outside[:5]))} not among the paper's"
            )
        have = len(want) - len(missing)
        return [
            f"a subset, not the paper's set: {have} of its {len(want)} calculators{at} ({'; '.join(parts)}; "
            f"{sum(calcs.values()):,} cases)"
        ]
