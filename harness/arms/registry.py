"""The registry `ARMS` of every arm of the paper (and the extensions), by short slug, and the name lists derived
from it (paper arms, model-free arms, router arms and their matched single-program arms).

An arm (harness.arms.spec.Arm) is a spec plus a configured solver instance: its prompt family
(harness.arms.families), its decoding (temperature, output-token cap, samples), its note budget and inputs
(gold variables, formula text, syntax lines, worked example). `config()` is the dict hashed into
`arm_config_hash` and written to the run manifest; `notes` records every choice made where the paper is silent.

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

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from harness.arms.families import BLIND, EXTRACT, FORMULATE, NOTE_ONLY, PAGE, PROGRAM
from harness.arms.solvers import (
    SOLVERS,
    ExtractLibrarySolver,
    GoldLibrarySolver,
    ProgramSolver,
    RecalledSolver,
    RepairSolver,
    ReplySolver,
    RouterSolver,
    Solver,
    TreeSolver,
    VoteSolver,
    register_solver,
    unregister_solver,
)
from harness.arms.spec import ARM_TABLES, GAP_FAMILIES, GAP_TABLES, Arm, Decoding, Display, Gap, HybridRole, PaperRole
from harness.core.registry import Registry

COT_TOKENS = 1024


def words(arm: Arm) -> str:
    """An arm's note budget as its spec holds it: "whole note" or "N words"."""
    return "whole note" if arm.note_words is None else f"{arm.note_words} words"


