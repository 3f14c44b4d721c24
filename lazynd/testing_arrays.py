"""Arrays MXNet 1.x's tests build (``mx.test_utils``): matrices with known real eigenvalues for the
linear-algebra operators, the large-tensor fixtures, and NumPy references (``collapse_sum_like``,
``assign_each``).

Examples
--------
>>> import numpy as np
>>> from lazynd.testing_arrays import new_sym_matrix_with_real_eigvals_2d
>>> a = new_sym_matrix_with_real_eigvals_2d(3)
>>> bool(np.allclose(a, a.T))
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import LazyNDError


def _check_size(what: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise LazyNDError(f"{what}: n must be a positive int, got {n!r}")
    return int(n)


def _batch_count(what: str, shape: Sequence[int]) -> int:
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise LazyNDError(f"{what}: shape must end in two equal sides (a batch of square matrices), got {tuple(shape)}")
    return int(np.prod(shape[:-2])) if len(shape) > 2 else 1


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random ``n x n`` matrix ``Q^-1 D Q`` with real eigenvalues ``D`` in (-10, 10), ``Q`` a
    well-conditioned matrix (2-norm condition below 3): a Householder reflection times a diagonal."""
    n = _check_size("new_matrix_with_real_eigvals_2d", n)
    identity = np.eye(n)
    while True:
        v = np.random.uniform(-1.0, 1.0, (n, 1))
        v = v / np.linalg.norm(v, axis=0, keepdims=True)
        q = (identity - 2 * v @ v.T) @ np.diag(np.random.uniform(-1.0, 1.0, n))
        if np.linalg.cond(q, 2) < 3:
            break
    eigenvalues = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.linalg.inv(q) @ eigenvalues @ q


def new_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A batch of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape`` (``(..., n, n)``)."""
    count = _batch_count("new_matrix_with_real_eigvals_nd", shape)
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]).reshape(shape)


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random ``n x n`` orthonormal matrix (the Q of a QR factorisation of a random ``X^T X``)."""
    n = _check_size("new_orthonormal_matrix_2d", n)
    x = np.random.randn(n, n)
    return np.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric ``n x n`` matrix ``Q^T D Q`` with eigenvalues ``D`` in (-10, 10)."""
    q = new_orthonormal_matrix_2d(_check_size("new_sym_matrix_with_real_eigvals_2d", n))
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape`` (``(..., n, n)``)."""
    count = _batch_count("new_sym_matrix_with_real_eigvals_nd", shape)
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]).reshape(shape)


def create_vector(size: int, dtype: Any = np.int64) -> Any:
    """The NDArray ``0, 1, ..., size - 1`` (MXNet's large-vector fixture)."""
    from .ndarray import arange

    return arange(0, size, dtype=dtype)


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> Any:
    """The ``rows x columns`` NDArray whose row ``i`` is all ``i`` (MXNet's large-tensor fixture)."""
    from .ndarray import arange

    return arange(0, rows, dtype=dtype).reshape((rows, 1)).broadcast_to((rows, columns))


def get_identity_mat(size: int) -> Any:
    """The float32 ``size x size`` identity as an NDArray."""
    from .ndarray import array

    return array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size: int) -> Any:
    """Two ``size x size`` identities stacked, shape ``(2, size, size)``."""
    from .ndarray import array

    return array(np.stack([np.eye(size, dtype=np.float32)] * 2))


def collapse_sum_like(a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` would add or stretch: the
    gradient of a broadcast input, computed in NumPy (zeros when either side is empty).

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing_arrays import collapse_sum_like
    >>> collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist()
    [[8.0], [8.0], [8.0]]
    """
    shape = tuple(shape)
    extra = a.ndim - len(shape)
    if extra < 0:
        raise LazyNDError(f"collapse_sum_like: shape {shape} has more axes than the array's {a.shape}")
    if int(np.prod(shape)) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    axes = list(range(extra))
    for i, side in enumerate(shape):
        if side != a.shape[extra + i]:
            if side != 1:
                raise LazyNDError(f"collapse_sum_like: shape {shape} does not broadcast to the array's {a.shape}")
            axes.append(extra + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def assign_each(the_input: np.ndarray, function: Callable[[Any], Any] | None) -> np.ndarray:
    """``function`` applied to each element of ``the_input`` (a float64 array of its shape); a copy
    of it when ``function`` is None."""
    the_input = np.asarray(the_input)
    if function is None:
        return np.array(the_input)
    out = np.zeros(the_input.shape)
    for index, value in np.ndenumerate(the_input):
        out[index] = function(value)
    return out


def assign_each2(input1: np.ndarray, input2: np.ndarray, function: Callable[[Any, Any], Any] | None) -> np.ndarray:
    """``function`` applied to each pair of elements of two same-shaped arrays (float64 result); a
    copy of ``input1`` when ``function`` is None."""
    input1, input2 = np.asarray(input1), np.asarray(input2)
    if function is None:
        return np.array(input1)
    if input1.shape != input2.shape:
        raise LazyNDError(f"assign_each2: input1 has shape {input1.shape}, input2 {input2.shape}; expected the same")
    out = np.zeros(input1.shape)
    for index, value in np.ndenumerate(input1):
        out[index] = function(value, input2[index])
    return out


__all__ = [
    "assign_each",
    "assign_each2",
    "collapse_sum_like",
    "create_2d_tensor",
    "create_vector",
    "get_identity_mat",
    "get_identity_mat_batch",
    "new_matrix_with_real_eigvals_2d",
    "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d",
    "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd",
]
