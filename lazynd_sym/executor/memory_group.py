"""Executors that share storage blocks (MXNet's shared memory pool), held weakly.

Executors bound with ``shared_exec`` (or reshaped from one another) may hold their outputs and
internal entries in the same blocks: they share one internal engine var, and each one's passes
also write the others' outputs.  Each block carries one var for the outputs that lie in it (a
:class:`StorageBlock`): two executors' outputs in one block are one array for the engine, so a
write through either is ordered before a read of the other, as the outputs of MXNet's executors
sharing a memory pool share its storage chunk.  The group holds its members by weak reference, so an executor
is freed as soon as its last user reference goes.  (A plain list made every executor a reference
cycle with itself, freed only by Python's cyclic collector: 40 MB executors bound one after
another piled up between collections, five or six at a time.)
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from lazynd.context import Context
from lazynd.engine.var import Var


class StorageBlock(NamedTuple):
    """A byte block of an executor's planned storage: its context, its memory, and the var of the
    outputs lying in it (taken with the block by the executors that share it)."""

    context: Context
    data: Any
    var: Var


class MemoryGroup:
    """The executors sharing storage blocks, and the internal var their passes all write."""

    __slots__ = ("internal", "_members")

    def __init__(self) -> None:
        self.internal = Var()
        self._members: list[weakref.ref] = []

    def add(self, executor: Any) -> None:
        """Join ``executor`` to the group (members already freed leave it)."""
        self._members = [ref for ref in self._members if ref() is not None]
        self._members.append(weakref.ref(executor))

    def members(self) -> list[Any]:
        """The members still alive, in the order they joined."""
        return [member for member in (ref() for ref in self._members) if member is not None]
