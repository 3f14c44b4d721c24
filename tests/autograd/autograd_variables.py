"""The autograd tests' variable: an NDArray with a gradient attached."""

from __future__ import annotations

import lazynd as mx


def variable(values, ctx=None, grad_req: str = "write") -> mx.NDArray:
    """``values`` as an NDArray on ``ctx`` with a gradient attached (``grad_req`` as attach_grad takes it)."""
    x = mx.nd.array(values, ctx=ctx)
    x.attach_grad(grad_req)
    return x
