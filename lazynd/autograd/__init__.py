"""``mx.autograd``: imperative automatic differentiation of lazy NDArrays (MXNet 1.x's API).

Operations inside :func:`record` are recorded; :func:`backward` (or ``NDArray.backward``)
computes gradients from each operator's registered gradient rule, pushing them to the engine
like any other operations.  See :mod:`.state` (flags and scopes), :mod:`.recording` (what is
recorded), :mod:`.graph` (the recorded graph), :mod:`.backward` and :mod:`.backward_pass` (the
gradients), :mod:`.replay` and :mod:`.replay_program` (a pass met again, pushed as one operation)
and :mod:`.function` (functions differentiated by hand); :func:`get_symbol` (the recorded
computation as a symbol) is :mod:`lazynd_sym.autograd_symbol`'s.

Examples
--------
>>> import lazynd as mx
>>> w = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
>>> w.attach_grad()
>>> x = mx.nd.array([[1.0, 1.0]])
>>> with mx.autograd.record():
...     loss = mx.nd.dot(x, w).sum()
>>> loss.backward()
>>> w.grad.asnumpy()
array([[1., 1.],
       [1., 1.]], dtype=float32)
"""

from __future__ import annotations

import importlib
from typing import Any

from ..ndarray import NDArray
from .backward import backward, grad
from .function import Function
from .recording import attach_grad, grad_of, mark_variables
from .state import (
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)

# NDArray too: ``from mxnet.autograd import *`` hands it on in MXNet, and its own tests use it after that
__all__ = [
    "Function",
    "NDArray",
    "attach_grad",
    "backward",
    "grad",
    "grad_of",
    "get_symbol",
    "is_recording",
    "is_training",
    "mark_variables",
    "pause",
    "predict_mode",
    "record",
    "set_recording",
    "set_training",
    "train_mode",
]

# built on the symbolic side: resolved on first use, so importing lazynd never imports lazynd_sym
_FROM_SYMBOLIC = {"get_symbol": "lazynd_sym.autograd_symbol"}


def __getattr__(name: str) -> Any:
    module_name = _FROM_SYMBOLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_SYMBOLIC))
