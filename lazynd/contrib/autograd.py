"""``mx.contrib.autograd``: the first imperative autograd API (MXNet 0.9.4 and 0.10), kept for the
programs written against it, on top of :mod:`lazynd.autograd` (MXNet 1.x's ``mx.autograd``).

Its one switch, "training", means both recording and training mode: ``train_section()`` is
``autograd.record()``, ``test_section()`` turns both off, and ``set_is_training`` sets both.

Examples
--------
>>> import lazynd as mx
>>> x = mx.nd.array([1.0, 2.0])
>>> grads, y = mx.contrib.autograd.grad_and_loss(lambda v: (v * v).sum())(x)
>>> grads[0].asnumpy().tolist(), float(y.asscalar())
([2.0, 4.0], 5.0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .. import autograd as _autograd
from ..autograd.state import _Scope
from ..errors import LazyNDError
from ..ndarray import NDArray

__all__ = [
    "TrainingStateScope",
    "backward",
    "compute_gradient",
    "grad",
    "grad_and_loss",
    "mark_variables",
    "set_is_training",
    "test_section",
    "train_section",
]

mark_variables = _autograd.mark_variables


def set_is_training(is_train: bool) -> bool:
    """Turn recording and training mode on or off together in this thread; return the previous
    setting (that of recording)."""
    was = _autograd.set_recording(bool(is_train))
    _autograd.set_training(bool(is_train))
    return was


class TrainingStateScope(_Scope):
    """A ``with`` block that turns recording and training mode both on (``enter_state`` true) or
    both off, and restores them on exit: what :func:`train_section` and :func:`test_section` are
    made of, which programs of MXNet 0.10 also used by name."""

    def __init__(self, enter_state: bool) -> None:
        super().__init__(bool(enter_state), bool(enter_state))


def train_section() -> TrainingStateScope:
    """A ``with`` block whose operations are recorded, in training mode (``autograd.record()``)."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """A ``with`` block with recording and training mode off (``autograd.pause()``)."""
    return TrainingStateScope(False)


def backward(outputs: Sequence[NDArray], out_grads: Sequence[Any] | None = None, retain_graph: bool = False) -> None:
    """The gradients of ``outputs`` (a list) into the marked variables' gradient arrays."""
    if not isinstance(outputs, (list, tuple)):
        raise LazyNDError(
            f"contrib.autograd.backward: outputs must be a list of NDArrays, got {type(outputs).__name__}"
        )
    if out_grads is not None and len(out_grads) != len(outputs):
        raise LazyNDError(
            f"contrib.autograd.backward: {len(out_grads)} out_grads for {len(outputs)} outputs; give one per output"
        )
    _autograd.backward(list(outputs), None if out_grads is None else list(out_grads), retain_graph=retain_graph)


def compute_gradient(outputs: Sequence[NDArray]) -> None:
    """:func:`backward` of ``outputs`` with head gradients of ones."""
    backward(outputs)


def grad_and_loss(func: Callable[..., Any], argnum: int | Sequence[int] | None = None) -> Callable[..., tuple]:
    """``func`` wrapped to return ``(gradients, outputs)``: the gradients of its outputs with
    respect to its NDArray arguments (those at ``argnum``, one int or a list; default all), each
    in a new array, the outputs as ``func`` gave them."""

    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list[NDArray], Any]:
        positions = range(len(args)) if argnum is None else [argnum] if isinstance(argnum, int) else list(argnum)
        try:
            variables = [args[i] for i in positions]
        except (IndexError, TypeError):
            raise LazyNDError(
                f"contrib.autograd: argnum {argnum!r} does not index the {len(args)} arguments given"
            ) from None
        for i, x in zip(positions, variables, strict=True):
            if not isinstance(x, NDArray):
                raise LazyNDError(f"contrib.autograd: argument {i} is a {type(x).__name__}; gradients need NDArrays")
        grads = [x.zeros_like() for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else list(outputs))
        return grads, outputs

    return wrapped


def grad(func: Callable[..., Any], argnum: int | Sequence[int] | None = None) -> Callable[..., list]:
    """``func`` wrapped to return only the gradients of :func:`grad_and_loss`."""
    both = grad_and_loss(func, argnum)

    @functools.wraps(func)
    def wrapped(*args: Any) -> list[NDArray]:
        return both(*args)[0]

    return wrapped
