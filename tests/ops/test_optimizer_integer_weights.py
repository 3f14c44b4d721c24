"""Every optimizer update refuses integer and bool weights at the call, naming the operator, as
MXNet 1.9.1's do ("only support floating point types"), instead of failing at the wait with
NumPy's casting error."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from sweep_cases import CASES

import lazynd as mx
from lazynd.ops import registry

UPDATES = [
    name
    for name in registry.list_ops()
    if name in CASES and (name.endswith("_update") or "lamb_update" in name) and not name.startswith("_backward")
]


def test_the_updates_are_found():
    assert {"sgd_update", "adam_update", "multi_sgd_update", "_adamw_update", "lamb_update_phase1"} <= set(UPDATES)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
@pytest.mark.parametrize("name", UPDATES)
def test_an_update_of_integer_weights_is_refused_at_the_call(name, dtype):
    case = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    values = [spec.make(rng) for spec in case.inputs]
    values = [v.astype(dtype) if v.dtype.kind == "f" else v for v in values]  # every float input
    arrays = [mx.nd.array(v, dtype=v.dtype) for v in values]
    with pytest.raises(mx.LazyNDError, match=rf"{name}: input '\w+' has dtype {dtype}, expected"):
        getattr(mx.nd, name)(*arrays, **case.params)
