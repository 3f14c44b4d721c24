"""``lazynd.test_utils``: the testing helpers under the module name MXNet users know.

Everything in :mod:`lazynd.testing` is here, plus the symbolic checks
``check_numeric_gradient``, ``check_symbolic_forward`` and
``check_symbolic_backward``, which take a ``lazynd_sym.Symbol`` (imported when
called, so ``lazynd`` never depends on ``lazynd_sym`` at import time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .context import Context
from .testing import (
    DEFAULT_TOLERANCES,
    almost_equal,
    assert_almost_equal,
    check_consistency,
    check_forward,
    check_gradient,
    default_context,
    np_reduce,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_nd,
    reldiff,
    same,
    set_default_context,
)

__all__ = [
    "DEFAULT_TOLERANCES",
    "almost_equal",
    "assert_almost_equal",
    "check_consistency",
    "check_forward",
    "check_gradient",
    "default_context",
    "np_reduce",
    "rand_ndarray",
    "rand_shape_2d",
    "rand_shape_nd",
    "reldiff",
    "same",
    "set_default_context",
    "check_numeric_gradient",
    "check_symbolic_forward",
    "check_symbolic_backward",
]


def _named(sym: Any, values: Any, names: list[str], what: str) -> dict[str, np.ndarray]:
    """``values`` (a list in ``names`` order, or a dict) as a dict of NumPy arrays."""
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{what}: unknown name(s) {unknown}, the symbol has {names}")
        return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in values.items()}
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"{what}: {len(values)} arrays given, the symbol has {len(names)} ({names})")
    return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in zip(names, values, strict=False)}


def _bind(sym: Any, location: dict, aux: dict, ctx: Context, dtype: Any, grad_req: Any = "write") -> Any:
    from . import ndarray as nd

    args = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in location.items()}
    grads = {k: nd.zeros(v.shape, ctx=ctx, dtype=dtype) for k, v in location.items()}
    aux_nd = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in aux.items()}
    return sym.bind(ctx, args, args_grad=grads, grad_req=grad_req, aux_states=aux_nd or None)


def check_symbolic_forward(
    sym: Any,
    location: Any,
    expected: Any,
    rtol: float = 1e-4,
    atol: float | None = None,
    aux_states: Any = None,
    ctx: Context | None = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> list[np.ndarray]:
    """Bind ``sym`` to ``location`` (list or dict of arrays), run forward, compare with ``expected``.

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> x = sym.Variable("x")
    >>> outputs = check_symbolic_forward(sym.exp(x), [np.zeros(2)], [np.ones(2)])
    """
    ctx = ctx or default_context()
    location = _named(sym, location, sym.list_arguments(), "location")
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    exe = _bind(sym, location, aux, ctx, dtype, grad_req="null")
    exe.forward(is_train=False)
    outputs = [o.asnumpy() for o in exe.outputs]
    expected_list = [expected[k] for k in sym.list_outputs()] if isinstance(expected, dict) else list(expected)
    if len(expected_list) != len(outputs):
        raise AssertionError(f"the symbol has {len(outputs)} output(s), {len(expected_list)} expected arrays given")
    for name, got, want in zip(sym.list_outputs(), outputs, expected_list, strict=False):
        assert_almost_equal(
            got, np.asarray(want), rtol, atol, names=(f"output {name}", "expected"), equal_nan=equal_nan
        )
    return outputs


def check_symbolic_backward(
    sym: Any,
    location: Any,
    out_grads: Any,
    expected: Any,
    rtol: float = 1e-5,
    atol: float | None = None,
    aux_states: Any = None,
    grad_req: Any = "write",
    ctx: Context | None = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, np.ndarray]:
    """Run forward and backward with head gradients ``out_grads``; compare argument gradients with ``expected``.

    ``expected`` is a list in ``sym.list_arguments()`` order or a dict (names left
    out are not checked).  Returns the gradients by name.

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> x = sym.Variable("x")
    >>> grads = check_symbolic_backward(sym.exp(x), [np.zeros(2)], [np.ones(2)], [np.ones(2)])
    """
    from . import ndarray as nd

    ctx = ctx or default_context()
    names = sym.list_arguments()
    location = _named(sym, location, names, "location")
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    want = _named(sym, expected, names, "expected")
    exe = _bind(sym, location, aux, ctx, dtype, grad_req=grad_req)
    exe.forward(is_train=True)
    heads = _named(sym, out_grads, sym.list_outputs(), "out_grads")
    exe.backward([nd.array(heads[k], ctx=ctx, dtype=dtype) for k in sym.list_outputs()])
    grads = {k: g.asnumpy() for k, g in zip(names, exe.grad_arrays, strict=False) if g is not None}
    for name, value in want.items():
        if name not in grads:
            raise AssertionError(f"no gradient was computed for argument '{name}'")
        assert_almost_equal(
            grads[name], value, rtol, atol, names=(f"gradient of {name}", "expected"), equal_nan=equal_nan
        )
    return grads


def check_numeric_gradient(
    sym: Any,
    location: Any,
    aux_states: Any = None,
    numeric_eps: float = 1e-4,
    rtol: float = 1e-2,
    atol: float | None = None,
    grad_nodes: Sequence[str] | None = None,
    use_forward_train: bool = True,
    ctx: Context | None = None,
    dtype: Any = np.float64,
) -> None:
    """Compare ``sym``'s backward with central differences of ``sum(outputs * random_heads)``.

    Runs in float64 by default (MXNet used float32 and a larger ``numeric_eps``).
    ``grad_nodes`` restricts the check to some arguments (default: all).

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> check_numeric_gradient(sym.exp(sym.Variable("x")), [np.random.rand(2, 3)])
    """
    from . import ndarray as nd

    ctx = ctx or default_context()
    names = sym.list_arguments()
    location = {k: v.astype(dtype) for k, v in _named(sym, location, names, "location").items()}
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    nodes = list(grad_nodes) if grad_nodes is not None else names
    unknown = [n for n in nodes if n not in names]
    if unknown:
        raise ValueError(f"grad_nodes: unknown argument(s) {unknown}, the symbol has {names}")
    exe = _bind(sym, location, aux, ctx, dtype)
    exe.forward(is_train=use_forward_train)
    rng = np.random.default_rng(0)
    heads = [rng.normal(size=o.shape) for o in exe.outputs]
    exe.backward([nd.array(h, ctx=ctx, dtype=dtype) for h in heads])
    analytic = {k: g.asnumpy() for k, g in zip(names, exe.grad_arrays, strict=False) if g is not None}

    def objective() -> float:
        # aux states change in training forwards; restore them so every evaluation sees the same ones
        for k, v in aux.items():
            exe.aux_dict[k][:] = v
        exe.forward(is_train=use_forward_train)
        return float(sum(np.sum(o.asnumpy() * h) for o, h in zip(exe.outputs, heads, strict=False)))

    for name in nodes:
        if name not in analytic:
            raise AssertionError(f"no gradient was computed for argument '{name}'")
        values = location[name].copy()
        flat = values.reshape(-1)
        numeric = np.zeros(values.size)
        for j in range(flat.size):
            saved = flat[j]
            flat[j] = saved + numeric_eps
            exe.arg_dict[name][:] = values
            plus = objective()
            flat[j] = saved - numeric_eps
            exe.arg_dict[name][:] = values
            minus = objective()
            flat[j] = saved
            numeric[j] = (plus - minus) / (2 * numeric_eps)
        exe.arg_dict[name][:] = values
        assert_almost_equal(
            analytic[name],
            numeric.reshape(values.shape),
            rtol,
            atol if atol is not None else 1e-4,
            names=(f"gradient of {name} (backward)", "numeric"),
        )
