"""The in-process KVStore tests' value shape, and what a store holds for a key, pulled into a new array."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_kv

SHAPE = (4, 4)


def pulled(kv: lazynd_kv.KVStore, key, shape=SHAPE) -> np.ndarray:
    """The value ``kv`` holds for ``key`` (of ``shape``), pulled into a new array."""
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()
