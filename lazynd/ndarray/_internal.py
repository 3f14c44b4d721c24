"""``mx.nd._internal``: the registry's operators under MXNet's internal module name.

MXNet code calls underscore operators this way (``mx.nd._internal._plus_scalar(x, scalar=1)``);
every registered name resolves to the function of ``mx.nd``.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from .. import ndarray
    from ..ops import registry

    if name.startswith("__") or not registry.exists(name):
        raise AttributeError(f"module 'lazynd.ndarray._internal' has no attribute {name!r} (no such operator)")
    return getattr(ndarray, name)
