"""MXNet's ``Test`` optimizer (registered as ``'test'``): ``weight += rescale_grad * grad``, nothing else.

MXNet ships it with its optimizers for its KVStore tests: with ``rescale_grad=lr``, a store that
runs it holds ``lr`` times the running sum of every gradient pushed, which a test can compute by
hand.  No learning rate, weight decay or clipping is applied and no update is counted; the state
(float32 zeros, as MXNet creates it) receives a copy of the weight after each update.

Examples
--------
>>> import lazynd as mx
>>> opt = mx.optimizer.create('test', rescale_grad=0.5)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,)) * 4
>>> state = opt.create_state(0, w)
>>> opt.update(0, w, g, state)
>>> w.asnumpy().tolist(), state.asnumpy().tolist()
([3.0, 3.0], [3.0, 3.0])
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import Optimizer, register

__all__ = ["Test"]


@register
class Test(Optimizer):
    """Adds ``rescale_grad * grad`` to the weight and copies the weight into the state."""

    __test__ = False  # an optimizer, not a test class for pytest to collect

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        return nd.zeros(weight.shape, ctx=weight.context)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray) -> None:
        weight[:] += grad * self.rescale_grad
        state[:] = weight
