"""The seed-list syntax every stage accepts: "42-46", "42,43" or "42"."""
from __future__ import annotations


def parse_seeds(text: str) -> list[int]:
    """"42-46", "42,43" or "42" -> sorted distinct seeds; ValueError naming the part that is not a seed or a
    range (a range running backwards included), or when there is no seed at all."""
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
                seeds.update(range(lo, hi + 1))
            else:
                seeds.add(int(part))
        except ValueError:
            raise ValueError(f"{part!r} is not a seed or a range like 42-46") from None
    if not seeds:
        raise ValueError(f"no seeds in {text!r}")
    return sorted(seeds)
