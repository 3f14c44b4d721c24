"""Helpers for testing operators: forward vs a NumPy reference, numerical gradients, cpu/gpu consistency.

Every check takes an operator (its name or its :class:`~lazynd.ops.registry.OpDef`),
NumPy inputs and the operator's parameters, so users writing their own operators
can test them the way lazynd tests its own.  The numerical gradient check runs in
float64: it compares the operator's ``gradient`` rule (evaluated with
``F = lazynd.nd``) with central differences of ``sum(output * head)`` for a random
``head``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# The comparisons live in their own module; these names keep ``lazynd.testing`` their home for users.
from .backend import cpu_backend
from .comparisons import DEFAULT_TOLERANCES as DEFAULT_TOLERANCES
from .comparisons import almost_equal as almost_equal
from .comparisons import assert_almost_equal as assert_almost_equal
from .comparisons import reldiff as reldiff
from .comparisons import same as same
from .context import Context, cpu, current_context, gpu, num_gpus, set_thread_default
from .ops import registry
from .ops.registry import KernelContext, OpDef


def default_context() -> Context:
    """The context tests run on unless told otherwise: the calling thread's current context, as
    MXNet 1.x's (``cpu(0)`` unless :func:`set_default_context` or a ``with ctx:`` block says otherwise).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.testing import default_context
    >>> default_context()
    cpu(0)
    """
    return current_context()


def set_default_context(ctx: Context) -> None:
    """Make ``ctx`` the calling thread's default context, as MXNet 1.x's: tests run there and arrays
    created without ``ctx=`` go there; other threads keep theirs.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.testing import set_default_context, default_context
    >>> set_default_context(mx.cpu(0)); default_context()
    cpu(0)
    """
    if not isinstance(ctx, Context):
        raise TypeError(f"set_default_context: expected a Context, got {type(ctx).__name__}")
    set_thread_default(ctx)


# -- random inputs ---------------------------------------------------------------------------------
def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with sides in ``1..dim0`` and ``1..dim1`` (from 0 with ``allow_zero_size``).

    Examples
    --------
    >>> from lazynd.testing import rand_shape_2d
    >>> len(rand_shape_2d())
    2
    """
    low = 0 if allow_zero_size else 1
    return int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1))


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random ``num_dim``-D shape with sides in ``1..dim`` (from 0 with ``allow_zero_size``).

    Examples
    --------
    >>> from lazynd.testing import rand_shape_nd
    >>> len(rand_shape_nd(4))
    4
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(v) for v in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(
    shape: Sequence[int],
    stype: str = "default",
    density: float | None = None,
    dtype: Any = None,
    modifier_func: Callable | None = None,
    shuffle_csr_indices: bool = False,
    distribution: str | None = None,
    ctx: Context | None = None,
) -> Any:
    """An NDArray of standard normal values drawn as MXNet draws them (float32 ``randn``, then
    ``dtype``: a seeded NumPy gives MXNet's values).  Only the dense ``stype`` exists in lazynd;
    ``density``, ``modifier_func``, ``shuffle_csr_indices`` and ``distribution`` shape sparse
    arrays only, and MXNet ignores them for dense ones too.

    Examples
    --------
    >>> from lazynd.testing import rand_ndarray
    >>> rand_ndarray((2, 3)).shape
    (2, 3)
    """
    from . import ndarray as nd
    from .test_helpers import random_arrays  # it imports this module

    if stype != "default":
        from .errors import OperatorError

        raise OperatorError(f"rand_ndarray: storage type {stype!r} is not supported, expected 'default'")
    values = np.asarray(random_arrays(tuple(shape))).astype(dtype or np.float32)
    return nd.array(values, ctx=ctx or default_context(), dtype=values.dtype)


def np_reduce(
    dat: np.ndarray, axis: int | Sequence[int] | None, keepdims: bool, numpy_reduce_func: Callable
) -> np.ndarray:
    """Reduce ``dat`` over ``axis`` (an int, a tuple or None for all) one axis at a time with ``numpy_reduce_func``.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing import np_reduce
    >>> np_reduce(np.ones((2, 3)), 1, False, np.sum)
    array([3., 3.])
    """
    if axis is None:
        axes: Sequence[int] = range(dat.ndim)
    elif isinstance(axis, int):
        axes = [axis]
    else:
        axes = list(axis)
    ret = dat
    for ax in sorted((a % dat.ndim for a in axes), reverse=True):
        ret = numpy_reduce_func(ret, axis=ax, keepdims=True)
    if not keepdims:
        ret = ret.reshape([d for i, d in enumerate(dat.shape) if i not in {a % dat.ndim for a in axes}])
    return ret


# -- operator checks -------------------------------------------------------------------------------
def _opdef(op: str | OpDef) -> OpDef:
    return op if isinstance(op, OpDef) else registry.get(op)


