"""The CPU demo's opening paragraph (`about.md`: summary.md and report.html start with it), written from the run's
own records and its server description, never a fixed text: what was run (model as its GGUF names itself, cases,
calculators, categories, seed, arms), what these figures show (each arm's correct count and what went wrong,
and the cases a program got right where the model's own arithmetic did not), and what they do not (the paper's
results: its models, cases and seeds).

    harness about --results OUT [--server OUT/server.json] > OUT/about.md

The server description is the model run's own (its run manifest's `server`, harness.model.server_info.ServerInfo),
unless `--server` names a file written by `harness serve start --server-info`.

The wall time and the machine's load are not part of it (summary.md's closing lines say them).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.analysis.stats.families import shown_in
from harness.analysis.stats.labels import arm_label
from harness.arms.registry import demo_arms, model_free_arms
from harness.model.server_info import ServerInfo, read_server_info
from harness.run.manifest import run_manifests
from harness.run.record import Record
from harness.run.store import iter_located_records

# The demo's model arms, in the order the text names them, and what each gives the model and who computes: their
# registry entries' PaperRole.demo (harness.arms.registry.demo_arms); the library arm: the model-free arm that ran.
OUTCOME_WORDS = {
    "answered": "answered wrong",
    "raised_error": "raised an error",
    "no_program": "wrote no program",
    "sandbox_rejection": "refused by the sandbox",
    "wrong_return_kind": "returned the wrong kind of value",
    "unreadable_value": "gave an unreadable value",
    "abstained": "abstained",
    "request_rejected": "request refused",
}


def _model_words(server: ServerInfo | None, model_id: str) -> str:
    w = server.weights if server is not None else None
    if w is not None and w.name:
        quant = f", {w.quantization}" if w.quantization else ""
        return f"{w.name} ({w.size_label or '?'} parameters{quant}; model id {model_id})"
    return model_id


def _wrong_words(rows: list[Record]) -> str:
    counts = Counter(r.outcome for r in rows if not r.correct)
    return ", ".join(f"{n} {OUTCOME_WORDS.get(o, o)}" for o, n in counts.most_common())


def about_text(records: list[Record], server: ServerInfo | None = None) -> str:
    """The paragraph (module docstring) from the demo's records."""
    by_arm: dict[str, list[Record]] = {}
    for r in records:
        by_arm.setdefault(r.arm, []).append(r)
    arm_role = demo_arms()
    model_rows = [r for a in arm_role for r in by_arm.get(a, [])]
    if not model_rows:
        raise ValueError(f"no records of the demo's model arms ({', '.join(arm_role)}) to describe")
    model_id = model_rows[0].model
    cases = {r.case_id: r for r in model_rows}
    seeds = sorted({r.seed for r in model_rows})
    calcs = sorted({r.calculator_name or str(r.calculator_id) for r in cases.values()})
    arms_run = [a for a in arm_role if a in by_arm]
    ran = "; ".join(f"{arm_label(a)} ({arm_role[a]})" for a in arms_run)
    library_arm = next((a for a in model_free_arms() if a in by_arm), None)
    lib = by_arm.get(library_arm, []) if library_arm else []
    lib_text = (
        f" The {arm_label(library_arm)} (no model) answered all {len(lib)} rows of the slice: "
        f"{sum(r.correct for r in lib)} correct, the rest outside the library it has."
        if lib and library_arm
        else ""
    )
    what = (
        f"What was run: the kit's real pipeline on a CPU. {_model_words(server, model_id)}, served by llama.cpp "
        f"with greedy decoding, answered {len(cases)} cases of the bundled 110-row slice, one from each of "
        f"{len(calcs)} calculators spread over the benchmark's categories (the shortest note of each; rule in "
        f"harness/run/case_selection.py), at seed{'s' if len(seeds) > 1 else ''} "
        f"{', '.join(map(str, seeds))}, through {ran}; the prompts are the paper's.{lib_text}"
    )

    counts = {a: (sum(r.correct for r in by_arm[a]), len(by_arm[a])) for a in arms_run}
    each = []
    for a in arms_run:
        ok, n = counts[a]
        wrong = _wrong_words(by_arm[a])
        each.append(f"{arm_label(a)} {ok}/{n} correct" + (f" (of the others: {wrong})" if wrong else ""))
    shows = "What these figures show: " + "; ".join(each) + "."
    # the program arm against the model's own arithmetic: the comparison declared for this paragraph (Gap.tables)
    code, arith = next(((c.solver, c.reference) for c in shown_in("about")), ("", ""))
    if code in counts and arith in counts:
        prog = {r.case_id: r for r in by_arm[code]}
        book = {r.case_id: r for r in by_arm[arith]}
        won = sorted(c for c in prog if prog[c].correct and c in book and not book[c].correct)
        lost = sorted(c for c in prog if not prog[c].correct and c in book and book[c].correct)
        p_ok, b_ok = counts[code][0], counts[arith][0]
        if won:
            shows += (
                f" A program got right what the model's own arithmetic got wrong on {len(won)} case(s): "
                + "; ".join(
                    f"{prog[c].calculator_name} (program {_value(prog[c].answer)}, open-book "
                    f"{_value(book[c].answer)}, gold {_value(_gold(prog[c]))})"
                    for c in won
                )
                + "."
            )
        if lost:
            shows += f" The reverse on {len(lost)}: " + "; ".join(prog[c].calculator_name or c for c in lost) + "."
        if p_ok > b_ok:
            shows += (
                f" On these cases Program-Solve answered more correctly than open-book arithmetic "
                f"({p_ok} vs {b_ok}): the method the paper studies, working on a small model."
            )
        elif p_ok == b_ok:
            shows += f" On these cases Program-Solve and open-book arithmetic tie ({p_ok} each)."
        else:
            shows += (
                f" On these cases open-book arithmetic answered more correctly than Program-Solve ({b_ok} vs {p_ok})."
            )
    size = (server.weights.size_label if server is not None and server.weights is not None else None) or "small"
    n = len(cases)
    seed_words = "one seed" if len(seeds) == 1 else f"{len(seeds)} seeds"
    not_shows = (
        f"What they do not show: the paper's results. The paper runs Qwen2.5-7B/32B (and Mistral-7B, "
        f"Phi-3.5-mini) on all 1,100 test cases at five seeds on an H100 (make reproduce); {n} cases at "
        f"{seed_words} with a {size} model say that the pipeline works end to end and show the "
        f"method on a few cases; a difference of a case or two between arms here is within chance, "
        f"and the accuracy of a {size} model is not the paper's."
    )
    return "\n".join([what, "", shows, "", not_shows]) + "\n"


def _gold(rec: Record) -> str | None:
    return rec.gold.answer if rec.gold is not None else None


def _value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list) and len(v) == 2:
        return f"{v[0]} weeks {v[1]} days"
    return "none" if v is None else str(v)


def about_results(results: Path, server_path: Path | None = None) -> str:
    """The opening paragraph of the result set under ``results`` (``harness about``): from its records and the
    description of the server that fed them (its run manifest's, or the file at ``server_path``). ValueError when
    the records cannot say it (a manifest or server file that cannot be read is an error naming it)."""
    records = [r for _, _, r in iter_located_records(results)]
    server: ServerInfo | None
    if server_path is not None:
        server = read_server_info(server_path)
    else:
        models = {r.model for r in records if r.arm in demo_arms()}
        server = next((m.server for m in run_manifests(results) if m.server is not None and m.model.id in models), None)
    return about_text(records, server)
