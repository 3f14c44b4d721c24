"""The convolution tests' references: a direct convolution with loops, and a central-difference gradient check."""

from __future__ import annotations

import itertools

import numpy as np

import lazynd
from lazynd.ops import registry


def naive_conv(x, w, b, stride, pad, dilate, groups):
    """Direct convolution with loops (N, C, *spatial) x (F, C/g, *k): the reference."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, f, *out))
    fg = f // groups
    for o in itertools.product(*[range(v) for v in out]):
        for kk in itertools.product(*[range(v) for v in k]):
            idx = tuple(o[i] * stride[i] + kk[i] * dilate[i] for i in range(nd))
            patch = x[(slice(None), slice(None), *idx)]  # (n, c)
            for g in range(groups):
                wk = w[(slice(g * fg, (g + 1) * fg), slice(None), *kk)]  # (fg, cg)
                y[(slice(None), slice(g * fg, (g + 1) * fg), *o)] += patch[:, g * cg : (g + 1) * cg] @ wk.T
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nd)
    return y


def numeric_gradient_check(op_name, arrays, params, rtol=1e-4, atol=1e-6, eps=1e-6):
    """Compare op.gradient (with F = lazynd.nd) against central differences of sum(out * head), in float64."""
    op = registry.get(op_name)
    fn = getattr(lazynd.nd, op_name)
    rng = np.random.default_rng(3)
    inputs = [lazynd.nd.array(a, dtype="float64") for a in arrays]
    out = fn(*inputs, **params)
    head = rng.standard_normal(out.shape)
    grads = op.gradient(lazynd.nd, op.parse(params), inputs, [out], [lazynd.nd.array(head, dtype="float64")])
    for i, (a, g) in enumerate(zip(arrays, grads, strict=True)):
        numeric = np.zeros_like(a)
        for j in range(a.size):
            plus, minus = a.copy(), a.copy()
            plus.flat[j] += eps
            minus.flat[j] -= eps
            args_p = [lazynd.nd.array(plus if k == i else v, dtype="float64") for k, v in enumerate(arrays)]
            args_m = [lazynd.nd.array(minus if k == i else v, dtype="float64") for k, v in enumerate(arrays)]
            fp = (fn(*args_p, **params).asnumpy() * head).sum()
            fm = (fn(*args_m, **params).asnumpy() * head).sum()
            numeric.flat[j] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(g.asnumpy(), numeric, rtol=rtol, atol=atol, err_msg=f"{op_name} input {i}")


def check_gradients_left_out(params: dict, shapes: tuple, left_out) -> None:
    """``_backward_Convolution`` given ``None`` for the gradients in ``left_out`` (an index or a
    tuple of them) leaves them out and writes the others as the full call does.  ``shapes``: data,
    weight and output gradient, drawn in float64."""
    rng = np.random.default_rng(3)
    x, w, dy = (lazynd.nd.array(rng.standard_normal(s), dtype="float64") for s in shapes)
    full = [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, x, w, **params)]
    skipped = {left_out} if isinstance(left_out, int) else set(left_out)
    out = [None if i in skipped else lazynd.nd.zeros(g.shape, dtype="float64") for i, g in enumerate(full)]
    lazynd.nd._backward_Convolution(dy, x, w, out=out, **params)
    for i, (got, want) in enumerate(zip(out, full, strict=True)):
        if got is not None:
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"gradient {i}")
