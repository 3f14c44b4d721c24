"""The built-in update rules: SGD (and ``ccsgd``), NAG, Adam, RMSProp, AdaGrad and AdaDelta.

``SGD`` and ``Adam`` make one fused call per parameter (``sgd_update``,
``sgd_mom_update``, ``adam_update``), writing the weight and its states in
place, and ``SGD.update_multi`` runs ONE ``multi_sgd_update`` /
``multi_sgd_mom_update`` operation for a list of parameters; the others are
written with NDArray operators.  Each class registers itself by its
lower-case name.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..ndarray import NDArray
from .base import Optimizer, register

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["SGD", "NAG", "Adam", "RMSProp", "AdaGrad", "AdaDelta"]


def _zeros_like(weight: NDArray) -> NDArray:
    return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)


def _sqrt(x: NDArray) -> NDArray:
    return x**0.5


@register
class SGD(Optimizer):
    """SGD with optional momentum, one fused ``sgd_update``/``sgd_mom_update`` call per parameter."""

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0.0 <= momentum <= 1.0:
            raise LazyNDError(f"SGD: momentum must be in [0, 1], got {momentum}")
        self.momentum = momentum

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        args = self._fused_args(index)
        if state is None:
            nd.sgd_update(weight, grad, out=weight, **args)
        else:
            nd.sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum, **args)

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """One ``multi_sgd_update`` / ``multi_sgd_mom_update`` for parameters on one device with one dtype."""
        first = weights[0] if weights else None
        same = first is not None and all(
            w.context == first.context and w.dtype == first.dtype and g.context == first.context
            for w, g in zip(weights, grads, strict=True)
        )
        if not same or len(weights) == 1:
            super().update_multi(indices, weights, grads, states)
            return
        for index in indices:
            self._update_count(index)
        shared = {
            "lrs": tuple(self._get_lr(i) for i in indices),
            "wds": tuple(self._get_wd(i) for i in indices),
            "rescale_grad": self.rescale_grad,
            "clip_gradient": -1.0 if self.clip_gradient is None else self.clip_gradient,
            "num_weights": len(weights),
        }
        if self.momentum == 0.0:
            flat = [a for pair in zip(weights, grads, strict=True) for a in pair]
            nd.multi_sgd_update(*flat, out=list(weights), **shared)
        else:
            flat = [a for group in zip(weights, grads, states, strict=True) for a in group]
            nd.multi_sgd_mom_update(*flat, out=list(weights), momentum=self.momentum, **shared)


Optimizer.opt_registry["ccsgd"] = SGD


@register
class NAG(SGD):
    """Nesterov accelerated SGD: ``mom = momentum*mom - lr*g; weight += momentum*mom - lr*g``."""

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._prepared_grad(grad)
        g += weight * wd
        g *= lr
        if state is None:
            weight -= g
            return
        # MXNet's convention: the state holds -lr * (accumulated gradient)
        state *= self.momentum
        state -= g
        weight += state * self.momentum - g


@register
class Adam(Optimizer):
    """Adam: bias correction folded into the learning rate, then one fused ``adam_update``."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
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
        if not 0.0 <= gamma1 < 1.0:
            raise LazyNDError(f"RMSProp: gamma1 must be in [0, 1), got {gamma1}")
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
        clip_weights = -1.0 if self.clip_weights is None else self.clip_weights
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
        g = grad * self.rescale_grad + weight * args["wd"]
        if self.clip_gradient is not None:
            g = nd._minimum_scalar(nd._maximum_scalar(g, scalar=-self.clip_gradient), scalar=self.clip_gradient)
        n[:] = g * g * (1 - self.gamma1) + n * self.gamma1
        mean_g[:] = g * (1 - self.gamma1) + mean_g * self.gamma1
        delta[:] = delta * self.gamma2 - g * args["lr"] / _sqrt(n - mean_g * mean_g + self.epsilon)
        weight += delta
        if self.clip_weights is not None:
            weight[:] = nd._minimum_scalar(nd._maximum_scalar(weight, scalar=-clip_weights), scalar=clip_weights)


@register
class AdaGrad(Optimizer):
    """AdaGrad: the step shrinks with the sum of squared gradients."""

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._prepared_grad(grad)
        state += g * g
        weight -= (g / _sqrt(state + self.float_stable_eps) + weight * wd) * lr


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler): no learning rate, running averages of squared gradients and steps."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0.0 <= rho < 1.0:
            raise LazyNDError(f"AdaDelta: rho must be in [0, 1), got {rho}")
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        wd = self._get_wd(index)
        g = self._prepared_grad(grad)
        acc_g, acc_delta = state
        acc_g[:] = acc_g * self.rho + g * g * (1.0 - self.rho)
        step = _sqrt(acc_delta + self.epsilon) / _sqrt(acc_g + self.epsilon) * g
        acc_delta[:] = acc_delta * self.rho + step * step * (1.0 - self.rho)
        weight -= step + weight * wd
