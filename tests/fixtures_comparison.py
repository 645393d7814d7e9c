"""Hand-made result sets for `harness compare`, as a user's run of the paper's setting would store them.

NOT results of any model. Each set is what `make reproduce` would leave for Qwen2.5-7B and Qwen2.5-32B-AWQ on
Open-book arithmetic, Program-Solve and the Gold-Solve library at seeds 42-46 over 1,100 cases of 55 calculators,
with correctness drawn so that the set's statistics are the paper's own (Table 1's accuracies on the full set,
the library's 440 and the four replaced calculators, and the text's no-answer shares: read from
harness/analysis/paper_values.json, never typed here), calculator-level spread wide enough for Table 2's
intervals (7B crosses zero, 32B clears it), and seed-to-seed flips at the paper's rerun agreement (about 95% at
7B, 99.8% at 32B). They are built with the kit's own types: `harness.run.record.Record` in a
`harness.run.store.ResultStore`, typed `harness.run.manifest.RunManifest`s with the arms' real configs
(harness.arms.registry), the vLLM launcher's real description (harness.model.vllm.launcher.VllmLauncher.describe())
and a real process-backend executor's `describe()`.

The Verified test split cannot be fetched here; its identity is a stand-in sha256 (`VERIFIED_SHA`), pinned in a
copy of checksums/datasets.json at the paper's revision (MATHSOLVER_PINS_FILE), so the kit recognises the set as
the Verified split exactly as it would a downloaded one.
"""

from __future__ import annotations

import copy
import csv
import datetime
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pytest

from executor.api import Executor
from harness.analysis.comparison.values import number, paper_seeds
from harness.analysis.stats import catalog
from harness.arms.options import with_convention
from harness.arms.prompts import template_hashes
from harness.arms.registry import ARMS
from harness.core.paths import REPO_ROOT
from harness.core.sums import write_own_sums
from harness.core.typed_json import from_json, to_json
from harness.data.calculator_ids import CALCULATOR_IDS
from harness.data.dataset import Dataset, load_dataset
from harness.model.client import SERVER_PROFILES
from harness.model.server_info import ServerInfo
from harness.model.vllm.launcher import VllmLauncher
from harness.model.vllm.locks import image_lock
from harness.run.manifest import (
    ClientInfo,
    ClientProfile,
    ConventionRef,
    ExecutorInfo,
    ModelRef,
    RunManifest,
    arm_configs,
    dataset_ref,
    origin,
    read_manifests,
    write_manifest,
)
from harness.run.record import Record
from harness.run.schedule import ARM_MAJOR
from harness.run.store import ResultStore, read_result_file, record_key, results_path
from harness.scoring.scorers import score_value


