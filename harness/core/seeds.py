"""The seed-list syntax every stage accepts: "42-46", "42,43" or "42", at most MAX_SEEDS seeds."""

from __future__ import annotations

# The paper's five seeds: what a reproduction runs unless told otherwise (harness.run.manifest.ReproduceSettings,
# `harness reproduce --seeds`, `make reproduce SEEDS=`); `harness run` takes the first alone by default.
PAPER_SEEDS: tuple[int, ...] = (42, 43, 44, 45, 46)


def seeds_text(seeds: tuple[int, ...] | list[int]) -> str:
    """The --seeds spelling of a seed list: "42-46" for a run of consecutive seeds, else "42,44"."""
    seeds = sorted(seeds)
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


MAX_SEEDS = 100  # the paper runs 5; a typo such as 42-1000000 would otherwise plan a million runs


def parse_seeds(text: str) -> list[int]:
    """ "42-46", "42,43" or "42" -> sorted distinct seeds; ValueError naming the part that is not a seed or a
    range (a range running backwards included), when there is no seed at all, or when there are more than
    MAX_SEEDS."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
            else:
                lo = hi = int(part)
        except ValueError:
            raise ValueError(f"{part!r} is not a seed or a range like 42-46") from None
        if hi - lo + 1 > MAX_SEEDS:
            raise ValueError(
                f"{part!r} is {hi - lo + 1:,} seeds; at most {MAX_SEEDS} per run (the paper uses 5: 42-46)"
            )
        seeds.update(range(lo, hi + 1))
        if len(seeds) > MAX_SEEDS:
            raise ValueError(f"{text!r} is more than {MAX_SEEDS} seeds; at most {MAX_SEEDS} per run")
    if not seeds:
        raise ValueError(f"no seeds in {text!r}")
    return sorted(seeds)
