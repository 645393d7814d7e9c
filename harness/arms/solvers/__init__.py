"""Solvers: what an arm does with a case — call the model, run programs, vote, repair, extract into the
library, evaluate a Formulate-Solve tree, route — one `Solver` class per kind (the protocol:
harness.arms.solvers.base), registered here by name. An arm holds a configured instance (`Arm.solver`,
e.g. `RouterSolver(m=3, library="gold")`).

    SOLVERS["reply"]                      the solver class of that name
    SOLVERS.lookup(name)                  the same, or ValueError naming the known kinds
    register_solver(cls) / unregister_solver(name)   for a solver defined outside this package (tests, users)

Nothing outside these modules switches on a solver name.
"""

from __future__ import annotations

from harness.arms.library_inputs import calculator_for, library_variables
from harness.arms.solvers.base import (
    ABSTAINED,
    ANSWERED,
    NO_PROGRAM,
    TAXONOMY,
    ChatClient,
    Context,
    InfraError,
    ProgramExecutor,
    Scoring,
    Solution,
    Solver,
    majority,
    rescore_value,
    to_json_value,
    vote_key,
)
from harness.arms.solvers.formulate import DATE_OUTPUT_TYPES, TreeSolver
from harness.arms.solvers.library import ExtractLibrarySolver, GoldLibrarySolver, RecalledSolver
from harness.arms.solvers.program import ProgramSolver, RepairSolver, VoteSolver
from harness.arms.solvers.reply import ReplySolver
from harness.arms.solvers.router import RouterSolver
from harness.core.registry import Registry

SOLVERS: Registry[type[Solver]] = Registry("solver", Solver, classes=True)
for _kind in (
    ReplySolver,
    ProgramSolver,
    RepairSolver,
    VoteSolver,
    ExtractLibrarySolver,
    GoldLibrarySolver,
    RecalledSolver,
    TreeSolver,
    RouterSolver,
):
    SOLVERS.register(_kind)
SOLVERS.freeze()


def uses_convention(solver_name: str | None) -> bool:
    """Whether the solver kind of that name (e.g. a stored arm config's `solver`) depends on the unit convention;
    False for a name no longer registered."""
    kind = SOLVERS.get(str(solver_name))
    return kind is not None and kind.uses_convention


def register_solver(kind: type[Solver]) -> type[Solver]:
    """Add a solver kind (a Solver subclass) under its `name`; ValueError if the name is taken by another."""
    return SOLVERS.register(kind)


def unregister_solver(name: str) -> None:
    """Remove a solver added with register_solver; the built-in kinds stay."""
    SOLVERS.unregister(name)


__all__ = [
    "ABSTAINED",
    "ANSWERED",
    "DATE_OUTPUT_TYPES",
    "NO_PROGRAM",
    "SOLVERS",
    "TAXONOMY",
    "ChatClient",
    "Context",
    "ExtractLibrarySolver",
    "GoldLibrarySolver",
    "InfraError",
    "ProgramExecutor",
    "ProgramSolver",
    "RecalledSolver",
    "RepairSolver",
    "ReplySolver",
    "RouterSolver",
    "Scoring",
    "Solution",
    "Solver",
    "TreeSolver",
    "VoteSolver",
    "calculator_for",
    "library_variables",
    "majority",
    "register_solver",
    "rescore_value",
    "to_json_value",
    "unregister_solver",
    "uses_convention",
    "vote_key",
]
