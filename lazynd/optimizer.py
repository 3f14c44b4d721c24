"""Optimizers (MXNet's API): a registry, per-parameter learning-rate and weight-decay multipliers.

``SGD`` and ``Adam`` make one fused call per parameter (``sgd_update``,
``sgd_mom_update``, ``adam_update``), writing the weight and its states in
place; the others are written with NDArray operators.  Given lists, an updater
hands them to ``Optimizer.update_multi``, which ``SGD`` runs as ONE
``multi_sgd_update`` / ``multi_sgd_mom_update`` operation for all of them.  An :class:`Updater`
applies an optimizer to indexed parameters and keeps their states, which it can
save and restore as pickled bytes.

Examples
--------
>>> import lazynd as mx
>>> opt = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> updater = mx.optimizer.get_updater(opt)
>>> updater(0, g, w)
>>> [round(float(v), 4) for v in w.asnumpy()]
[0.9, 0.9]
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ndarray as _ndarray
from .errors import LazyNDError
from .lr_scheduler import LRScheduler
from .ndarray import NDArray

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = [
    "Optimizer",
    "SGD",
    "NAG",
    "Adam",
    "RMSProp",
    "AdaGrad",
    "AdaDelta",
    "Updater",
    "create",
    "get_updater",
    "register",
]


class Optimizer:
    """Base class: learning rate, weight decay, gradient rescaling and clipping, update counts."""

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float = 0.01,
        lr_scheduler: LRScheduler | None = None,
        sym: Any = None,
        begin_num_update: int = 0,
        param_dict: dict | None = None,
    ) -> None:
        if learning_rate < 0:
            raise LazyNDError(f"{type(self).__name__}: learning_rate must be >= 0, got {learning_rate}")
        if wd < 0:
            raise LazyNDError(f"{type(self).__name__}: wd must be >= 0, got {wd}")
        if clip_gradient is not None and clip_gradient < 0:
            raise LazyNDError(f"{type(self).__name__}: clip_gradient must be >= 0 or None, got {clip_gradient}")
        if param_idx2name is not None and not isinstance(param_idx2name, dict):
            raise LazyNDError(f"param_idx2name must be a dict of index -> name, got {type(param_idx2name).__name__}")
        self.rescale_grad = rescale_grad
        self.lr = learning_rate
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None:
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.clip_gradient = clip_gradient
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._index_update_count: dict[Any, int] = {}
        self.idx2name = dict(param_idx2name or {})
        self.sym = sym
        self.param_dict = param_dict or {}
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry ----------------------------------------------------------------------------------
    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register an optimizer class under its lower-case name (usable as a decorator)."""
        Optimizer.opt_registry[klass.__name__.lower()] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An instance of the optimizer registered as ``name`` (case-insensitive)."""
        klass = Optimizer.opt_registry.get(str(name).lower())
        if klass is None:
            known = ", ".join(sorted(Optimizer.opt_registry))
            raise LazyNDError(f"unknown optimizer {name!r} (registered: {known})")
        return klass(**kwargs)

    # -- to override -------------------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The state (e.g. momentum) kept for parameter ``index``; ``None`` when none is needed."""
        return None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement update()")

    def update_multi(self, indices: list, weights: list[NDArray], grads: list[NDArray], states: list) -> None:
        """Update several parameters; an optimizer with a multi-parameter operator overrides this."""
        for index, weight, grad, state in zip(indices, weights, grads, states, strict=True):
            self.update(index, weight, grad, state)

    # -- learning rate and multipliers -------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        if self.lr_scheduler is not None:
            raise LazyNDError("set_learning_rate: this optimizer has an lr_scheduler, which sets the rate")
        self.lr = lr

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Learning-rate multipliers by parameter name or index; symbol ``__lr_mult__`` attributes first."""
        self.lr_mult = dict(self._symbol_multipliers("__lr_mult__"))
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Weight-decay multipliers; parameters not named ``*_weight`` or ``*_gamma`` (biases, betas) get 0."""
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not (name.endswith("_weight") or name.endswith("_gamma")):
                self.wd_mult[name] = 0.0
        self.wd_mult.update(self._symbol_multipliers("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _symbol_multipliers(self, key: str) -> dict[str, float]:
        if self.sym is None:
            return {}
        attrs = self.sym.attr_dict() if hasattr(self.sym, "attr_dict") else {}
        names = self.sym.list_arguments() if hasattr(self.sym, "list_arguments") else list(attrs)
        found = {}
        for name in names:
            value = attrs.get(name, {}).get(key)
            if value is None and key.strip("_") in attrs.get(name, {}):
                value = attrs[name][key.strip("_")]
            if value is not None:
                found[name] = float(value)
        return found

    def _update_count(self, index: Any) -> None:
        count = self._index_update_count.get(index, self.begin_num_update) + 1
        self._index_update_count[index] = count
        self.num_update = max(count, self.num_update)

    def _multiplier(self, table: dict, index: Any) -> float:
        if index in table:
            return table[index]
        name = self.idx2name.get(index)
        return table.get(name, 1.0) if name is not None else 1.0

    def _get_lr(self, index: Any) -> float:
        return self.learning_rate * self._multiplier(self.lr_mult, index)

    def _get_wd(self, index: Any) -> float:
        return self.wd * self._multiplier(self.wd_mult, index)

    def _fused_args(self, index: Any) -> dict[str, float]:
        return {
            "lr": self._get_lr(index),
            "wd": self._get_wd(index),
            "rescale_grad": self.rescale_grad,
            "clip_gradient": -1.0 if self.clip_gradient is None else self.clip_gradient,
        }

    def _prepared_grad(self, grad: NDArray) -> NDArray:
        """A new array ``clip(rescale_grad * grad)`` for the optimizers written with NDArray operators."""
        g = grad * self.rescale_grad
        if self.clip_gradient is not None:
            g = nd._minimum_scalar(nd._maximum_scalar(g, scalar=-self.clip_gradient), scalar=self.clip_gradient)
        return g


register = Optimizer.register
create = Optimizer.create_optimizer


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


class Updater:
    """Apply ``optimizer`` to indexed parameters, creating each state on first use."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update one parameter, or several at once when given lists (as MXNet 1.x's updater)."""
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
            if not len(indices) == len(grads) == len(weights):
                raise LazyNDError(
                    f"Updater: {len(indices)} indices, {len(grads)} gradients and {len(weights)} weights; "
                    "expected one gradient and one weight per index"
                )
            for i, w in zip(indices, weights, strict=True):
                if i not in self.states:
                    self.states[i] = self.optimizer.create_state(i, w)
            self.optimizer.update_multi(indices, weights, grads, [self.states[i] for i in indices])
            return
        if index not in self.states:
            self.states[index] = self.optimizer.create_state(index, weight)
        self.optimizer.update(index, weight, grad, self.states[index])

    def get_states(self) -> bytes:
        """The states as pickled bytes (NDArrays stored as NumPy arrays)."""
        return pickle.dumps({k: _to_numpy(v) for k, v in self.states.items()})

    def set_states(self, states: bytes) -> None:
        """Restore states saved by :meth:`get_states` (onto the CPU)."""
        try:
            loaded = pickle.loads(states)
        except Exception as err:
            raise LazyNDError(f"Updater.set_states: could not unpickle the states: {err}") from err
        if not isinstance(loaded, dict):
            raise LazyNDError(f"Updater.set_states: expected a pickled dict of states, got {type(loaded).__name__}")
        self.states = {k: _from_numpy(v) for k, v in loaded.items()}


def _to_numpy(state: Any) -> Any:
    if isinstance(state, NDArray):
        return state.asnumpy()
    if isinstance(state, (tuple, list)):
        return type(state)(_to_numpy(s) for s in state)
    return state


def _from_numpy(state: Any) -> Any:
    if isinstance(state, np.ndarray):
        return nd.array(state, dtype=state.dtype)
    if isinstance(state, (tuple, list)):
        return type(state)(_from_numpy(s) for s in state)
    return state


def get_updater(optimizer: Optimizer) -> Callable[[Any, NDArray, NDArray], None]:
    """An :class:`Updater` for ``optimizer``, called as ``updater(index, grad, weight)``."""
    return Updater(optimizer)
