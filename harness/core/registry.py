"""One registry type for everything the kit looks up by name: arms, solvers, scorers, launchers, server profiles.

In the spirit of lm-evaluation-harness's `Registry[T]`: a read-only mapping from canonical name to object that

- checks the type of what is registered (TypeError naming the registry and the type);
- resolves aliases (`get("gold-solve")` is `get("gold-lib")`; `registry[...]` takes canonical names only);
- refuses a name already held by another object or an alias (ValueError);
- after `freeze()`, keeps the entries it had (the kit's own): they cannot be removed, and only entries added
  later (tests, one-off studies) can be unregistered;
- says which names it knows when asked for an unknown one (ValueError: "unknown arm 'x'; known arms: ...").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _name_attribute(obj: Any) -> str:
    """An entry's name: its `name` attribute (arms, solvers, scorers, launcher classes, ...)."""
    name: str = obj.name
    return name


class Registry(Mapping[str, T], Generic[T]):
    """Name -> object, in registration order (module docstring)."""

    def __init__(
        self,
        kind: str,
        type_: type | tuple[type, ...],
        *,
        name_of: Callable[[T], str] = _name_attribute,
        plural: str | None = None,
        classes: bool = False,
    ) -> None:
        """`type_`: what entries must be instances of (with `classes`, subclasses of)."""
        self.kind = kind
        self._classes = classes
        self.plural = plural or f"{kind}s"
        self._type = type_
        self._name_of = name_of
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._frozen: frozenset[str] = frozenset()

    # --- reading -------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry of {self.plural}: {', '.join(self._entries)}>"

    def canonical(self, name: str) -> str:
        """The canonical name for a name or an alias (the name itself when unknown)."""
        return self._aliases.get(name, name)

    def get(self, name: str, default: Any = None) -> Any:
        return self._entries.get(self.canonical(name), default)

    def lookup(self, name: str) -> T:
        """The object registered under a name or an alias; ValueError naming the known ones."""
        try:
            return self._entries[self.canonical(name)]
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; known {self.plural}: {', '.join(self._entries)}") from None

    @property
    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    @property
    def builtin(self) -> frozenset[str]:
        """The names held when the registry was frozen."""
        return self._frozen

    # --- writing -------------------------------------------------------------------------------------
    def register(self, obj: T, *, aliases: Iterable[str] = ()) -> T:
        """Add an object under its name (and aliases); TypeError for the wrong type, ValueError for a taken name."""
        ok = (isinstance(obj, type) and issubclass(obj, self._type)) if self._classes else isinstance(obj, self._type)
        if not ok:
            want = self._type.__name__ if isinstance(self._type, type) else " or ".join(t.__name__ for t in self._type)
            got = obj.__name__ if isinstance(obj, type) else f"a {type(obj).__name__} instance"
            raise TypeError(f"a {self.kind} must be {'a subclass of ' if self._classes else 'a '}{want}, got {got}")
        name = self._name_of(obj)
        held = self._entries.get(name)
        if (held is not None and held is not obj) or name in self._aliases:
            raise ValueError(f"{self.kind} name {name!r} is already registered")
        for alias in aliases:
            if alias in self._entries or self._aliases.get(alias, name) != name:
                raise ValueError(f"{self.kind} alias {alias!r} is already registered")
        self._entries[name] = obj
        self._aliases.update(dict.fromkeys(aliases, name))
        return obj

    def unregister(self, name: str) -> None:
        """Remove an entry added after `freeze()` (and its aliases); the frozen ones stay."""
        if name in self._frozen:
            raise ValueError(f"{self.kind} {name!r} is one of the kit's own and cannot be removed")
        self._entries.pop(name, None)
        self._aliases = {a: n for a, n in self._aliases.items() if n != name}

    def freeze(self) -> Registry[T]:
        """Mark every current entry as the kit's own (never removed)."""
        self._frozen = frozenset(self._entries)
        return self


__all__ = ["Registry"]
