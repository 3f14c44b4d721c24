"""MXNet 1.x's ``numeric_grad`` (``mx.test_utils``): finite differences of a bound executor's output.

It takes an executor (``lazynd_sym``'s, or anything with ``arg_dict``, ``aux_dict``, ``forward``
and ``outputs``), so ``lazynd`` needs no import of ``lazynd_sym`` for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import LazyNDError

__all__ = ["numeric_grad"]

_DTYPES = (np.float16, np.float32, np.float64)


def _by_name(values: Any, names: list[str], what: str) -> dict[str, Any]:
    """``values`` (a dict, or a list in the order of ``names``) as a dict by argument name."""
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise LazyNDError(f"numeric_grad: {what} names {unknown}, which the executor lacks (it has {names})")
        return dict(values)
    values = list(values)
    if len(values) != len(names):
        raise LazyNDError(f"numeric_grad: {what} has {len(values)} arrays, the executor takes {len(names)}: {names}")
    return dict(zip(names, values, strict=True))


def numeric_grad(
    executor: Any,
    location: Any,
    aux_states: Any = None,
    eps: float = 1e-4,
    use_forward_train: bool = True,
    dtype: Any = np.float32,
) -> dict[str, np.ndarray]:
    """The gradients of ``sum(executor.outputs[0])`` by central differences, as MXNet's ``numeric_grad``.

    ``location`` gives every argument's value (a dict by name, or a list in argument order); they
    are written into the executor as ``dtype`` (float16, float32 or float64).  Each element of each
    floating-point argument moves by ``+-eps / 2`` in turn, ``aux_states`` (when given) is written
    back before every forward, and the gradient is the difference of the output sums over ``eps``.
    Returns one array of ``dtype`` per argument (zeros for integer arguments); the executor's
    arguments end at ``location``'s values.

    Examples
    --------
    >>> import numpy as np, lazynd as mx
    >>> x = mx.sym.var("x")
    >>> exe = (x * x).simple_bind(mx.cpu(), type_dict={"x": np.float64}, x=(3,))
    >>> grads = mx.test_utils.numeric_grad(exe, {"x": np.array([1.0, 2.0, 3.0])}, dtype=np.float64)
    >>> np.round(grads["x"], 6)
    array([2., 4., 6.])
    """
    if np.dtype(dtype).type not in _DTYPES:
        raise LazyNDError(f"numeric_grad: dtype must be float16, float32 or float64, got {dtype!r}")
    named = _by_name(location, list(executor.arg_dict), "location")
    # copies: the caller's arrays stay as they are
    values = {k: np.array(v.asnumpy() if hasattr(v, "asnumpy") else v, order="C") for k, v in named.items()}
    aux = None if aux_states is None else _by_name(aux_states, list(executor.aux_dict), "aux_states")

    def output_sum() -> np.ndarray:
        if aux is not None:
            for name, value in aux.items():
                executor.aux_dict[name][:] = value
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    grads = {name: np.zeros(value.shape, dtype=dtype) for name, value in values.items()}
    for name, value in values.items():
        executor.arg_dict[name][:] = value.astype(dtype)
    for name, value in values.items():
        if value.dtype.kind != "f":
            continue
        flat, grad = value.reshape(-1), grads[name].reshape(-1)
        for i in range(flat.size):
            saved = flat[i]
            flat[i] = saved + eps / 2
            executor.arg_dict[name][:] = value.astype(dtype)
            plus = output_sum()
            flat[i] = saved - eps / 2
            executor.arg_dict[name][:] = value.astype(dtype)
            minus = output_sum()
            flat[i] = saved
            grad[i] = np.sum(plus - minus) / eps
        executor.arg_dict[name][:] = value.astype(dtype)
    return grads
