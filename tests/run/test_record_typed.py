"""The record is typed end to end (issue 49): no field of `Record` is `Any` or a bare container, the store's readers
yield `Record` values and its writers take them, and no harness module outside the store reads a record's JSON form
(`Record.from_dict`). mypy (make lint) then checks every field read; these checks keep the premises it rests on."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import harness
from harness.run import store
from harness.run.record import Record

PACKAGE = Path(harness.__file__).resolve().parent
STORE_SIDE = {PACKAGE / "run" / "store.py", PACKAGE / "run" / "record.py"}


def _untyped(hint: object) -> list[str]:
    """What in a type hint is Any or a container without its element types."""
    if hint is typing.Any:
        return ["Any"]
    if hint in (list, dict, tuple, set):
        return [f"bare {hint.__name__}"]  # type: ignore[attr-defined]
    out = []
    for arg in typing.get_args(hint):
        if arg is not Ellipsis:
            out += _untyped(arg)
    return out


# The JSON payloads a record carries verbatim are typed as JSON or an answer value, whose list form holds Any only
# as the answer's element (a weeks-days pair, a date string) - listed here so a new Any anywhere else fails.
ANY_ALLOWED = {"answer"}


def test_no_record_field_is_any_or_a_bare_container():
    hints = typing.get_type_hints(Record, include_extras=False)
    found = {name: _untyped(hint) for name, hint in hints.items() if name not in ANY_ALLOWED}
    assert {n: u for n, u in found.items() if u} == {}


def test_the_store_readers_yield_records_and_its_writers_take_them():
    for fn, want in (
        (store.read_result_file, "list[Record]"),
        (store.load_records, "list[Record]"),
        (store.iter_located_records, "Iterator[tuple[Path, int, Record]]"),
        (store.scan_result_file, "tuple[list[Record], int, str | None]"),
    ):
        assert fn.__annotations__["return"] == want, fn.__name__
    assert store.ResultStore.append.__annotations__["record"] == "Record"
    assert store.write_result_file.__annotations__["records"] == "Iterable[Record]"


def test_no_harness_module_outside_the_store_reads_a_records_json_form():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in STORE_SIDE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "from_dict"
                and isinstance(node.value, ast.Name)
                and node.value.id == "Record"
            ):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert offenders == []
