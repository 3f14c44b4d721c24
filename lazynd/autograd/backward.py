"""Backward: the gradients of recorded heads, from each recorded operator's gradient rule.

The nodes that lead from the heads to the wanted variables are visited consumers first;
each node's rule (the registry's ``gradient``, with ``F = lazynd.nd``) is called on the sum
of the gradients its outputs received, and what it returns goes to its inputs' entries.
Every gradient is an ordinary lazy operation: backward pushes work and returns, nothing
waits.  The rules run with recording paused, unless ``create_graph`` asks for the gradient
computation itself to be recorded (gradients of gradients).

This module holds the functions users call, :func:`backward` and :func:`grad`, and the checks
of their arguments; the pass itself is :mod:`.backward_pass`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LazyNDError
from .backward_pass import _Backward, nd


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False, train_mode: bool = True) -> None:
    """Compute the gradients of ``heads`` into the :attr:`~lazynd.NDArray.grad` buffers of the
    variables they were recorded from, by each variable's ``grad_req``.

    ``head_grads``: one array per head (None, or None for a head: ones, MXNet's default; a
    loss operator's output takes none).  Without ``retain_graph`` the recorded graph is
    freed, and a second backward through it is an error.  ``train_mode``: whether the
    gradient rules run in training mode.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.array([1.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y, z = x * 2, x * x
    >>> mx.autograd.backward([y, z])
    >>> x.grad.asnumpy()
    array([4., 6.], dtype=float32)
    """
    heads, head_grads = _heads(heads, head_grads, "backward")
    _Backward(heads, head_grads, None, create_graph=False, train_mode=train_mode).run(retain_graph)


def grad(
    heads: Any,
    variables: Any,
    head_grads: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    train_mode: bool = True,
) -> list:
    """The gradients of ``heads`` with respect to ``variables``, as new arrays (``.grad`` is not touched).

    ``variables``: recorded arrays (variables, or results of recorded operations).  With
    ``create_graph`` the gradient computation is itself recorded, so the result can be
    differentiated again; ``retain_graph`` then defaults to True.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.array([1.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x ** 3
    ...     dy = mx.autograd.grad(y, [x], create_graph=True)[0]   # 3 x^2
    >>> dy.backward()                                             # d(3 x^2)/dx = 6 x
    >>> dy.asnumpy(), x.grad.asnumpy()
    (array([ 3., 12.], dtype=float32), array([ 6., 12.], dtype=float32))
    """
    heads, head_grads = _heads(heads, head_grads, "grad")
    variables = _arrays(variables, "variables", "grad")
    if not variables:
        raise LazyNDError("grad: no variables given; expected one or more recorded arrays")
    for i, v in enumerate(variables):
        if not isinstance(v, nd.NDArray) or v._ag is None:
            raise LazyNDError(
                f"grad: variable {i} is not in a recorded graph; mark it with attach_grad() before recording"
            )
    run = _Backward(heads, head_grads, variables, create_graph=create_graph, train_mode=train_mode)
    return run.run(create_graph if retain_graph is None else retain_graph)


def _arrays(value: Any, what: str, where: str) -> list:
    """``value``, one NDArray or a list or tuple of them, as a list (its items are checked by the caller)."""
    if isinstance(value, nd.NDArray):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise LazyNDError(f"{where}: {what} must be an NDArray or a list of NDArrays, got {type(value).__name__}")


def _heads(heads: Any, head_grads: Any, where: str) -> tuple[list, list]:
    NDArray = nd.NDArray
    heads = _arrays(heads, "heads", where)
    if not heads:
        raise LazyNDError(f"{where}: no heads given; expected one or more recorded arrays")
    head_grads = [None] * len(heads) if head_grads is None else _arrays(head_grads, "head_grads", where)
    if len(head_grads) != len(heads):
        raise LazyNDError(f"{where}: {len(head_grads)} head gradients for {len(heads)} heads; expected one each")
    for k, (head, head_grad) in enumerate(zip(heads, head_grads, strict=True)):
        if not isinstance(head, NDArray):
            raise LazyNDError(f"{where}: head {k} must be an NDArray, got {type(head).__name__}")
        if head_grad is not None and (not isinstance(head_grad, NDArray) or head_grad.shape != head.shape):
            given = f"shape {head_grad.shape}" if isinstance(head_grad, NDArray) else type(head_grad).__name__
            raise LazyNDError(f"{where}: head gradient {k} must be an NDArray of shape {head.shape}, got {given}")
        if head_grad is not None and head_grad.dtype != head.dtype:  # the rules would refuse it by their own names
            raise LazyNDError(
                f"{where}: head gradient {k} must have the head's dtype {np.dtype(head.dtype).name}, "
                f"got {np.dtype(head_grad.dtype).name}"
            )
        if head._ag is None:
            raise LazyNDError(
                f"{where}: head {k} (shape {head.shape}) is not in a recorded graph: compute it inside "
                "autograd.record() from arrays marked with attach_grad()"
            )
    return heads, head_grads
