"""Display names of arms and of the library-first hybrids (paper wording), and the hybrids' names."""

from __future__ import annotations

import re
from collections.abc import Iterable

from harness.arms.registry import ARMS, budget_variants, hybrid_fallbacks, hybrid_libraries
from harness.model.rehearsal.labels import is_synthetic_model


def _label(arm: str) -> str | None:
    entry = ARMS.get(arm)
    return entry.display.label if entry is not None else None


def _short(arm: str) -> str | None:
    entry = ARMS.get(arm)
    return entry.display.short if entry is not None else None


def arm_label(arm: str, short: bool = False) -> str:
    """An arm's table label from its registry entry; a note-budget variant without its own label is "<label of the
    arm it caps>, N words" (N from its spec: harness.arms.registry.budget_variants); hybrids are named after their
    library and fallback."""
    if short and (short_label := _short(arm)):
        return short_label
    if label := _label(arm):
        return label
    base = budget_variants().get(arm)
    if base is not None and _label(base):
        return f"{(_short(base) or _label(base)) if short else _label(base)}, {ARMS[arm].note_words} words"
    if arm.startswith("hybrid:"):
        return hybrid_label(arm)
    return arm


LIBRARIES = hybrid_libraries()  # {key: library arm} (gold, extract), from the arms' Display.hybrid
FALLBACKS = hybrid_fallbacks()  # the fallback arms (Program-Solve, Open-book arithmetic), in their rank order


def hybrid_name(library: str, fallback: str) -> str:
    return f"hybrid:{library}-first+{fallback}"


HYBRIDS = tuple((hybrid_name(lib, fb), LIBRARIES[lib], fb) for lib in LIBRARIES for fb in FALLBACKS)


def hybrid_label(name: str) -> str:
    lib, fb = name.removeprefix("hybrid:").split("+", 1)
    return f"{lib.replace('-first', '').capitalize()}-first, {arm_label(fb, short=True)} fallback"


def model_label(model: str) -> str:
    """Short display name: 'Qwen/Qwen2.5-7B-Instruct' -> 'Qwen2.5-7B'; a rehearsal-server model says it is
    synthetic wherever its name is shown: 'rehearsal-alpha (synthetic)'."""
    name = model.rsplit("/", 1)[-1]
    label = re.sub(r"-instruct.*$", "", name, flags=re.IGNORECASE) or model
    return f"{label} (synthetic)" if is_synthetic_model(model) else label


def synthetic_notice(models: Iterable[str]) -> str | None:
    """The sentence every artefact built from synthetic records leads with; None when none is synthetic."""
    names = [m for m in models if is_synthetic_model(m)]
    if not names:
        return None
    return (
        f"SYNTHETIC: {', '.join(names)} {'is' if len(names) == 1 else 'are'} the rehearsal server's scripted "
        f"replies (a fake for testing the pipeline), not a model's results; do not cite these numbers."
    )
