"""The harness package's import graph: no module-level cycle, no module outside harness.cli imports the CLI, and
stage packages import only downwards (cli -> reproduce -> verify -> analysis -> run -> arms/model/scoring ->
calculators -> data -> core). Every import counts, function-level ones included: a lazy import still is an edge."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import harness

PACKAGE = Path(harness.__file__).resolve().parent

# Stage packages from the top of the pipeline down; a package may import its own layer's packages (if that makes
# no cycle) and any layer below, never one above.
LAYERS = (
    ("cli",),
    ("reproduce",),
    ("verify",),
    ("analysis",),
    ("run",),
    ("arms", "model", "scoring"),
    ("calculators",),
    ("data",),
    ("core",),
)
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(name: str) -> str | None:
    """The harness module `name` refers to (a submodule, or the module defining an attribute)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


UNRESOLVED: list[str] = []


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            UNRESOLVED.extend(f"{module}: import {n}" for n in names if n.startswith("harness.") and n not in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
            if base.startswith("harness") and (
                base not in MODULES or (base == "harness" and any(n not in MODULES for n in names[:-1]))
            ):
                UNRESOLVED.append(f"{module}: from {base} import {', '.join(a.name for a in node.names)}")
        else:
            continue
        for n in names:
            if n == "harness" or n.startswith("harness."):
                target = _resolve(n)
                if target and target != module and target != "harness":
                    out.add(target)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges from a package's __init__ to its own submodules are re-exports, not dependencies of the package's
    modules on each other; leave them out so `pkg/__init__ -> pkg.a -> pkg.b` is not a cycle through the parent."""
    out = {}
    for m, targets in graph.items():
        is_init = MODULES[m].name == "__init__.py"
        out[m] = {t for t in targets if not (is_init and t.startswith(m + "."))}
    return out


def test_every_stage_package_is_known():
    stages = {
        _stage(m)
        for m in MODULES
        if (_stage(m) and MODULES[m].parent != PACKAGE) or (_stage(m) and MODULES[m].name == "__init__.py")
    }
    stages |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert stages <= set(RANK), f"stage package(s) without a layer: {sorted(stages - set(RANK))}"
    loose = sorted(m for m in MODULES if m.count(".") == 1 and MODULES[m].parent == PACKAGE)
    assert loose == [], f"modules at harness/ root (place them in a stage package): {loose}"


# The packages and modules issue 21 made (typed record and manifest reader, run request, arm spec and solvers,
# one calculators package, one rehearsal package, the generic registry): the walker must see each, with its
# edges, or the checks below would pass over them.
ISSUE_21_MODULES = (
    "harness.run.record",
    "harness.run.manifest",
    "harness.run.request",
    "harness.arms.spec",
    "harness.arms.families",
    "harness.arms.options",
    "harness.arms.solvers",
    "harness.arms.solvers.base",
    "harness.calculators",
    "harness.calculators.versions",
    "harness.calculators.entities",
    "harness.model.rehearsal",
    "harness.model.rehearsal.server",
    "harness.core.registry",
    "harness.verify.verification",
)


def test_the_new_packages_are_in_the_graph():
    missing = [m for m in ISSUE_21_MODULES if m not in MODULES]
    assert missing == [], f"not in the walked tree: {missing}"
    # their places in the layers: the calculators below the arms, the record below the analysis and verify
    assert "harness.calculators.versions" in GRAPH["harness.calculators.lab"]
    assert "harness.run.record" in GRAPH["harness.run.store"]
    assert "harness.arms.spec" in GRAPH["harness.arms.solvers.base"]


def test_every_harness_import_names_a_module_of_this_tree():
    """A stale path (a module that moved) must not resolve to some other installed copy of the package."""
    assert UNRESOLVED == []


def test_no_import_cycle():
    cycle = _find_cycle(_without_package_inits(GRAPH))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_outside_the_cli_imports_the_cli():
    offenders = sorted(
        f"{m} -> {t}" for m, targets in GRAPH.items() if _stage(m) != "cli" for t in targets if _stage(t) == "cli"
    )
    assert offenders == []


def test_stages_import_only_downwards():
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if _stage(m) in RANK and _stage(t) in RANK and RANK[_stage(t)] < RANK[_stage(m)]
    )
    assert upward == [], "imports against the pipeline direction:\n" + "\n".join(upward)
    packages = {}
    for m, targets in GRAPH.items():
        for t in targets:
            if _stage(m) != _stage(t):
                packages.setdefault(_stage(m), set()).add(_stage(t))
    cycle = _find_cycle(packages)
    assert cycle is None, "stage packages import each other: " + " -> ".join(cycle)


def test_the_walker_sees_function_level_and_relative_imports(tmp_path):
    """The graph is only as good as the parser: a lazy import inside a function is an edge too."""
    # cli/errors.py imports the store inside explain(), when a command failed (harness/cli/__init__.py loads a
    # command's module by name, so harness.cli itself has no import edge to the commands)
    assert "harness.run.store" in GRAPH["harness.cli.errors"]
    src = "def f():\n    from harness.cli.run import run\n"
    tree = ast.parse(src)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert found and _resolve(f"{found[0].module}.run") == "harness.cli.run"


def _third_party(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_only_the_cli_imports_click():
    """Option parsing is the CLI's: the stages raise their own errors and the CLI turns them into click's."""
    offenders = sorted(m for m in MODULES if _stage(m) != "cli" and "click" in _third_party(m))
    assert offenders == []


def test_the_arm_spec_and_the_registry_type_stand_below_the_solvers():
    """Solvers import the Arm spec (harness.arms.spec) and the prompt families, never the arm registry; the spec
    imports no solver; the generic registry (harness.core.registry) imports nothing of the harness."""
    solvers = [m for m in MODULES if m.startswith("harness.arms.solvers")]
    assert not [m for m in solvers if "harness.arms.registry" in GRAPH[m]]
    assert not [t for t in GRAPH["harness.arms.spec"] if t.startswith("harness.arms.solvers")]
    assert not [t for t in GRAPH["harness.arms.families"] if t.startswith("harness.arms.solvers")]
    assert GRAPH["harness.core.registry"] == set()


def test_the_rehearsal_package_is_one_contract():
    """The rehearsal's model side (harness.model.rehearsal) learns a request's reply form from its header, so it
    imports no arm, prompt or template; the run and verify stages read only its labels, never its server or script."""
    rehearsal = [m for m in MODULES if m.startswith("harness.model.rehearsal")]
    assert {
        "harness.model.rehearsal.server",
        "harness.model.rehearsal.sources",
        "harness.model.rehearsal.replies",
        "harness.model.rehearsal.labels",
        "harness.model.rehearsal.launcher",
    } <= set(rehearsal)
    assert not sorted(f"{m} -> {t}" for m in rehearsal for t in GRAPH[m] if _stage(t) == "arms")
    readers = sorted(
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        if _stage(m) in ("run", "verify", "analysis")
        for t in targets
        if t.startswith("harness.model.rehearsal") and t != "harness.model.rehearsal.labels"
    )
    assert readers == []


# The packages and modules issue 35 made (typed manifests on a typed-JSON reader, the server description, the vLLM
# package, prerequisites per launcher, the host record, the table registry and its groups): the walker must see
# each, and their edges must say what the split promised.
ISSUE_35_MODULES = (
    "harness.core.typed_json",
    "harness.core.host",
    "harness.model.server_info",
    "harness.model.prerequisites",
    "harness.model.vllm",
    "harness.model.vllm.locks",
    "harness.model.vllm.contract",
    "harness.model.vllm.launcher",
    "harness.model.vllm.logs",
    "harness.model.vllm.prerequisites",
    "harness.model.vllm.cpu",
    "harness.analysis.tables",
    "harness.analysis.tables.spec",
    "harness.analysis.tables.cells",
    "harness.analysis.tables.ladder",
    "harness.analysis.tables.gaps",
    "harness.analysis.tables.ledger",
    "harness.analysis.tables.audit",
    "harness.analysis.tables.router",
)
TABLE_GROUPS = ("ladder", "gaps", "ledger", "audit", "router")


def test_the_issue_35_modules_are_in_the_graph_with_their_edges():
    missing = [m for m in ISSUE_35_MODULES if m not in MODULES]
    assert missing == [], f"not in the walked tree: {missing}"
    assert (
        not (PACKAGE / "model" / "vllm.py").exists() and not (PACKAGE / "analysis" / "tables_supplementary.py").exists()
    )
    # the manifests are typed on the one typed-JSON reader, with the server as the launchers describe it
    assert {"harness.core.typed_json", "harness.model.server_info"} <= GRAPH["harness.run.manifest"]
    assert "harness.model.server_info" in GRAPH["harness.model.serving"]
    # the CPU twin shares the H100 command builder; the lock files are read (and written) by locks alone
    assert "harness.model.vllm.launcher" in GRAPH["harness.model.vllm.cpu"]
    assert "harness.model.vllm.locks" in GRAPH["harness.model.vllm.launcher"]
    assert "harness.model.vllm.launcher" not in GRAPH["harness.model.vllm.locks"]
    # each launcher's prerequisites are its module's; the shared checks import no launcher
    assert not [
        t
        for t in GRAPH["harness.model.prerequisites"]
        if t.startswith("harness.model.") and t != "harness.model.prerequisites"
    ]
    for m in (
        "harness.model.vllm.prerequisites",
        "harness.model.vllm.cpu",
        "harness.model.serving",
        "harness.model.rehearsal.launcher",
    ):
        assert "harness.model.prerequisites" in GRAPH[m], m
    # the table groups build on the spec and the shared cells, never on each other; the ledger reads the manifests
    groups = {f"harness.analysis.tables.{f}" for f in TABLE_GROUPS}
    for f in groups:
        assert "harness.analysis.tables.spec" in GRAPH[f] and not (GRAPH[f] & groups), f
    assert "harness.run.manifest" in GRAPH["harness.analysis.tables.ledger"]
    assert groups <= GRAPH["harness.analysis.tables"]


# --- the benchmarks (bench/) and the executor: bench stands above the kit, nothing of the kit imports it ----------

REPO = PACKAGE.parent


def _absolute_imports(path: Path, package: str) -> set[str]:
    """Every module name a file imports (relative imports resolved against `package`), function-level included."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
    return out


BENCH = {("bench." + p.stem if p.stem != "__init__" else "bench"): p for p in (REPO / "bench").glob("*.py")}
EXECUTOR = {
    ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
    for p in (REPO / "executor").rglob("*.py")
}
BENCH_MODULES = (
    "bench.machine",
    "bench.targets",
    "bench.stages",
    "bench.rehearsal",
    "bench.compare",
    "bench.fullsize",
    "bench.executor",
    "bench.phase_probe",
    "bench.client",
    "bench.stats",
    "bench.scoring",
    "bench.cli",
    "bench.ab_driver",
    "bench.honest_programs",
    "bench.honest_corpus",
    "bench.vllm_cpu",
    "bench.demo_models",
)


def test_the_bench_package_is_walked():
    assert set(BENCH_MODULES) <= set(BENCH), sorted(set(BENCH_MODULES) - set(BENCH))
    assert {"harness.data.rehearsal_set", "harness.model.rehearsal.sources", "harness.cli.__main__"} <= set(MODULES)
    assert not (PACKAGE / "reproduce" / "rehearsal").exists(), "the rehearsal driver lives in bench/ now"
    assert "harness.run.store" in _absolute_imports(BENCH["bench.rehearsal"], "bench")


def test_nothing_in_harness_or_executor_imports_bench():
    offenders = sorted(
        f"{m} -> {n}"
        for m, p in [*MODULES.items(), *EXECUTOR.items()]
        for n in _absolute_imports(p, m if p.name == "__init__.py" else m.rpartition(".")[0])
        if n == "bench" or n.startswith("bench.")
    )
    assert offenders == []


def test_bench_imports_no_tests_and_only_modules_that_exist():
    """No more sys.path games: bench reaches harness and executor as packages, never tests/ or scripts/."""
    tests = sorted(
        f"{m} -> {n}"
        for m, p in BENCH.items()
        for n in _absolute_imports(p, "bench")
        if n.split(".")[0] in ("tests", "scripts")
    )
    assert tests == []
    stale = sorted(
        f"{m} -> {n}"
        for m, p in BENCH.items()
        for n in _absolute_imports(p, "bench")
        if n.startswith("harness.") and _resolve(n) in (None, "harness")
    )
    assert stale == []
    paths = sorted(
        m for m, p in BENCH.items() if re.search(r"sys\.path\.(insert|append)", p.read_text(encoding="utf-8"))
    )
    assert paths == []


def test_one_cli_no_other_entry_point_in_harness():
    """Every stage runs through the Click CLI: no module of harness/ parses its own arguments or has a `__main__`
    block (harness/cli/__main__.py is the CLI itself, for `python -m harness.cli`)."""
    argparse_users = sorted(m for m in MODULES if "argparse" in _third_party(m))
    mains = sorted(
        m
        for m, p in MODULES.items()
        if m != "harness.cli.__main__"
        and re.search(r"^if __name__ == .__main__.:", p.read_text(encoding="utf-8"), re.M)
    )
    assert argparse_users == [] and mains == []
