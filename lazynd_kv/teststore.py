"""MXNet 1.x's ``'teststore'``: the smallest store written in Python, shipped by MXNet with its base class.

``mx.kv.create('teststore')`` gives a :class:`TestStore`: one worker, no optimizer on the store
(``is_capable('optimizer')`` is False), ``broadcast`` copies a value into the outputs and
``pushpull`` sums a list of values (on the first value's context) into the outputs, or into the
values themselves when no ``out`` is given.  MXNet's own tests of custom stores
(``test_kvstore_custom.py``) run against it; it is also the pattern for a user's store: it is
registered the way a user registers one, with ``@KVStoreBase.register``.

Examples
--------
>>> import lazynd as mx
>>> kv = mx.kv.create('teststore')
>>> grads = [mx.nd.ones((2,), ctx=mx.cpu(i)) for i in range(3)]
>>> kv.pushpull('w', grads)
>>> grads[1].asnumpy().tolist()
[3.0, 3.0]
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import ArgumentTypeError, ParameterError
from lazynd.ndarray import NDArray

from .registry import KVStoreBase, OneWorker

__all__ = ["TestStore"]


def _outputs(out: Any, what: str) -> list[NDArray]:
    outs = out if isinstance(out, list) else [out]
    for o in outs:
        if not isinstance(o, NDArray):
            raise ArgumentTypeError(
                f"TestStore.{what}: out must be an NDArray or a list of them, got {type(o).__name__}"
            )
    return outs


@KVStoreBase.register
class TestStore(OneWorker, KVStoreBase):
    """MXNet's test store: sums on the first value's context, one worker, no optimizer on the store.

    The key is not looked at: nothing is stored between calls.
    """

    __test__ = False  # a store, not a test class for pytest to collect

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Copy ``value`` into ``out`` (an NDArray or a list of them)."""
        if not isinstance(value, NDArray):
            raise ArgumentTypeError(f"TestStore.broadcast: value must be an NDArray, got {type(value).__name__}")
        for o in _outputs(out, "broadcast"):
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum ``value`` (a list of NDArrays; one NDArray is its own sum) into ``out``, or into
        every value when ``out`` is None."""
        if isinstance(value, NDArray):
            total, values = value, [value]
        else:
            values = list(value) if isinstance(value, (list, tuple)) else []
            if not values or not all(isinstance(v, NDArray) for v in values):
                raise ArgumentTypeError(
                    f"TestStore.pushpull: value must be an NDArray or a non-empty list of them, got {value!r}"
                )
            ctx = values[0].context
            total = values[0].copyto(ctx)
            for v in values[1:]:
                total += v.as_in_context(ctx)
        if out is None:
            if len(values) > 1:  # one NDArray summed in place is already its sum
                for v in values:
                    v[:] = total
            return
        for o in _outputs(out, "pushpull"):
            o[:] = total

    @staticmethod
    def is_capable(capability: str) -> bool:  # type: ignore[override]
        """False for ``'optimizer'``: the updates run on the workers."""
        if not isinstance(capability, str) or capability.lower() != KVStoreBase.OPTIMIZER:
            raise ParameterError(f"TestStore.is_capable: unknown capability {capability!r} (known: 'optimizer')")
        return False

    @property
    def type(self) -> str:
        """``'teststore'``."""
        return "teststore"
