"""The reproducibility ledger (s14, s14b): the run settings and the executor's limits, from the typed run manifests
of the results root (harness.run.manifest) and executor/policy.py. Every field read is a field of the manifest's
type: a renamed one fails the reader, naming the file (the tables are then omitted with that error), never a silent
"not recorded"."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from executor import policy
from harness.analysis.results_analysis import Analysis
from harness.analysis.stats.labels import model_label
from harness.analysis.table_format import SECTION, Omit, Table
from harness.analysis.tables.cells import results_root
from harness.analysis.tables.spec import TableSpec
from harness.run.manifest import ManifestError, RunManifest, run_manifests
from harness.run.runner import NO_MODEL
from harness.run.store import iter_result_files, model_slug, results_location


def load_manifests(results_dir: str | Path) -> list[RunManifest]:
    """The run manifests (one per `harness run`) in a results root, typed; a manifest that cannot be read omits the
    ledger tables with the reader's error, which names the file."""
    try:
        return run_manifests(results_dir)
    except ManifestError as exc:
        raise Omit(str(exc)) from None


def _span(per_model: dict[str, set[str]]) -> str:
    """One value when every model agrees, else 'model: value' per model."""
    values = {v for vs in per_model.values() for v in vs}
    if not values:
        return "not recorded"
    if len(values) == 1 and all(len(vs) == 1 for vs in per_model.values()):
        return next(iter(values))
    return "; ".join(
        f"{model_label(m)}: {', '.join(sorted(vs)) or 'not recorded'}" for m, vs in sorted(per_model.items())
    )


# s14's settings rows, in this order whatever order the manifests come in (a resumed or merged run has
# more manifests than an uninterrupted one; the table must not show how the run was split).
S14_FIELDS = (
    "Dataset",
    "Dataset sha256",
    "Seeds",
    "Scorer",
    "Executor image digest",
    "Model id and revision",
    "Server",
    "Server flags",
    "Model file sha256",
    "Sampling fields sent / server defaults",
    "Seed sent to server",
)


def _stored_seeds(root: Path) -> dict[tuple[str, str], set[int]]:
    """{(model directory, arm): seeds whose results file holds records} (the store's layout, no record read)."""
    out: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p in iter_result_files(root):
        if p.stat().st_size:
            where = results_location(p)
            out[(where.model_dir, where.arm)].add(where.seed)
    return out


def table_s14(an: Analysis) -> Table:
    """The run settings as sets of values per model: the union of the seeds, one row per setting in a fixed
    order; nothing counts or orders the manifests, so one run, the same run resumed after a kill and the
    same run sharded and merged (`harness merge` carries the shards' manifests) give the same bytes."""
    manifests = load_manifests(results_root(an))
    if not manifests:
        raise Omit("no run manifests in the results root")
    fields: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    seeds: dict[str, set[int]] = defaultdict(set)
    arm_settings: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    stored = _stored_seeds(results_root(an))
    for man in manifests:
        mid = man.model.id if man.uses_model else "library (no model)"
        slug = model_slug(mid) if man.uses_model else NO_MODEL
        ds = man.dataset
        fields["Dataset"][mid].add(f"{ds.name} ({ds.n_cases} cases), revision {ds.revision or 'none (bundled file)'}")
        fields["Dataset sha256"][mid].add(ds.sha256)
        for name in man.arms:  # the seeds records were stored for, not the seeds asked for
            seeds[mid] |= stored.get((slug, name), set())
        fields["Scorer"][mid].add(man.scorer)
        if man.executor is not None:
            fields["Executor image digest"][mid].add(man.executor.image_id or f"none ({man.executor.backend} backend)")
        for arm in man.arms.values():
            if not arm.needs_model:
                arm_settings[arm.title][mid].add("no model request")
                continue
            arm_settings[arm.title][mid].add(
                f"temperature {arm.temperature}, max tokens {arm.max_tokens}, note "
                f"{'whole' if arm.note_words is None else f'{arm.note_words} words'}, samples {arm.samples}"
            )
    for mid, ss in seeds.items():
        fields["Seeds"][mid].add(", ".join(map(str, sorted(ss))) or "none stored")
    for man in (m for m in manifests if m.uses_model):
        mid = man.model.id
        fields["Model id and revision"][mid].add(f"{mid} @ {man.model.revision or 'revision not recorded'}")
        server, client = man.server, man.client
        profile = client.profile if client is not None else None
        fields["Server"][mid].add(
            " ".join(
                x
                for x in (
                    (server.server if server else None) or (profile.name if profile else None),
                    server.server_version if server else None,
                )
                if x
            )
            or "not recorded"
        )
        fields["Server flags"][mid].add(" ".join(server.args) if server and server.args else "not recorded")
        if server is not None and server.weights is not None and server.weights.sha256:
            fields["Model file sha256"][mid].add(server.weights.sha256)
        applied = (server.sampling_defaults if server else {}) or (profile.extra if profile else {})
        fields["Sampling fields sent / server defaults"][mid].add(
            ", ".join(f"{k}={v}" for k, v in sorted(applied.items())) or "none beyond temperature and max tokens"
        )
        fields["Seed sent to server"][mid].add("yes" if profile is not None and profile.send_seed else "no")
    rows = [[k, _span(fields[k])] for k in S14_FIELDS if k in fields]
    rows.append([SECTION, "Per arm: temperature, output-token cap, note budget, samples"])
    rows += [[arm, _span(v)] for arm, v in sorted(arm_settings.items())]
    return Table(
        "s14",
        "Reproducibility ledger, run settings",
        ["Setting", "Value"],
        rows,
        [
            "From the run manifests in the results root (a resumed run's and every merged shard's "
            "included); seeds are their union. One value spans the models unless the row lists them; "
            "server flags are the server's own, without host, port or local paths."
        ],
        "ll",
    )


