"""What a solver adds to its record about how it reached its outcome (the record's `detail`).

Each key is written by one solver kind (harness.arms.solvers) or by the runner; the values are JSON provenance.
A TypedDict, so every key read is checked by mypy and a read costs nothing at run time; it lives with the solvers
(the record, harness.run.record, sits above them and imports it).
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["Detail", "JSONValue"]

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]


class Detail(TypedDict, total=False):
    """A record's `detail` (module docstring); every key optional, each named by the solver kind writing it."""

    # formulate (a model-written formula): the calculation and the formula it named
    calculation: JSONValue
    formula: JSONValue
    # extract-then-compute and the library: the extracted entities, the library's provenance, the route taken
    extraction: JSONValue
    library: JSONValue
    route: str
    # recall arms (sampled answers, then agreement, the library, a majority or the first): each sample's answer
    sample_answers: list[JSONValue]
    # program arms: whether a repair turn ran, the repairs made, the votes cast and the programs that computed
    repaired: bool
    repairs: int
    votes: int
    computed: int
    # router arms: the route and its provenance (README, "Router")
    router: dict[str, JSONValue]
    # bench/fullsize.py's SYNTHETIC full-size copies: the source record's key, the replica and the source seed
    synthetic_fullsize: dict[str, JSONValue]
    # the runner, for a case the server refused: the HTTP status and the requests answered before it
    rejected_status: int
    requests_answered_before: int
