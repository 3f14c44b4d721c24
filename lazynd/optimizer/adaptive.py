"""AdaGrad and AdaDelta: per-coordinate step sizes from running sums of squared gradients,
written with NDArray operators (MXNet has no fused update for them either).
"""

from __future__ import annotations

from typing import Any

from ..errors import LazyNDError
from ..lr_scheduler import check_numbers
from ..ndarray import NDArray
from .base import Optimizer, register
from .optimizers import _sqrt, _zeros_like

__all__ = ["AdaGrad", "AdaDelta"]


@register
class AdaGrad(Optimizer):
    """AdaGrad: the step shrinks with the sum of squared gradients."""

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_numbers("AdaGrad", eps=eps)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return _zeros_like(weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = self._prepared_grad(weight, grad)
        state += g * g
        weight -= (g / _sqrt(state + self.float_stable_eps) + weight * wd) * lr


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler): no learning rate, running averages of squared gradients and steps."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_numbers("AdaDelta", rho=rho, epsilon=epsilon)
        if not 0.0 <= rho < 1.0:
            raise LazyNDError(f"AdaDelta: rho must be in [0, 1), got {rho}")
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index: Any, weight: NDArray) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        wd = self._get_wd(index)
        g = self._prepared_grad(weight, grad)
        acc_g, acc_delta = state
        acc_g[:] = acc_g * self.rho + g * g * (1.0 - self.rho)
        step = _sqrt(acc_delta + self.epsilon) / _sqrt(acc_g + self.epsilon) * g
        acc_delta[:] = acc_delta * self.rho + step * step * (1.0 - self.rho)
        weight -= step + weight * wd
