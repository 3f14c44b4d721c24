"""Automatic names for symbols: ``NameManager`` counts per hint, ``Prefix`` prepends a string.

The current manager is per thread, as in MXNet 1.x: a ``with`` scope sets it for its own thread
only, and each thread starts with a default manager of its own, whose counts start at 0.  So two
threads that each build a model get the names a single-threaded program gets
(``fullyconnected0``, ...) and can load the same checkpoint, whichever thread builds first.
"""

from __future__ import annotations

import threading
from typing import Any

from lazynd.errors import LazyNDError


class NameManager:
    """Gives operators without a user name the name ``<hint><count>`` (``fullyconnected0``).

    Examples
    --------
    >>> with NameManager():
    ...     NameManager.current.get(None, "fullyconnected")
    'fullyconnected0'
    """

    _local = threading.local()

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._old: NameManager | None = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` when given; else (None or ``''``, as MXNet's) ``<hint><count>``."""
        if name:
            if not isinstance(name, str):
                raise LazyNDError(f"{hint}: name must be a string, got {name!r}")
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self) -> NameManager:
        self._old = _current()
        NameManager._local.value = self
        return self

    def __exit__(self, *exc: Any) -> None:
        NameManager._local.value = self._old

    class _Current:
        def __get__(self, obj: Any, owner: Any) -> NameManager:
            return _current()

    current = _Current()


class Prefix(NameManager):
    """A name manager that prepends ``prefix`` to every name, given or automatic.

    Examples
    --------
    >>> with Prefix("mlp_"):
    ...     NameManager.current.get("fc1", "fullyconnected")
    'mlp_fc1'
    """

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


def _current() -> NameManager:
    """This thread's manager: its innermost scope's, else the thread's default (made on first use)."""
    local = NameManager._local
    manager = getattr(local, "value", None)
    if manager is None:
        manager = local.value = NameManager()
    return manager
