"""``mx.autograd``: imperative automatic differentiation of lazy NDArrays (MXNet 1.x's API).

Operations inside :func:`record` are recorded; :func:`backward` (or ``NDArray.backward``)
computes gradients from each operator's registered gradient rule, pushing them to the engine
like any other operations.  See :mod:`.state` (flags and scopes), :mod:`.recording` (what is
recorded), :mod:`.graph` (the recorded graph), :mod:`.backward` and :mod:`.backward_pass` (the
gradients), :mod:`.replay` and :mod:`.replay_program` (a pass met again, pushed as one operation)
and :mod:`.function` (functions differentiated by hand).

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

__all__ = [
    "Function",
    "attach_grad",
    "backward",
    "grad",
    "grad_of",
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
