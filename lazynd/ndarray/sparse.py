"""``mx.nd.sparse``: MXNet's sparse storage types (``csr``, ``row_sparse``), which lazynd does not have.

Every array in lazynd is dense (storage type ``'default'``).  The module exists so that a
program reaching for sparse storage is told so by name, rather than failing on a missing
attribute further on.
"""

from __future__ import annotations

from typing import Any

from ..errors import LazyNDError, UnsupportedError

DENSE = "default"


def check_dense(stype: Any, what: str) -> None:
    """Refuse a storage type other than dense ``'default'`` (None means dense), naming ``what`` asked."""
    if stype is not None and stype != DENSE:
        raise LazyNDError(
            f"{what}: storage type {stype!r} is not supported; lazynd arrays are all dense (stype 'default')"
        )


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(
        f"mx.nd.sparse.{name}: sparse storage (csr, row_sparse) is not supported by lazynd; use dense NDArrays"
    )
