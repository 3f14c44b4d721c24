"""``FeedForward``'s flexible arguments in the one form it works with.

A context or a list of them becomes a list; the data — an iterator, or NumPy
arrays and NDArrays (with labels, or zeros for prediction) — becomes an
iterator: an ``NDArrayIter``, shuffled and rolled over for training, padded
for inference; ``num_batches`` tells the progress bar how many batches an
epoch holds when the iterator can tell; a callback or a list of them is called
as one; ``with_last`` tells a loop which batch ends the epoch; ``array_batch`` makes
one array a batch.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

import lazynd as mx
from lazynd import io as mx_io
from lazynd.context import Context
from lazynd.errors import ArgumentTypeError, ContextError, DataError

__all__ = [
    "array_batch",
    "call_all",
    "callback_list",
    "check_iter",
    "context_list",
    "init_eval_iter",
    "init_iter",
    "num_batches",
    "with_last",
]


def context_list(ctx: Any) -> list[Context]:
    """``ctx`` (None for the current context, one context or a list) as a non-empty list."""
    if ctx is None:
        return [mx.current_context()]
    contexts = list(ctx) if isinstance(ctx, (list, tuple)) else [ctx]
    if not contexts or not all(isinstance(c, Context) for c in contexts):
        raise ContextError(f"FeedForward: ctx must be a Context or a non-empty list of them, got {ctx!r}")
    return contexts


class _CallArraysIter(mx_io.NDArrayIter):
    """The iterator over the arrays one ``fit``/``predict``/``score`` call was given: read only while
    that call runs, so not copied first (an ``NDArrayIter`` a user makes copies its NumPy inputs, as
    MXNet's does; here that would copy the whole dataset at every call)."""

    _COPIES_INPUTS = False


def init_iter(X: Any, y: Any, numpy_batch_size: int, is_train: bool) -> mx_io.DataIter:
    """``X`` (and labels ``y``) as an iterator: arrays become an ``NDArrayIter`` of ``numpy_batch_size``."""
    if isinstance(X, mx_io.DataIter):
        return X
    if X is None:
        raise DataError("FeedForward: X (the data) is None")
    if hasattr(X, "asnumpy") or isinstance(X, np.ndarray):
        if isinstance(numpy_batch_size, bool) or not isinstance(numpy_batch_size, numbers.Integral):
            raise DataError(f"FeedForward: numpy_batch_size must be an int, got {numpy_batch_size!r}")
        count = int(X.shape[0])
        if y is None:
            if is_train:
                raise DataError("FeedForward.fit: y is needed when X is an array")
            y = np.zeros(count, dtype=np.float32)
        label = y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y)
        if label.ndim == 0 or label.dtype.kind not in "biuf":  # a number, a string, a dict
            raise DataError(f"FeedForward: y must be an array of labels, one per example, got {y!r:.60}")
        if label.ndim > 1 and label.shape[1] == 1:
            label = label.reshape(-1)
        if len(label) != count:
            raise DataError(f"FeedForward: X has {count} examples but y has {len(label)}")
        batch_size = min(count, numpy_batch_size)
        return _CallArraysIter(
            X, label, batch_size, shuffle=is_train, last_batch_handle="roll_over" if is_train else "pad"
        )
    raise DataError(f"FeedForward: X must be a DataIter, NumPy array or NDArray, got {type(X).__name__}")


def check_iter(data: Any, caller: str, needs: tuple[str, ...] = ("reset",)) -> None:
    """Refuse ``data`` unless it is a DataIter or, as MXNet's loops duck-type it, an iterable with ``needs``.

    Tutorials feed ``fit`` a plain class with ``provide_data``, ``provide_label``, ``reset`` and
    ``next`` whose batches carry only ``data``, ``label`` and ``pad``.
    """
    missing = [name for name in ("__iter__", *needs) if not hasattr(data, name)]
    if missing and not isinstance(data, mx_io.DataIter):
        raise DataError(
            f"{caller}: expected a DataIter (e.g. mx.io.NDArrayIter) or an iterator of batches with "
            f"{', '.join(('__iter__', *needs))}; got {type(data).__name__}, which lacks {', '.join(missing)}"
        )


