"""nd.zeros, nd.ones and nd.full write into ``out=`` as MXNet's creation operators do."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


@pytest.mark.parametrize(("create", "value"), [(mx.nd.zeros, 0.0), (mx.nd.ones, 1.0)])
def test_zeros_and_ones_fill_out_and_return_it(ctx: mx.Context, create, value: float) -> None:
    out = mx.nd.full((2, 3), 7.0, ctx=ctx)
    result = create((2, 3), out=out)
    assert result is out
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), value, dtype=np.float32))


def test_zeros_into_out_keeps_the_dtype_of_out(ctx: mx.Context) -> None:
    out = mx.nd.ones((4,), ctx=ctx, dtype="int32")
    mx.nd.zeros(4, out=out)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), np.zeros(4, dtype=np.int32))


@pytest.mark.parametrize("create", [mx.nd.zeros, mx.nd.ones, lambda shape, out: mx.nd.full(shape, 2, out=out)])
def test_a_shape_other_than_the_shape_of_out_is_refused(create) -> None:
    out = mx.nd.zeros((2, 2))
    with pytest.raises(mx.ShapeError, match=r"shape=\(3,\) does not match the shape of out, \(2, 2\)"):
        create((3,), out=out)


def test_an_unknown_keyword_is_refused_by_name() -> None:
    with pytest.raises(mx.OperatorError, match="nd.ones: unknown argument.*'outt'"):
        mx.nd.ones((2,), outt=mx.nd.zeros((2,)))


def test_the_name_keyword_is_accepted_as_in_mxnet() -> None:
    assert mx.nd.zeros((2,), name="z").shape == (2,)
