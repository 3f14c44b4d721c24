"""Every NDArray operator dunder takes the one route: the registry's operator, the plan cache, the push."""

from __future__ import annotations

import operator
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
from lazynd.ndarray import arithmetic
from lazynd.ops import registry

BINARY = [
    (operator.add, "_plus", "_plus_scalar"),
    (operator.sub, "_minus", "_minus_scalar"),
    (operator.mul, "_mul", "_mul_scalar"),
    (operator.truediv, "_div", "_div_scalar"),
    (operator.mod, "_mod", "_mod_scalar"),
    (operator.pow, "_power", "_power_scalar"),
    (operator.eq, "_equal", "_equal_scalar"),
    (operator.ne, "_not_equal", "_not_equal_scalar"),
    (operator.gt, "_greater", "_greater_scalar"),
    (operator.ge, "_greater_equal", "_greater_equal_scalar"),
    (operator.lt, "_lesser", "_lesser_scalar"),
    (operator.le, "_lesser_equal", "_lesser_equal_scalar"),
]


@pytest.mark.parametrize(("fn", "same", "scalar"), BINARY, ids=[b[1] for b in BINARY])
def test_small_ready_arithmetic_uses_the_registered_operator_and_its_cached_plan(fn, same: str, scalar: str) -> None:
    a = mx.nd.array(np.linspace(0.5, 2.0, 16, dtype=np.float32))
    b = mx.nd.array(np.linspace(1.0, 3.0, 16, dtype=np.float32))
    np.testing.assert_allclose(fn(a, b).asnumpy(), fn(a.asnumpy(), b.asnumpy()).astype(np.float32), rtol=1e-6)
    assert (registry.get(same), b.signature) in a.signature.plans
    np.testing.assert_allclose(fn(a, 2.0).asnumpy(), fn(a.asnumpy(), np.float32(2.0)), rtol=1e-6)


@pytest.mark.parametrize(("fn", "name"), [(operator.iadd, "_plus"), (operator.isub, "_minus"), (operator.imul, "_mul"),
                                          (operator.itruediv, "_div"), (operator.imod, "_mod")])  # fmt: skip
def test_in_place_arithmetic_writes_into_the_left_operand(fn, name: str) -> None:
    a = mx.nd.array(np.linspace(1.0, 2.0, 8, dtype=np.float32))
    b = mx.nd.array(np.full(8, 0.75, np.float32))
    expected = fn(a.asnumpy(), b.asnumpy())
    data = a._data
    result = fn(a, b)
    assert result is a and a._data is data
    np.testing.assert_allclose(a.asnumpy(), expected, rtol=1e-6)


def test_a_reflected_operator_between_two_arrays_swaps_its_operands() -> None:
    a, b = mx.nd.array([5.0, 7.0]), mx.nd.array([1.0, 2.0])
    np.testing.assert_array_equal(arithmetic.binary("sub", a, b, reflected=True).asnumpy(), [-4.0, -5.0])


def test_the_operators_module_has_no_kernel_or_engine_of_its_own() -> None:
    source = Path(arithmetic.__file__).read_text()
    for bypass in ("get_engine", "run_now", "np.add", "operator.add", ".push("):
        assert bypass not in source, bypass
