"""Learning-rate schedules: the learning rate as a function of the number of updates so far.

A scheduler is called with ``num_update`` (how many updates the optimizer has
made) and returns the learning rate to use.  The optimizer sets ``base_lr``
from its own ``learning_rate`` when it is given the scheduler.

Every scheduler takes MXNet's warmup arguments: for the first ``warmup_steps``
updates the rate rises linearly from ``warmup_begin_lr`` towards ``base_lr``
(``warmup_mode='linear'``) or stays at ``warmup_begin_lr`` (``'constant'``).
The schedules start from ``base_lr`` as it is when they are called, so an
optimizer's ``learning_rate`` sets where the warmup and the polynomial and
cosine decays lead from (MXNet keeps the value given to the scheduler there).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

from .arguments import is_choice
from .errors import ArgumentTypeError, ArgumentValueError, LazyNDError
from .log import get_logger

_log = get_logger(__name__)
# the lines MXNet 1.9.1 logs when a step schedule changes the rate, which training-log parsers look for
_CHANGE_LINE = "Update[%d]: Change learning rate to %0.5e"
_FLOOR_LINE = "Update[%d]: now learning rate arrived at %0.5e, will not change in the future"

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler", "CosineScheduler"]

_WARMUP_MODES = ("linear", "constant")


def check_numbers(owner: str, **values: Any) -> None:
    """Refuse, by name, an argument that is not a real number (before a comparison fails on it), or
    is NaN or infinite (a NaN rate passes every ``< 0`` check and turns the weights to NaN).

    Shared by the schedulers and the optimizers; ``owner`` names the class in the message.
    """
    for name, value in values.items():
        if not isinstance(value, numbers.Real):
            raise ArgumentTypeError(f"{owner}: {name} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ArgumentValueError(f"{owner}: {name} must be a finite number, got {value!r}")


class LRScheduler:
    """Base class: a constant learning rate ``base_lr``.

    Examples
    --------
    >>> LRScheduler(base_lr=0.1)(100)
    0.1
    """

    def __init__(
        self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0.0, warmup_mode: str = "linear"
    ) -> None:
        name = type(self).__name__
        check_numbers(name, base_lr=base_lr, warmup_begin_lr=warmup_begin_lr)
        if not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ArgumentValueError(f"{name}: warmup_steps must be an int >= 0, got {warmup_steps!r}")
        if warmup_begin_lr > base_lr:
            raise ArgumentValueError(f"{name}: warmup_begin_lr {warmup_begin_lr} must not exceed base_lr {base_lr}")
        if not is_choice(warmup_mode, _WARMUP_MODES):
            raise ArgumentValueError(f"{name}: warmup_mode must be one of {_WARMUP_MODES}, got {warmup_mode!r}")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The rate at update ``num_update`` (< ``warmup_steps``) of the warmup towards ``base_lr``.

        Examples
        --------
        >>> LRScheduler(base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.5).get_warmup_lr(2)
        0.75
        """
        if num_update < 0:
            raise LazyNDError(f"{type(self).__name__}: num_update must be >= 0, got {num_update}")
        if not num_update < self.warmup_steps:
            raise LazyNDError(
                f"{type(self).__name__}: update {num_update} is past the {self.warmup_steps} warmup steps"
            )
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        return self.warmup_begin_lr + (self.base_lr - self.warmup_begin_lr) * num_update / self.warmup_steps

    def check_update(self, num_update: Any) -> None:
        """Refuse, naming the scheduler, an update count that is not a number >= 0 (a string, None, NaN, inf)."""
        if isinstance(num_update, bool) or not isinstance(num_update, numbers.Real) or not math.isfinite(num_update):
            raise LazyNDError(f"{type(self).__name__}: num_update must be a number of updates, got {num_update!r}")
        if num_update < 0:
            raise LazyNDError(f"{type(self).__name__}: num_update must be >= 0, got {num_update}")

    def __call__(self, num_update: int) -> float:
        self.check_update(num_update)
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        return self.base_lr


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates, never below ``stop_factor_lr``.

    Examples
    --------
    >>> s = FactorScheduler(step=10, factor=0.5, base_lr=1.0)
    >>> s(5), s(11), s(25)
    (1.0, 0.5, 0.25)
    """

    def __init__(
        self,
        step: int,
        factor: float = 1.0,
        stop_factor_lr: float = 1e-8,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0.0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        check_numbers("FactorScheduler", step=step, factor=factor, stop_factor_lr=stop_factor_lr)
        if step < 1:
            raise ArgumentValueError(f"FactorScheduler: step must be >= 1 update, got {step}")
        if factor > 1.0:
            raise ArgumentValueError(f"FactorScheduler: factor must be <= 1 so the rate decreases, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        self.check_update(num_update)
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a rate reached after ``count`` steps stays until the next boundary is passed
        while num_update > self.count + self.step:
            before = self.base_lr
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info(_FLOOR_LINE, num_update, self.base_lr)
            else:
                _log.info(_CHANGE_LINE, num_update, self.base_lr)
            if self.base_lr == before:
                # the rate no longer changes (factor 1, or the floor reached): jump to the last
                # boundary passed at once instead of stepping there (10**12 updates would take hours)
                steps_left = -((self.count - num_update) // self.step) - 1
                self.count += int(max(steps_left, 0)) * self.step
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` after each update count listed in ``step``.

    Examples
    --------
    >>> s = MultiFactorScheduler(step=[10, 20], factor=0.1, base_lr=1.0)
    >>> s(10), round(s(11), 6), round(s(21), 6)
    (1.0, 0.1, 0.01)
    """

    def __init__(
        self,
        step: Sequence[int],
        factor: float = 1.0,
        base_lr: float = 0.01,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0.0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if isinstance(step, (str, bytes)) or not isinstance(step, Iterable):
            raise ArgumentTypeError(f"MultiFactorScheduler: step must be a list of update counts, got {step!r}")
        steps = list(step)
        if not steps:
            raise ArgumentValueError("MultiFactorScheduler: step must list at least one update count")
        check_numbers("MultiFactorScheduler", factor=factor, **{f"step[{i}]": s for i, s in enumerate(steps)})
        for i, s in enumerate(steps):
            if s < 1:
                raise ArgumentValueError(f"MultiFactorScheduler: step[{i}] must be >= 1, got {s}")
            if i and s <= steps[i - 1]:
                raise ArgumentValueError(f"MultiFactorScheduler: steps must increase, got {steps}")
        if factor > 1.0:
            raise ArgumentValueError(f"MultiFactorScheduler: factor must be <= 1 so the rate decreases, got {factor}")
        self.step = steps
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        self.check_update(num_update)
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            _log.info(_CHANGE_LINE, num_update, self.base_lr)
        return self.base_lr


class _DecayToFinal(LRScheduler):
    """A decay from ``base_lr`` (after the warmup) to ``final_lr`` at update ``max_update``."""

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        final_lr: float = 0.0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0.0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int) or max_update <= warmup_steps:
            raise ArgumentValueError(
                f"{type(self).__name__}: max_update must be an int larger than warmup_steps ({warmup_steps}), "
                f"got {max_update!r}"
            )
        check_numbers(type(self).__name__, final_lr=final_lr)
        self.max_update = max_update
        self.final_lr = final_lr

    def _decay(self, progress: float) -> float:
        """The fraction of ``base_lr - final_lr`` left at ``progress`` (0 to 1) through the decay."""
        raise NotImplementedError

    def __call__(self, num_update: int) -> float:
        self.check_update(num_update)
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update >= self.max_update:
            return self.final_lr
        progress = (num_update - self.warmup_steps) / (self.max_update - self.warmup_steps)
        return self.final_lr + (self.base_lr - self.final_lr) * self._decay(progress)


