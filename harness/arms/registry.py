"""Declarative arm definitions: the registry `ARMS` of every arm of the paper, by short slug.

An Arm names its prompt family, its solver (harness.arms.solvers), its decoding (temperature, output-token
cap, samples) and its note budget and inputs (gold variables, formula text, syntax lines, worked
example). `config()` is the dict hashed into `arm_config_hash` and written to the run manifest;
`notes` records every choice made where the paper is silent.

Paper settings followed (Method, Table 1, Appendix "Arm protocols and settings"): single-call arms are
greedy (temperature 0); sampled candidates use 0.7; Program-Solve and its syntax variant get 2,048
output tokens, Blind Program-Solve and its vote/repair variants 1,024; Note only reads 120 words with
a worked example cut to 24 note words and 40 explanation words, chosen by the seed; Page without formula
reads 250 words; everything else reads the whole note; the note-budget ablation caps the extracting
arms at 250 words. Vote and repair levers run on the covered 440 (the library's 22 calculators) in the
paper: `covered_only` marks them and the runner restricts them by default.

Choices where the paper is silent (Table s14's values are not in the text we have):
- Output-token caps of the reply arms (Note only, Page, Open-book) and Formulate-Solve: 1,024; the
  library extraction call: 512; recalled samples: 1,024.
- The note-only example: one row of the 55-row one-shot split, drawn per (seed, case) by
  sha256("{seed}:{case_id}") modulo 55 over the split in file order. The recalled arm's "one fixed
  worked example" is the split's first row.
- Repair turns are greedy (temperature 0), in the vote variant too; the repair+vote arm repairs at
  most 3 failing samples, in sample order, which gives the paper's "five to eight calls". A reply with
  no program gets the fixed line prompts.NO_PROGRAM_ERROR as its "error".
- Sampled calls (temperature 0.7) carry a per-request seed derived from (run seed, case, arm, sample
  index) when the server profile allows (harness.model.client); greedy calls never carry a seed, as in the
  paper. The response cache key includes the run seed, so the five greedy seeds are real repeats.
- Vote equality: numbers equal at 10 significant digits; dates and (weeks, days) exactly.
- Extract-lib-recalled: "agree" means equal parsed answers under the paper parser; "empty" means a
  sample with no parseable answer.
- Blind Program-Solve and Formulate-Solve keep the case's question (it states the task, and often
  names the calculation); they get no separate calculator name, formula or variables.
- Formulate-Solve operators: + - * / ^ neg min max, the six comparisons (1/0), and a ternary "if".
"""
from __future__ import annotations

import dataclasses
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from harness.arms import prompts
from harness.arms.solvers import (SOLVERS, Solver, calculator_for, get_solver, library_variables, register_solver,
                                  unregister_solver)
from harness.core.canonical_json import canonical_json
from harness.calculators.catalogue import CATALOGUE
from harness.calculators.versions import version_of, version_text

COT_TOKENS = 1024


@dataclass(frozen=True)
class Display:
    """How tables and figures show an arm; none of it reaches the model, the record keys or the config hash.

    `label` is the paper's table wording (None: derived, e.g. "<base label>, 250 words"), `short` the column
    label of paired gaps, `order` the arm's place in the arrays and tables (None: after the ordered arms, by
    name), `ladder` the (formula, variables, arithmetic) cells of Table 1's accuracy ladder (the ladder arms are
    also Figure 1b's bars), `program_table` whether the arm's programs are counted in the program tables."""

    label: str | None = None
    short: str | None = None
    order: int | None = None
    ladder: tuple[str, str, str] | None = None
    program_table: bool = False


