"""``mx.sym.sparse``: MXNet's operators on sparse storage, which lazynd does not have.

Every array in lazynd is dense, so each name here is refused, pointing at the dense operator of
that name when there is one (``mx.sym.sparse.dot`` -> ``mx.sym.dot``), as ``mx.nd.sparse`` does.
"""

from __future__ import annotations

from typing import Any

from lazynd.ndarray.sparse import refusal


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    import lazynd_sym

    raise refusal("sym", name, hasattr(lazynd_sym, name))
