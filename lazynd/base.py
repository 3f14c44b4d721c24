"""``mx.base``: the names MXNet programs import from ``mxnet.base``.

The error classes are lazynd's (``MXNetError`` is :class:`lazynd.LazyNDError`), and the
type tuples are the ones MXNet programs test arguments against.

Examples
--------
>>> import lazynd as mx
>>> mx.base.MXNetError is mx.MXNetError
True
>>> isinstance(3.0, mx.base.numeric_types), isinstance("a", mx.base.string_types)
(True, True)
>>> mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), stride=mx.base._Null).shape
(1, 1, 3, 3)
"""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np

from .errors import LazyNDError, MXNetError

string_types = (str,)
numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
mx_real_t = np.float32  # MXNet's default dtype


class _NullType:
    """The type of :data:`_Null`, MXNet's mark for "argument not given"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_Null"

    def __reduce__(self) -> str:
        return "_Null"  # a pickled ``_Null`` comes back as this same object


# An operator parameter passed as ``_Null`` takes the operator's default, as in MXNet, whose
# generated operator functions use it as their keyword defaults (``stride=_Null``).
_Null = _NullType()


class NotImplementedForSymbol(LazyNDError):
    """An NDArray-only method was called on a symbol (``sym.asnumpy()``)."""


def py_str(value: bytes | str) -> str:
    """Text from the bytes a C API would return (a ``str`` is returned as it is)."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _as_list(obj: Any) -> list | tuple:
    """``obj`` itself when it is a list or tuple, else ``[obj]`` (MXNet's ``mxnet.base._as_list``,
    which programs import to treat "one output or several" alike)."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def data_dir_default() -> str:
    """MXNet's default data folder: ``%APPDATA%\\mxnet`` on Windows, ``~/.mxnet`` elsewhere."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", os.path.expanduser("~")), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The folder MXNet programs keep downloads in: ``$MXNET_HOME``, else :func:`data_dir_default`.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.test_utils import environment
    >>> with environment("MXNET_HOME", "/tmp/mxnet_home"):
    ...     mx.base.data_dir()
    '/tmp/mxnet_home'
    """
    return os.getenv("MXNET_HOME", data_dir_default())


__all__ = [
    "_Null",
    "MXNetError",
    "data_dir",
    "data_dir_default",
    "NotImplementedForSymbol",
    "integer_types",
    "mx_real_t",
    "numeric_types",
    "py_str",
    "string_types",
]