def table_s14b(an: Analysis) -> Table:
    manifests = load_manifests(results_root(an))
    execs = [m.executor for m in manifests if m.executor is not None]
    if not execs:
        raise Omit("no run in these results used the executor (no manifest records one)")
    pol = policy.policy_dict()
    rows = [[SECTION, "Limits the runs used (manifests; executor/policy.py where it differs)"]]
    for name, value in pol["limits"].items():
        recorded = sorted({json.dumps(e.limits.get(name)) for e in execs if e.limits})
        shown = ", ".join(recorded) if recorded else f"{value} (not recorded; executor/policy.py)"
        if recorded and recorded != [json.dumps(value)]:
            shown += f" (executor/policy.py now: {value})"
        rows.append([name, shown])
    rows.append([SECTION, "Layers"])
    rows.append(
        [
            "1 static check",
            f"AST rules: {len(pol['forbidden_nodes'])} forbidden node types, "
            f"{len(pol['forbidden_attributes'])} forbidden attributes, {len(pol['forbidden_names'])} forbidden "
            f"names; source at most {pol['max_source_chars']} characters",
        ]
    )
    rows.append(
        [
            "2 restricted interpreter",
            f"imports: {', '.join(pol['allowed_modules'])}; "
            f"{len(pol['allowed_builtins'])} builtins plus {', '.join(pol['wrapped_builtins'])}",
        ]
    )
    rows.append(
        [
            "3 process limits",
            "rlimits, wall-clock kill, executed-line cap, output caps (above); result over a dedicated descriptor",
        ]
    )
    rows.append(
        [
            "4 seccomp",
            f"child allow-list of {len(pol['child_syscalls'])} system calls: {', '.join(pol['child_syscalls'])}",
        ]
    )
    layouts = sorted({e.address_layout for e in execs if e.address_layout})
    rows.append(
        [
            "Determinism",
            f"str hash seed {pol['hash_seed']} ({pol['hash_algorithm']}); clock frozen at "
            f"{pol['clock_instant']}; address layout "
            f"{', '.join(layouts) if layouts else 'not recorded'} (SECURITY.md, Determinism)",
        ]
    )
    used = sorted({e.policy_hash for e in execs})
    now = policy.policy_hash()
    rows.append(
        [
            "Policy hash",
            ", ".join(used)
            + (
                "" if used == [now] else f" (executor/policy.py now: {now}; the layer rows describe the current policy)"
            ),
        ]
    )
    backends = sorted(
        {
            e.backend + (f" ({(e.runtime or {}).get('name')}, {e.runsc_version})" if e.backend == "container" else "")
            for e in execs
        }
    )
    rows.append(["Backend", ", ".join(backends) or "no executor run recorded"])
    flags = sorted({" ".join(e.run_flags) for e in execs if e.run_flags})
    if flags:
        rows.append(["Container flags", " | ".join(flags)])
    disabled = sorted({d for e in execs for d in e.disabled_layers})
    rows.append(["Disabled layers", ", ".join(disabled) or "none"])
    return Table(
        "s14b",
        "Reproducibility ledger, executor limits",
        ["Setting", "Value"],
        rows,
        [
            "Limits, policy hash, backend, runtime and container flags as the run manifests record them; the "
            "layer rows from executor/policy.py (what `executor policy` prints), which the policy hash pins."
        ],
        "ll",
    )


SPECS = (TableSpec("s14", "ledger", table_s14), TableSpec("s14b", "ledger", table_s14b))