class PolyScheduler(_DecayToFinal):
    """A polynomial decay ``final_lr + (base_lr - final_lr) * (1 - progress) ** pwr`` until ``max_update``.

    ``progress`` runs from 0 after the warmup to 1 at ``max_update``; the rate stays at
    ``final_lr`` from then on.

    Examples
    --------
    >>> s = PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1)
    >>> s(0), round(s(5), 6), s(10), s(50)
    (1.0, 0.325, 0.1, 0.1)
    """

    def __init__(
        self,
        max_update: int,
        base_lr: float = 0.01,
        pwr: float = 2,
        final_lr: float = 0.0,
        warmup_steps: int = 0,
        warmup_begin_lr: float = 0.0,
        warmup_mode: str = "linear",
    ) -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        check_numbers("PolyScheduler", pwr=pwr)
        self.power = pwr

    def _decay(self, progress: float) -> float:
        return (1.0 - progress) ** self.power


class CosineScheduler(_DecayToFinal):
    """A cosine decay ``final_lr + (base_lr - final_lr) * (1 + cos(pi * progress)) / 2`` until ``max_update``.

    Examples
    --------
    >>> s = CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.0)
    >>> s(0), round(s(5), 6), s(10)
    (1.0, 0.5, 0.0)
    """

    def _decay(self, progress: float) -> float:
        return (1.0 + math.cos(math.pi * progress)) / 2.0
