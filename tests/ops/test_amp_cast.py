"""amp_cast / amp_multicast: the dtypes MXNet 1.9.1 gives (which inputs they leave alone), and
gradients that come back in each input's dtype."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError


def _ones(dtype: str) -> mx.nd.NDArray:
    return mx.nd.array([1, 2], dtype=dtype)


@pytest.mark.parametrize(
    "dtypes,cast_narrow,expected",
    [
        (("float16", "float32"), False, ("float32", "float32")),
        (("float16", "float32"), True, ("float16", "float16")),
        (("float16", "float64"), False, ("float16", "float64")),  # float64 is left alone
        (("float32", "float64"), True, ("float32", "float64")),
        (("int32", "float32"), False, ("int32", "float32")),
    ],
)
def test_amp_multicast_dtypes_are_mxnets(dtypes, cast_narrow, expected):
    outs = mx.nd.amp_multicast(*[_ones(t) for t in dtypes], num_outputs=len(dtypes), cast_narrow=cast_narrow)
    assert tuple(np.dtype(o.dtype).name for o in outs) == expected


def test_amp_cast_converts_float16_and_float32_data_only():
    assert mx.nd.amp_cast(_ones("int32"), dtype="float16").dtype == np.int32
    # float64 is left alone too, as MXNet 1.9.1's type rule leaves it (it was cast)
    assert mx.nd.amp_cast(_ones("float64"), dtype="float16").dtype == np.float64
    assert mx.sym.amp_cast(mx.sym.Variable("x"), dtype="float16").infer_type(x="float64")[1] == [np.float64]
    assert mx.nd.amp_cast(_ones("float32"), dtype="int32").dtype == np.int32
    assert mx.nd.amp_cast(_ones("float32"), dtype="float16").dtype == np.float16


def test_gradients_pass_through_in_the_input_dtype():
    x = mx.nd.array([1.5, 2.5], dtype="float32")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.amp_cast(x, dtype="float16")
    y.backward(mx.nd.array([1, 2], dtype="float16"))
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 2])
    half, single = mx.nd.array([1.5, 2.5], dtype="float16"), _ones("float32")
    half.attach_grad()
    single.attach_grad()
    with mx.autograd.record():
        p, q = mx.nd.amp_multicast(half, single, num_outputs=2)
        s = p * q
    s.backward()
    assert half.grad.dtype == np.float16
    np.testing.assert_array_equal(half.grad.asnumpy(), [1, 2])
    np.testing.assert_array_equal(single.grad.asnumpy(), [1.5, 2.5])


def test_bad_parameters_are_refused_naming_the_operator():
    with pytest.raises(OperatorError, match=r"amp_multicast: expected 3 input\(s\)"):
        mx.nd.amp_multicast(_ones("float16"), _ones("float32"), num_outputs=3)
    with pytest.raises(OperatorError, match="amp_cast: invalid value 'bool' for parameter 'dtype'"):
        mx.nd.amp_cast(_ones("float32"), dtype="bool")