def _arms() -> list[Arm]:
    note_only = Arm(
        "note-only",
        "Note only",
        ReplySolver(),
        NOTE_ONLY,
        Decoding(max_tokens=COT_TOKENS),
        note_words=120,
        example="seeded",
        notes="one call; example chosen per (seed, case) from the one-shot split",
        display=Display("Note only", "Note only", 0, ("recalled", "extracted", "model")),
        paper=PaperRole(smoke_probe=True),
    )
    page = Arm(
        "page-no-formula",
        "Page without formula",
        ReplySolver(),
        PAGE,
        Decoding(max_tokens=COT_TOKENS),
        note_words=250,
        gold_variables=True,
        notes="calculator name kept on the page; formula text suppressed",
        display=Display("Page without formula", "Page w/o formula", 3, ("suppressed", "given", "model")),
        paper=PaperRole(gaps=(Gap("note-only", "secondary", "page and variables", rank=6),)),
    )
    program = Arm(
        "program-solve",
        "Program-Solve",
        ProgramSolver(),
        PROGRAM,
        Decoding(max_tokens=2048),
        gold_variables=True,
        formula=True,
        needs_executor=True,
        display=Display(
            "Program-Solve",
            "Prog.",
            8,
            ("given", "given", "executor"),
            program_table=True,
            hybrid=HybridRole("fallback", 0),
        ),
        paper=PaperRole(
            other_checkpoints=True,
            smoke_probe=True,
            gaps=(
                Gap(
                    "open-book",
                    "primary",
                    "formula, gold variables, whole note",
                    rank=1,
                    headline=True,
                    tables=("s3", "table1-other", "about"),
                ),
                Gap("gold-lib", "primary", "gold variables", rank=2, headline=True),
                Gap("extract-lib", "secondary", "not input-matched", rank=1),
                Gap("extract-lib-recalled", "secondary", "not input-matched", rank=2),
                Gap("blind", "secondary", "formula and variables removed", rank=4, tables=("s7", "s8")),
            ),
            tables=("s11", "s15", "fig2"),
            demo="the same inputs; the model writes a Python program and the hardened executor computes",
        ),
    )
    blind = Arm(
        "blind",
        "Blind Program-Solve",
        ProgramSolver(),
        BLIND,
        Decoding(max_tokens=1024),
        needs_executor=True,
        notes="the question is kept (it is the task); no name, formula or variables",
        display=Display(
            "Blind Program-Solve",
            "Blind",
            10,
            ("recalled", "extracted", "executor"),
            program_table=True,
            hollow=True,
        ),
        paper=PaperRole(
            gaps=(
                Gap("extract-lib", "primary", "both extract", rank=3, headline=True),
                Gap("extract-lib-recalled", "secondary", "both recall", rank=3),
            ),
            tables=("s11",),
            demo="note and question only; the model recalls the formula and writes the program",
        ),
    )
    extract = Arm(
        "extract-lib",
        "Extract-Solve library",
        ExtractLibrarySolver(),
        EXTRACT,
        notes="abstains without a call outside the 22 library calculators",
        display=Display(
            "Extract-Solve library",
            "Extract lib.",
            5,
            ("hardcoded", "extracted", "function"),
            hybrid=HybridRole("library", 1, "extract"),
        ),
        paper=PaperRole(
            other_checkpoints=True,
            smoke_probe=True,
            gaps=(Gap("gold-lib", "secondary", "extraction", rank=7),),
            tables=("fig2",),
        ),
    )
    tree = Arm(
        "formulate-tree",
        "Formulate-Solve tree",
        TreeSolver(),
        FORMULATE,
        Decoding(max_tokens=COT_TOKENS),
        notes="the question is kept (it is the task); no variables, calculator name or formula; exact rational "
        "evaluation, '^' with a fractional exponent falls back to float; 'if' added to the operators",
        display=Display("Formulate-Solve tree", "Tree", 14, program_table=True),
    )
    sampled_blind = Decoding(temperature=0.7, max_tokens=1024, samples=5)
    arms = [
        note_only,
        note_only.replace(
            name="note-only-gold",
            title="Note only with gold variables",
            gold_variables=True,
            notes="adds the gold variable block to the same single call",
            display=Display("Note only with gold variables", "Note only + gold", 1),
            paper=PaperRole(
                gaps=(Gap("note-only", "budget-variables", f"gold variables, {words(note_only)}", rank=2),)
            ),
        ),
        page,
        page.replace(
            name="open-book",
            title="Open-book arithmetic",
            note_words=None,
            formula=True,
            notes="whole note, formula text and gold variables",
            display=Display(
                "Open-book arithmetic", "Arith.", 4, ("given", "given", "model"), hybrid=HybridRole("fallback", 1)
            ),
            paper=PaperRole(
                other_checkpoints=True,
                gaps=(
                    Gap("page-no-formula", "secondary", "formula text", rank=5),
                    Gap("note-only-250-nogold", "budget-variables", "whole note + variables + formula", rank=3),
                ),
                tables=("s11",),
                demo="note, formula text and the patient's values given; the model does the arithmetic in its reply",
            ),
        ),
        extract,
        Arm(
            "gold-lib",
            "Gold-Solve library",
            GoldLibrarySolver(),
            None,
            needs_model=False,
            notes="the hand-written functions on the gold variables; no model",
            display=Display(
                "Gold-Solve library",
                "Gold lib.",
                6,
                ("hardcoded", "given", "function"),
                hybrid=HybridRole("library", 0, "gold"),
            ),
            paper=PaperRole(tables=("fig2",)),
        ),
        Arm(
            "extract-lib-recalled",
            "Extract-Solve library, recalled",
            RecalledSolver(),
            NOTE_ONLY,
            Decoding(temperature=0.7, max_tokens=COT_TOKENS, samples=3),
            note_words=120,
            example="fixed",
            notes="3 samples at 0.7 from the Note-only prompt (fixed example: first one-shot row); "
            "routing extraction is greedy over the whole note",
            display=Display("Extract-Solve library, recalled", "Recalled lib.", 7),
        ),
        program,
        program.replace(
            name="program-solve-syntax",
            title="Program-Solve + syntax",
            syntax=True,
            display=Display(
                "Program-Solve + syntax",
                "Prog. + syntax",
                9,
                ("given", "given", "executor"),
                program_table=True,
                paper_row="+ syntax (exploratory)",
            ),
            paper=PaperRole(
                gaps=(
                    Gap(
                        "open-book",
                        "syntax",
                        "formula, gold variables, whole note",
                        rank=1,
                        headline=True,
                        tables=("s3",),
                    ),
                    Gap("gold-lib", "syntax", "gold variables", rank=2),
                    Gap("program-solve", "syntax", "syntax lines only", rank=3, tables=("s3",)),
                )
            ),
        ),
        blind,
        blind.replace(
            name="blind-vote",
            title="Blind Program-Solve + vote",
            solver=VoteSolver(),
            decoding=sampled_blind,
            covered_only=True,
            notes="5 programs at 0.7; values equal at 10 significant digits",
            display=Display("Blind + vote", "Blind + vote", 11, program_table=True),
            paper=PaperRole(gaps=(Gap("blind", "levers", "vote", "impl", rank=1),)),
        ),
        blind.replace(
            name="blind-repair",
            title="Blind Program-Solve + repair",
            solver=RepairSolver(),
            covered_only=True,
            notes="greedy repair turn; a reply without a program gets the fixed no-program line",
            display=Display("Blind + repair", "Blind + repair", 12, program_table=True),
            paper=PaperRole(gaps=(Gap("blind", "levers", "repair", "impl", rank=2),)),
        ),
        blind.replace(
            name="blind-repair-vote",
            title="Blind Program-Solve + repair + vote",
            solver=VoteSolver(repair_cap=3),
            decoding=sampled_blind,
            covered_only=True,
            notes="5 samples at 0.7; greedy repair for at most 3 failing samples (5-8 calls)",
            display=Display("Blind + repair + vote", "Blind + repair + vote", 13, program_table=True),
            paper=PaperRole(gaps=(Gap("blind", "levers", "repair + vote", "impl", rank=3),)),
        ),
        tree,
        # Note-budget ablation: the extracting arms capped at 250 words.
        extract.replace(
            name="extract-lib-250", title="Extract-Solve library, 250 words", note_words=250, display=Display()
        ),
        blind.replace(name="blind-250", title="Blind Program-Solve, 250 words", note_words=250, display=Display()),
        tree.replace(
            name="formulate-tree-250", title="Formulate-Solve tree, 250 words", note_words=250, display=Display()
        ),
        # The paper's recommended configuration, run live (issue 11): library, else m of k programs, else abstain.
        # Beyond the paper: run when named, never by `all` or `make reproduce`'s default.
        Arm(
            "routed-gold",
            "Routed, formula given",
            RouterSolver(m=3, library="gold"),
            PROGRAM,
            Decoding(temperature=0.7, max_tokens=2048, samples=5),
            gold_variables=True,
            formula=True,
            needs_executor=True,
            extension=True,
            notes="Gold-Solve where the library implements the calculator; else 5 Program-Solve programs at 0.7, "
            "the value at least 3 agree on (decimals within +-5%); else abstain",
            display=Display("Routed, formula given", "Routed (gold)", matched="program-solve"),
        ),
        Arm(
            "routed-blind",
            "Routed, blind",
            RouterSolver(m=3, library="extract"),
            BLIND,
            sampled_blind,
            needs_executor=True,
            extension=True,
            notes="Extract-Solve where the library implements the calculator (an invalid extraction falls "
            "through); else 5 Blind Program-Solve programs at 0.7, the value at least 3 agree on; else abstain",
            display=Display("Routed, blind", "Routed (blind)", matched="blind"),
        ),
        # Note budget against variable access (Table s16).
        note_only.replace(
            name="note-only-250-nogold",
            title="Note only, 250 words, no gold variables",
            note_words=250,
            display=Display("Note only, 250 words, no gold variables", "Note only 250", 2),
            paper=PaperRole(
                gaps=(
                    Gap("note-only", "budget-variables", f"budget 250 vs {note_only.note_words}, no variables", rank=1),
                )
            ),
        ),
        note_only.replace(
            name="note-only-gold-250",
            title="Note only with gold variables, 250 words",
            note_words=250,
            gold_variables=True,
            display=Display(),
        ),
    ]
    return arms


