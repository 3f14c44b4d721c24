"""MXNet 1.x's large-batch and follow-the-leader optimizers: ``FTML``, ``LAMB``, ``LARS`` and ``LBSGD``.

``FTML`` is one fused ``ftml_update`` per parameter.  ``LAMB`` runs ``lamb_update_phase1``,
the two norms and ``lamb_update_phase2`` (``mp_`` forms for a float16 weight under
``multi_precision``).  ``LARS`` scales each layer's learning rate by its trust ratio with
``multi_sum_sq`` and ``multi_lars`` and steps every parameter of a list in ONE
``preloaded_multi_sgd(_mom)_update``, the rates never leaving the device.  ``LBSGD`` is SGD
with a warm-up of the learning rate towards ``batch_scale`` times it (or LARS's ratio), and
accumulates ``batch_scale`` gradients before each step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .adam_variants import _check_betas
from .base import Optimizer, register
from .optimizers import _one_device_and_dtype, _zeros_like

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["FTML", "LAMB", "LARS", "LBSGD"]


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, 2017): one fused ``ftml_update`` per parameter.

    The states are ``(d, v, z)``; ``clip_gradient`` bounds the gradient with its weight decay.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("ftml", learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 0.9, -0.9], dtype=float32)
    """

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_betas("FTML", beta1, beta2)
        check_numbers("FTML", epsilon=epsilon)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # d, v, z

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        d, v, z = state
        nd.ftml_update(
            weight,
            grad,
            d,
            v,
            z,
            out=weight,
            lr=self._get_lr(index),
            wd=self._get_wd(index),
            beta1=self.beta1,
            beta2=self.beta2,
            epsilon=self.epsilon,
            rescale_grad=self.rescale_grad,
            t=self._index_update_count[index],
            clip_grad=self._fused_clip_gradient(),
        )


def _bound(value: float | None) -> float:
    """A LAMB bound as its operators take it: MXNet passes one only when it is truthy; -1 is none."""
    return float(value) if value else -1.0


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam's direction, scaled per layer by ``||weight|| / ||direction||``.

    ``lower_bound``/``upper_bound`` hold ``||weight||`` within bounds; ``bias_correction`` divides
    the moments by ``1 - beta**t``.  The state is ``(mean, var)``; a float16 weight under
    ``multi_precision`` keeps ``(float32 master copy, (mean, var))`` and steps through the ``mp_``
    operators.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("lamb", learning_rate=0.1)
    >>> w, g = mx.nd.array([3.0, -4.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 2.6464, -3.6464], dtype=float32)
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        lower_bound: float | None = None,
        upper_bound: float | None = None,
        bias_correction: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        _check_betas("LAMB", beta1, beta2)
        check_numbers("LAMB", epsilon=epsilon)
        for name, value in (("lower_bound", lower_bound), ("upper_bound", upper_bound)):
            if value is not None:
                check_numbers("LAMB", **{name: value})
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # mean, var

    def _step(self, index: Any, weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray, master: Any) -> None:
        """One LAMB step of ``weight``; ``master``: its float32 master copy, or ``None``."""
        self._update_count(index)
        phase1 = {
            "beta1": self.beta1,
            "beta2": self.beta2,
            "epsilon": self.epsilon,
            "t": self._index_update_count[index],
            "bias_correction": self.bias_correction,
            "wd": self._get_wd(index),
            "rescale_grad": self.rescale_grad,
            "clip_gradient": self._fused_clip_gradient(),
        }
        phase2 = {"lr": self._get_lr(index), "lower_bound": _bound(self.lower_bound)}
        phase2["upper_bound"] = _bound(self.upper_bound)
        if master is None:
            g = nd.lamb_update_phase1(weight, grad, mean, var, **phase1)
            nd.lamb_update_phase2(weight, g, nd.norm(weight), nd.norm(g), out=weight, **phase2)
        else:
            g = nd.mp_lamb_update_phase1(weight, grad, mean, var, master, **phase1)
            nd.mp_lamb_update_phase2(weight, g, nd.norm(master), nd.norm(g), master, out=weight, **phase2)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        mean, var = state
        self._step(index, weight, grad, mean, var, None)

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        if not self._uses_master_copy(weight):
            self.update(index, weight, grad, state)
            return
        master, (mean, var) = state
        self._step(index, weight, grad, mean, var, master)


_NO_LARS_SUFFIXES = ("gamma", "beta", "bias")  # MXNet's LARS keeps these layers' rates as they are