@dataclass(frozen=True)
class Arm:
    name: str
    title: str                     # the paper's name
    solver: str                    # name of a solver kind in harness.arms.solvers.SOLVERS (Arm.solver_kind)
    prompt: str | None             # prompt family: note_only | page | program | blind | formulate | None
    temperature: float = 0.0
    max_tokens: int | None = None
    samples: int = 1
    note_words: int | None = None  # None: the whole note
    gold_variables: bool = False
    formula: bool = False
    syntax: bool = False
    example: str | None = None     # "seeded" | "fixed" | None
    repair: bool = False
    repair_cap: int = 0
    repair_temperature: float = 0.0
    extract_max_tokens: int = 512
    needs_model: bool = True
    needs_executor: bool = False
    covered_only: bool = False
    templates: tuple[str, ...] = ()
    notes: str = ""
    display: Display = field(default=Display(), compare=False)
    # Added after results were committed: written into config() only when not at their default, so the
    # arm_config_hash (and record keys) of every arm that does not use them is unchanged.
    agree_min: int = 0                                   # router: programs that must agree (m of k = samples)
    router_library: str = ""                             # router: "gold" (Gold-Solve) or "extract" (Extract-Solve)
    formula_versions: tuple[tuple[int, str], ...] = ()   # non-benchmark formula versions, (calculator id, version)
    convention: str = ""   # unit convention, set only where it differs from the one the arm's keys always assumed
                           # (see convention_field); "" keeps the arm_config_hash of every earlier record

    @property
    def solver_kind(self) -> Solver:
        """The arm's solver object (harness.arms.solvers.SOLVERS): how it solves, its request bounds, its
        completion-token assumption, how its rows are rescored. ValueError naming the known kinds if unknown."""
        return get_solver(self.solver)

    def config(self) -> dict:
        cfg = dataclasses.asdict(self)
        del cfg["display"]  # presentation only: stored configs and config hashes stay what they were
        cfg["templates"] = prompts.template_hashes(("system",) + self.templates)
        for name, default in OMITTED_WHEN_DEFAULT.items():
            if cfg[name] == default:
                del cfg[name]
        if "formula_versions" in cfg:
            cfg["formula_versions"] = {str(cid): v for cid, v in self.formula_versions}
        return cfg

    @property
    def uses_formulas(self) -> bool:
        """Whether the arm supplies formula text or calls the library (so a formula version applies)."""
        return self.formula or self.solver_kind.uses_library

    def version_for(self, calculator_id: int) -> str | None:
        """The formula version in force for a calculator (None: an unversioned calculator)."""
        return version_of(calculator_id, dict(self.formula_versions))

    def config_hash(self) -> str:
        """sha256 of everything that determines the arm's output (the documentation fields `title` and
        `notes` are left out, so rewording them does not invalidate stored results)."""
        cfg = {k: v for k, v in self.config().items() if k not in {"title", "notes"}}
        text = canonical_json(cfg)
        return hashlib.sha256(text.encode()).hexdigest()

    def build(self, ctx) -> list[dict]:
        """The first request's messages for this arm and case."""
        case = ctx.case
        if self.prompt == "note_only":
            return prompts.build_note_only(case, choose_example(self, ctx.seed, case, ctx.one_shot),
                                           note_words=self.note_words, gold_variables=self.gold_variables)
        if self.prompt == "page":
            return prompts.build_page(case, formula=self.formula_text(case.calculator_id) if self.formula else None,
                                      note_words=self.note_words)
        if self.prompt == "program":
            return prompts.build_program(case, formula=self.formula_text(case.calculator_id), syntax=self.syntax,
                                         note_words=self.note_words)
        if self.prompt == "blind":
            return prompts.build_blind_program(case, syntax=self.syntax, note_words=self.note_words)
        if self.prompt == "formulate":
            return prompts.build_formulate(case, note_words=self.note_words)
        if self.prompt == "extract":
            calc = calculator_for(self, case.calculator_id)
            if calc is None:
                return []
            return prompts.build_extract(case, library_variables(calc), note_words=self.note_words)
        raise ValueError(f"arm {self.name} builds no prompt")

    def formula_text(self, calculator_id: int) -> str:
        """The formula text this arm shows for a calculator: the chosen version's, else the catalogue's."""
        if self.formula_versions:
            text = version_text(calculator_id, dict(self.formula_versions).get(int(calculator_id)))
            if text is not None:
                return text
        return formula_text(calculator_id)


# The new Arm fields left out of config() at their defaults.
OMITTED_WHEN_DEFAULT = {"agree_min": 0, "router_library": "", "formula_versions": (), "convention": ""}


def reads_gold_variables(arm: Arm) -> bool:
    """Whether the arm converts the benchmark's gold variables (Gold-Solve, the gold router route)."""
    return arm.solver_kind.reads_gold_variables(arm)


