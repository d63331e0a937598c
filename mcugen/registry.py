"""One registry shape for every family chosen by name: orders, layouts, allocators, lowerings and
whatever comes next (pools, paging, partitions, kernel variants).

A `Registry` maps a name to an item (a strategy function, a lowering, a mode's policy), has one
default, refuses a second item under a taken name (a bug), and `get()` turns an unknown name into
the one user error every family shares: "unknown <family> 'x'; choose one of: a, b, c". Iteration
gives the names in registration order, so parametrised tests and `--help` list every member.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from mcugen.errors import McugenError

T = TypeVar("T")


class Registry(Generic[T]):
    """Items of one family keyed by name, with a default name."""

    def __init__(self, family: str, *, default: str | None = None, listed_by: str = "") -> None:
        """`listed_by`: for a family too long to list in an error line, the command that lists
        it (the error then names that command instead of every member)."""
        self.family = family
        self._default = default
        self._listed_by = listed_by
        self._items: dict[str, T] = {}

    @property
    def default(self) -> str:
        if self._default is None:
            raise RuntimeError(f"the {self.family} registry has no default")
        return self._default

    def add(self, name: str, item: T) -> T:
        """Register `item` as `name`; two items under one name is a bug, not a choice."""
        if name in self._items:
            raise RuntimeError(f"two items registered as {self.family} '{name}'")
        self._items[name] = item
        return item

    def register(self, *names: str) -> Callable[[T], T]:
        """Decorator: register the decorated item under each of `names`."""

        def wrap(item: T) -> T:
            for name in names:
                self.add(name, item)
            return item

        return wrap

    def get(self, name: str | None = None) -> T:
        """The item registered as `name` (the default when None), or the one-line user error
        that lists the valid names."""
        key = self.default if name is None else str(name)
        try:
            return self._items[key]
        except KeyError:
            hint = f"choose one of: {', '.join(self.names())}"
            if self._listed_by:
                hint = f"`{self._listed_by}` lists them"
            raise McugenError(f"unknown {self.family} '{key}'", hint=hint) from None

    def names(self) -> tuple[str, ...]:
        """Every registered name, sorted (what `--help` and error messages list)."""
        return tuple(sorted(self._items))

    def items(self) -> Iterator[tuple[str, T]]:
        """(name, item) in registration order."""
        return iter(tuple(self._items.items()))

    def values(self) -> Iterator[T]:
        return iter(tuple(self._items.values()))

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.family!r}, default={self._default!r}, names={self.names()})"
