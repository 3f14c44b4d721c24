"""``mx.nd.sparse``: MXNet's sparse storage types (``csr``, ``row_sparse``), which lazynd does not have.

Every array in lazynd is dense (storage type ``'default'``).  The module exists so that a
program reaching for sparse storage is told so by name, rather than failing on a missing
attribute further on.  The sparse array classes are here, so that code asking whether an array
is sparse (``isinstance(grad, mx.nd.sparse.RowSparseNDArray)``) runs and is answered no; making
one is refused.  ``mx.sym.sparse`` refuses its names with :func:`refusal` too.
"""

from __future__ import annotations

from typing import Any

from ..arguments import is_choice
from ..errors import ArgumentValueError, UnsupportedError

DENSE = "default"


def check_dense(stype: Any, what: str) -> None:
    """Refuse a storage type other than dense ``'default'`` (None means dense), naming ``what`` asked.

    A ``ValueError`` too: MXNet's ``attach_grad`` and ``nd.zeros`` raise one for a storage type they do not know.
    """
    if stype is not None and not is_choice(stype, (DENSE,)):
        raise ArgumentValueError(
            f"{what}: storage type {stype!r} is not supported; lazynd arrays are all dense (stype 'default')"
        )


def refusal(namespace: str, name: str, dense_exists: bool) -> UnsupportedError:
    """The error for ``mx.<namespace>.sparse.<name>``, pointing at the dense operator of that name if there is one."""
    instead = f"mx.{namespace}.{name}, its dense form" if dense_exists else f"dense {namespace} operators"
    return UnsupportedError(
        f"mx.{namespace}.sparse.{name}: sparse storage (csr, row_sparse) is not supported by lazynd; use {instead}"
    )


class BaseSparseNDArray:
    """MXNet's base of the sparse arrays: no lazynd array is one, and none can be made."""

    stype = "undefined"

    def __new__(cls, *args: Any, **kwargs: Any) -> BaseSparseNDArray:
        raise UnsupportedError(
            f"mx.nd.sparse.{cls.__name__}: {cls.stype} storage is not supported by lazynd; "
            "its arrays are all dense (mx.nd.array)"
        )


class CSRNDArray(BaseSparseNDArray):
    """MXNet's compressed-sparse-row array: no lazynd array is one, and none can be made."""

    stype = "csr"


class RowSparseNDArray(BaseSparseNDArray):
    """MXNet's row-sparse array: no lazynd array is one, and none can be made."""

    stype = "row_sparse"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from .. import ndarray

    raise refusal("nd", name, hasattr(ndarray, name))
