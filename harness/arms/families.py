"""The prompt families, in one table: `PROMPT_FAMILIES[name]` is how a family builds its first request, which
templates it uses and which reply form it asks for (harness.arms.spec.PromptFamily).

The two follow-up requests solvers send (the repair turn and the library extraction) are families too, so every
request says its family and reply form to the server (harness.model.client REPLY_FORM_HEADER); the rehearsal
server answers by that form and never reads the prompt's text to guess it.

A new family is one `register_family(PromptFamily(...))` with its builder (and its template in
harness.arms.prompts).
"""

from __future__ import annotations

import hashlib

from harness.arms import prompts
from harness.arms.library_inputs import calculator_for, library_variables
from harness.arms.spec import Arm, Prompt, PromptContext, PromptFamily
from harness.core.registry import Registry
from harness.data.dataset import Case

NOTE_ONLY_T = ("answer_format", "note_only", "variables_section")
PAGE_T = ("answer_format", "page", "formula_section")
PROGRAM_T = ("program", "program_contract", "return_one_block")
BLIND_T = ("blind_program", "program_contract", "return_one_block")
REPAIR_T = ("repair", "no_program_error")
EXTRACT_T = ("extract",)
FORMULATE_T = ("formulate",)


def choose_example(arm: Arm, seed: int, case: Case, one_shot: list[Case]) -> prompts.Example:
    """The worked example: seeded (per seed and case) or fixed (the split's first row)."""
    if not one_shot:
        raise ValueError(f"arm {arm.name} needs the one-shot split for its worked example; none was loaded")
    if arm.example == "fixed":
        row = one_shot[0]
    else:
        digest = hashlib.sha256(f"{seed}:{case.case_id}".encode()).digest()
        row = one_shot[int.from_bytes(digest[:8], "big") % len(one_shot)]
    return prompts.make_example(row)


def _note_only(arm: Arm, ctx: PromptContext) -> list[dict]:
    return prompts.build_note_only(
        ctx.case,
        choose_example(arm, ctx.seed, ctx.case, ctx.one_shot),
        note_words=arm.note_words,
        gold_variables=arm.gold_variables,
    )


def _page(arm: Arm, ctx: PromptContext) -> list[dict]:
    cid = ctx.case.calculator_id
    return prompts.build_page(
        ctx.case, formula=arm.formula_text(cid) if arm.formula else None, note_words=arm.note_words
    )


def _program(arm: Arm, ctx: PromptContext) -> list[dict]:
    return prompts.build_program(
        ctx.case, formula=arm.formula_text(ctx.case.calculator_id), syntax=arm.syntax, note_words=arm.note_words
    )


def _blind(arm: Arm, ctx: PromptContext) -> list[dict]:
    return prompts.build_blind_program(ctx.case, syntax=arm.syntax, note_words=arm.note_words)


def _formulate(arm: Arm, ctx: PromptContext) -> list[dict]:
    return prompts.build_formulate(ctx.case, note_words=arm.note_words)


def _extract(arm: Arm, ctx: PromptContext) -> list[dict]:
    calc = calculator_for(arm, ctx.case.calculator_id)
    if calc is None:
        return []
    return prompts.build_extract(ctx.case, library_variables(calc), note_words=arm.note_words)


def _not_first(arm: Arm, ctx: PromptContext) -> list[dict]:
    raise ValueError(f"arm {arm.name}: the repair family follows a reply, it is never a first request")


NOTE_ONLY = PromptFamily("note_only", "reply", NOTE_ONLY_T, _note_only)
PAGE = PromptFamily("page", "reply", PAGE_T, _page)
PROGRAM = PromptFamily("program", "program", PROGRAM_T, _program)
BLIND = PromptFamily("blind", "program", BLIND_T, _blind)
FORMULATE = PromptFamily("formulate", "tree", FORMULATE_T, _formulate)
EXTRACT = PromptFamily("extract", "extract", EXTRACT_T, _extract)
REPAIR = PromptFamily("repair", "repair", REPAIR_T, _not_first)

PROMPT_FAMILIES: Registry[PromptFamily] = Registry("prompt family", PromptFamily, plural="prompt families")


def register_family(family: PromptFamily) -> PromptFamily:
    """Add a prompt family; ValueError if one of its templates is not in harness.arms.prompts.TEMPLATES (add
    the template first) or its name is taken."""
    unknown = [t for t in family.templates if t not in prompts.TEMPLATES]
    if unknown:
        raise ValueError(f"prompt family {family.name!r}: unknown templates {unknown} (harness.arms.prompts)")
    return PROMPT_FAMILIES.register(family)


for _family in (NOTE_ONLY, PAGE, PROGRAM, BLIND, FORMULATE, EXTRACT, REPAIR):
    register_family(_family)
PROMPT_FAMILIES.freeze()


def repair_prompt(original: Prompt, reply: str, error: str) -> Prompt:
    """The corrective turn after a program that returned no value (prompts.build_repair)."""
    return Prompt(REPAIR, prompts.build_repair(original.messages, reply, error))


def extract_prompt(case: Case, variables: list[tuple[str, str]], *, note_words: int | None) -> Prompt:
    """The library extraction request for a calculator's variables (prompts.build_extract)."""
    return Prompt(EXTRACT, prompts.build_extract(case, variables, note_words=note_words))


__all__ = [
    "BLIND",
    "BLIND_T",
    "EXTRACT",
    "EXTRACT_T",
    "FORMULATE",
    "FORMULATE_T",
    "NOTE_ONLY",
    "NOTE_ONLY_T",
    "PAGE",
    "PAGE_T",
    "PROGRAM",
    "PROGRAM_T",
    "PROMPT_FAMILIES",
    "REPAIR",
    "REPAIR_T",
    "choose_example",
    "extract_prompt",
    "register_family",
    "repair_prompt",
]