@register
class LARS(Optimizer):
    """LARS (You et al., 2017): SGD whose rate for each layer is scaled by
    ``eta * ||w|| / (||rescale_grad * g|| + wd * ||w|| + eps)`` (1 where a norm is 0).

    Parameters named ``*gamma``, ``*beta`` or ``*bias`` keep their rate; only ``*_weight`` ones get
    weight decay.  With ``momentum_correction``, the momentum is scaled by the ratio of this
    update's rate to the last one's.  A list of parameters on one device takes one ``multi_lars``
    and one ``preloaded_multi_(mp_)sgd(_mom)_update``.  A float16 weight's state under
    ``multi_precision`` is ``(momentum or None, float32 master copy)``.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("lars", learning_rate=0.1, eta=1.0)
    >>> w, g = mx.nd.array([3.0, -4.0]), mx.nd.array([0.6, -0.8])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 2.7, -3.6], dtype=float32)
    """

    master_copy_first = False
    decayed_suffixes = ("_weight",)

    def __init__(
        self,
        momentum: float = 0.0,
        lazy_update: bool = True,
        eta: float = 0.001,
        eps: float = 0,
        momentum_correction: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_numbers("LARS", momentum=momentum, eta=eta, eps=eps)
        if not 0.0 <= momentum <= 1.0:
            raise LazyNDError(f"LARS: momentum must be in [0, 1], got {momentum}")
        self.momentum, self.lazy_update, self.eta, self.eps = momentum, lazy_update, eta, eps
        self.momentum_correction = momentum_correction
        self.last_lr: float | None = None
        self.cur_lr: float | None = None

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _get_lrs(self, indices: list) -> tuple[float, ...]:
        # remember this update's rate and the last one's, for the momentum correction
        rate = self.learning_rate
        self.last_lr = rate if self.cur_lr is None else self.cur_lr
        self.cur_lr = rate
        return tuple(rate * self._multiplier(self.lr_mult, index) for index in indices)

    def _momentum(self) -> float:
        if self.momentum_correction and self.last_lr:
            assert self.cur_lr is not None  # set with last_lr by _get_lrs
            return self.momentum * (self.cur_lr / self.last_lr)
        return self.momentum

    def _step(self, indices: list, weights: list, grads: list, states: list, multi_precision: bool) -> None:
        """MXNet's aggregated LARS step of parameters on one device."""
        self._update_counts(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        names = [str(self.idx2name.get(index, index)) for index in indices]
        scaled = [i for i, name in enumerate(names) if not name.endswith(_NO_LARS_SUFFIXES)]
        order = scaled + [i for i in range(len(indices)) if i not in scaled]
        ctx = weights[0].context
        new_lrs = nd.array([lrs[i] for i in order], ctx=ctx, dtype="float32")
        new_wds = nd.array([wds[i] for i in order], ctx=ctx, dtype="float32")
        weights, grads, states = ([items[i] for i in order] for items in (weights, grads, states))
        n = len(scaled)
        if n:
            weights_sum_sq = nd.multi_sum_sq(*weights[:n], num_arrays=n)
            grads_sum_sq = nd.multi_sum_sq(*grads[:n], num_arrays=n)
            nd.multi_lars(
                new_lrs[:n],
                weights_sum_sq,
                grads_sum_sq,
                new_wds[:n],
                out=new_lrs[:n],
                eta=self.eta,
                eps=self.eps,
                rescale_grad=self.rescale_grad,
            )
        kwargs = {"rescale_grad": self.rescale_grad, "clip_gradient": self._fused_clip_gradient()}
        name = "sgd_update"
        groups: list[list[NDArray]] = [[w, g] for w, g in zip(weights, grads, strict=True)]
        if self.momentum > 0:
            name, kwargs["momentum"] = "sgd_mom_update", self._momentum()
        if multi_precision:
            name = "mp_" + name
            for group, (mom, master) in zip(groups, states, strict=True):
                group.extend([mom, master] if self.momentum > 0 else [master])
        elif self.momentum > 0:
            for group, mom in zip(groups, states, strict=True):
                group.append(mom)
        flat = [a for group in groups for a in group]
        update = getattr(nd, f"preloaded_multi_{name}")
        update(*flat, new_lrs, new_wds, out=weights, num_weights=len(weights), **kwargs)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._step([index], [weight], [grad], [state], False)

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._step([index], [weight], [grad], [state], self._uses_master_copy(weight))

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """One LARS step for parameters on one device with one dtype; one per parameter otherwise."""
        if not _one_device_and_dtype(weights, grads):
            super().update_multi(indices, weights, grads, states)
            return
        self._step(indices, weights, grads, states, False)


_WARMUP_STRATEGIES = ("linear", "power2", "sqrt", "lars")


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