class ArmRegistry(Registry[Arm]):
    """The arms by name; an arm's solver kind must be registered (harness.arms.solvers.register_solver first)."""

    def register(self, arm: Arm, *, aliases: Iterable[str] = ()) -> Arm:
        if isinstance(arm, Arm):
            kind = SOLVERS.get(getattr(arm.solver, "name", ""))
            if kind is None or type(arm.solver) is not kind:
                raise ValueError(
                    f"arm {arm.name!r}: its solver {arm.solver!r} is not a registered solver kind "
                    f"(known solvers: {', '.join(SOLVERS)})"
                )
        return super().register(arm, aliases=aliases)


ARMS: ArmRegistry = ArmRegistry("arm", Arm)
# Other spellings accepted on the command line (results are stored under the canonical slug).
_ALIASES = {
    "gold-lib": ("gold-solve",),
    "extract-lib": ("extract-solve",),
    "extract-lib-recalled": ("extract-solve-recalled",),
    "open-book": ("open-book-arithmetic",),
    "blind": ("blind-program-solve",),
    "note-only-gold": ("note-only-with-gold",),
}
for _arm in _arms():
    ARMS.register(_arm, aliases=_ALIASES.get(_arm.name, ()))
ARMS.freeze()
BUILTIN_ARMS: frozenset[str] = ARMS.builtin
ALIASES: dict[str, str] = ARMS.aliases


