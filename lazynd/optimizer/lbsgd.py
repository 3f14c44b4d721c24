"""MXNet 1.x's large-batch SGD, ``LBSGD``: SGD with a warm-up of the learning rate towards
``batch_scale`` times it (or LARS's ratio), accumulating ``batch_scale`` gradients before each step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..log import get_logger
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .base import Optimizer, register
from .optimizers import _zeros_like

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["LBSGD"]

_WARMUP_STRATEGIES = ("linear", "power2", "sqrt", "lars")
_LOG = get_logger("lazynd.optimizer")


@register
class LBSGD(Optimizer):
    """Large-batch SGD: ``batch_scale`` gradients are accumulated, then one SGD step (with momentum
    where given) takes their mean at a rate warmed up over ``warmup_epochs * updates_per_epoch``
    updates from ``lr`` to ``batch_scale * lr`` (``linear``, ``power2``, ``sqrt``), or scaled by
    LARS's ratio ``sqrt(|w|^2 / (|g|^2 + wd*|w|^2))`` held in [0.01, 100] (``lars``).

    The gradients are accumulated into a copy: MXNet 1.9.1 keeps the first one by reference, so
    an executor that reuses its gradient buffer doubles the next batch's share.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("lbsgd", learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 0.95, -0.8 ], dtype=float32)
    """

    def __init__(
        self,
        momentum: float = 0.0,
        multi_precision: bool = False,
        warmup_strategy: str = "linear",
        warmup_epochs: int = 5,
        batch_scale: int = 1,
        updates_per_epoch: int = 32,
        begin_epoch: int = 0,
        num_epochs: int = 60,
        **kwargs: Any,
    ) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        check_numbers("LBSGD", momentum=momentum, warmup_epochs=warmup_epochs, updates_per_epoch=updates_per_epoch)
        if not 0.0 <= momentum <= 1.0:
            raise LazyNDError(f"LBSGD: momentum must be in [0, 1], got {momentum}")
        if warmup_strategy not in _WARMUP_STRATEGIES:
            raise LazyNDError(
                f"LBSGD: warmup_strategy must be one of {', '.join(_WARMUP_STRATEGIES)}, got {warmup_strategy!r}"
            )
        if not (isinstance(batch_scale, (int, np.integer)) and batch_scale >= 1):
            raise LazyNDError(f"LBSGD: batch_scale must be an integer >= 1, got {batch_scale!r}")
        # MXNet's two lines, which its image-classification scripts' logs show
        _LOG.info("Running Large-Batch SGD Algorithm")
        _LOG.info(
            "(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, updates_per_epoch=%d)",
            batch_scale,
            warmup_epochs,
            warmup_strategy,
            updates_per_epoch,
        )
        self.momentum, self.warmup_strategy = momentum, warmup_strategy
        self.warmup_epochs, self.batch_scale, self.updates_per_epoch = warmup_epochs, batch_scale, updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads: dict[Any, dict[str, Any]] = {}

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _get_lbmult(self, count: int) -> float:
        """The warm-up's multiplier of the rate after ``count`` accumulated batches."""
        warmup = self.warmup_epochs * self.updates_per_epoch
        scale = float(self.batch_scale)
        if count >= warmup:
            return scale
        if warmup <= 1:
            return 1.0
        progress = count / warmup
        if self.warmup_strategy == "power2":
            progress = progress * progress
        elif self.warmup_strategy == "sqrt":
            progress = math.sqrt(progress)
        return 1.0 + (scale - 1.0) * progress

    def _get_lars(self, weight: NDArray, grad: NDArray, wd: float) -> float:
        weight_sq = float((weight * weight).asnumpy().sum())
        grad_sq = float((grad * grad).asnumpy().sum())
        return min(max(math.sqrt(weight_sq / (grad_sq + wd * weight_sq + 1e-18)), 0.01), 100.0)

    def _cumulate_gradient(self, grad: NDArray, index: Any) -> dict[str, Any]:
        entry = self.cumgrads.get(index)
        if entry and entry["num_cums"] > 0:
            entry = {"cum_grad": entry["cum_grad"] + grad, "num_cums": entry["num_cums"] + 1}
        else:
            entry = {"cum_grad": grad.copy(), "num_cums": self.init_updates + 1}
        self.cumgrads[index] = entry
        return entry

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr, wd = self._get_lr(index), self._get_wd(index)  # before the count, as in MXNet
        self._update_count(index)
        entry = self._cumulate_gradient(grad, index)
        if entry["num_cums"] % self.batch_scale != 0:
            # MXNet's step of rate 0: the weight stays (a NaN gradient still reaches it)
            nd.sgd_update(weight, grad, out=weight, lr=0.0, wd=wd)
            return
        grad = entry["cum_grad"] / self.batch_scale
        if self.warmup_strategy == "lars":
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(entry["num_cums"])
        args = {"lr": lr, "wd": wd, "rescale_grad": self.rescale_grad, "clip_gradient": self._fused_clip_gradient()}
        if state is None:
            nd.sgd_update(weight, grad, out=weight, **args)
        else:
            nd.sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum, **args)
        entry["cum_grad"] = 0
