"""``mx.misc``: the learning-rate schedules of MXNet's first releases, which older programs import.

MXNet 1.x still ships them (its autoencoder example passes ``mx.misc.FactorScheduler`` to an
optimizer).  Unlike :class:`lazynd.lr_scheduler.FactorScheduler`, which lowers the rate as the
update count passes each boundary, these compute the rate from the iteration alone:
``base_lr * factor ** (iteration // step)``.  The optimizer sets ``base_lr`` from its
``learning_rate`` when it is given the schedule, as for the schedules of ``mx.lr_scheduler``.
"""

from __future__ import annotations

import numbers

from .errors import LazyNDError
from .log import get_logger

_log = get_logger(__name__)

__all__ = ["LearningRateScheduler", "FactorScheduler"]


class LearningRateScheduler:
    """Base class: called with the iteration count, returns the learning rate (``base_lr`` here 0.01)."""

    def __init__(self) -> None:
        self.base_lr = 0.01

    def __call__(self, iteration: int) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define __call__(iteration)")


class FactorScheduler(LearningRateScheduler):
    """``base_lr`` multiplied by ``factor`` once for every ``step`` iterations done.

    Examples
    --------
    >>> schedule = FactorScheduler(step=10, factor=0.5)
    >>> schedule.base_lr = 1.0
    >>> schedule(9), schedule(10), schedule(25)
    (1.0, 0.5, 0.25)
    """

    def __init__(self, step: int, factor: float = 0.1) -> None:
        super().__init__()
        for name, value in (("step", step), ("factor", factor)):
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                raise LazyNDError(f"misc.FactorScheduler: {name} must be a number, got {value!r}")
        if step < 1:
            raise LazyNDError(f"misc.FactorScheduler: step must be >= 1 iteration, got {step}")
        if factor >= 1.0:
            raise LazyNDError(f"misc.FactorScheduler: factor must be < 1 so the rate decreases, got {factor}")
        self.step = step
        self.factor = factor
        self._last_lr: float | None = None

    def __call__(self, iteration: int) -> float:
        lr = self.base_lr * self.factor ** int(iteration // self.step)
        if self._last_lr is not None and lr != self._last_lr:
            _log.info("At iteration [%d]: switched to learning rate %.5f", iteration, lr)
        self._last_lr = lr
        return lr
