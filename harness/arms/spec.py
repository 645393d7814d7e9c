"""What an arm is: a spec (its prompt family, decoding, prompt inputs, run policy, display) plus a solver instance.

    Arm(name, title, solver=ProgramSolver(), prompt=PROGRAM, decoding=Decoding(max_tokens=2048), formula=True, ...)

- `solver` is a configured solver object (harness.arms.solvers): its own parameters (router m and library, the
  repair cap, the extraction token cap) live on it, as inspect_ai's `@solver def prompt_cot(template)` holds its
  template;
- `prompt` is a prompt family (harness.arms.families.PROMPT_FAMILIES): how the first request is built, the
  templates it uses and the reply form it asks for; None for an arm that sends no prompt;
- `decoding` is one value (as inspect_ai's GenerateConfig): temperature, output-token cap, samples.

`config()` is the dict hashed into `arm_config_hash` and written to the run manifest: every field that decides
the arm's output, recorded plainly (the decoding flattened, the solver by name with its own parameters under
`solver_options`, the formula versions and the unit convention always present, empty or null when not set).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.arms import prompts
from harness.calculators.catalogue import CATALOGUE
from harness.calculators.versions import version_of, version_text
from harness.core.canonical_json import canonical_json
from harness.core.typed_json import from_json
from harness.data.dataset import Case

# `Solver` (harness.arms.solvers.base) appears in annotations only: the solvers import this module, so it does not
# import them back (the import graph stays acyclic). A prompt family reads the solvers' per-case Context through
# PromptContext, below.


class PromptContext(Protocol):
    """What a prompt family's builder reads of a case's context (harness.arms.solvers.base.Context has these)."""

    @property
    def case(self) -> Case: ...
    @property
    def seed(self) -> int: ...
    @property
    def one_shot(self) -> list[Case]: ...


# The reply forms a prompt asks for; the client sends the form with each request (harness.model.client
# REPLY_FORM_HEADER) and the rehearsal server answers in it.
REPLY_FORMS = ("reply", "program", "repair", "extract", "tree")


@dataclass(frozen=True)
class Decoding:
    """How the arm's main requests are sampled (inspect_ai's GenerateConfig): temperature, output-token cap, and
    how many samples the solver draws (the router's k)."""

    temperature: float = 0.0
    max_tokens: int | None = None
    samples: int = 1


@dataclass(frozen=True)
class PromptFamily:
    """One prompt family: `build(arm, ctx)` gives the first request's messages; `templates` are the template
    names it uses (hashed into the arm's config); `reply_form` is the kind of reply it asks for (REPLY_FORMS)."""

    name: str
    reply_form: str
    templates: tuple[str, ...]
    build: Callable[[Arm, PromptContext], list[dict]] = field(compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.reply_form not in REPLY_FORMS:
            raise ValueError(
                f"prompt family {self.name!r}: reply form {self.reply_form!r} is not one of {', '.join(REPLY_FORMS)}"
            )


@dataclass(frozen=True)
class Prompt:
    """Messages built by a prompt family: what Context.chat sends, with the family's name and reply form."""

    family: PromptFamily
    messages: list[dict]


@dataclass(frozen=True)
class HybridRole:
    """An arm's part in the library-first hybrids the analysis builds from stored records (no model call): a
    "library" (answering where it implements the calculator; `key` names it in the hybrid, e.g. "gold") or a
    "fallback" (answering the rest); `rank` orders each kind."""

    kind: str  # "library" | "fallback"
    rank: int
    key: str = ""


@dataclass(frozen=True)
class Display:
    """How tables and figures show an arm; none of it reaches the model, the record keys or the config hash.

    `label` is the paper's table wording (None: derived, e.g. "<base label>, 250 words"), `short` the column
    label of paired gaps, `order` the arm's place in the arrays and tables (None: after the ordered arms, by
    name), `ladder` the (formula, variables, arithmetic) cells of Table 1's accuracy ladder (the ladder arms are
    also Figure 1b's bars), `program_table` whether the arm's programs are counted in the program tables,
    `matched` the single-program arm a router arm is compared with (same prompt family), `hybrid` its part in the
    library-first hybrids, `paper_row` the row label the paper's Table 1 prints for it where that is not `label`
    (the comparison with the paper maps the paper's rows to arms by it), `hollow` whether Figure 1b draws its bars
    open (outline only)."""

    label: str | None = None
    short: str | None = None
    order: int | None = None
    ladder: tuple[str, str, str] | None = None
    program_table: bool = False
    matched: str | None = None
    hybrid: HybridRole | None = None
    paper_row: str | None = None
    hollow: bool = False


# The Holm families of the declared comparisons, in the order the tables list them (harness.analysis.stats.families
# adds the derived note-budget family after "levers" and the hybrids' after "budget-variables").
GAP_FAMILIES = ("primary", "syntax", "secondary", "levers", "budget-variables")
GAP_SUBSETS = ("all", "impl", "not_replaced", "no_issue")
# Where the kit shows a declared comparison beyond its family's tables (Gap.tables): "s3" the syntax-lines ablation,
# "s7" and "s8" what recall loses (the calculators, one case: the solver's programs against the reference's),
# "table1-other" Table 1's lower block (the other checkpoints; the comparison with the paper reads the paper's
# lower-block gaps as it), "about" the CPU demo's opening paragraph (harness.analysis.demo_summary).
GAP_TABLES = ("s3", "s7", "s8", "table1-other", "about")
# The tables and figures an arm is listed in by its paper role (PaperRole.tables), beyond those every arm or its
# display puts it in: "s11" accuracy by audit group, "s15" the failure audit (of one arm: the first in arm order),
# "fig2" Figure 2's coverage markers (a library arm of the hybrids at its k, any other at k = all).
ARM_TABLES = ("s11", "s15", "fig2")


@dataclass(frozen=True)
class Gap:
    """A paired comparison the arm is the solver of: this arm minus `reference` on the cases both ran, declared
    before any result is read. `family` is its Holm family (GAP_FAMILIES), `access` what the two arms share (Table
    2's "Access" column), `subset` the cases it is taken on ("impl": the library's calculators), `rank` its place
    in its family's tables, `headline` whether it is one of the headline gaps (Table s10, the results summary),
    `tables` where else the kit shows it (GAP_TABLES)."""

    reference: str
    family: str
    access: str = ""
    subset: str = "all"
    rank: int = 0
    headline: bool = False
    tables: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.family not in GAP_FAMILIES:
            raise ValueError(f"gap against {self.reference!r}: family {self.family!r} is not one of {GAP_FAMILIES}")
        if self.subset not in GAP_SUBSETS:
            raise ValueError(f"gap against {self.reference!r}: subset {self.subset!r} is not one of {GAP_SUBSETS}")
        for t in self.tables:
            if t not in GAP_TABLES:
                raise ValueError(f"gap against {self.reference!r}: table {t!r} is not one of {GAP_TABLES}")


@dataclass(frozen=True)
class PaperRole:
    """What the rest of the kit asks of an arm beyond running it (none of it reaches the model or the config hash):
    `other_checkpoints` whether the paper also runs it with its other checkpoints (Mistral-7B, Phi-3.5-mini:
    harness.reproduce.config.OTHER_CHECKPOINTS; every paper arm runs with the Qwen models), `gaps` the declared
    comparisons it is the solver of, `smoke_probe` whether the smoke step (harness.reproduce.smoke) sends its first
    request as the probe of its prompt's reply form, `tables` the tables and figures that list it by its role
    (ARM_TABLES), `demo` what the CPU demo's opening paragraph (harness.analysis.demo_summary) says the arm gives
    the model and who computes: the arms with one are the demo's model arms, named in arm order."""

    other_checkpoints: bool = False
    gaps: tuple[Gap, ...] = ()
    smoke_probe: bool = False
    tables: tuple[str, ...] = ()
    demo: str = ""

    def __post_init__(self) -> None:
        for t in self.tables:
            if t not in ARM_TABLES:
                raise ValueError(f"paper role: table {t!r} is not one of {ARM_TABLES}")


@dataclass(frozen=True)
class Arm:
    name: str
    title: str  # the paper's name
    solver: Solver  # a configured solver instance (harness.arms.solvers)  # noqa: F821
    prompt: PromptFamily | None  # the first request's prompt family; None: the arm sends no prompt
    decoding: Decoding = Decoding()
    note_words: int | None = None  # None: the whole note
    gold_variables: bool = False
    formula: bool = False
    syntax: bool = False
    example: str | None = None  # "seeded" | "fixed" | None
    needs_model: bool = True
    needs_executor: bool = False
    covered_only: bool = False  # run on the library's calculators only (unless --all-cases)
    extension: bool = False  # beyond the paper: run when named, never by `all` or reproduce's default
    templates: tuple[str, ...] = ()  # templates beyond the prompt family's and the solver's own
    notes: str = ""
    display: Display = field(default=Display(), compare=False)
    paper: PaperRole = field(default=PaperRole(), compare=False)  # its paper role; a renamed copy starts without
    formula_versions: tuple[tuple[int, str], ...] = ()  # non-benchmark formula versions, (calculator id, version)
    convention: str | None = None  # the unit convention the answers are computed under: set by the run request
    # (harness.run.request.apply_convention) on arms whose solver depends on it

    # --- decoding, read by the solvers ---------------------------------------------------------------------
    @property
    def temperature(self) -> float:
        return self.decoding.temperature

    @property
    def max_tokens(self) -> int | None:
        return self.decoding.max_tokens

    @property
    def samples(self) -> int:
        return self.decoding.samples

    def all_templates(self) -> tuple[str, ...]:
        """Every template the arm's requests use: the system message, its family's, its solver's, its own."""
        names = [
            "system",
            *(self.prompt.templates if self.prompt else ()),
            *self.solver.templates(self),
            *self.templates,
        ]
        if self.syntax:
            names.append("syntax_lines")
        return tuple(dict.fromkeys(names))

    def config(self) -> dict:
        """The arm's configuration as stored in manifests and hashed (module docstring)."""
        cfg: dict = {
            "name": self.name,
            "title": self.title,
            "solver": self.solver.name,
            "prompt": self.prompt.name if self.prompt else None,
            **dataclasses.asdict(self.decoding),
            "note_words": self.note_words,
            "gold_variables": self.gold_variables,
            "formula": self.formula,
            "syntax": self.syntax,
            "example": self.example,
            "needs_model": self.needs_model,
            "needs_executor": self.needs_executor,
            "covered_only": self.covered_only,
            "templates": prompts.template_hashes(self.all_templates()),
            "notes": self.notes,
            "solver_options": self.solver.config(),
            "formula_versions": {str(cid): v for cid, v in self.formula_versions},
            "convention": self.convention,
        }
        return cfg

    def config_hash(self) -> str:
        """sha256 of everything that determines the arm's output (`config_hash`)."""
        return config_hash(self.config())

    @property
    def uses_formulas(self) -> bool:
        """Whether the arm supplies formula text or calls the library (so a formula version applies)."""
        return self.formula or self.solver.uses_library

    def version_for(self, calculator_id: int) -> str | None:
        """The formula version in force for a calculator (None: an unversioned calculator)."""
        return version_of(calculator_id, dict(self.formula_versions))

    def formula_text(self, calculator_id: int) -> str:
        """The formula text this arm shows for a calculator: the chosen version's, else the catalogue's."""
        if self.formula_versions:
            text = version_text(calculator_id, dict(self.formula_versions).get(int(calculator_id)))
            if text is not None:
                return text
        return catalogue_formula_text(calculator_id)

    def build(self, ctx: PromptContext) -> Prompt:
        """The first request's prompt for this arm and case (Context.prompt() builds it once per case)."""
        if self.prompt is None:
            raise ValueError(f"arm {self.name} builds no prompt")
        return Prompt(self.prompt, self.prompt.build(self, ctx))

    def replace(self, **changes: Any) -> Arm:
        """A copy with `changes`; a copy under another name starts with no paper role (its gaps, checkpoints and
        smoke probe are its own to declare, never inherited from the arm it was copied from)."""
        if "name" in changes and changes["name"] != self.name:
            changes.setdefault("paper", PaperRole())
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class ArmConfig:
    """An arm's configuration as a run manifest records it: `Arm.config()` read back, field for field (the run
    manifest's `arms`; harness.run.manifest)."""

    name: str
    title: str
    solver: str
    prompt: str | None
    temperature: float
    max_tokens: int | None
    samples: int
    note_words: int | None
    gold_variables: bool
    formula: bool
    syntax: bool
    example: str | None
    needs_model: bool
    needs_executor: bool
    covered_only: bool
    templates: dict[str, str]
    notes: str
    solver_options: dict[str, Any]
    formula_versions: dict[str, str]
    convention: str | None

    @classmethod
    def of(cls, arm: Arm) -> ArmConfig:
        return from_json(cls, arm.config())


DOCUMENTATION_FIELDS = ("title", "notes")  # an arm config's fields that decide no output (never hashed)


def config_hash(config: dict) -> str:
    """sha256 of an arm config (`Arm.config()`, or a manifest's ArmConfig in JSON form) without its documentation
    fields, so rewording them does not invalidate stored results."""
    cfg = {k: v for k, v in config.items() if k not in DOCUMENTATION_FIELDS}
    return hashlib.sha256(canonical_json(cfg).encode()).hexdigest()


def catalogue_formula_text(calculator_id: int) -> str:
    """The catalogue's formula text for a calculator (harness.calculators.catalogue.CATALOGUE)."""
    try:
        entry = CATALOGUE[int(calculator_id)]
    except KeyError:
        raise KeyError(f"no formula text in the catalogue for calculator {calculator_id}") from None
    return entry.text


__all__ = [
    "ARM_TABLES",
    "DOCUMENTATION_FIELDS",
    "GAP_FAMILIES",
    "GAP_TABLES",
    "REPLY_FORMS",
    "Arm",
    "ArmConfig",
    "Decoding",
    "Display",
    "Gap",
    "HybridRole",
    "PaperRole",
    "Prompt",
    "PromptContext",
    "PromptFamily",
    "catalogue_formula_text",
    "config_hash",
]
