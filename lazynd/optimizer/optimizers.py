"""The built-in update rules: SGD (and ``ccsgd``), NAG, Adam, RMSProp, Ftrl, SGLD, DCASGD and
Signum (AdaGrad and AdaDelta: :mod:`.adaptive`).

``SGD``, ``Adam``, ``RMSProp``, ``Ftrl`` and ``Signum`` make one fused call per
parameter (``sgd_update``, ``sgd_mom_update``, ``adam_update``, ``rmsprop_update``,
``rmspropalex_update``, ``ftrl_update``, ``signsgd_update``, ``signum_update``),
writing the weight and its states in place, and ``SGD.update_multi`` runs ONE ``multi_sgd_update`` /
``multi_sgd_mom_update`` operation for a list of parameters; the others are
written with NDArray operators.  Each class registers itself by its
lower-case name.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ndarray as _ndarray
from .. import random as _random
from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .base import Optimizer, register

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["SGD", "ccSGD", "NAG", "Adam", "RMSProp", "Ftrl", "SGLD", "DCASGD", "Signum"]


def _zeros_like(weight: NDArray) -> NDArray:
    return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)


def _sqrt(x: NDArray) -> NDArray:
    return x**0.5


@register
class SGD(Optimizer):
    """SGD with optional momentum, one fused ``sgd_update``/``sgd_mom_update`` call per parameter.

    ``lazy_update`` is MXNet's option for row-sparse gradients; on lazynd's dense
    arrays both of its values give the same update.
    """

    master_copy_first = False  # MXNet's SGD (and NAG) keep a float16 weight's state as (state, master copy)
    updates_lists = True

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lazy_update = lazy_update
        check_numbers(type(self).__name__, momentum=momentum)
        if not 0.0 <= momentum <= 1.0:
            raise LazyNDError(f"SGD: momentum must be in [0, 1], got {momentum}")
        self.momentum = momentum

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        if isinstance(index, (list, tuple)):  # MXNet 1.x's aggregated SGD: lists of parameters (updates_lists)
            given = {"weight": weight, "grad": grad, "state": state}
            wrong = [
                name
                for name, value in given.items()
                if not isinstance(value, (list, tuple)) or len(value) != len(index)
            ]
            if wrong:
                raise LazyNDError(
                    f"SGD.update: a list of {len(index)} indices updates lists of as many weights, grads and "
                    f"states; {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not"
                )
            self.update_multi(list(index), list(weight), list(grad), list(state))
            return
        self._update_count(index)
        args = self._fused_args(index)
        if state is None:
            nd.sgd_update(weight, grad, out=weight, **args)
        else:
            nd.sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum, **args)

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """One ``multi_sgd_update`` / ``multi_sgd_mom_update`` for parameters on one device with one dtype,
        prepared at the first update of these arrays (:meth:`Optimizer._prepared_call`)."""
        arrays: tuple[list, ...]
        if self.momentum == 0.0:
            op, arrays = "multi_sgd_update", (weights, grads)
        else:
            op, arrays = "multi_sgd_mom_update", (weights, grads, states)
        key, call = self._prepared_call(op, arrays)
        if call is None:
            if len(weights) < 2 or not _one_device_and_dtype(weights, grads):
                super().update_multi(indices, weights, grads, states)
                return
            call = self._new_prepared_call(key, op, arrays)
        self._update_counts(indices)
        params = {
            "lrs": self._get_lrs(indices),
            "wds": self._get_wds(indices),
            "rescale_grad": self.rescale_grad,
            "clip_gradient": self._fused_clip_gradient(),
            "num_weights": len(weights),
        }
        if self.momentum != 0.0:
            params["momentum"] = self.momentum
        call(**params)


def _one_device_and_dtype(weights: list[NDArray], grads: list[NDArray]) -> bool:
    """Whether every weight and gradient is on the first weight's device and every weight has its dtype."""
    ctx, dtype = weights[0].context, weights[0].dtype
    for w, g in zip(weights, grads, strict=True):
        wctx, gctx = w.context, g.context
        if w.dtype is not dtype or not (wctx is ctx or wctx == ctx) or not (gctx is ctx or gctx == ctx):
            return False
    return True