def register_arm(arm: Arm) -> Arm:
    """Add an arm to the registry, where runs, the reproduce plan, rescoring, tables and figures find it.
    ValueError if its name is taken (by another arm or an alias) or its solver kind is not registered
    (harness.arms.solvers.register_solver first)."""
    return ARMS.register(arm)


def unregister_arm(name: str) -> None:
    """Remove an arm added with register_arm; the paper's arms stay."""
    ARMS.unregister(name)


@contextmanager
def registered(*arms: Arm, solvers: Iterable[type[Solver]] = ()) -> Iterator[tuple[Arm, ...]]:
    """Solver kinds, then arms, registered for the duration of a with-block (tests, one-off studies); removed
    again on exit, whatever happens inside."""
    added_solvers: list[str] = []
    added_arms: list[str] = []
    try:
        for kind in solvers:
            if SOLVERS.get(kind.name) is not kind:
                register_solver(kind)
                added_solvers.append(kind.name)
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


def get_arm(name: str) -> Arm:
    """The arm of a name or alias; ValueError naming the known arms."""
    return ARMS.lookup(name)


# --- name lists, derived from the registry ---------------------------------------------------------------


def paper_arms() -> tuple[str, ...]:
    """The paper's arms (what `--arm all` and reproduce's default run): every registered arm but the extensions."""
    return tuple(n for n, a in ARMS.items() if not a.extension)


def extension_arms() -> tuple[str, ...]:
    """Arms beyond the paper (the live router, issue 11): run when named only."""
    return tuple(n for n, a in ARMS.items() if a.extension)


def model_free_arms() -> tuple[str, ...]:
    """Arms that call no model (Gold-Solve): stored under the `library` model."""
    return tuple(n for n, a in ARMS.items() if not a.needs_model)


def other_checkpoint_arms() -> tuple[str, ...]:
    """The paper arms also run with its other checkpoints (Mistral-7B, Phi-3.5-mini): PaperRole.other_checkpoints."""
    return tuple(n for n in paper_arms() if ARMS[n].paper.other_checkpoints)


def smoke_probes() -> tuple[tuple[str, str], ...]:
    """(reply form, arm) of every arm whose first request the smoke step sends (PaperRole.smoke_probe), in arm
    order."""
    probes = [(a.name, a.prompt.reply_form) for a in ARMS.values() if a.paper.smoke_probe and a.prompt is not None]
    return tuple((form, name) for name, form in sorted(probes, key=lambda p: arm_sort_key(p[0])))


def declared_gaps() -> tuple[tuple[str, Gap], ...]:
    """(solver arm, gap) of every gap the registered arms declare (PaperRole.gaps), in family order (GAP_FAMILIES),
    then rank, then the solver's arm order."""
    gaps = [(n, g) for n, a in ARMS.items() for g in a.paper.gaps]
    return tuple(sorted(gaps, key=lambda ng: (GAP_FAMILIES.index(ng[1].family), ng[1].rank, arm_sort_key(ng[0]))))


def shown_gaps(table: str) -> tuple[tuple[str, Gap], ...]:
    """(solver arm, gap) of the declared gaps shown in `table` (Gap.tables, harness.arms.spec.GAP_TABLES), in the
    order of declared_gaps."""
    if table not in GAP_TABLES:
        raise ValueError(f"no gap table {table!r} (known: {', '.join(GAP_TABLES)})")
    return tuple((n, g) for n, g in declared_gaps() if table in g.tables)


