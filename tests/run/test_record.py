"""The typed results record (harness.run.record): the runner builds every record through it, the store checks
its required fields, the committed result sets are of the current schema, and the executor's typed result
reaches the solvers (Context.execute) without a detour through a dict."""

from __future__ import annotations

import asyncio
import json

import pytest

from executor.api import Executor
from executor.result import ExecResult
from harness.arms.registry import get_arm
from harness.arms.solvers.base import Context, InfraError
from harness.arms.spec import ArmConfig
from harness.core.canonical_json import record_line
from harness.data.dataset import load_dataset
from harness.run.manifest import RunManifest, read_manifests
from harness.run.record import RECORD_FIELDS, RECORD_SCHEMA, REQUIRED_FIELDS, Record, RecordError
from harness.run.store import iter_result_files, read_result_file
from tests.conftest import ROOT


def test_from_dict_round_trips_and_names_what_is_wrong():
    rec = Record(
        key="k",
        model="library",
        arm="gold-lib",
        seed=42,
        case_id="2-1",
        calculator_id=2,
        outcome="answered",
        correct=True,
        scorer="paper",
    )
    d = rec.to_dict()
    assert tuple(d) == RECORD_FIELDS and d["record_schema"] == RECORD_SCHEMA and d["request"] == []
    assert Record.from_dict(json.loads(json.dumps(d))) == rec
    with pytest.raises(RecordError, match="lacks required field"):
        Record.from_dict({k: v for k, v in d.items() if k != "scorer"})
    with pytest.raises(RecordError, match="record schema None"):
        Record.from_dict({k: v for k, v in d.items() if k != "record_schema"})
    with pytest.raises(RecordError, match="unknown record field"):
        Record.from_dict({**d, "extra": 1})
    assert REQUIRED_FIELDS == (
        "key",
        "model",
        "arm",
        "seed",
        "case_id",
        "calculator_id",
        "outcome",
        "correct",
        "scorer",
    )


@pytest.mark.parametrize("result_set", ["results/gold-solve", "results/cpu-demo"])
def test_committed_records_are_of_this_schema(result_set):
    files = list(iter_result_files(ROOT / result_set))
    assert files
    for path in files:
        records = read_result_file(path)
        lines = path.read_bytes().splitlines(keepends=True)
        assert len(records) == len(lines)
        for rec, line in zip(records, lines):
            assert rec.record_schema == RECORD_SCHEMA
            # read, then written by the store's writer: the same bytes (the typed parts lose and add nothing)
            assert record_line(rec.to_dict()).encode("utf-8", "backslashreplace") == line, f"{path}: {rec.key}"
    # its run manifests load as typed manifests (a missing field is a load error), each arm's config field for field
    runs = [m.manifest for m in read_manifests(ROOT / result_set) if isinstance(m.manifest, RunManifest)]
    assert runs
    for manifest in runs:
        assert manifest.arms and all(isinstance(cfg, ArmConfig) for cfg in manifest.arms.values()), manifest.run_id


class _Fixed:
    """A scripted fake executor: returns the one ExecResult it was given."""

    def __init__(self, result: ExecResult):
        self.result = result

    def run(self, source: str) -> ExecResult:
        return self.result


def _ctx(executor) -> Context:
    case = load_dataset("bundled-test").cases[0]
    return Context(case=case, arm=get_arm("program-solve"), seed=42, executor=executor)


def test_execute_hands_the_solver_the_typed_result():
    with Executor("process", workers=1) as ex:
        result = asyncio.run(_ctx(ex).execute("answer = 6 * 7\n"))
    assert isinstance(result, ExecResult) and result.ok and result.answer == 42


def test_execute_raises_infra_error_on_an_infra_result():
    bad = ExecResult(outcome="INFRA_ERROR", error="supervisor died")
    with pytest.raises(InfraError, match="supervisor died"):
        asyncio.run(_ctx(_Fixed(bad)).execute("answer = 1\n"))
    ok = ExecResult(outcome="PROGRAM_ERROR", error="NameError")
    assert asyncio.run(_ctx(_Fixed(ok)).execute("x\n")) is ok