def _invoke(opdef: OpDef, inputs: Sequence[Any], params: dict, is_train: bool = False, hidden: bool = False) -> list:
    """Run ``opdef``; its visible outputs, or with ``hidden`` every output (a gradient rule may read
    hidden ones, as Dropout's reads its mask)."""
    from . import ndarray as nd
    from .ndarray.dispatch import invoke

    out = None
    attrs = opdef.parse(params)
    if opdef.variadic and attrs.get("num_args") is None:
        attrs["num_args"] = len(inputs)
    if hidden and opdef.num_visible_outputs(attrs) < opdef.num_outputs(attrs):
        n_in = len(opdef.input_names(attrs))
        data, aux = list(inputs[:n_in]), list(inputs[n_in:])
        _, shapes, _ = opdef.infer_shape(attrs, [x.shape for x in data], [a.shape for a in aux] or None)
        _, types, _ = opdef.infer_type(
            attrs, [np.dtype(x.dtype).name for x in data], [np.dtype(a.dtype).name for a in aux] or None
        )
        ctx = inputs[0].context
        out = [nd.empty(tuple(s), ctx=ctx, dtype=t or data[0].dtype) for s, t in zip(shapes, types, strict=True)]
    result = invoke(opdef, list(inputs), dict(params), out, is_train)
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _to_nd(values: Sequence[Any], ctx: Context, dtype: Any = None) -> list:
    from . import ndarray as nd

    arrays = []
    for v in values:
        v = np.asarray(v)
        arrays.append(nd.array(v, ctx=ctx, dtype=dtype or v.dtype))
    return arrays