def init_eval_iter(eval_data: Any, numpy_batch_size: int) -> mx_io.DataIter | None:
    """The validation data (an iterator or an ``(X, y)`` pair) as an iterator, or None.

    A pair becomes the iterator the training arrays become, shuffled and rolled over, as MXNet's
    FeedForward makes it: its shuffles draw from ``np.random`` between the training data's, so
    after ``np.random.seed`` the training batches come in MXNet's order.
    """
    if eval_data is None or isinstance(eval_data, mx_io.DataIter):
        return eval_data
    if isinstance(eval_data, (list, tuple)) and len(eval_data) == 2:
        return init_iter(eval_data[0], eval_data[1], numpy_batch_size, is_train=True)
    raise DataError("FeedForward: eval_data must be a DataIter or an (X, y) pair")


def metric_padding(data: Any, batch: Any) -> int:
    """The examples at the end of ``batch`` that its metric leaves out: its ``pad``, but 0 from a
    roll-over ``NDArrayIter``, whose ``pad`` (as MXNet's) counts the examples carried over from the
    last epoch to the front of the batch, all of them real."""
    if isinstance(data, mx_io.NDArrayIter) and data.last_batch_handle == "roll_over":
        return 0
    return getattr(batch, "pad", None) or 0


def num_batches(data: Any) -> int | None:
    """Batches per epoch when the iterator can tell (for the progress bar), else None."""
    if isinstance(data, mx_io.ResizeIter):
        return data.size
    if isinstance(data, mx_io.PrefetchingIter):
        return num_batches(data.iters[0])
    if isinstance(data, mx_io.NDArrayIter) and data.last_batch_handle == "pad":
        return -(-data.num_data // data.batch_size)
    return None


def callback_list(callbacks: Any) -> list[Any]:
    """``callbacks`` (None, one callable or a list of them) as a list."""
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def check_callbacks(caller: str, **callbacks: Any) -> None:
    """Refuse, naming it, a callback argument that is neither None, a callable nor a list of
    callables: checked when training starts, not when the first batch or epoch ends.

    Examples
    --------
    >>> check_callbacks("fit", batch_end_callback="speedometer")
    Traceback (most recent call last):
    ...
    lazynd.errors.ArgumentTypeError: fit: batch_end_callback must be a callable or a list of them, got 'speedometer'
    """
    for name, given in callbacks.items():
        if not all(callable(callback) for callback in callback_list(given)):
            raise ArgumentTypeError(f"{caller}: {name} must be a callable or a list of them, got {given!r}")


def call_all(callbacks: Any, *args: Any) -> None:
    """Call ``callbacks`` (None, one callable or a list of them) with ``args``."""
    for callback in callback_list(callbacks):
        callback(*args)


def with_last(items: Iterable[Any]) -> Iterator[tuple[Any, Callable[[], bool]]]:
    """Each item with a function that tells whether it is the last.

    The function reads the next item ahead, and only when called, so a loop can finish with an item
    (update its metric, say) before the iterator is asked for the next one, as MXNet's fit does: an
    iterator may reuse the arrays of the batch it gave.

    Examples
    --------
    >>> [(item, is_last()) for item, is_last in with_last("ab")]
    [('a', False), ('b', True)]
    """
    iterator = iter(items)
    sentinel = object()
    item = next(iterator, sentinel)
    while item is not sentinel:
        ahead: list[Any] = []

        def is_last(ahead: list[Any] = ahead) -> bool:
            if not ahead:
                ahead.append(next(iterator, sentinel))
            return ahead[0] is sentinel

        yield item, is_last
        item = ahead[0] if ahead else next(iterator, sentinel)


def array_batch(data: Any) -> mx_io.DataBatch | None:
    """An NDArray or a NumPy array as a batch of that one input (MXNet's ``Module.predict`` takes
    either in place of an iterator); None for anything else."""
    if isinstance(data, np.ndarray):
        data = mx.nd.array(data)
    return mx_io.DataBatch([data]) if isinstance(data, mx.nd.NDArray) else None
