"""The updater: apply an optimizer to indexed parameters, keeping (and saving) their states.

An :class:`Updater` creates each parameter's state on first use, hands lists
of parameters to ``Optimizer.update_multi`` in one call (unless a subclass
overrides ``update`` or ``update_multi_precision`` below the class that gives
``update_multi``: then its ``update_multi_precision`` is called once per
parameter), and saves and restores the states as pickled bytes (NDArrays
stored as NumPy arrays).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from operator import is_
from typing import Any

import numpy as np

from .. import ndarray as _ndarray
from ..errors import LazyNDError, OperatorError, ShapeError
from ..ndarray import NDArray
from .base import Optimizer
from .states_pickle import dumps_states, loads_states

# operator functions are generated at import time, so type checkers cannot see them
nd: Any = _ndarray

__all__ = ["Updater", "get_updater"]


class Updater:
    """Apply ``optimizer`` to indexed parameters, creating each state on first use."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}
        self._loaded: set[Any] = set()  # indices whose state set_states gave and no update has checked yet
        # the indices, gradients and weights of the last list update, checked then and given their
        # states, and whether a float16 weight takes the master-copy path: a training loop updates
        # the same arrays at every batch
        self._checked: tuple[tuple, list, list, bool] | None = None

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update one parameter, or several at once when given lists (as MXNet 1.x's updater)."""
        if isinstance(index, (list, tuple)):
            self._update_lists(_as_list(index), _as_list(grad), _as_list(weight))
            return
        _check_arrays(index, grad, weight, self.optimizer.multi_precision)
        if index not in self.states:
            self.states[index] = self.optimizer.create_state_multi_precision(index, weight)
        elif index in self._loaded:
            self._check_loaded(index, weight)
        self.optimizer.update_multi_precision(index, weight, grad, self.states[index])

    def _update_lists(self, indices: list, grads: list, weights: list) -> None:
        """Update several parameters in one optimizer call.  Each array is checked, and given its
        state, at its first update; the arrays of the last call, given again, are not checked again."""
        states = self.states
        checked = self._checked
        param_states = None
        if (
            checked is not None
            and not self._loaded
            and len(grads) == len(checked[1])
            and len(weights) == len(checked[2])
            and all(map(is_, grads, checked[1]))
            and all(map(is_, weights, checked[2]))
            and tuple(indices) == checked[0]
        ):
            try:
                param_states = [states[i] for i in indices]
            except KeyError:  # a state the caller took out of ``states``: made again below
                pass
        if checked is None or param_states is None:
            checked = self._check_lists(indices, grads, weights)
            param_states = [states[i] for i in indices]
        optimizer = self.optimizer
        if checked[3] or not _update_multi_follows_update(type(optimizer)):
            for i, w, g, state in zip(indices, weights, grads, param_states, strict=True):
                optimizer.update_multi_precision(i, w, g, state)
        else:
            optimizer.update_multi(indices, weights, grads, param_states)

    def _check_lists(self, indices: list, grads: list, weights: list) -> tuple[tuple, list, list, bool]:
        """Check each parameter of a list update and give it its state (see :meth:`_update_lists`)."""
        states, optimizer = self.states, self.optimizer
        if not len(indices) == len(grads) == len(weights):
            raise LazyNDError(
                f"Updater: {len(indices)} indices, {len(grads)} gradients and {len(weights)} weights; "
                "expected one gradient and one weight per index"
            )
        for i, w, g in zip(indices, weights, grads, strict=True):
            _check_arrays(i, g, w, optimizer.multi_precision)
            if i not in states:
                states[i] = optimizer.create_state_multi_precision(i, w)
            elif i in self._loaded:
                self._check_loaded(i, w)
        float16 = optimizer.multi_precision and any(np.dtype(w.dtype) == np.float16 for w in weights)
        checked = self._checked = (tuple(indices), list(grads), list(weights), float16)
        return checked

    def _check_loaded(self, index: Any, weight: Any) -> None:
        """Refuse, naming it, a state :meth:`set_states` gave that is not what this optimizer keeps for
        ``weight`` (saved by another optimizer, or for a parameter of another shape): it would fail
        inside the update, or update with the wrong numbers.  A state that fits moves to ``weight``'s
        device (states load onto the CPU; a store or a Module may keep the weight elsewhere)."""
        self._loaded.discard(index)
        expected = _layout(self.optimizer.create_state_multi_precision(index, weight))
        given = _layout(self.states[index])
        if given != expected:
            raise LazyNDError(
                f"Updater: the loaded state of parameter {index!r} is {given}, but {type(self.optimizer).__name__} "
                f"keeps {expected} for a weight of shape {tuple(weight.shape)}; were the states saved by another "
                "optimizer or for another model?"
            )
        self.states[index] = _on_context(self.states[index], weight.context)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states as pickled bytes, in the layout MXNet 1.x's ``get_states`` writes (each array
        an ``mxnet.ndarray.ndarray.NDArray`` record), so MXNet's ``set_states`` reads them; states
        that are not arrays are pickled as they are (NumPy arrays), which only lazynd reads.

        With ``dump_optimizer`` the optimizer is pickled with them (as MXNet's
        ``(states, optimizer)`` pair), so that its settings and update counts
        come back too; its ``param_dict`` is left out.
        """
        states = {k: _to_numpy(v) for k, v in self.states.items()}
        if not dump_optimizer:
            readable_by_mxnet = dumps_states(states)
            if readable_by_mxnet is not None:
                return readable_by_mxnet
        return pickle.dumps((states, self.optimizer) if dump_optimizer else states)

    def set_states(self, states: bytes) -> None:
        """Restore states saved by :meth:`get_states` (onto the CPU), or by MXNet's ``get_states``.

        MXNet pickles its NDArrays as records of its NDArray file format; they are read as
        such.  An MXNet optimizer pickled with the states (``dump_optimizer=True``) is refused
        by name.  ``states`` is unpickled, and unpickling runs whatever code the bytes name:
        give it only bytes from a trusted source.
        """
        try:
            loaded = loads_states(states)
        except LazyNDError:
            raise
        except Exception as err:
            raise LazyNDError(f"Updater.set_states: could not unpickle the states: {err}") from err
        optimizer = None
        if isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[1], Optimizer):
            loaded, optimizer = loaded
        if not isinstance(loaded, dict):
            raise LazyNDError(f"Updater.set_states: expected a pickled dict of states, got {type(loaded).__name__}")
        # MXNet's Module pushes parameters to its KVStore by name, so the store's states are keyed by
        # name; lazynd's Module numbers them (``optimizer.idx2name``): each index of a name gets its own copy
        indices_of: dict[str, list[Any]] = {}
        for index, name in self.optimizer.idx2name.items():
            indices_of.setdefault(name, []).append(index)
        restored = {}
        for key, state in loaded.items():
            for index in indices_of.get(key, [key]) if isinstance(key, str) else [key]:
                restored[index] = _from_numpy(state)
        self.restore_states(restored)
        if optimizer is not None:
            self.optimizer = optimizer

    def restore_states(self, states: dict[Any, Any]) -> None:
        """Take ``states`` (index -> state, as :attr:`states` holds them) in place of the current ones.

        Each restored state is checked at its parameter's next update against what the
        optimizer keeps for that weight, so that states saved by another optimizer or for
        another model are refused by parameter rather than failing inside the update.
        """
        self.states = states
        self._loaded = set(states)


def _on_context(state: Any, ctx: Any) -> Any:
    """``state`` (None, an NDArray, or a tuple or list of them) with its arrays on ``ctx``."""
    if isinstance(state, NDArray):
        return state if state.context == ctx else state.as_in_context(ctx)
    if isinstance(state, (tuple, list)):
        return type(state)(_on_context(part, ctx) for part in state)
    return state


def _layout(state: Any) -> Any:
    """What a state holds, for comparing two: None, ``array(shape)``, or a tuple of layouts."""
    if state is None:
        return None
    if isinstance(state, NDArray):
        return f"array{tuple(state.shape)}"
    if isinstance(state, (list, tuple)):
        return tuple(_layout(s) for s in state)
    return type(state).__name__


def _check_arrays(index: Any, grad: Any, weight: Any, multi_precision: bool) -> None:
    """Refuse, by parameter, a gradient or weight that is not an NDArray, a weight that is not of a
    float dtype, a gradient whose shape or dtype is not its weight's (or an index that is no key).

    The optimizers written with NDArray operators (AdaGrad, AdaDelta, Adamax, Nadam, SGLD, DCASGD)
    would broadcast a gradient of shape ``(3,)`` over a ``(2, 3)`` weight -- every row stepped by
    one row's gradient -- as MXNet 1.9.1's do, and leave an integer weight as it is (each step
    truncated to 0); the fused operators refuse both, so all refuse them here.  A float32 gradient
    of a float16 weight is taken under ``multi_precision`` (it updates the float32 master copy).
    """
    if grad.__class__ is NDArray and weight.__class__ is NDArray:
        sig = weight.signature  # interned (shape, dtype, device): one identity test for the common case
        if grad.signature is sig and sig.dtype.kind == "f" and index.__class__ in (int, str):
            return
    else:
        for what, value in (("gradient", grad), ("weight", weight)):
            if not isinstance(value, NDArray):
                raise LazyNDError(
                    f"Updater: the {what} of parameter {index!r} must be an NDArray, got {type(value).__name__}"
                )
    if grad.shape != weight.shape:
        raise ShapeError(
            f"Updater: the gradient of parameter {index!r} has shape {tuple(grad.shape)}, "
            f"expected its weight's shape {tuple(weight.shape)}"
        )
    weight_dtype, grad_dtype = np.dtype(weight.dtype), np.dtype(grad.dtype)
    if weight_dtype.kind != "f":
        raise OperatorError(
            f"Updater: the weight of parameter {index!r} has dtype {weight_dtype}; optimizers update "
            "float16, float32 or float64 weights"
        )
    if grad_dtype != weight_dtype and not (multi_precision and weight_dtype == np.float16 and grad_dtype == np.float32):
        raise OperatorError(
            f"Updater: the gradient of parameter {index!r} has dtype {grad_dtype}, expected its weight's "
            f"dtype {weight_dtype}"
        )
    try:
        hash(index)
    except TypeError:
        raise LazyNDError(f"Updater: parameter index {index!r} must be an int or a name") from None


_FOLLOWS_UPDATE: dict[type, bool] = {}  # per optimizer class: asked at every list update


def _update_multi_follows_update(klass: type) -> bool:
    """Whether ``klass.update_multi`` comes from the class that gives ``klass.update`` and
    ``klass.update_multi_precision``, or a subclass of both.  A subclass of SGD that overrides
    ``update`` only (MXNet's DSD example prunes weights and gradients there), or
    ``update_multi_precision`` only (what MXNet 1.9.1's updater calls), must have it called, not
    SGD's fused list update."""
    follows = _FOLLOWS_UPDATE.get(klass)
    if follows is None:
        multi_owner = _owner(klass, "update_multi")
        follows = issubclass(multi_owner, _owner(klass, "update")) and issubclass(
            multi_owner, _owner(klass, "update_multi_precision")
        )
        _FOLLOWS_UPDATE[klass] = follows
    return follows


def _owner(klass: type, name: str) -> type:
    """The class in ``klass``'s method resolution order that defines ``name``."""
    return next(k for k in klass.__mro__ if name in k.__dict__)


def _as_list(values: Any) -> list:
    """``values`` as a list: a list as it is (the update only reads it), anything else copied into one."""
    return values if values.__class__ is list else list(values)


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
