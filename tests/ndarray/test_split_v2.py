"""``split_v2`` (``mx.nd``, NDArray method, ``mx.sym``): MXNet 1.9.1's pieces for the same calls."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def _x() -> mx.nd.NDArray:
    return mx.nd.array(np.arange(12).reshape(6, 2))


def test_split_at_indices_and_into_sections() -> None:
    assert [p.shape for p in mx.nd.split_v2(_x(), (1, 3), axis=0)] == [(1, 2), (2, 2), (3, 2)]
    assert [p.shape for p in mx.nd.split_v2(_x(), 3)] == [(2, 2), (2, 2), (2, 2)]
    assert [p.shape for p in _x().split_v2((2,), axis=-2)] == [(2, 2), (4, 2)]
    pieces = [p.asnumpy().tolist() for p in mx.nd.split_v2(_x(), (2, 4))]
    assert pieces == [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0, 9.0], [10.0, 11.0]]]


def test_one_section_is_the_array_and_squeeze_drops_the_axis() -> None:
    assert isinstance(mx.nd.split_v2(_x(), 1), mx.nd.NDArray)
    pieces = mx.nd.split_v2(_x(), 2, axis=1, squeeze_axis=True)
    assert [p.shape for p in pieces] == [(6,), (6,)]
    np.testing.assert_array_equal(pieces[1].asnumpy(), [1.0, 3.0, 5.0, 7.0, 9.0, 11.0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((4,), "does not split into 4 equal sections"),
        (((3, 1),), r"indices \(3, 1\) must rise"),
        ((2,), "squeeze_axis needs pieces of length 1"),
    ],
)
def test_bad_splits_are_refused(args: tuple, message: str) -> None:
    squeeze = message.startswith("squeeze")
    with pytest.raises(mx.ShapeError, match=message):
        mx.nd.split_v2(_x(), *args, squeeze_axis=squeeze)


def test_gradient_flows_to_each_piece() -> None:
    x = _x()
    x.attach_grad()
    with mx.autograd.record():
        first, second = x.split_v2((2,))
        y = (first * 2).sum() + (second * 3).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [2, 2, 3, 3, 3, 3])


def test_symbolic_split_v2() -> None:
    x = mx.sym.var("x")
    assert mx.sym.split_v2(x, (1, 3)).infer_shape(x=(6, 2))[1] == [(1, 2), (2, 2), (3, 2)]  # MXNet 1.9.1
    assert x.split_v2(3).infer_shape(x=(6, 2))[1] == [(2, 2), (2, 2), (2, 2)]
    assert x.split_v2(2, axis=1, squeeze_axis=True).infer_shape(x=(6, 2))[1] == [(6,), (6,)]


def test_repeated_or_zero_indices_give_empty_pieces_as_mxnet() -> None:
    # MXNet 1.9.1 (and numpy.split): an index of 0 or a repeated index gives an empty piece
    assert [p.shape for p in mx.nd.split_v2(_x(), (0, 2))] == [(0, 2), (2, 2), (4, 2)]
    pieces = mx.nd.split_v2(mx.nd.arange(6), (2, 2))
    assert [p.shape for p in pieces] == [(2,), (0,), (4,)]
    np.testing.assert_array_equal(pieces[2].asnumpy(), [2, 3, 4, 5])


def test_squeezed_pieces_of_a_1d_array_are_0d_as_mxnet() -> None:
    pieces = mx.nd.split_v2(mx.nd.arange(3), 3, squeeze_axis=True)
    assert [p.shape for p in pieces] == [(), (), ()]
    assert pieces[2].asscalar() == 2.0


def test_an_axis_out_of_range_is_refused_by_name() -> None:
    with pytest.raises(mx.ShapeError, match=r"split_v2: axis=1 is out of range for a 1-D input"):
        mx.nd.split_v2(mx.nd.arange(6), 2, axis=1)
