"""Adam's variants written with NDArray operators: ``Adamax`` and ``Nadam`` (MXNet's update rules).

Both add weight decay to the rescaled gradient before clipping it, as MXNet does.
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .base import Optimizer, check_step_arrays, register
from .optimizers import _sqrt, _zeros_like

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["Adamax", "Nadam"]


def _check_betas(name: str, beta1: float, beta2: float) -> None:
    check_numbers(name, beta1=beta1, beta2=beta2)
    for which, value in (("beta1", beta1), ("beta2", beta2)):
        if not 0.0 <= value < 1.0:
            raise LazyNDError(f"{name}: {which} must be in [0, 1), got {value}")


def _decayed_grad(optimizer: Optimizer, index: Any, weight: NDArray, grad: NDArray) -> NDArray:
    """``clip(rescale_grad * grad + wd * weight)``: the gradient both variants step with."""
    check_step_arrays(type(optimizer).__name__, weight, grad)
    g = grad * optimizer.rescale_grad + weight * optimizer._get_wd(index)
    if optimizer.clip_gradient is not None:
        g = nd.clip(g, a_min=-optimizer.clip_gradient, a_max=optimizer.clip_gradient)
    return g


@register
class Adamax(Optimizer):
    """AdaMax (Kingma & Ba, section 7): Adam with the infinity norm of past gradients in place of the variance.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("adamax", learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 0.9, -0.9], dtype=float32)
    """

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        _check_betas("Adamax", beta1, beta2)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # mean, infinity norm

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index) / (1.0 - self.beta1**t)
        g = _decayed_grad(self, index, weight, grad)
        mean, norm = state
        mean[:] = mean * self.beta1 + g * (1.0 - self.beta1)
        norm[:] = nd.maximum(norm * self.beta2, nd.abs(g))
        weight[:] = weight - mean / norm * lr


@register
class Nadam(Optimizer):
    """Nesterov-accelerated Adam (Dozat, 2016) with MXNet's momentum schedule (``schedule_decay``).

    As in MXNet, the running product of the momentum schedule is one per optimizer, advanced
    by every parameter's update.

    Examples
    --------
    >>> import lazynd as mx
    >>> opt = mx.optimizer.create("nadam", learning_rate=0.1)
    >>> w, g = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, -2.0])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().round(4)
    array([ 0.8944, -0.8944], dtype=float32)
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        schedule_decay: float = 0.004,
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        _check_betas("Nadam", beta1, beta2)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def _momentum(self, t: int) -> float:
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index)
        g = _decayed_grad(self, index, weight, grad)
        momentum, next_momentum = self._momentum(t), self._momentum(t + 1)
        self.m_schedule *= momentum
        next_schedule = self.m_schedule * next_momentum
        mean, variance = state
        mean[:] = mean * self.beta1 + g * (1.0 - self.beta1)
        variance[:] = variance * self.beta2 + g * g * (1.0 - self.beta2)
        mean_hat = mean / (1.0 - next_schedule)
        variance_hat = variance / (1.0 - self.beta2**t)
        step = g * ((1.0 - momentum) / (1.0 - self.m_schedule)) + mean_hat * next_momentum
        weight[:] = weight - step / (_sqrt(variance_hat) + self.epsilon) * lr
