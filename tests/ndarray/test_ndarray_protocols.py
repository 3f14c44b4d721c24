"""NDArray's Python protocols (text, truth value, conversions) as MXNet 1.9.1 answers them."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError


def test_repr_and_str_print_mxnets_text_byte_for_byte() -> None:
    # MXNet 1.9.1's text: the values, then ``<NDArray shape @ctx>`` with no dtype
    assert str(mx.nd.array([7], dtype="int32")) == "\n[7]\n<NDArray 1 @cpu(0)>"
    assert repr(mx.nd.array(5)) == "\n5.0\n<NDArray  @cpu(0)>"
    assert repr(mx.nd.zeros((0,))) == "\n[]\n<NDArray 0 @cpu(0)>"
    assert f"{mx.nd.ones((1, 2))}" == "\n[[1. 1.]]\n<NDArray 1x2 @cpu(0)>"


def test_truth_value_of_empty_one_and_many_elements() -> None:
    assert bool(mx.nd.zeros((0,))) is False and bool(mx.nd.zeros((2, 0))) is False  # as MXNet
    assert bool(mx.nd.array([3])) is True and bool(mx.nd.array(0)) is False
    with pytest.raises(ValueError, match="2 elements is ambiguous"):  # MXNet raises ValueError too
        bool(mx.nd.ones((2,)))


def test_in_place_scalar_operation_on_a_bool_array_is_refused_by_name() -> None:
    # the result is int64 (as in MXNet), which the bool array cannot hold; MXNet refuses it too
    mask = mx.nd.array([True, False], dtype="bool")
    with pytest.raises(mx.OperatorError, match=r"__isub__: .* write x = x - scalar"):
        mask -= 1
    assert mask.asnumpy().tolist() == [True, False]


def test_arange_takes_mxnets_deprecated_infer_range_in_its_place() -> None:
    # MXNet 1.9.1: arange(start, stop, step, repeat, infer_range, ctx, dtype), infer_range ignored with a warning
    with pytest.warns(DeprecationWarning, match="infer_range"):
        a = mx.nd.arange(0, 3, infer_range=True)
    assert a.asnumpy().tolist() == [0, 1, 2]
    b = mx.nd.arange(0, 2, 1, 1, None, mx.cpu(0), "int32")
    assert b.dtype == np.int32 and b.context == mx.cpu(0)


def test_one_element_arrays_convert_to_python_numbers_and_integer_ones_index() -> None:
    assert float(mx.nd.array([2.5])) == 2.5 and int(mx.nd.array([-2.7])) == -2
    two = mx.nd.array([2], dtype="int32")
    assert [10, 20, 30][two] == 30 and list(range(two)) == [0, 1] and operator.index(two) == 2


def test_a_float_or_bool_array_as_an_index_is_refused_naming_its_dtype() -> None:
    # a TypeError as NumPy's (MXNet 1.9.1 has no __index__), and a LazyNDError as every error of ours
    with pytest.raises(ArgumentTypeError, match=r"operator.index\(\) of an NDArray of dtype float32"):
        [10, 20, 30][mx.nd.array([1.0])]
    with pytest.raises(ArgumentTypeError, match="dtype bool: only an integer array is an index"):
        range(mx.nd.array([1], dtype="bool"))


@pytest.mark.parametrize(("convert", "name"), [(float, "float"), (int, "int"), (operator.index, "operator.index")])
def test_number_conversion_of_another_size_is_a_type_error_naming_the_conversion(convert, name) -> None:
    for shape in ((2,), (0,)):
        with pytest.raises(ArgumentTypeError, match=rf"{name}\(\) of an NDArray of shape \({shape[0]},\)"):
            convert(mx.nd.zeros(shape, dtype="int32"))