def convention_field(arm: Arm, convention: str, dataset_default: str) -> str:
    """The value of ``Arm.convention`` for a run under ``convention``: "" (left out of the config, so record
    keys are the ones earlier runs made) when the arm does not depend on the convention or when the
    convention is the one it always used (gold variables: the dataset's own by content, ``dataset_default``;
    model extractions: "exact"); else the convention's name, so a different convention gives other keys."""
    if not arm.solver_kind.uses_convention:
        return ""
    assumed = dataset_default if reads_gold_variables(arm) else "exact"
    return "" if convention == assumed else convention


def with_options(arm: Arm, *, formula_versions: dict[int, str] | None = None, k: int | None = None,
                 m: int | None = None, temperature: float | None = None) -> Arm:
    """The arm with formula versions (arms that use formulas only) and, for the router arms, k, m and the
    sampling temperature replaced (`Solver.option_changes`). Raises ValueError naming the problem."""
    changes: dict = {}
    if formula_versions and arm.uses_formulas:
        changes["formula_versions"] = tuple(sorted((int(c), str(v)) for c, v in formula_versions.items()))
    changes.update(arm.solver_kind.option_changes(arm, k=k, m=m, temperature=temperature))
    return dataclasses.replace(arm, **changes) if changes else arm


def choose_example(arm: Arm, seed: int, case, one_shot: list) -> prompts.Example:
    """The worked example: seeded (per seed and case) or fixed (the split's first row)."""
    if not one_shot:
        raise ValueError(f"arm {arm.name} needs the one-shot split for its worked example; none was loaded")
    if arm.example == "fixed":
        row = one_shot[0]
    else:
        digest = hashlib.sha256(f"{seed}:{case.case_id}".encode()).digest()
        row = one_shot[int.from_bytes(digest[:8], "big") % len(one_shot)]
    return prompts.make_example(row)


def formula_text(calculator_id: int) -> str:
    """The catalogue's formula text for a calculator (harness.calculators.catalogue.CATALOGUE)."""
    try:
        entry = CATALOGUE[int(calculator_id)]
    except KeyError:
        raise KeyError(f"no formula text in the catalogue for calculator {calculator_id}") from None
    return entry.text


NOTE_ONLY_T = ("answer_format", "note_only", "variables_section")
PAGE_T = ("answer_format", "page", "formula_section")
PROGRAM_T = ("program", "program_contract", "return_one_block")
BLIND_T = ("blind_program", "program_contract", "return_one_block")
REPAIR_T = ("repair", "no_program_error")


