"""Work spread over processes, results in input order (so what is written never depends on how many workers
ran): `ordered_map(fn, items)`. Workers: HARNESS_WORKERS, else the CPUs this process may use (at most 8);
one worker, or one item, runs in this process."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
WORKERS_ENV = "HARNESS_WORKERS"


def workers() -> int:
    value = os.environ.get(WORKERS_ENV, "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError(f"{WORKERS_ENV}={value!r}: expected a whole number of worker processes") from None
    return max(1, min(8, len(os.sched_getaffinity(0))))


def ordered_map(fn: Callable[[T], R], items: Iterable[T], n_workers: int | None = None) -> list[R]:
    """[fn(item) for item in items], computed in up to `n_workers` forked processes; an exception in `fn` is
    raised here. `fn` must be a module-level function (it is pickled by name)."""
    items = list(items)
    n = min(n_workers or workers(), len(items))
    if n <= 1:
        return [fn(item) for item in items]
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(fn, items, chunksize=1))
