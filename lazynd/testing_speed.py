"""MXNet's ``check_speed`` (``mx.test_utils``): how long one pass of a bound symbol takes.

It takes a ``Symbol`` and uses only its methods, so ``lazynd`` never imports ``lazynd_sym`` here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import Context
from .testing import default_context
from .testing_symbolic import _named

__all__ = ["check_speed"]


def check_speed(
    sym: Any,
    location: Any = None,
    ctx: Context | None = None,
    N: int = 20,  # noqa: N803 - MXNet's name
    grad_req: Any = None,
    typ: str = "whole",
    **kwargs: Any,
) -> float:
    """Seconds one pass of ``sym`` takes, the mean of ``N`` after one untimed, as MXNet's ``check_speed``.

    ``typ='whole'``: a training forward and a backward (``grad_req``, default ``'write'``);
    ``'forward'``: a prediction forward.  The arguments are ``location`` (a dict of arrays, or a
    list in ``list_arguments()`` order) or, without it, standard normal arrays of the shapes given
    as keywords (``data=(32, 784)``).

    Examples
    --------
    >>> import lazynd as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8)
    >>> check_speed(fc, data=(4, 16), typ="forward") > 0
    True
    """
    import time

    from . import ndarray as nd

    if typ not in ("whole", "forward"):
        raise ValueError(f"check_speed: typ must be 'whole' or 'forward', got {typ!r}")
    if N < 1:
        raise ValueError(f"check_speed: N must be at least 1, got {N}")
    ctx = ctx or default_context()
    if location is None:
        exe = sym.simple_bind(ctx, grad_req=grad_req or "write", **kwargs)
        rng = np.random.default_rng(0)
        for array in exe.arg_dict.values():
            array[:] = rng.standard_normal(array.shape)
    else:
        values = _named(sym, location, sym.list_arguments(), "location")
        args = {k: nd.array(v, ctx=ctx) for k, v in values.items()}
        exe = sym.bind(
            ctx,
            args,
            args_grad={k: nd.zeros(v.shape, ctx=ctx) for k, v in values.items()},
            grad_req=grad_req or "write",
        )

    def one_pass() -> None:
        if typ == "whole":
            exe.forward(is_train=True)
            exe.backward(out_grads=[nd.ones(o.shape, ctx=ctx) for o in exe.outputs])
        else:
            exe.forward(is_train=False)

    one_pass()
    nd.waitall()
    start = time.perf_counter()
    for _ in range(N):
        one_pass()
    nd.waitall()
    return (time.perf_counter() - start) / N