def _arms() -> list[Arm]:
    note_only = Arm("note-only", "Note only", "reply", "note_only", max_tokens=COT_TOKENS, note_words=120,
                    example="seeded", templates=NOTE_ONLY_T,
                    notes="one call; example chosen per (seed, case) from the one-shot split",
                    display=Display("Note only", "Note only", 0, ("recalled", "extracted", "model")))
    page = Arm("page-no-formula", "Page without formula", "reply", "page", max_tokens=COT_TOKENS, note_words=250,
               gold_variables=True, templates=PAGE_T,
               notes="calculator name kept on the page; formula text suppressed",
               display=Display("Page without formula", "Page w/o formula", 3, ("suppressed", "given", "model")))
    program = Arm("program-solve", "Program-Solve", "program", "program", max_tokens=2048, gold_variables=True,
                  formula=True, needs_executor=True, templates=PROGRAM_T,
                  display=Display("Program-Solve", "Prog.", 8, ("given", "given", "executor"), program_table=True))
    blind = Arm("blind", "Blind Program-Solve", "program", "blind", max_tokens=1024, needs_executor=True,
                templates=BLIND_T, notes="the question is kept (it is the task); no name, formula or variables",
                display=Display("Blind Program-Solve", "Blind", 10, ("recalled", "extracted", "executor"), program_table=True))
    extract = Arm("extract-lib", "Extract-Solve library", "extract_library", "extract", templates=("extract",),
                  notes="abstains without a call outside the 22 library calculators",
                  display=Display("Extract-Solve library", "Extract lib.", 5, ("hardcoded", "extracted", "function")))
    tree = Arm("formulate-tree", "Formulate-Solve tree", "tree", "formulate", max_tokens=COT_TOKENS,
               templates=("formulate",),
               notes="the question is kept (it is the task); no variables, calculator name or formula; exact rational "
                     "evaluation, '^' with a fractional exponent falls back to float; 'if' added to the operators",
                     display=Display("Formulate-Solve tree", "Tree", 14, program_table=True))
    arms = [
        note_only,
        dataclasses.replace(note_only, name="note-only-gold", title="Note only with gold variables",
                            gold_variables=True, notes="adds the gold variable block to the same single call",
                            display=Display("Note only with gold variables", "Note only + gold", 1)),
        page,
        dataclasses.replace(page, name="open-book", title="Open-book arithmetic", note_words=None, formula=True,
                            notes="whole note, formula text and gold variables",
                            display=Display("Open-book arithmetic", "Arith.", 4, ("given", "given", "model"))),
        extract,
        Arm("gold-lib", "Gold-Solve library", "gold_library", None, needs_model=False,
            notes="the hand-written functions on the gold variables; no model",
            display=Display("Gold-Solve library", "Gold lib.", 6, ("hardcoded", "given", "function"))),
        Arm("extract-lib-recalled", "Extract-Solve library, recalled", "recalled", "note_only", temperature=0.7,
            max_tokens=COT_TOKENS, samples=3, note_words=120, example="fixed",
            templates=NOTE_ONLY_T + ("extract",),
            notes="3 samples at 0.7 from the Note-only prompt (fixed example: first one-shot row); "
                  "routing extraction is greedy over the whole note",
                  display=Display("Extract-Solve library, recalled", "Recalled lib.", 7)),
        program,
        dataclasses.replace(program, name="program-solve-syntax", title="Program-Solve + syntax", syntax=True,
                            templates=PROGRAM_T + ("syntax_lines",),
                            display=Display("Program-Solve + syntax", "Prog. + syntax", 9, ("given", "given", "executor"), program_table=True)),
        blind,
        dataclasses.replace(blind, name="blind-vote", title="Blind Program-Solve + vote", solver="vote",
                            temperature=0.7, samples=5, covered_only=True,
                            notes="5 programs at 0.7; values equal at 10 significant digits",
                            display=Display("Blind + vote", "Blind + vote", 11, program_table=True)),
        dataclasses.replace(blind, name="blind-repair", title="Blind Program-Solve + repair", solver="repair",
                            repair=True, repair_cap=1, covered_only=True, templates=BLIND_T + REPAIR_T,
                            notes="greedy repair turn; a reply without a program gets the fixed no-program line",
                            display=Display("Blind + repair", "Blind + repair", 12, program_table=True)),
        dataclasses.replace(blind, name="blind-repair-vote", title="Blind Program-Solve + repair + vote",
                            solver="vote", temperature=0.7, samples=5, repair=True, repair_cap=3, covered_only=True,
                            templates=BLIND_T + REPAIR_T,
                            notes="5 samples at 0.7; greedy repair for at most 3 failing samples (5-8 calls)",
                            display=Display("Blind + repair + vote", "Blind + repair + vote", 13, program_table=True)),
        tree,
        # Note-budget ablation: the extracting arms capped at 250 words.
        dataclasses.replace(extract, name="extract-lib-250", title="Extract-Solve library, 250 words", note_words=250,
        display=Display()),
        dataclasses.replace(blind, name="blind-250", title="Blind Program-Solve, 250 words", note_words=250,
        display=Display()),
        dataclasses.replace(tree, name="formulate-tree-250", title="Formulate-Solve tree, 250 words", note_words=250,
        display=Display()),
        # The paper's recommended configuration, run live (issue 11): library, else m of k programs, else abstain.
        Arm("routed-gold", "Routed, formula given", "router", "program", temperature=0.7, max_tokens=2048, samples=5,
            agree_min=3, router_library="gold", gold_variables=True, formula=True, needs_executor=True,
            templates=PROGRAM_T,
            notes="Gold-Solve where the library implements the calculator; else 5 Program-Solve programs at 0.7, "
                  "the value at least 3 agree on (decimals within +-5%); else abstain",
            display=Display("Routed, formula given", "Routed (gold)")),
        Arm("routed-blind", "Routed, blind", "router", "blind", temperature=0.7, max_tokens=1024, samples=5,
            agree_min=3, router_library="extract", needs_executor=True, templates=BLIND_T + ("extract",),
            notes="Extract-Solve where the library implements the calculator (an invalid extraction falls "
                  "through); else 5 Blind Program-Solve programs at 0.7, the value at least 3 agree on; else abstain",
            display=Display("Routed, blind", "Routed (blind)")),
        # Note budget against variable access (Table s16).
        dataclasses.replace(note_only, name="note-only-250-nogold", title="Note only, 250 words, no gold variables",
                            note_words=250,
                            display=Display("Note only, 250 words, no gold variables", "Note only 250", 2)),
        dataclasses.replace(note_only, name="note-only-gold-250", title="Note only with gold variables, 250 words",
                            note_words=250, gold_variables=True,
                            display=Display()),
    ]
    return arms


