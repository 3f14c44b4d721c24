"""How NDArrays carry an operator's error: printing raises it, a full overwrite clears it."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import get_engine


def _explode() -> None:
    raise ValueError("boom")


def _failed_array(shape: tuple[int, ...] = (2, 3)) -> mx.nd.NDArray:
    x = mx.nd.zeros(shape)
    get_engine().push(_explode, (), [], [x.handle], "exploding_op")
    return x


@pytest.mark.parametrize("show", [repr, str, print])
def test_printing_a_failed_array_raises_its_error(engine_name: str, show) -> None:
    x = _failed_array()
    with pytest.raises(mx.EngineError, match="exploding_op"):
        show(x)


def test_printing_an_array_that_inherited_an_error_raises_it_too(engine_name: str) -> None:
    y = _failed_array() + 1
    with pytest.raises(mx.EngineError, match="exploding_op"):
        repr(y)


@pytest.mark.parametrize(
    "overwrite",
    [
        lambda x: x.__setitem__(slice(None), 1),
        lambda x: x.__setitem__(Ellipsis, 1.0),
        lambda x: x.__setitem__((slice(None), slice(None)), np.float32(1)),
        lambda x: x.__setitem__(slice(None), np.ones(3)),  # broadcast from the host
        lambda x: x.__setitem__(slice(None), mx.nd.ones((3,))),  # broadcast from an NDArray
        lambda x: x.__setitem__(slice(None), mx.nd.ones((2, 3))),
        lambda x: x.__setitem__(slice(0, 2), [[1, 1, 1], [1, 1, 1]]),
    ],
    ids=["slice-int", "ellipsis-float", "tuple-npscalar", "host-broadcast", "nd-broadcast", "nd-same", "list"],
)
def test_a_write_of_every_element_clears_an_inherited_error(engine_name: str, overwrite) -> None:
    y = _failed_array() * 2
    with pytest.raises(mx.EngineError):
        y.wait_to_read()
    overwrite(y)
    np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 3)))
    mx.nd.waitall()


def test_a_partial_write_keeps_the_error(engine_name: str) -> None:
    y = _failed_array() * 2
    y[0] = 1
    with pytest.raises(mx.EngineError, match="exploding_op"):
        y.asnumpy()


@pytest.mark.parametrize(
    "write_part",
    [
        lambda y: y[0].__setitem__(slice(None), 1),
        lambda y: y[0].__setitem__(slice(None), np.ones(3)),
        lambda y: y[0:1].__setitem__(slice(None), mx.nd.ones((1, 3))),
        lambda y: y.reshape((6,))[0:3].__setitem__(slice(None), 1),
        lambda y: mx.nd.ones((3,)).copyto(y[0]),
        lambda y: mx.nd.elemwise_add(mx.nd.ones((3,)), mx.nd.ones((3,)), out=y[0]),
        lambda y: mx.nd.full((3,), 1, out=y[1]),
        lambda y: y[0].detach().__setitem__(slice(None), 1),
    ],
    ids=["row-fill", "row-host", "slice-nd", "reshaped-part", "copyto-row", "out-row", "full-out-row", "detached-row"],
)
def test_a_write_of_every_element_of_a_view_of_part_keeps_the_error(engine_name: str, write_part) -> None:
    # the view's var is the whole storage's: clearing its error would hand out the rest as valid values
    y = _failed_array() * 2
    with pytest.raises(mx.EngineError):
        y.wait_to_read()
    write_part(y)
    with pytest.raises(mx.EngineError, match="exploding_op"):
        y.asnumpy()


@pytest.mark.parametrize(
    "write_all",
    [
        lambda y: y[:].__setitem__(slice(None), 1),
        lambda y: y[::-1].__setitem__(slice(None), 1),
        lambda y: y.reshape((6,)).__setitem__(slice(None), 1),
        lambda y: mx.nd.ones((2, 3)).copyto(y[0:2]),
        lambda y: mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.zeros((2, 3)), out=y),
    ],
    ids=["whole-slice", "reversed", "reshaped", "copyto-whole-slice", "out-whole"],
)
def test_a_write_of_every_element_through_a_view_of_all_of_it_clears_the_error(engine_name: str, write_all) -> None:
    y = _failed_array() * 2
    with pytest.raises(mx.EngineError):
        y.wait_to_read()
    write_all(y)
    np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 3)))
