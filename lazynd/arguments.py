"""Reading the flags and named choices of the public API without NumPy's elementwise answers.

MXNet reads a flag (``shuffle``, ``allow_missing``, ``is_recording``) by its truth and a choice
(``last_batch_handle='pad'``, ``factor_type='avg'``) by ``value in choices``.  Both work for
any scalar, but not for an array of several elements: its truth is undefined and ``==``
compares it elementwise, so NumPy raises "the truth value of an array ... is ambiguous" from
inside whichever function asked.  These two readers give the answer MXNet gives for every
value that has one and, for an array, an answer that lets the caller name its argument:

- :func:`flag` returns the truth of a flag and refuses an array by name;
- :func:`is_choice` says whether a value is one of the choices, an array being none of them,
  so the caller's own "must be one of ..." message names it;
- :func:`given` says whether an optional argument (a path, a list) was given, an array being
  given, so the function that reads it refuses it by name.

Examples
--------
>>> flag("NDArrayIter", "shuffle", 1)
True
>>> is_choice("pad", ("pad", "discard"))
True
>>> import numpy as np
>>> is_choice(np.ones(2), ("pad", "discard"))
False
>>> flag("NDArrayIter", "shuffle", np.ones(2))
Traceback (most recent call last):
...
lazynd.errors.ArgumentTypeError: NDArrayIter: shuffle must be a bool, got numpy.ndarray of 2 elements
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeGuard, TypeVar

from .errors import ArgumentTypeError, LazyNDError

_Given = TypeVar("_Given")


def _described(value: Any) -> str:
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins" else kind.__qualname__
    size = getattr(value, "size", None)
    return f"{name} of {size} elements" if isinstance(size, int) else name


def flag(owner: str, name: str, value: Any) -> bool:
    """The truth of ``value`` as MXNet reads a flag (``1``, ``'yes'`` and ``[0]`` are true, as there).

    A value without one (an array of several elements, NumPy's or an NDArray) is refused with an
    :class:`~lazynd.errors.ArgumentTypeError` naming ``owner`` and ``name``.
    """
    try:
        return bool(value)
    except (ValueError, TypeError, LazyNDError) as error:  # NumPy: ambiguous; an NDArray: not one element
        raise ArgumentTypeError(f"{owner}: {name} must be a bool, got {_described(value)}") from error


def is_choice(value: Any, choices: Collection[Any]) -> bool:
    """Whether ``value`` is one of ``choices`` (``value in choices`` for a scalar).

    An array (whose ``==`` answers elementwise) or an unhashable value asked of a set is none of
    them: the caller refuses it with its own message, naming the argument and the choices.
    """
    try:
        return bool(value in choices)
    except (ValueError, TypeError, LazyNDError):
        return False


def given(value: _Given | None) -> TypeGuard[_Given]:
    """Whether an optional argument was given, as MXNet asks (``if path_imgrec:``: None, ``''`` and
    ``[]`` are not); a value without a truth (an array of several elements) counts as given, so
    that the reader of the argument refuses it with its own message.
    """
    try:
        return bool(value)
    except (ValueError, TypeError, LazyNDError):
        return True