def stand_in_split_bytes() -> bytes:
    """The stand-in Verified split as a loadable CSV: 1,100 cases, 20 per calculator of the benchmark's 55, Row Numbers
    1..1,100 in calculator order (the `Cases` below), each a copy of one of the bundled slice's two cases of that
    calculator (note, gold answer, limits) under its new row number. Not the benchmark's cases: a split the kit can
    open, so that compare rescores every record against its gold as it would against the downloaded one."""
    with open(REPO_ROOT / "harness" / "data" / "test_slice.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    by_calc: dict[int, list[dict]] = {}
    for r in rows:
        by_calc.setdefault(int(r["Calculator ID"]), []).append(r)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    row = 0
    for c in sorted(CALCULATOR_IDS):
        for k in range(CASES_PER_CALC):
            row += 1
            w.writerow({**by_calc[c][k % len(by_calc[c])], "Row Number": str(row)})
    return out.getvalue().encode("utf-8")


CASES_PER_CALC = 20
SPLIT_BYTES = stand_in_split_bytes()
VERIFIED_SHA = hashlib.sha256(SPLIT_BYTES).hexdigest()
VERIFIED_FILENAME = "data/stand-in-test.csv"
VERIFIED_REVISION = "5488179" + hashlib.sha256(b"revision").hexdigest()[:33]
Q7, Q32 = "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-32B-Instruct-AWQ"
MISTRAL, PHI = "mistralai/Mistral-7B-Instruct-v0.3", "microsoft/Phi-3.5-mini-instruct"  # the other families
KEYS = {Q7: "qwen2.5-7b", Q32: "qwen2.5-32b-awq", MISTRAL: "mistral-7b", PHI: "phi-3.5-mini"}
COL = {Q7: "Qwen2.5-7B", Q32: "Qwen2.5-32B"}
ROW = {"open-book": "Open-book arithmetic", "program-solve": "Program-Solve", "blind": "Blind Program-Solve"}
OTHER_COL = {"open-book": "Arithmetic, full", "program-solve": "Code, full"}  # Table 1's lower block
FLIP = {Q7: 0.016, Q32: 0.0004, MISTRAL: 0.016, PHI: 0.016}  # per-cell flip rate: pairwise seed agreement ~95% /
# ~99.8% (the paper gives the 7B rate for the other families too)
SPREAD = {Q7: 26.0, Q32: 28.0, MISTRAL: 26.0, PHI: 26.0}  # SD (pp) of Program-Solve's lead over Open-book across
# calculators


def paper_accuracy(model: str, arm: str, subset: str) -> float:
    if model in (MISTRAL, PHI):
        return number(f"table1-other:{model.rsplit('/', 1)[-1]}:{OTHER_COL[arm]}")["value"]
    if subset == "replaced":
        name = {
            ("program-solve", Q7): "ps_7b",
            ("program-solve", Q32): "ps_32b",
            ("open-book", Q7): "ob_7b",
            ("open-book", Q32): "ob_32b",
        }[(arm, model)]
        return number(f"text:limitations:replaced#{name}")["value"]
    return number(f"table1:{ROW[arm]}:{COL[model]}:{subset}")["value"]


def paper_none_share(model: str) -> float:
    return number(f"text:results:no-answer#ps_none_{'7b' if model == Q7 else '32b'}")["value"]


@dataclass
class Targets:
    """Correct case-seed cells per (model, arm) on the library's calculators, the replaced ones and the full set."""

    accuracy: dict = field(default_factory=dict)  # (model, arm) -> {"impl": %, "replaced": %, "full": %}
    none_share: dict = field(default_factory=dict)  # model -> % of Program-Solve rows with no valid answer

    @classmethod
    def paper(cls) -> Targets:
        t = cls()
        for m in (Q7, Q32):
            for a in ("open-book", "program-solve"):
                t.accuracy[(m, a)] = {s: paper_accuracy(m, a, s) for s in ("impl", "replaced", "full")}
            t.none_share[m] = paper_none_share(m)
        return t

    @classmethod
    def blind(cls) -> Targets:
        """Blind Program-Solve at 7B and 32B: Table 1's library and full-set values (the rerun-agreement claims)."""
        t = cls()
        for m in (Q7, Q32):
            t.accuracy[(m, "blind")] = {s: paper_accuracy(m, "blind", s) for s in ("impl", "full")}
            t.none_share[m] = 0.0
        return t

    @classmethod
    def other_families(cls) -> Targets:
        """Mistral-7B and Phi-3.5-mini on Program-Solve and Open-book arithmetic: Table 1's lower block (the full set
        only); no no-answer share is stated for them (none drawn)."""
        t = cls()
        for m in (MISTRAL, PHI):
            for a in ("open-book", "program-solve"):
                t.accuracy[(m, a)] = {"full": paper_accuracy(m, a, "full")}
            t.none_share[m] = 0.0
        return t


class Cases:
    """1,100 cases: 20 per calculator of the benchmark's 55, Row Numbers 1..1,100; each calculator's group by the
    subsets the paper reports on (the library's calculators, the replaced ones, the audit-clean ones)."""

    def __init__(self):
        self.calcs = sorted(CALCULATOR_IDS)
        self.calc = np.repeat(self.calcs, CASES_PER_CALC)
        self.rows = np.arange(1, len(self.calc) + 1)
        self.ids = [f"{c}-{r}" for c, r in zip(self.calc, self.rows)]
        lib, groups = catalog.library_calculators(), catalog.audit_groups()
        self.group = {c: ("lib-" if c in lib else "") + groups[c] for c in self.calcs}
        self.subsets = {
            "impl": {c for c in self.calcs if c in lib},
            "replaced": {c for c in self.calcs if groups[c] == "replaced"},
            "no_issue": {c for c in self.calcs if groups[c] == "no_issue"},
            "full": set(self.calcs),
        }


OB_SPREAD = 40.0  # SD (pp) of Open-book's accuracy across calculators
SHARED = 0.95  # share of calculators whose cases are hard or easy for both arms alike
WIDE = 0.25  # share of calculators where Program-Solve's lead departs from its group's


def _fix_sum(counts: np.ndarray, target: int, rng, unit: int) -> np.ndarray:
    """Move whole cases (`unit` cells: one case at every seed) between calculators, then single cells, until the
    counts sum to `target` (each stays in [0, 100]); so a case is right at every seed or at none but for one."""
    counts = (np.round(counts / unit) * unit).astype(int)
    while abs(counts.sum() - target) >= unit or counts.sum() != target:
        gap = target - counts.sum()
        step = (unit if abs(gap) >= unit else 1) * (1 if gap > 0 else -1)
        room = np.flatnonzero(counts + step <= 100) if step > 0 else np.flatnonzero(counts + step >= 0)
        counts[rng.choice(room)] += step
    return counts


def _group_totals(cases: Cases, targets: dict[str, int]) -> dict[str, int]:
    """Correct cells per calculator group meeting each subset's target (raking from an even start)."""
    groups = sorted(set(cases.group.values()))
    size = {g: 100 * sum(cases.group[c] == g for c in cases.calcs) for g in groups}
    tot = {g: targets["full"] * size[g] / size_sum for g in groups} if (size_sum := sum(size.values())) else {}
    members = {s: {cases.group[c] for c in cases.subsets[s]} for s in targets}
    for _ in range(200):
        for s, want in targets.items():
            have = sum(tot[g] for g in members[s])
            for g in members[s]:
                tot[g] = min(tot[g] * want / have, size[g]) if have else 0
    out = {g: int(round(v)) for g, v in tot.items()}
    for s in [x for x in targets if x != "full"] + ["full"]:  # integer fix-up, the full total last
        diff = targets[s] - sum(out[g] for g in members[s])
        own = members[s] - set().union(*[members[o] for o in targets if o not in (s, "full")])
        out[max(own, key=lambda x: size[x])] += diff  # a group no other subset counts: the others stay met
    return out


def correctness(cases: Cases, t: Targets, seed: int = 5) -> dict:
    """(model, arm) -> [S, N] 0/1 correctness matching the targets exactly per subset, with calculator spread.

    The accuracies are met exactly whatever the seed; the spread parameters and the seed (5) were chosen so that
    the statistics the paper reports but the targets cannot fix also sit where the paper's do: Table 2's and the
    Gold-first fallbacks' intervals on the paper's side of zero, the library and arithmetic comparisons' ICC and
    effective sample sizes in the paper's ranges, seed agreement near the paper's rerun agreement."""
    rng = np.random.default_rng(seed)
    n_seeds = len(paper_seeds())
    out = {}
    for model in dict.fromkeys(m for m, _ in t.accuracy):
        per_calc, base = {}, None
        for arm in dict.fromkeys(a for m, a in t.accuracy if m == model):  # the first drawn alone, the next beside it
            acc = t.accuracy[(model, arm)]
            n_cases = {s: CASES_PER_CALC * len(cases.subsets[s]) for s in acc}
            want = {s: int(round(acc[s] * n_cases[s] * n_seeds / 100)) for s in acc}
            totals = _group_totals(cases, want)
            counts = np.zeros(len(cases.calcs), dtype=int)
            for g, total in totals.items():
                idx = np.array([i for i, c in enumerate(cases.calcs) if cases.group[c] == g])
                mean = total / len(idx)  # cells of 100 (20 cases x 5 seeds) per calculator
                if base is None:
                    draw = rng.normal(mean, OB_SPREAD, len(idx))
                else:
                    # most calculators move little, a few a lot (so the arms' per-case differences cluster)
                    spread = SPREAD[model] if not g.startswith("lib-") else 6.0
                    wide = rng.random(len(idx)) < WIDE
                    noise = np.where(wide, rng.normal(0, spread / np.sqrt(WIDE), len(idx)), rng.normal(0, 2, len(idx)))
                    draw = base[idx] + (mean - base[idx].mean()) + noise
                counts[idx] = _fix_sum(np.clip(draw, 0, 100), total, rng, n_seeds)
            if base is None:
                base = counts.astype(float)
            per_calc[arm] = counts
        orders = {c: rng.permutation(CASES_PER_CALC) for c in cases.calcs}  # each calculator's hard-to-easy cases
        for arm, counts in per_calc.items():
            own = {c: orders[c] if rng.random() < SHARED else rng.permutation(CASES_PER_CALC) for c in cases.calcs}
            out[(model, arm)] = _cells(cases, counts, own, n_seeds, FLIP[model], rng)
    return out


def _cells(cases: Cases, counts: np.ndarray, orders: dict, n_seeds: int, flip: float, rng) -> np.ndarray:
    """[S, N] cells: per calculator `count` correct cells over its cases x seeds, the easiest cases (its order)
    right at every seed, then swaps of a right and a wrong cell of one seed (rerun noise that keeps every seed's
    and calculator's count)."""
    cells = np.zeros((n_seeds, len(cases.ids)), dtype=np.int8)
    for ci, k in enumerate(counts):
        cols = np.flatnonzero(cases.calc == cases.calcs[ci])
        order = cols[orders[cases.calcs[ci]]]
        full, rest = divmod(int(k), n_seeds)
        cells[:, order[:full]] = 1
        if rest:
            cells[rng.choice(n_seeds, rest, replace=False), order[full]] = 1
        for s in range(n_seeds):
            right, wrong = cols[cells[s, cols] == 1], cols[cells[s, cols] == 0]
            for _ in range(rng.binomial(len(cols), flip)):
                if len(right) and len(wrong):
                    i, j = rng.choice(right), rng.choice(wrong)
                    cells[s, i], cells[s, j] = 0, 1
                    right, wrong = cols[cells[s, cols] == 1], cols[cells[s, cols] == 0]
    return cells


# ---- answers that score as drawn -------------------------------------------------------------------------------
def _split_cases() -> dict:
    """The stand-in split's cases by id (parsed by the kit's own dataset reader)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "stand-in.csv"
        path.write_bytes(SPLIT_BYTES)
        return load_dataset(path).by_case_id()


SPLIT_CASES = _split_cases()


def _typed(case, ok: bool):
    """(answer, kind) of a value the kit's `paper` scorer scores right (ok) or wrong against the case's gold."""
    g = case.gold_value
    if isinstance(g, datetime.date):
        return (g if ok else g + datetime.timedelta(days=400)).isoformat(), "date"
    if isinstance(g, tuple):
        return ([int(g[0]), int(g[1])] if ok else [int(g[0]) + 10, int(g[1])]), "weeks_days"
    return (float(g) if ok else float(g) + 12345.0), "number"


ANSWERS = {(cid, ok): _typed(case, ok) for cid, case in SPLIT_CASES.items() for ok in (True, False)}
for (_cid, _ok), (_value, _kind) in ANSWERS.items():  # the fixture holds itself to the kit's scorer
    assert bool(score_value(_value, _kind, SPLIT_CASES[_cid], "paper").correct) is _ok, (_cid, _ok)


def case_fields(case_id: str, ok: bool) -> dict:
    """The fields a record of this case holds that follow from the split and its verdict: answer and kind (scoring
    `ok` under the paper scorer), gold, calculator, row, output type."""
    case = SPLIT_CASES[case_id]
    value, kind = ANSWERS[(case_id, ok)]
    return {
        "answer": value,
        "answer_kind": kind,
        "case_id": case_id,
        "calculator_id": case.calculator_id,
        "row_number": case.row_number,
        "calculator_name": case.calculator_name,
        "output_type": case.output_type,
        "gold": {"answer": case.gold_answer, "lower": case.lower_limit, "upper": case.upper_limit},
    }


def kit_key(rec: dict) -> str:
    """The key the runner gives a record with these fields (harness.run.runner.make_key)."""
    return record_key(
        model=rec["model"],
        model_revision=rec.get("model_revision"),
        server_profile=rec.get("server_profile"),
        arm=rec["arm"],
        arm_config_hash=rec.get("arm_config_hash"),
        seed=int(rec["seed"]),
        dataset_sha256=rec.get("dataset_sha256"),
        case_id=rec["case_id"],
    )


# ---- writing ------------------------------------------------------------------------------------------------
def arm_for(name: str):
    """The arm as a run under the Verified split's convention (exact) configures it."""
    return with_convention(ARMS[name], "exact")


def server_block(model: str, *, vllm_version: str | None = None) -> ServerInfo:
    """The run manifest's `server` as `make reproduce` records it for a started vLLM server: the launcher's own
    description, with the version the server reports at start."""
    return replace(VllmLauncher(KEYS[model]).describe(), server_version=vllm_version or image_lock()["vllm_version"])


def client_block(model: ModelRef) -> ClientInfo:
    """The run manifest's `client` as `harness run` records it for the vLLM profile (harness.model.client
    ModelClient.describe())."""
    return ClientInfo(
        base_url="http://127.0.0.1:8000/v1",
        model=model.id,
        model_revision=model.revision,
        profile=from_json(ClientProfile, SERVER_PROFILES.lookup("vllm").describe()),
        concurrency=64,
        timeout_s=600.0,
        max_retries=5,
        cache_dir=None,
    )


@pytest.fixture(scope="session")
def executor_description() -> dict:
    with Executor(backend="process", workers=1) as ex:
        return ex.describe()


def write_records(
    root: Path,
    cells: dict,
    cases: Cases,
    *,
    none_share: dict,
    keep_cases: dict | None = None,
    keep_seeds: dict | None = None,
) -> None:
    """The records of one hand-made set (`keep_cases` / `keep_seeds`: (model, arm) -> how many cases, the first
    ones, / which seeds were run), and the Gold-Solve library's. One `Record` per results file gives the shape; each
    case's record is it with the case's fields, and the store checks every line through `Record.from_dict`."""
    seeds = paper_seeds()
    rng = np.random.default_rng(11)

    def write(model, arm, seed, rows, **shared):
        template = Record(
            key="",
            model=model,
            arm=arm,
            seed=seed,
            case_id="",
            calculator_id=0,
            outcome="answered",
            correct=False,
            scorer="paper",
            dataset="verified",
            dataset_path="(stand-in)",
            dataset_sha256=VERIFIED_SHA,
            output_type="decimal",
            **shared,
        ).to_dict()
        with ResultStore(results_path(root, model, arm, seed), sync_every=10**9) as store:
            for ci, outcome, ok in rows:
                rec = {
                    **template,
                    **case_fields(cases.ids[ci], ok),
                    "outcome": outcome,
                    "correct": ok,
                    "scores": {"paper": ok},
                }
                if outcome != "answered":  # no valid answer: none stored (it scores wrong)
                    rec.update(answer=None, answer_kind=None)
                store.append(Record.from_dict({**rec, "key": kit_key(rec)}))

    for (model, arm), block in cells.items():
        none_cells = set()
        if arm == "program-solve":  # whole cases fail the same way at every seed, as greedy reruns do
            k = int(round(none_share[model] * block.size / 100))
            for ci in rng.permutation(np.flatnonzero((block == 0).all(axis=0))):
                take = min(block.shape[0], k - len(none_cells))
                none_cells |= {(si, int(ci)) for si in range(take)}
                if len(none_cells) >= k:
                    break
        n_keep = (keep_cases or {}).get((model, arm), len(cases.ids))
        spec = arm_for(arm)
        shared = dict(
            model_revision=VllmLauncher(KEYS[model]).revision,
            server_profile="vllm",
            arm_config_hash=spec.config_hash(),
            truncated=[False],
            finish_reasons=["stop"],
            server_model=model,
            request=[
                {
                    "model": model,
                    "messages": [{"role": "user", "content": "(hand-made)"}],
                    "temperature": spec.temperature,
                    "max_tokens": spec.max_tokens,
                }
            ],
        )
        for si, seed in enumerate(seeds):
            if seed in (keep_seeds or {}).get((model, arm), seeds):
                write(
                    model,
                    arm,
                    seed,
                    [
                        (ci, "raised_error" if (si, ci) in none_cells else "answered", bool(block[si, ci]))
                        for ci in range(n_keep)
                    ],
                    **shared,
                )
    lib = catalog.library_calculators()
    for seed in seeds:
        write(
            "library",
            "gold-lib",
            seed,
            [(ci, "answered" if int(c) in lib else "abstained", int(c) in lib) for ci, c in enumerate(cases.calc)],
            arm_config_hash=arm_for("gold-lib").config_hash(),
        )


def stand_in_dataset(cases: Cases) -> Dataset:
    """The Verified split as the manifest writer reads it (name, path, sha256, number of cases); its cases are the
    case ids only (the writer counts them): a stand-in, not a loadable dataset."""
    return Dataset("verified", Path("(stand-in for the Verified test split)"), VERIFIED_SHA, list(cases.ids))


CONVENTION = ConventionRef(
    name="exact", source="dataset", reason="MedCalc-Bench Verified test split (pinned)", rounding="none"
)


def write_manifests(
    root: Path,
    cases: Cases,
    executor: dict,
    manifests: dict | None = None,
    models: tuple[str, ...] = (Q7, Q32),
    arms: tuple[str, ...] = ("open-book", "program-solve"),
) -> None:
    """One run manifest for the library run and one per model, as `harness run` writes them; `manifests`: model (or
    "library") -> a function editing that manifest's JSON form before it is read back (a typed RunManifest: an edit
    outside the schema fails here, as it would for the reader) and written."""
    seeds = tuple(paper_seeds())
    dataset = dataset_ref(stand_in_dataset(cases))

    def write(run_id: str, who: str, arms: list, model: ModelRef, server, executor_info) -> None:
        manifest = RunManifest(
            run_id=run_id,
            origin=origin(),
            dataset=dataset,
            arms=arm_configs(arms),
            arm_config_hashes={a.name: a.config_hash() for a in arms},
            prompts=template_hashes(),
            seeds=seeds,
            scorer="paper",
            case_ids=tuple(cases.ids),
            model=model,
            client=client_block(model) if server is not None else None,
            server=server,
            executor=executor_info,
            convention=CONVENTION,
            order=ARM_MAJOR,
        )
        edit = (manifests or {}).get(who)
        if edit:
            data = to_json(manifest)
            edit(data)
            manifest = from_json(RunManifest, data)
        write_manifest(root, manifest)

    write("20270101T000000000000Z", "library", [arm_for("gold-lib")], ModelRef("library", None, None), None, None)
    for i, model in enumerate(models):
        write(
            f"20270101T00000{i + 1}000000Z",
            model,
            [arm_for(a) for a in arms],
            ModelRef(model, VllmLauncher(KEYS[model]).revision, "vllm"),
            server_block(model),
            ExecutorInfo.of(copy.deepcopy(executor)),
        )


@pytest.fixture
def verified_pins(tmp_path, monkeypatch) -> Path:
    """A copy of checksums/datasets.json with the stand-in Verified split pinned at the paper's revision."""
    pins = json.loads((REPO_ROOT / "checksums" / "datasets.json").read_text())
    pins["datasets"]["verified"].update(sha256=VERIFIED_SHA, revision=VERIFIED_REVISION, filename=VERIFIED_FILENAME)
    path = tmp_path / "datasets.json"
    path.write_text(json.dumps(pins))
    monkeypatch.setenv("MATHSOLVER_PINS_FILE", str(path))
    data = (
        tmp_path / "data-cache"
    )  # `harness data fetch`'s cache, holding the stand-in split where it puts the real one
    split = data / "verified" / VERIFIED_REVISION / Path(VERIFIED_FILENAME).name
    split.parent.mkdir(parents=True)
    split.write_bytes(SPLIT_BYTES)
    monkeypatch.setenv("MATHSOLVER_DATA_DIR", str(data))
    return path


@pytest.fixture(scope="session")
def hand_made(tmp_path_factory, executor_description):
    """Builds hand-made sets: `hand_made(name, targets=..., manifests=..., keep_cases=..., keep_seeds=...)`.
    The faithful set's records are written once; sets differing only in manifests share them."""
    cases = Cases()
    base_cells = correctness(cases, Targets.paper())
    made: dict[str, Path] = {}

    def build(
        name: str, *, targets: Targets | None = None, manifests: dict | None = None, keep_cases=None, keep_seeds=None
    ) -> Path:
        if name in made:
            return made[name]
        root = tmp_path_factory.mktemp(name) / "results"
        t, paper = targets or Targets.paper(), Targets.paper()
        cells = dict(base_cells)
        if targets is not None:  # only the blocks whose targets moved are redrawn; the others stay the faithful ones
            redrawn = correctness(cases, t)
            cells.update({k: redrawn[k] for k in cells if t.accuracy[k] != paper.accuracy[k]})
        if targets is None and not keep_cases and not keep_seeds and "faithful" in made:
            shutil.copytree(made["faithful"], root, ignore=shutil.ignore_patterns("comparison*"))
            for found in read_manifests(root):  # this set's own are written below
                found.path.unlink()
        else:
            write_records(root, cells, cases, none_share=t.none_share, keep_cases=keep_cases, keep_seeds=keep_seeds)
        write_manifests(root, cases, executor_description, manifests)
        write_own_sums(root)  # as `make reproduce` leaves a root: every file's sha256 beside it
        made[name] = root
        return root

    build("faithful")
    return build


@pytest.fixture(scope="session")
def other_families(tmp_path_factory, executor_description) -> Path:
    """Mistral-7B and Phi-3.5-mini on Program-Solve and Open-book arithmetic at the paper's Table 1 values (lower
    block), with the Gold-Solve library, as `make reproduce` would leave them: the set the sign and p-value claims
    read."""
    cases = Cases()
    t = Targets.other_families()
    root = tmp_path_factory.mktemp("other-families") / "results"
    write_records(root, correctness(cases, t), cases, none_share=t.none_share)
    write_manifests(root, cases, executor_description, models=(MISTRAL, PHI))
    write_own_sums(root)
    return root


@pytest.fixture(scope="session")
def blind_set(tmp_path_factory, executor_description) -> Path:
    """Blind Program-Solve at 7B and 32B at Table 1's values, with the Gold-Solve library, seed to seed at the paper's
    rerun agreement: the set the rerun-agreement claims read."""
    cases = Cases()
    t = Targets.blind()
    root = tmp_path_factory.mktemp("blind") / "results"
    write_records(root, correctness(cases, t), cases, none_share=t.none_share)
    write_manifests(root, cases, executor_description, arms=("blind",))
    write_own_sums(root)
    return root


# ---- perturbations of a result set, through the kit's own store, manifest and sums writers -------------------------
def copy_root(src: Path, dst: Path) -> Path:
    """A copy of a results root whose files are hard links (cheap): every perturbation below replaces a file (a new
    inode), never edits one in place, so the source is untouched."""
    shutil.copytree(src, dst, copy_function=os.link, ignore=shutil.ignore_patterns("comparison*"))
    return dst


def replace_bytes(path: Path, data: bytes) -> None:
    path.unlink()
    path.write_bytes(data)


def read_records(root: Path, model: str, arm: str, seed: int) -> list[dict]:
    """One results file's records in their JSON form (what a user editing the file sees)."""
    return [r.to_dict() for r in read_result_file(results_path(root, model, arm, seed))]


def write_records_file(root: Path, model: str, arm: str, seed: int, records: list[dict]) -> None:
    """Replace one results file by `records`, appended through the kit's store (each checked as a Record)."""
    path = results_path(root, model, arm, seed)
    if path.exists():
        path.unlink()
    with ResultStore(path, sync_every=10**9) as store:
        for rec in records:
            store.append(Record.from_dict(rec))


def set_correct(rec: dict, ok: bool) -> dict:
    """A record answered otherwise: a right answer (answered) or a wrong one (its outcome kept), scored as the kit
    scores it (its answer, verdict and scores agree: a record a run could have written)."""
    outcome = "answered" if ok else rec["outcome"]
    out = {
        **rec,
        **case_fields(rec["case_id"], ok),
        "correct": ok,
        "scores": {**(rec.get("scores") or {}), "paper": ok},
        "outcome": outcome,
    }
    if outcome != "answered":
        out.update(answer=None, answer_kind=None)
    return out


def flip_flag(rec: dict) -> dict:
    """A record whose stored verdict is flipped and nothing else: its answer still scores as before."""
    return {**rec, "correct": not rec["correct"], "scores": {**(rec.get("scores") or {}), "paper": not rec["correct"]}}


def edit_run_manifest(root: Path, who: str, edit) -> None:
    """Rewrite the run manifest of `who` (a model id, or "library") with `edit` applied to its JSON form, read back
    as a typed RunManifest and written by the kit's writer."""
    for found in read_manifests(root, kind="run"):
        if found.manifest.model.id == who:
            data = to_json(found.manifest)
            edit(data)
            found.path.unlink()
            write_manifest(root, from_json(RunManifest, data))
            return
    raise KeyError(f"no run manifest of {who} in {root}")


def seal(root: Path) -> None:
    """The root's SHA256SUMS rewritten over what is there: a perturbation made as if the run had produced it."""
    (root / "SHA256SUMS").unlink(missing_ok=True)
    write_own_sums(root)