def table_arms(table: str) -> tuple[str, ...]:
    """The arms whose paper role lists them in `table` (PaperRole.tables, harness.arms.spec.ARM_TABLES), in arm
    order."""
    if table not in ARM_TABLES:
        raise ValueError(f"no arm table {table!r} (known: {', '.join(ARM_TABLES)})")
    return tuple(sorted((n for n, a in ARMS.items() if table in a.paper.tables), key=arm_sort_key))


def demo_arms() -> dict[str, str]:
    """{arm: what it gives the model and who computes} of the CPU demo's model arms (PaperRole.demo), in arm
    order."""
    return {n: ARMS[n].paper.demo for n in sorted((n for n, a in ARMS.items() if a.paper.demo), key=arm_sort_key)}


def paper_rows() -> dict[str, str]:
    """{the row label the paper's Table 1 prints: arm} of the ladder's arms (Display.paper_row, else its label)."""
    out = {}
    for name in ladder():
        row = ARMS[name].display.paper_row or ARMS[name].display.label
        if row:
            out[row] = name
    return out


def router_arms() -> tuple[str, ...]:
    """Arms whose solver takes the agreement options (the routers)."""
    return tuple(n for n, a in ARMS.items() if a.solver.agreement_options)


def matched_arms() -> dict[str, str]:
    """{router arm: the single-program arm of the same prompt family it is compared with}."""
    return {n: a.display.matched for n, a in ARMS.items() if a.display.matched}


def hybrid_libraries() -> dict[str, str]:
    """{hybrid key: library arm} of the library-first hybrids, in their rank order (Display.hybrid)."""
    roles = sorted(
        (a.display.hybrid.rank, a.display.hybrid.key, n)
        for n, a in ARMS.items()
        if a.display.hybrid and a.display.hybrid.kind == "library"
    )
    return {key: name for _, key, name in roles}


def hybrid_fallbacks() -> tuple[str, ...]:
    """The fallback arms of the library-first hybrids, in their rank order (Display.hybrid)."""
    return tuple(
        n
        for _, n in sorted(
            (a.display.hybrid.rank, n)
            for n, a in ARMS.items()
            if a.display.hybrid and a.display.hybrid.kind == "fallback"
        )
    )


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
    return {name: ladder for name in arm_order() if (ladder := ARMS[name].display.ladder) is not None}


def program_table_arms() -> tuple[str, ...]:
    """Arms whose programs the program tables count, in arm order."""
    return tuple(name for name in arm_order() if ARMS[name].display.program_table)


def _but_budget(arm: Arm) -> dict:
    return {k: v for k, v in arm.config().items() if k not in ("name", "title", "notes", "note_words")}


_BUDGET_VARIANTS: dict[tuple, dict[str, str]] = {}  # by the registry's entries: arms registered later count


def budget_variants() -> dict[str, str]:
    """{arm: the arm it caps}: every registered arm that reads a shorter note than another arm whose config is its
    own but for name, title, notes and note budget (extract-lib-250 caps extract-lib, note-only-gold-250 reads
    more than note-only-gold); the note-budget ablation (s4) and the arms' labels read it, never a name suffix."""
    entries = tuple((name, id(arm)) for name, arm in ARMS.items())
    if entries not in _BUDGET_VARIANTS:
        _BUDGET_VARIANTS.clear()
        _BUDGET_VARIANTS[entries] = _budget_variants()
    return dict(_BUDGET_VARIANTS[entries])


def _budget_variants() -> dict[str, str]:
    out = {}
    for name, arm in ARMS.items():
        if arm.note_words is None:
            continue
        mine = _but_budget(arm)
        bases = [
            o.name
            for o in ARMS.values()
            if o.name != name and _but_budget(o) == mine and (o.note_words is None or o.note_words < arm.note_words)
        ]
        if bases:
            out[name] = min(bases, key=lambda b: (ARMS[b].note_words is not None, ARMS[b].note_words or 0, b))
    return out