Optimizer.opt_registry["ccsgd"] = SGD
ccSGD = SGD  # noqa: N816 -- MXNet's deprecated name, SGD itself there too


@register
class NAG(SGD):
    """Nesterov accelerated SGD: ``mom = momentum*mom - lr*g; weight += momentum*mom - lr*g``.

    ``g`` is the rescaled, clipped gradient plus ``wd * weight`` of the weight before the step,
    in both lines.  MXNet 1.9.1's ``nag_mom_update``, run in place as its optimizer runs it,
    reads the weight it has just written for the momentum's weight decay; with ``wd > 0`` its
    weights drift from this formula by about ``lr * wd * momentum`` of a step per update.
    """

    updates_lists = False  # MXNet 1.9.1 aggregates SGD's lists only

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        # MXNet's NAG calls the fused nag_mom_update/sgd_update: clip_gradient=0 does not clip
        g = self._prepared_grad(weight, grad, self._fused_clip_gradient())
        g += weight * wd
        g *= lr
        if state is None:
            weight -= g
            return
        # MXNet's convention: the state holds -lr * (accumulated gradient)
        state *= self.momentum
        state -= g
        weight += state * self.momentum - g

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """One :meth:`update` per parameter: SGD's fused ``multi_sgd_mom_update`` is heavy-ball momentum,
        not Nesterov's (a Module's updater hands lists, and NAG trained as momentum SGD)."""
        Optimizer.update_multi(self, indices, weights, grads, states)


