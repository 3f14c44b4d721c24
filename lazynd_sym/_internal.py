"""``mx.sym._internal``: the registry's operators under MXNet's internal module name.

MXNet code builds underscore operators this way (``mx.sym._internal._mul_scalar(x, scalar=2)``);
every registered name resolves to the function of ``lazynd_sym``.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import lazynd_sym
    from lazynd.ops import registry

    if name.startswith("__") or not registry.exists(name):
        raise AttributeError(f"module 'lazynd_sym._internal' has no attribute {name!r} (no such operator)")
    return getattr(lazynd_sym, name)