def _checked(arm: Arm) -> Arm:
    try:
        arm.solver_kind
    except ValueError as exc:
        raise ValueError(f"arm {arm.name!r}: {exc}") from None
    return arm


ARMS: dict[str, Arm] = {a.name: _checked(a) for a in _arms()}
BUILTIN_ARMS: frozenset[str] = frozenset(ARMS)

# Arms beyond the paper (the live router, issue 11): run when named, never by `all` or `make reproduce`'s
# default, so the default configuration stays the paper's.
EXTENSION_ARMS: tuple[str, ...] = ("routed-gold", "routed-blind")


# Other spellings accepted on the command line (results are stored under the canonical slug).
ALIASES: dict[str, str] = {
    "gold-solve": "gold-lib", "extract-solve": "extract-lib", "extract-solve-recalled": "extract-lib-recalled",
    "open-book-arithmetic": "open-book", "blind-program-solve": "blind", "note-only-with-gold": "note-only-gold",
}


def register_arm(arm: Arm) -> Arm:
    """Add an arm to the registry, where runs, the reproduce plan, rescoring, tables and figures find it.
    ValueError if its name is taken (by another arm or an alias) or its solver kind is not registered
    (harness.arms.solvers.register_solver first)."""
    held = ARMS.get(arm.name)
    if (held is not None and held is not arm) or arm.name in ALIASES:
        raise ValueError(f"arm name {arm.name!r} is already registered")
    ARMS[_checked(arm).name] = arm
    return arm


def unregister_arm(name: str) -> None:
    """Remove an arm added with register_arm; the paper's arms stay."""
    if name in BUILTIN_ARMS:
        raise ValueError(f"arm {name!r} is one of the kit's own arms and cannot be removed")
    ARMS.pop(name, None)


@contextmanager
def registered(*arms: Arm, solvers: Iterable[Solver] = ()) -> Iterator[tuple[Arm, ...]]:
    """Solver kinds, then arms, registered for the duration of a with-block (tests, one-off studies); removed
    again on exit, whatever happens inside."""
    added_solvers: list[str] = []
    added_arms: list[str] = []
    try:
        for solver in solvers:
            if SOLVERS.get(solver.name) is not solver:
                register_solver(solver)
                added_solvers.append(solver.name)
        for arm in arms:
            if ARMS.get(arm.name) is not arm:
                register_arm(arm)
                added_arms.append(arm.name)
        yield arms
    finally:
        for name in reversed(added_arms):
            unregister_arm(name)
        for name in reversed(added_solvers):
            unregister_solver(name)


def arm_order() -> tuple[str, ...]:
    """The registered arms that have a place in arrays and tables, in that order."""
    ordered = sorted((a.display.order, a.name) for a in ARMS.values() if a.display.order is not None)
    return tuple(name for _, name in ordered)


def arm_sort_key(arm: str) -> tuple:
    """Sort key of an arm name: ordered arms first, in their order; then every other name alphabetically."""
    order = arm_order()
    return (order.index(arm), "") if arm in order else (len(order), arm)


def ladder() -> dict[str, tuple[str, str, str]]:
    """Table 1's accuracy ladder (and Figure 1b's bars): {arm: (formula, variables, arithmetic)}, in arm order."""
    return {name: ARMS[name].display.ladder for name in arm_order() if ARMS[name].display.ladder}


def program_table_arms() -> tuple[str, ...]:
    """Arms whose programs the program tables count, in arm order."""
    return tuple(name for name in arm_order() if ARMS[name].display.program_table)


def get_arm(name: str) -> Arm:
    try:
        return ARMS[ALIASES.get(name, name)]
    except KeyError:
        raise ValueError(f"unknown arm {name!r}; known arms: {', '.join(ARMS)}") from None