@register
class Adam(Optimizer):
    """Adam: bias correction folded into the learning rate, then one fused ``adam_update``.

    ``lazy_update`` is MXNet's option for row-sparse gradients; on lazynd's dense
    arrays both of its values give the same update.
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        lazy_update: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lazy_update = lazy_update
        check_numbers("Adam", beta1=beta1, beta2=beta2, epsilon=epsilon)
        for name, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= value < 1.0:
                raise LazyNDError(f"Adam: {name} must be in [0, 1), got {value}")
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        t = self._index_update_count[index]
        args = self._fused_args(index)
        args["lr"] *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        mean, var = state
        nd.adam_update(
            weight, grad, mean, var, out=weight, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon, **args
        )


@register
class RMSProp(Optimizer):
    """RMSProp (Tieleman & Hinton) through ``rmsprop_update``; ``centered=True`` gives Graves' variant."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        gamma1: float = 0.9,
        gamma2: float = 0.9,
        epsilon: float = 1e-8,
        centered: bool = False,
        clip_weights: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        check_numbers("RMSProp", gamma1=gamma1, gamma2=gamma2, epsilon=epsilon)
        if clip_weights is not None:
            check_numbers("RMSProp", clip_weights=clip_weights)
        for name, value in (("gamma1", gamma1), ("gamma2", gamma2)):
            if not 0.0 <= value < 1.0:
                raise LazyNDError(f"RMSProp: {name} must be in [0, 1), got {value}")
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered = centered
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: NDArray) -> Any:
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))
        return (_zeros_like(weight),)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        args = self._fused_args(index)
        # as clip_gradient: MXNet 1.9.1 hands clip_weights to the operators only when it is truthy (0 does not clip)
        clip_weights = float(self.clip_weights) if self.clip_weights else -1.0
        if not self.centered:
            nd.rmsprop_update(
                weight,
                grad,
                state[0],
                out=weight,
                gamma1=self.gamma1,
                epsilon=self.epsilon,
                clip_weights=clip_weights,
                **args,
            )
            return
        n, mean_g, delta = state
        nd.rmspropalex_update(
            weight,
            grad,
            n,
            mean_g,
            delta,
            out=weight,
            gamma1=self.gamma1,
            gamma2=self.gamma2,
            epsilon=self.epsilon,
            clip_weights=clip_weights,
            **args,
        )


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., *Ad Click Prediction*): one fused ``ftrl_update`` per parameter.

    The states are ``z`` and ``n`` (the sum of squared gradients); ``lamda1`` is the L1
    coefficient, ``beta`` the per-coordinate learning rate's beta, ``wd`` the L2 one.
    """

    def __init__(
        self, lamda1: float = 0.01, learning_rate: float | None = None, beta: float = 1.0, **kwargs: Any
    ) -> None:
        if learning_rate is None and kwargs.get("lr_scheduler") is None:
            learning_rate = 0.1
        super().__init__(learning_rate=learning_rate, **kwargs)
        check_numbers("Ftrl", lamda1=lamda1, beta=beta)
        if lamda1 < 0 or beta < 0:
            raise LazyNDError(f"Ftrl: lamda1 and beta must be >= 0, got lamda1={lamda1}, beta={beta}")
        self.lamda1, self.beta = lamda1, beta

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        z, n = state
        args = self._fused_args(index)
        self._check_dividing_lr(index, args["lr"])
        nd.ftrl_update(weight, grad, z, n, out=weight, lamda1=self.lamda1, beta=self.beta, **args)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: half an SGD step plus Gaussian noise of variance ``lr``.

    ``weight += -lr/2 * (g + wd*weight) + N(0, lr)``, with the noise drawn from the weight's
    context's generator (``mx.random.seed`` makes it reproducible).  A rate of 0 (an ``lr_mult``
    of 0, or a schedule that has decayed to its ``final_lr=0``) leaves the weight as it is: N(0, 0)
    is no noise, and no draw is taken (the sampler refuses a scale of 0, as MXNet 1.9.1's does).
    """

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if lr == 0.0:
            return
        g = self._prepared_grad(weight, grad)
        weight -= (g + weight * wd) * (lr / 2)
        weight += _random.normal(0.0, math.sqrt(lr), shape=weight.shape, ctx=weight.context, dtype=weight.dtype)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016).

    The step adds ``lamda * g*g * (weight - previous_weight)`` to the gradient, a cheap
    estimate of how the gradient moved since the weight it was computed for; the state is
    (momentum or ``None``, the previous weight).
    """

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_numbers("DCASGD", momentum=momentum, lamda=lamda)
        if not 0.0 <= momentum <= 1.0:
            raise LazyNDError(f"DCASGD: momentum must be in [0, 1], got {momentum}")
        self.momentum, self.lamda = momentum, lamda

    def create_state(self, index: Any, weight: NDArray) -> Any:
        mom = _zeros_like(weight) if self.momentum != 0.0 else None
        return (mom, weight.copy())

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._prepared_grad(weight, grad)
        mom, previous_weight = state
        step = (g + weight * wd + g * g * (weight - previous_weight) * self.lamda) * -lr
        if mom is not None:
            mom *= self.momentum
            mom += step
            step = mom
        previous_weight[:] = weight
        weight += step


@register
class Signum(Optimizer):
    """signSGD and Signum (Bernstein et al., 2018): steps of ``lr`` along the sign of the
    gradient (``momentum=0``, ``signsgd_update``) or of its running average (``signum_update``);
    ``wd_lh`` is weight decay applied to the weight directly."""

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        check_numbers("Signum", momentum=momentum, wd_lh=wd_lh)
        if not 0.0 <= momentum < 1.0:
            raise LazyNDError(f"Signum: momentum must be in [0, 1), got {momentum}")
        if wd_lh < 0:
            raise LazyNDError(f"Signum: wd_lh must be >= 0, got {wd_lh}")
        self.momentum, self.wd_lh = momentum, wd_lh

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        if isinstance(index, (list, tuple)):  # MXNet 1.x's aggregated SGD: lists of parameters (updates_lists)
            self.update_multi(list(index), list(weight), list(grad), list(state))
            return
        self._update_count(index)
        args = self._fused_args(index)
        if state is None:  # signSGD: wd_lh decays the weight as wd does (MXNet 1.9.1 refuses wd_lh here)
            nd.signsgd_update(weight, grad, out=weight, **{**args, "wd": args["wd"] + self.wd_lh})
        else:
            nd.signum_update(weight, grad, state, out=weight, momentum=self.momentum, wd_lh=self.wd_lh, **args)
