"""The optimizer base class and its registry: learning rate, weight decay, multipliers, update counts.

:class:`Optimizer` holds what every update rule shares (the learning rate or
its scheduler, weight decay, gradient rescaling and clipping, per-parameter
multipliers by name or index, and the update counts); ``register`` and
``create`` map lower-case names to optimizer classes.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from .. import ndarray as _ndarray
from ..arguments import flag
from ..errors import (
    ArgumentTypeError,
    ArgumentValueError,
    LazyNDError,
    OperatorError,
    SettingConflictError,
    ShapeError,
    UnsupportedError,
)
from ..log import warn_from_user_code
from ..lr_scheduler import LRScheduler, check_numbers
from ..ndarray import NDArray
from ..ndarray.prepared import PreparedCall

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["Optimizer", "create", "register"]

# prepared multi-parameter calls an optimizer keeps (see Optimizer._new_prepared_call)
_MAX_PREPARED_CALLS = 16


class Optimizer:
    """Base class: learning rate, weight decay, gradient rescaling and clipping, update counts."""

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float | None = None,
        lr_scheduler: LRScheduler | None = None,
        sym: Any = None,
        begin_num_update: int = 0,
        param_dict: dict | None = None,
        multi_precision: bool = False,
        **unknown: Any,
    ) -> None:
        name = type(self).__name__
        if unknown:  # a subclass hands on what it does not take itself: name them all (MXNet: a TypeError)
            raise ArgumentTypeError(
                f"{name}: unknown argument(s) {', '.join(sorted(unknown))}; see help(mx.optimizer.{name})"
            )
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise LazyNDError(
                f"{name}: lr_scheduler must be an LRScheduler (or a function of the update count), "
                f"got {type(lr_scheduler).__name__}"
            )
        if isinstance(lr_scheduler, type):  # callable too: each update made a scheduler, not a rate
            raise LazyNDError(
                f"{name}: lr_scheduler must be an LRScheduler, got the class {lr_scheduler.__name__} itself; "
                f"make one ({lr_scheduler.__name__}(...))"
            )
        if learning_rate is None:
            # MXNet's rule: no rate given, the scheduler's base_lr (0.01 without a scheduler, or for a
            # plain function); a rate given replaces the scheduler's base_lr
            learning_rate = getattr(lr_scheduler, "base_lr", 0.01)
        elif lr_scheduler is not None and getattr(lr_scheduler, "base_lr", learning_rate) != learning_rate:
            # MXNet 1.9.1 says so too (the same words), so a user sees which rate the schedule starts from
            warn_from_user_code(
                "learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` in optimizer."
            )
        check_numbers(name, learning_rate=learning_rate, wd=wd, rescale_grad=rescale_grad)
        if clip_gradient is not None:
            check_numbers(name, clip_gradient=clip_gradient)
        if not _is_count(begin_num_update):
            raise LazyNDError(f"{name}: begin_num_update must be an int >= 0, got {begin_num_update!r}")
        if learning_rate < 0:
            raise LazyNDError(f"{type(self).__name__}: learning_rate must be >= 0, got {learning_rate}")
        if wd < 0:
            raise LazyNDError(f"{type(self).__name__}: wd must be >= 0, got {wd}")
        if clip_gradient is not None and clip_gradient < 0:
            raise LazyNDError(f"{type(self).__name__}: clip_gradient must be >= 0 or None, got {clip_gradient}")
        if param_idx2name is not None and not (
            isinstance(param_idx2name, dict) and all(isinstance(v, str) for v in param_idx2name.values())
        ):
            raise LazyNDError(f"{name}: param_idx2name must be a dict of index -> name, got {param_idx2name!r}")
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
        self.multi_precision = flag(type(self).__name__, "multi_precision", multi_precision)
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    def __getstate__(self) -> dict[str, Any]:
        # the Parameters of param_dict hold arrays and blocks: a pickled optimizer goes without them
        state = self.__dict__.copy()
        state["param_dict"] = {}
        state.pop("_prepared_calls", None)  # they hold the arrays: made again at the next update
        return state

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
            raise ArgumentValueError(f"unknown optimizer {name!r} (registered: {known})")
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

    def _prepared_call(self, op: str, arrays: Sequence[Sequence[NDArray]]) -> tuple[tuple, PreparedCall | None]:
        """The :class:`~lazynd.ndarray.prepared.PreparedCall` of the multi-parameter operator ``op`` on
        ``arrays`` (the lists of weights, gradients and states, in the operator's order; it writes
        the weights, ``arrays[0]``), if one was made by :meth:`_new_prepared_call`; and its key."""
        key = (op, *map(id, chain(*arrays)))
        calls = self.__dict__.get("_prepared_calls")
        return key, None if calls is None else calls.get(key)

    def _new_prepared_call(self, key: tuple, op: str, arrays: Sequence[Sequence[NDArray]]) -> PreparedCall:
        """A prepared call of ``op`` on ``arrays`` (see :meth:`_prepared_call`), kept under ``key``.

        The optimizer keeps the calls of the last few sets of arrays it updated (one set per
        device and dtype, usually), and with them the arrays; the ids in ``key`` name the arrays
        while the call holds them.
        """
        calls = self.__dict__.setdefault("_prepared_calls", {})
        if len(calls) >= _MAX_PREPARED_CALLS:
            calls.clear()
        inputs = [a for group in zip(*arrays, strict=True) for a in group]
        call = calls[key] = PreparedCall(op, inputs, list(arrays[0]))
        return call

    # -- multi-precision (float16 weights updated through a float32 master copy) -----------------
    #: Whether :meth:`update` takes lists of indices, weights, gradients and states (MXNet 1.x's
    #: aggregated SGD); any other optimizer's refuses them
    updates_lists: bool = False

    #: Where the master copy sits in a float16 weight's state: MXNet's base class keeps
    #: ``(master copy, state)``, which custom optimizers written for MXNet unpack; its SGD and NAG
    #: keep ``(state, master copy)``, the order of their ``mp_*`` operators' inputs.
    master_copy_first: bool = True

    def _uses_master_copy(self, weight: NDArray) -> bool:
        return self.multi_precision and np.dtype(weight.dtype) == np.float16

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """The state of parameter ``index``; with ``multi_precision``, a float16 weight's state is
        ``(the float32 master copy, its state)`` (``(state, master copy)`` where
        :attr:`master_copy_first` is false, as for SGD and NAG)."""
        if not self._uses_master_copy(weight):
            return self.create_state(index, weight)
        master = weight.astype(np.float32)
        inner = self.create_state(index, master)
        return (master, inner) if self.master_copy_first else (inner, master)

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """:meth:`update`; a float16 weight under ``multi_precision`` is updated in float32 through its
        master copy (the gradient cast to float32), then set to the master copy rounded to float16.
        Lists of parameters only where :meth:`update` takes them (SGD's, as in MXNet 1.x)."""
        if isinstance(index, (list, tuple)):
            if not self.updates_lists:
                self._update_count(index)  # refuses the list, naming the optimizer
            for one in zip(index, weight, grad, state, strict=True):
                self.update_multi_precision(*one)
            return
        if not self._uses_master_copy(weight):
            self.update(index, weight, grad, state)
            return
        master, inner = state if self.master_copy_first else (state[1], state[0])
        self.update(index, master, grad.astype(np.float32), inner)
        master.astype(weight.dtype).copyto(weight)

    # -- learning rate and multipliers -------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        if self.lr_scheduler is not None:
            raise SettingConflictError(
                f"set_learning_rate({lr}): this optimizer has an lr_scheduler, which sets the rate; "
                "set lr_scheduler.base_lr instead"
            )
        self.lr = lr

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Learning-rate multipliers by parameter name or index; symbol ``__lr_mult__`` attributes first."""
        _check_multipliers("set_lr_mult", args_lr_mult)
        self.lr_mult = dict(self._symbol_multipliers("__lr_mult__"))
        self.lr_mult.update(args_lr_mult)

    def set_lr_scale(self, args_lrscale: dict) -> None:
        """MXNet's old name for :meth:`set_lr_mult`, which MXNet refuses (with a bare ``DeprecationWarning``).

        Refused here too, with the call to write instead: the scales are not applied.
        """
        raise UnsupportedError(
            f"set_lr_scale({args_lrscale!r}) is deprecated in MXNet and not applied: use "
            "optimizer.set_lr_mult({parameter name or index: multiplier}) instead"
        )

    #: Parameters whose names end so get weight decay; the others (biases, betas) get a multiplier of 0.
    decayed_suffixes: tuple[str, ...] = ("_weight", "_gamma")

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Weight-decay multipliers; parameters not named with one of :attr:`decayed_suffixes` get 0."""
        _check_multipliers("set_wd_mult", args_wd_mult)
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not name.endswith(self.decayed_suffixes):
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
        """Count one more update of parameter ``index`` (and of the optimizer: ``num_update``)."""
        if isinstance(index, (list, tuple)):  # every update() counts first: the one place to refuse lists
            raise LazyNDError(
                f"{type(self).__name__}.update: updates one parameter (an index), got a list of {len(index)}; "
                "call update once per parameter, or update_multi(indices, weights, grads, states) "
                "(MXNet 1.9.1 takes lists in SGD's update only)"
            )
        self._update_counts((index,))

    def _update_counts(self, indices: Sequence[Any]) -> None:
        """:meth:`_update_count` of each of ``indices`` (one call for a multi-parameter update)."""
        counts, begin, latest = self._index_update_count, self.begin_num_update, self.num_update
        try:
            for index in indices:
                count = counts[index] = counts.get(index, begin) + 1
                latest = max(latest, count)
        except TypeError:  # an unhashable index: a dict, an array
            raise LazyNDError(
                f"{type(self).__name__}.update: a parameter's index must be an int or a name, got {index!r}"
            ) from None
        self.num_update = latest

    def _multiplier(self, table: dict, index: Any) -> float:
        if index in table:
            return table[index]
        name = self.idx2name.get(index)
        return table.get(name, 1.0) if name is not None else 1.0

    def _get_lr(self, index: Any) -> float:
        return self.learning_rate * self._multiplier(self.lr_mult, index)

    def _get_wd(self, index: Any) -> float:
        return self.wd * self._multiplier(self.wd_mult, index)

    def _get_lrs(self, indices: list) -> tuple[float, ...]:
        """The learning rate of each of ``indices``: the rate (its scheduler asked once) times each multiplier."""
        lr, table = self.learning_rate, self.lr_mult
        return tuple(lr * self._multiplier(table, index) for index in indices)

    def _get_wds(self, indices: list) -> tuple[float, ...]:
        """The weight decay of each of ``indices``."""
        wd, table = self.wd, self.wd_mult
        return tuple(wd * self._multiplier(table, index) for index in indices)

    def _fused_clip_gradient(self) -> float:
        """``clip_gradient`` as the fused update operators take it: -1 (no clipping) for ``None`` or 0.

        MXNet's optimizers that call a fused operator pass ``clip_gradient`` only when it is truthy,
        so ``clip_gradient=0`` leaves their gradients unclipped (the operators themselves would clip
        to 0, a step of nothing but weight decay); the optimizers written with NDArray operators
        (AdaGrad, AdaDelta, Adamax, Nadam, SGLD, DCASGD) clip to [0, 0] in MXNet and here.
        """
        return float(self.clip_gradient) if self.clip_gradient else -1.0

    def _fused_args(self, index: Any) -> dict[str, float]:
        return {
            "lr": self._get_lr(index),
            "wd": self._get_wd(index),
            "rescale_grad": self.rescale_grad,
            "clip_gradient": self._fused_clip_gradient(),
        }

    def _check_dividing_lr(self, index: Any, lr: float) -> None:
        """Refuse, naming the parameter, a learning rate of 0 for an update that divides by it (FTRL's and
        FTML's): an ``lr_mult`` of 0 or a schedule that reaches 0 (MXNet 1.9.1 turns the weight to NaN)."""
        if lr <= 0:
            name = self.idx2name.get(index, index)
            raise LazyNDError(
                f"{type(self).__name__}: the learning rate of parameter {name!r} is {lr} (an lr_mult of 0, or a "
                f"schedule that reaches 0), and {type(self).__name__} divides by it; leave the parameter out of "
                "the update instead (Module's fixed_param_names)"
            )

    def _prepared_grad(self, weight: NDArray, grad: NDArray, clip_gradient: float | None = None) -> NDArray:
        """A new array ``clip(rescale_grad * grad)`` for the optimizers written with NDArray operators,
        once :func:`check_step_arrays` has found ``grad`` fit to step ``weight``.

        ``clip_gradient`` defaults to the optimizer's; a negative bound means no clipping.
        """
        check_step_arrays(type(self).__name__, weight, grad)
        bound = self.clip_gradient if clip_gradient is None else clip_gradient
        g = grad * self.rescale_grad
        if bound is not None and bound >= 0:
            g = nd._minimum_scalar(nd._maximum_scalar(g, scalar=-bound), scalar=bound)
        return g


def check_step_arrays(owner: str, weight: NDArray, grad: NDArray) -> None:
    """Refuse, naming ``owner``, a gradient whose shape is not ``weight``'s or a weight of no float dtype.

    The optimizers written with NDArray operators would broadcast a ``(3,)`` gradient over a
    ``(2, 3)`` weight (every row stepped by one row's gradient) and leave an integer weight as it
    is (each step truncated to 0); the fused update operators refuse both.
    """
    if grad.shape != weight.shape:
        raise ShapeError(f"{owner}: gradient of shape {tuple(grad.shape)} for a weight of shape {tuple(weight.shape)}")
    if np.dtype(weight.dtype).kind != "f":
        raise OperatorError(f"{owner}: the weight has dtype {np.dtype(weight.dtype)}; optimizers update float weights")


def _is_count(value: object) -> bool:
    """Whether ``value`` is an int >= 0 (Python's or NumPy's, not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 0


def _check_multipliers(method: str, multipliers: Any) -> None:
    if not isinstance(multipliers, dict):
        raise LazyNDError(f"{method}: expected a dict of parameter name or index -> multiplier, got {multipliers!r}")
    check_numbers(method, **{f"[{key!r}]": value for key, value in multipliers.items()})


register = Optimizer.register
create = Optimizer.create_optimizer
