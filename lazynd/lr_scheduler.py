"""Learning-rate schedules: the learning rate as a function of the number of updates so far.

A scheduler is called with ``num_update`` (how many updates the optimizer has
made) and returns the learning rate to use.  The optimizer sets ``base_lr``
from its own ``learning_rate`` when it is given the scheduler.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import LazyNDError
from .log import get_logger

_log = get_logger(__name__)

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler"]


class LRScheduler:
    """Base class: a constant learning rate ``base_lr``.

    Examples
    --------
    >>> LRScheduler(base_lr=0.1)(100)
    0.1
    """

    def __init__(self, base_lr: float = 0.01) -> None:
        self.base_lr = base_lr

    def __call__(self, num_update: int) -> float:
        return self.base_lr


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates, never below ``stop_factor_lr``.

    Examples
    --------
    >>> s = FactorScheduler(step=10, factor=0.5, base_lr=1.0)
    >>> s(5), s(11), s(25)
    (1.0, 0.5, 0.25)
    """

    def __init__(self, step: int, factor: float = 1.0, stop_factor_lr: float = 1e-8, base_lr: float = 0.01) -> None:
        super().__init__(base_lr)
        if step < 1:
            raise LazyNDError(f"FactorScheduler: step must be >= 1 update, got {step}")
        if factor > 1.0:
            raise LazyNDError(f"FactorScheduler: factor must be <= 1 so the rate decreases, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        # a rate reached after ``count`` steps stays until the next boundary is passed
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info("update[%d]: learning rate reached its floor %.5e", num_update, self.base_lr)
            else:
                _log.info("update[%d]: changed the learning rate to %.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` after each update count listed in ``step``.

    Examples
    --------
    >>> s = MultiFactorScheduler(step=[10, 20], factor=0.1, base_lr=1.0)
    >>> s(10), round(s(11), 6), round(s(21), 6)
    (1.0, 0.1, 0.01)
    """

    def __init__(self, step: Sequence[int], factor: float = 1.0, base_lr: float = 0.01) -> None:
        super().__init__(base_lr)
        steps = list(step)
        if not steps:
            raise LazyNDError("MultiFactorScheduler: step must list at least one update count")
        for i, s in enumerate(steps):
            if s < 1:
                raise LazyNDError(f"MultiFactorScheduler: step[{i}] must be >= 1, got {s}")
            if i and s <= steps[i - 1]:
                raise LazyNDError(f"MultiFactorScheduler: steps must increase, got {steps}")
        if factor > 1.0:
            raise LazyNDError(f"MultiFactorScheduler: factor must be <= 1 so the rate decreases, got {factor}")
        self.step = steps
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            _log.info("update[%d]: changed the learning rate to %.5e", num_update, self.base_lr)
        return self.base_lr
