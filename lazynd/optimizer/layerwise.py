"""MXNet 1.x's layer-wise and follow-the-leader optimizers: ``FTML``, ``LAMB`` and ``LARS``.

``FTML`` is one fused ``ftml_update`` per parameter.  ``LAMB`` runs ``lamb_update_phase1``,
the two norms and ``lamb_update_phase2`` (``mp_`` forms for a float16 weight under
``multi_precision``).  ``LARS`` scales each layer's learning rate by its trust ratio with
``multi_sum_sq`` and ``multi_lars`` and steps the parameters of a list, ``aggregate_num`` at a
time as MXNet's updater hands them over, each group in ONE ``preloaded_multi_sgd(_mom)_update``,
the rates never leaving the device.  (``LBSGD``, the large-batch SGD, is in :mod:`.lbsgd`.)
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as _ndarray
from ..environment import integer_setting
from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .adam_variants import _check_betas
from .base import Optimizer, register
from .optimizers import _one_device_and_dtype, _zeros_like

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["FTML", "LAMB", "LARS"]


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
        lr = self._get_lr(index)
        self._check_dividing_lr(index, lr)
        nd.ftml_update(
            weight,
            grad,
            d,
            v,
            z,
            out=weight,
            lr=lr,
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
    operators.  A list of parameters on one device takes one ``multi_lamb_update``.

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

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """One ``multi_lamb_update`` for parameters on one device with one dtype (MXNet's aggregated LAMB)."""
        if len(weights) < 2 or not _one_device_and_dtype(weights, grads):
            super().update_multi(indices, weights, grads, states)
            return
        self._update_counts(indices)
        means, variances = zip(*states, strict=True)
        nd.contrib.multi_lamb_update(
            weights,
            grads,
            means,
            variances,
            step_count=[self._index_update_count[index] for index in indices],
            lrs=self._get_lrs(indices),
            wds=self._get_wds(indices),
            out=weights,
            beta1=self.beta1,
            beta2=self.beta2,
            epsilon=self.epsilon,
            bias_correction=self.bias_correction,
            rescale_grad=self.rescale_grad,
            clip_gradient=self._fused_clip_gradient(),
            lower_bound=_bound(self.lower_bound),
            upper_bound=_bound(self.upper_bound),
        )

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
    step's rate to the last step's.  A list of parameters on one device is stepped
    ``aggregate_num`` at a time (``MXNET_OPTIMIZER_AGGREGATION_SIZE``, 4 by default, as MXNet's
    updater groups them), each group one ``multi_lars`` and one
    ``preloaded_multi_(mp_)sgd(_mom)_update``.  Each group is a step of its own, as in MXNet
    1.9.1: after a change of rate, only the first group of an update has its momentum corrected
    (the next ones see this rate as the last one).  A float16 weight's state under
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
        # how many parameters one step takes; it decides which ones a momentum correction reaches
        self.aggregate_num = integer_setting("MXNET_OPTIMIZER_AGGREGATION_SIZE", minimum=1) or 4
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
        """LARS steps of ``aggregate_num`` parameters each, for parameters on one device with one
        dtype; one per parameter otherwise."""
        if not _one_device_and_dtype(weights, grads):
            super().update_multi(indices, weights, grads, states)
            return
        size = self.aggregate_num
        for start in range(0, len(indices), size):
            part = slice(start, start + size)
            self._step(indices[part], weights[part], grads[part], states[part], False)
