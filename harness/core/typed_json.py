"""Frozen dataclasses read from JSON: every field of the type present or defaulted, no unknown field, each value of
its declared type. The one reader behind the typed artefacts that nest (the manifests and their parts); the record,
flat, has its own (harness.run.record).

    from_json(RunManifest, data)     # TypedJsonError naming the field path: "server.flags: not a JSON object"
    to_json(manifest)                # the JSON form, fields in declaration order

Declared types understood: a dataclass (nested), `X | None`, `list[X]`, `tuple[X, ...]`, `dict[str, X]`,
`Literal[...]`, `Any`, and str, int, float (an int is a float; a bool is neither), bool. A JSON array read into a
`tuple[X, ...]` field becomes a tuple, so a value read back equals the value written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, Literal, TypeVar, Union

T = TypeVar("T")

__all__ = ["TypedJsonError", "field_names", "from_json", "to_json"]


class TypedJsonError(ValueError):
    """JSON that is not a value of the type; the message starts with the field path."""


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def field_names(cls: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _required(cls: Any) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )


def _kind(value: Any) -> str:
    return {
        dict: "a JSON object",
        list: "a JSON array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _read(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _read(option, value, where)
            except TypedJsonError as exc:
                errors.append(str(exc))
        raise TypedJsonError(errors[0] if len(errors) == 1 else f"{where}: {_kind(value)} fits none of {tp}")
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise TypedJsonError(f"{where}: {value!r}, not one of {', '.join(map(repr, typing.get_args(tp)))}")
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_json(tp, value, where)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise TypedJsonError(f"{where}: {_kind(value)}, not a JSON array")
        item = typing.get_args(tp)[0] if typing.get_args(tp) else Any
        items = [_read(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise TypedJsonError(f"{where}: {_kind(value)}, not a JSON object")
        args = typing.get_args(tp)
        item = args[1] if args else Any
        return {str(k): _read(item, v, f"{where}.{k}") for k, v in value.items()}
    if tp is list:
        if not isinstance(value, list):
            raise TypedJsonError(f"{where}: {_kind(value)}, not a JSON array")
        return value
    if tp is bool:
        if type(value) is not bool:
            raise TypedJsonError(f"{where}: {_kind(value)}, not a boolean")
        return value
    if tp is int:
        if type(value) is not int:
            raise TypedJsonError(f"{where}: {_kind(value)}, not an integer")
        return value
    if tp is float:
        if type(value) not in (int, float):
            raise TypedJsonError(f"{where}: {_kind(value)}, not a number")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise TypedJsonError(f"{where}: {_kind(value)}, not a string")
        return value
    raise TypeError(f"{where}: typed_json cannot read the declared type {tp!r}")


def from_json(cls: type[T], data: Any, where: str = "") -> T:
    """An instance of the frozen dataclass `cls` from its JSON form (module docstring); TypedJsonError naming the
    first field that is missing, unknown or of another type."""
    prefix = f"{where}." if where else ""
    if not isinstance(data, dict):
        raise TypedJsonError(f"{where or cls.__name__}: {_kind(data)}, not a JSON object")
    missing = [f"{prefix}{n}" for n in _required(cls) if n not in data]
    if missing:
        raise TypedJsonError(f"missing field(s) {', '.join(missing)}")
    unknown = sorted(set(data) - set(field_names(cls)))
    if unknown:
        raise TypedJsonError(
            f"unknown field(s) {', '.join(prefix + u for u in unknown)} (a {cls.__name__} has "
            f"{', '.join(field_names(cls))})"
        )
    hints = _hints(typing.cast(Any, cls))  # lru_cache asks for Hashable; a class is
    return cls(**{name: _read(hints[name], value, prefix + name) for name, value in data.items()})


def to_json(obj: Any) -> Any:
    """The JSON form of a (nested) dataclass value: objects in field order, tuples as arrays."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    return obj