def check_forward(
    op: str | OpDef,
    inputs: Sequence[np.ndarray],
    params: dict | None = None,
    reference: Callable[..., Any] | None = None,
    ctx: Context | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> list[np.ndarray]:
    """Run ``op`` on ``inputs`` and compare each visible output with ``reference(*inputs)``.

    Returns the outputs as NumPy arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing import check_forward
    >>> _ = check_forward("exp", [np.zeros((2, 2), np.float32)], {}, np.exp)
    """
    opdef = _opdef(op)
    ctx = ctx or default_context()
    outs = [o.asnumpy() for o in _invoke(opdef, _to_nd(inputs, ctx), params or {})]
    if reference is not None:
        expected = reference(*[np.asarray(x) for x in inputs])
        expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
        if len(expected) != len(outs):
            raise AssertionError(f"{opdef.name}: {len(outs)} output(s), the reference gave {len(expected)}")
        for i, (got, want) in enumerate(zip(outs, expected, strict=False)):
            assert_almost_equal(got, np.asarray(want), rtol, atol, names=(f"{opdef.name} output {i}", "reference"))
    return outs


def _numeric_forward(
    opdef: OpDef, attrs: dict, inputs: list[np.ndarray], aux: list[np.ndarray], is_train: bool
) -> list[np.ndarray]:
    """The CPU kernel called directly (no engine): thousands of perturbed forwards stay fast."""
    _, out_shapes, _ = opdef.infer_shape(attrs, [x.shape for x in inputs], [a.shape for a in aux])
    _, out_types, _ = opdef.infer_type(attrs, [x.dtype.name for x in inputs], [a.dtype.name for a in aux])
    outputs = [np.empty(tuple(s), dtype=t or np.float64) for s, t in zip(out_shapes, out_types, strict=False)]
    kctx = KernelContext(np, cpu_backend, 0, is_train, np.random.default_rng(0))
    opdef.forward(kctx, attrs, inputs, outputs, [a.copy() for a in aux])
    return outputs


def check_gradient(
    op: str | OpDef,
    inputs: Sequence[np.ndarray],
    params: dict | None = None,
    ctx: Context | None = None,
    wrt: Sequence[int] | None = None,
    rtol: float = 1e-2,
    atol: float = 1e-4,
    eps: float = 1e-4,
    aux: Sequence[np.ndarray] = (),
    is_train: bool = False,
    seed: int = 0,
    autograd: bool = False,
) -> list:
    """Compare ``op``'s gradient rule with float64 central differences of ``sum(output * head)``.

    ``wrt`` lists the input indices to check (default: every input the rule gives
    a gradient for).  Returns the analytic gradients (NumPy arrays, None where the
    rule gives none).  With ``autograd`` the analytic gradients are those of
    :mod:`lazynd.autograd` (the call recorded, then ``backward`` with the heads) rather than
    the rule called directly: every input is then a variable, and gets a gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing import check_gradient
    >>> _ = check_gradient("exp", [np.linspace(-1, 1, 6).reshape(2, 3)])
    """
    from . import ndarray as nd

    opdef = _opdef(op)
    if opdef.gradient is None:
        raise AssertionError(f"{opdef.name}: the operator has no gradient rule")
    ctx = ctx or default_context()
    params = dict(params or {})
    # C-ordered copies: the perturbation loop below writes through ``reshape(-1)``, which is a view
    # only of a C-contiguous array (of a transposed input it is a copy, and the writes were lost)
    x64 = [np.array(x, dtype=np.float64, order="C") for x in inputs]
    aux64 = [np.array(a, dtype=np.float64, order="C") for a in aux]
    attrs = opdef.parse(params)
    if opdef.variadic and attrs.get("num_args") is None:
        attrs["num_args"] = len(x64)

    in_nd = _to_nd(x64, ctx, np.float64)
    aux_nd = _to_nd(aux64, ctx, np.float64)
    if autograd:
        from . import autograd as ag

        for x in in_nd:
            x.attach_grad()
        with ag.record(train_mode=is_train):
            outputs = _invoke(opdef, in_nd + aux_nd, params, is_train, hidden=True)
    else:
        outputs = _invoke(opdef, in_nd + aux_nd, params, is_train, hidden=True)
    n_visible = opdef.num_visible_outputs(attrs)
    rng = np.random.default_rng(seed)
    heads = [rng.normal(size=o.shape) if i < n_visible else np.zeros(o.shape) for i, o in enumerate(outputs)]
    if autograd:
        ag.backward(outputs[:n_visible], _to_nd(heads[:n_visible], ctx, np.float64), train_mode=is_train)
        grads = [x.grad for x in in_nd]
    else:
        from . import autograd as ag

        # the rule runs in the call's mode (BatchNorm's gradient outside training takes its
        # statistics as constants)
        with ag.train_mode() if is_train else contextlib.nullcontext():
            grads = opdef.gradient(nd, attrs, in_nd, outputs, _to_nd(heads, ctx, np.float64))
    analytic = [None if g is None else g.asnumpy() for g in grads]
    if len(analytic) != len(x64):
        raise AssertionError(f"{opdef.name}: the gradient rule gave {len(analytic)} gradients for {len(x64)} inputs")

    def objective(values: list[np.ndarray]) -> float:
        outs = _numeric_forward(opdef, attrs, values, aux64, is_train)
        return float(sum(np.sum(o * h) for o, h in zip(outs[:n_visible], heads, strict=False)))

    targets = [i for i, g in enumerate(analytic) if g is not None] if wrt is None else list(wrt)
    for i in targets:
        if analytic[i] is None:
            raise AssertionError(f"{opdef.name}: no gradient for input {i}, but it was asked for in wrt")
        numeric = np.zeros(x64[i].shape)
        flat = x64[i].reshape(-1)
        for j in range(flat.size):
            saved = flat[j]
            flat[j] = saved + eps
            plus = objective(x64)
            flat[j] = saved - eps
            minus = objective(x64)
            flat[j] = saved
            numeric.reshape(-1)[j] = (plus - minus) / (2 * eps)
        name = opdef.input_names(attrs)[i]
        how = "autograd" if autograd else "rule"
        assert_almost_equal(analytic[i], numeric, rtol, atol, names=(f"{opdef.name} d/d{name} ({how})", "numeric"))
    return analytic


def check_consistency(
    op: str | OpDef,
    inputs: Sequence[np.ndarray],
    params: dict | None = None,
    ctx_list: Sequence[Context] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    grad: bool = True,
) -> list[list[np.ndarray]]:
    """Run ``op`` (forward and, when ``grad``, its gradient rule) on each context and compare with the first.

    ``ctx_list`` defaults to ``cpu(0)`` plus ``gpu(0)`` when a GPU is present.
    Returns, per context, the outputs followed by the input gradients.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.testing import check_consistency
    >>> _ = check_consistency("exp", [np.ones((2, 2), np.float32)])
    """
    from . import ndarray as nd

    opdef = _opdef(op)
    params = dict(params or {})
    contexts = list(ctx_list) if ctx_list is not None else [cpu(0)] + ([gpu(0)] if num_gpus() > 0 else [])
    attrs = opdef.parse(params)
    if opdef.variadic and attrs.get("num_args") is None:
        attrs["num_args"] = len(inputs)
    results: list[list[np.ndarray]] = []
    heads: list[np.ndarray] | None = None
    for ctx in contexts:
        in_nd = _to_nd(inputs, ctx)
        outputs = _invoke(opdef, in_nd, params)
        values = [o.asnumpy() for o in outputs]
        if grad and opdef.gradient is not None and all(v.dtype.kind == "f" for v in values):
            if heads is None:
                rng = np.random.default_rng(0)
                heads = [rng.normal(size=v.shape).astype(v.dtype) for v in values]
            grads = opdef.gradient(nd, attrs, in_nd, outputs, _to_nd(heads, ctx))
            values += [g.asnumpy() for g in grads if g is not None]
        results.append(values)
    for ctx, values in zip(contexts[1:], results[1:], strict=False):
        for i, (got, want) in enumerate(zip(values, results[0], strict=False)):
            # devices agree where both give NaN (NumPy's rules propagate it on every device)
            assert_almost_equal(
                got, want, rtol, atol, names=(f"{opdef.name} result {i} on {ctx}", f"on {contexts[0]}"), equal_nan=True
            )
    return results
