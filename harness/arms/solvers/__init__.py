"""Solvers: what an arm does with a case — call the model, run programs, vote, repair, extract into the
library, evaluate a Formulate-Solve tree, route — one `Solver` object per kind (the protocol:
harness.arms.solvers.base), registered here by name.

    SOLVERS["reply"]                      the object an arm's `solver` string names
    get_solver(name)                      the same, or ValueError naming the known kinds
    register_solver(obj) / unregister_solver(name)   for a solver defined outside this package (tests, users)

An `Arm` reaches its solver through `Arm.solver_kind`; nothing outside these modules switches on a solver name.
"""
from __future__ import annotations

from harness.arms.solvers.base import (ABSTAINED, ANSWERED, NO_PROGRAM, TAXONOMY, ArmSettings, ChatClient, Context,
                                       InfraError, ProgramExecutor, Scoring, Solution, Solver, majority,
                                       rescore_value, to_json_value, vote_key)
from harness.arms.solvers.formulate import DATE_OUTPUT_TYPES, TreeSolver
from harness.arms.solvers.library import (ExtractLibrarySolver, GoldLibrarySolver, RecalledSolver,
                                          calculator_for, library_variables)
from harness.arms.solvers.program import ProgramSolver, RepairSolver, VoteSolver
from harness.arms.solvers.reply import ReplySolver
from harness.arms.solvers.router import RouterSolver

SOLVERS: dict[str, Solver] = {s.name: s for s in (
    ReplySolver(), ProgramSolver(), RepairSolver(), VoteSolver(), ExtractLibrarySolver(), GoldLibrarySolver(),
    RecalledSolver(), TreeSolver(), RouterSolver(),
)}
BUILTIN_SOLVERS: frozenset[str] = frozenset(SOLVERS)


def get_solver(name: str) -> Solver:
    try:
        return SOLVERS[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; known solvers: {', '.join(SOLVERS)}") from None


def uses_convention(solver_name: str | None) -> bool:
    """Whether the solver kind of that name (e.g. a stored arm config's `solver`) depends on the unit convention;
    False for a name no longer registered."""
    solver = SOLVERS.get(str(solver_name))
    return solver is not None and solver.uses_convention


def register_solver(solver: Solver) -> Solver:
    """Add a solver kind under its `name`; ValueError if the name is taken by another object."""
    if not isinstance(solver, Solver):
        raise TypeError(f"a solver must be a harness.arms.solvers.Solver instance, got {type(solver).__name__}")
    held = SOLVERS.get(solver.name)
    if held is not None and held is not solver:
        raise ValueError(f"solver name {solver.name!r} is already registered ({held!r})")
    SOLVERS[solver.name] = solver
    return solver


def unregister_solver(name: str) -> None:
    """Remove a solver added with register_solver; the built-in kinds stay."""
    if name in BUILTIN_SOLVERS:
        raise ValueError(f"solver {name!r} is built in and cannot be removed")
    SOLVERS.pop(name, None)


__all__ = ["ABSTAINED", "ANSWERED", "NO_PROGRAM", "TAXONOMY", "ArmSettings", "ChatClient", "Context", "InfraError",
           "ProgramExecutor", "Scoring", "Solution", "Solver", "majority", "rescore_value", "to_json_value",
           "vote_key", "DATE_OUTPUT_TYPES", "calculator_for", "library_variables", "SOLVERS", "BUILTIN_SOLVERS",
           "get_solver", "uses_convention", "register_solver", "unregister_solver", "ExtractLibrarySolver", "GoldLibrarySolver",
           "RecalledSolver", "ProgramSolver", "RepairSolver", "VoteSolver", "ReplySolver", "RouterSolver",
           "TreeSolver"]
