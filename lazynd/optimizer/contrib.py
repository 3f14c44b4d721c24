"""MXNet 1.x's ``mx.optimizer.contrib``: ``GroupAdaGrad``, AdaGrad with one accumulator per row.

Examples
--------
>>> import lazynd as mx
>>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1)
>>> w, g = mx.nd.ones((2, 3)), mx.nd.ones((2, 3))
>>> state = opt.create_state(0, w)
>>> state.shape
(2, 1)
>>> opt.update(0, w, g, state)
>>> [round(float(v), 4) for v in w.asnumpy()[0]]
[0.9, 0.9, 0.9]
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .base import Optimizer, register

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad whose history is the running sum of each row's mean squared gradient, so every row of a
    parameter has one learning rate.  One fused ``_contrib_group_adagrad_update`` call per parameter.

    Weight decay is not supported (MXNet refuses it too): ``wd`` must be 0.

    Parameters
    ----------
    eps : float
        Added to the history inside the square root.
    """

    def __init__(self, eps: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_numbers("GroupAdaGrad", eps=eps)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        if weight.ndim < 2:
            raise LazyNDError(
                f"GroupAdaGrad: parameter {index!r} has shape {weight.shape}, expected at least 2 dimensions (rows, ...)"
            )
        return nd.zeros((weight.shape[0], 1), ctx=weight.context, dtype=weight.dtype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray) -> None:
        self._update_count(index)
        wd = self._get_wd(index)
        if wd != 0:
            raise LazyNDError(f"GroupAdaGrad: weight decay is not supported, got wd={wd} for parameter {index!r}")
        # MXNet's dense path clips whenever clip_gradient is set (0 included); -1 is the operator's "no clipping"
        clip = -1.0 if self.clip_gradient is None else float(self.clip_gradient)
        nd.contrib.group_adagrad_update(
            weight,
            grad,
            state,
            out=weight,
            lr=self._get_lr(index),
            rescale_grad=self.rescale_grad,
            clip_gradient=clip,
            epsilon=self.float_stable_eps,
        )
