"""nd.moveaxis moves one axis or several, as numpy.moveaxis and MXNet 1.x's, and refuses bad axes by name."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


@pytest.mark.parametrize(
    ("source", "destination"),
    [(0, 1), (0, -1), (2, 0), ([0, 1], [-1, -2]), ([2, 0], [0, 2]), ((1,), (0,)), ([0, 2], [1, 0])],
)
def test_moveaxis_matches_numpy(source, destination) -> None:
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    got = mx.nd.moveaxis(mx.nd.array(x), source, destination).asnumpy()
    np.testing.assert_array_equal(got, np.moveaxis(x, source, destination))


@pytest.mark.parametrize(
    ("source", "destination", "message"),
    [
        # lazynd returned the input unchanged here (3 % 3 == 0); MXNet 1.9.1 raises
        (0, 3, r"moveaxis: destination=3 is out of range for a 3-D input \(allowed -3..2\)"),
        (-4, 0, r"moveaxis: source=-4 is out of range"),
        ([0, 0], [1, 2], r"moveaxis: source=\[0, 0\] repeats an axis"),
        ([0, 1], [2], r"moveaxis: source \[0, 1\] and destination \[2\] must have as many axes"),
    ],
)
def test_moveaxis_refuses_bad_axes_by_name(source, destination, message) -> None:
    with pytest.raises(mx.ShapeError, match=message):
        mx.nd.moveaxis(mx.nd.zeros((2, 2, 3)), source, destination)


def test_moveaxis_takes_ranges_as_axis_sequences():
    x = mx.nd.zeros((1, 2, 3, 4))
    assert mx.nd.moveaxis(x, range(4), range(4)).shape == (1, 2, 3, 4)
    assert mx.nd.moveaxis(x, range(2), [3, 2]).shape == (3, 4, 2, 1)


@pytest.mark.parametrize("axis", [None, "abc", float("nan"), float("inf"), 1.5, {"k": 1}, [0, None]], ids=repr)
@pytest.mark.parametrize("which", ["source", "destination"])
def test_moveaxis_refuses_an_axis_that_is_no_int_by_name(which, axis) -> None:
    # int()'s TypeError/ValueError/OverflowError before (and 1.5 was read as 1)
    given = {"source": 0, "destination": 1, which: axis}
    with pytest.raises(mx.ShapeError, match=f"moveaxis: {which} must be an int or a sequence of ints, got "):
        mx.nd.moveaxis(mx.nd.zeros((2, 2, 3)), given["source"], given["destination"])
