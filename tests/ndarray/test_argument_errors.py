"""Arguments of NDArray methods and creation functions that are not what they take give a
:class:`lazynd.LazyNDError` naming the argument (never NumPy's TypeError or ValueError), and
the forms they do take still work."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError


def _x() -> mx.nd.NDArray:
    return mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.reshape((1.5,)),
        lambda x: x.reshape(("a",)),
        lambda x: x.reshape(("a",), reverse=True),
        lambda x: x.reshape(None),
        lambda x: x.reshape(shape=(None, -1)),
        lambda x: x.reshape(4.5, 6),
    ],
    ids=["float", "str", "str-reverse", "None", "None-keyword", "float-positional"],
)
def test_reshape_to_a_shape_of_non_integers_is_refused(call):
    with pytest.raises(mx.LazyNDError, match="reshape: shape must be a tuple of ints"):
        call(_x())


@pytest.mark.parametrize(
    ("shape", "expected"),
    [((4, 6), (4, 6)), ([4, -1], (4, 6)), ((np.int64(4), 6), (4, 6)), ((24.0,), (24,)), ((0, -1), (2, 12))],
)
def test_reshape_takes_ints_numpy_integers_and_whole_numbers(shape, expected):
    assert _x().reshape(shape).shape == expected


@pytest.mark.parametrize("dtype", ["abc", "complex64", "int16"])
def test_astype_to_a_dtype_lazynd_lacks_is_refused(dtype):
    with pytest.raises(mx.LazyNDError, match=f"unsupported dtype '{dtype}'"):
        _x().astype(dtype)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        ("float32", np.float32),
        (np.float16, np.float16),
        (np.dtype("int64"), np.int64),
        (float, np.float64),
        (bool, np.bool_),
        (np.dtype(">f4"), np.float32),  # byte-swapped: named by NumPy, not by lazynd's table of its dtypes
    ],
)
def test_creation_takes_a_dtype_in_any_form_numpy_names(dtype, expected):
    assert mx.nd.zeros((2,), dtype=dtype).dtype == expected
    assert mx.nd.array([1, 2], dtype=dtype).dtype == expected


@pytest.mark.parametrize("dtype", ["abc", "(1,", np.complex64, "int16"])
def test_creation_refuses_a_dtype_lazynd_lacks_by_name(dtype):
    with pytest.raises(mx.LazyNDError, match=r"unsupported dtype .*: expected (a dtype, )?one of float32, float64"):
        mx.nd.zeros((2,), dtype=dtype)
    with pytest.raises(
        mx.LazyNDError,
        match=r"Cast: invalid value .* for parameter .dtype.: expected (a dtype, )?one of float32, float64",
    ):
        mx.nd.cast(mx.nd.zeros((2,)), dtype=dtype)


def test_astype_none_is_float32_as_in_mxnet():
    assert mx.nd.ones((2,), dtype="int32").astype(None).dtype == np.float32


@pytest.mark.parametrize("shape", [(2, "a"), (2, 1.5), "a", None])
def test_creating_an_array_of_a_shape_of_non_integers_is_refused(shape):
    with pytest.raises(mx.LazyNDError, match="shape must be an int or a tuple of ints"):
        mx.nd.zeros(shape)


@pytest.mark.parametrize(
    ("shape", "expected"),
    [((2, 3), (2, 3)), ((), ()), (3, (3,)), (np.int64(3), (3,)), ([2, 3], (2, 3)), ((np.int32(2), 3), (2, 3))],
)
def test_creation_takes_a_shape_in_every_form(shape, expected):
    # a tuple of ints is answered by class checks, every other form by the parser
    for make in (mx.nd.zeros, mx.nd.ones, mx.nd.empty):
        assert make(shape).shape == expected


@pytest.mark.parametrize("shape", [(2, -1), (-3,), -2])
def test_creating_an_array_of_a_negative_dimension_is_refused(shape):
    with pytest.raises(mx.LazyNDError, match="shape must not have negative dimensions"):
        mx.nd.zeros(shape)


def test_creating_an_array_of_a_bool_dimension_is_refused():
    with pytest.raises(mx.LazyNDError, match="shape must be an int or a tuple of ints"):
        mx.nd.zeros((True, 2))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "a"}, "parameter 'start'"),
        ({"start": 0, "stop": "b"}, "parameter 'stop'"),
        ({"start": 0, "stop": 3, "step": None}, "parameter 'step'"),
        ({"start": 3, "dtype": "abc"}, "parameter 'dtype'"),
        ({"start": 3, "repeat": 1.5}, "parameter 'repeat'"),
    ],
)
def test_arange_names_the_argument_that_is_not_a_number(kwargs, message):
    with pytest.raises(mx.LazyNDError, match=message):
        mx.nd.arange(**kwargs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda F: F.arange(float("nan")), "must be finite numbers, got start=0.0, stop=nan"),
        (lambda F: F.arange(0, float("inf")), "must be finite numbers, got start=0.0, stop=inf"),
        (lambda F: F.arange(0, 5, float("nan")), "must be finite numbers, .*step=nan"),
        (lambda F: F.arange(float("-inf"), 5), "must be finite numbers, got start=-inf"),
        (  # repeat is an int: MXNet's parser refuses one past C int's range
            lambda F: F.arange(0, 5, repeat=2**63),
            r"invalid value 9223372036854775808 for parameter 'repeat'",
        ),
        (
            lambda F: F.arange(0, 1e18, repeat=2**31 - 1),
            r"elements \(repeat=2147483647\) are more than an array holds",
        ),
    ],
    ids=["nan stop", "inf stop", "nan step", "-inf start", "huge repeat", "huge count"],
)
@pytest.mark.parametrize("face", ["nd", "sym"])
def test_arange_without_a_finite_count_is_refused_by_name(call, message, face):
    # NumPy's/math's ValueError 'cannot convert float NaN to integer' or OverflowError before; MXNet
    # 1.9.1 refuses them with an MXNetError too
    F = mx.nd if face == "nd" else mx.sym
    with pytest.raises(mx.OperatorError, match=message):
        call(F).infer_shape() if face == "sym" else call(F)


def test_arange_still_takes_python_and_numpy_numbers():
    np.testing.assert_array_equal(mx.nd.arange(2, 8, 2, repeat=2).asnumpy(), [2, 2, 4, 4, 6, 6])
    np.testing.assert_array_equal(mx.nd.arange(np.int64(3), dtype="int32").asnumpy(), [0, 1, 2])


def test_len_of_a_0d_array_is_a_lazynd_error_and_a_type_error():
    # a bare TypeError before: ``except mx.MXNetError`` (MXNet 1.9.1 raises MXNetError there) missed it
    with pytest.raises(mx.LazyNDError, match=r"len\(\) of a 0-d NDArray"):
        len(mx.nd.ones(()))
    with pytest.raises(TypeError):
        len(mx.nd.ones(()))
    assert len(mx.nd.ones((3, 2))) == 3


@pytest.mark.parametrize("use", [list, lambda x: [v for v in x], lambda x: 5 in x], ids=["list", "for loop", "x in"])
def test_iterating_a_0d_array_or_testing_x_in_it_is_a_type_error(use):
    # as NumPy's; MXNet 1.9.1's list() raises IndexError, its for loop runs no step, its x in is False:
    # a loop silently skipped or a membership silently False would hide that the array has no axis
    with pytest.raises(TypeError, match=r"0-d NDArray: it has no first axis") as caught:
        use(mx.nd.array(5.0))
    assert isinstance(caught.value, mx.LazyNDError)


@pytest.mark.parametrize("shape", [None, 1.5, float("nan"), "abc", {"k": 1}], ids=repr)
def test_the_broadcast_to_method_refuses_a_shape_that_is_no_tuple_by_name(shape):
    # the method's own len(shape) raised "object of type 'NoneType' has no len()" before
    with pytest.raises(mx.OperatorError, match="broadcast_to: "):
        mx.nd.ones((2, 3)).broadcast_to(shape)


@pytest.mark.parametrize("value", [None, [1, 2], 3.0, "abc", mx.nd.ones((2,))], ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("zero_copy", [False, True])
def test_from_numpy_refuses_what_is_not_a_numpy_array_by_name(value, zero_copy):
    # AttributeError "'NoneType' object has no attribute 'dtype'" before (MXNet: no attribute 'flags')
    with pytest.raises(ArgumentTypeError, match="from_numpy: expected a NumPy array, got "):
        mx.nd.from_numpy(value, zero_copy=zero_copy)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: x.reshape((3, 2), reverse=None), r"reshape: invalid value None for 'reverse'"),
        (lambda x: x.reshape((3, 2), reverse="abc"), r"reshape: invalid value 'abc' for 'reverse'"),
        (lambda x: x.flatten(1.5), r"flatten: invalid value 1.5 for 'inplace'"),
        (lambda x: x.expand_dims(0, inplace=[1]), r"expand_dims: invalid value \[1\] for 'inplace'"),
        (lambda x: x.reshape(float("inf")), r"reshape: shape must be a tuple of ints, got \(inf,\)"),
        (lambda x: x.reshape((float("-inf"), 2)), r"reshape: shape must be a tuple of ints"),
        (lambda x: mx.nd.zeros((float("inf"), 2)), r"shape must be an int or a tuple of ints"),
        (lambda x: mx.nd.Reshape(x, shape=(float("inf"),)), r"Reshape: invalid value \(inf,\) for parameter 'shape'"),
    ],
    ids=[
        "reverse None",
        "reverse str",
        "flatten inplace float",
        "expand_dims inplace list",
        "reshape inf",
        "reshape -inf",
        "zeros inf",
        "Reshape op inf",
    ],
)
def test_a_method_flag_or_shape_of_the_wrong_kind_is_an_operator_error_naming_it(call, message):
    # the parsers' bare ValueError ('expected a boolean') or int()'s OverflowError before
    with pytest.raises(mx.OperatorError, match=message):
        call(mx.nd.ones((2, 3)))


@pytest.mark.parametrize("shape", [np.ones(2), np.array([3, 2])], ids=["floats", "ints"])
def test_reshape_to_a_numpy_array_is_refused_by_name(shape):
    # (MXNet 1.9.1 refuses both: "only integer scalar arrays can be converted to a scalar index")
    with pytest.raises(mx.LazyNDError, match="reshape: shape must be a tuple of ints"):
        _x().reshape(shape)


@pytest.mark.parametrize("dtype", ["abc", 1.5, 0, True, {"k": 1}, np.ones(2)])
def test_array_protocol_with_what_is_no_dtype_is_refused_by_name(dtype):
    with pytest.raises(ArgumentTypeError, match="NDArray.__array__: dtype must be a NumPy dtype"):
        _x().__array__(dtype)


def test_array_protocol_takes_any_numpy_dtype():
    assert _x().__array__("complex64").dtype == np.complex64
    assert np.asarray(_x(), dtype=np.int16).dtype == np.int16


@pytest.mark.parametrize("spec", [None, 0, 1.5, np.ones(2)], ids=["None", "int", "float", "array"])
def test_format_with_a_spec_that_is_no_str_is_refused_by_name(spec):
    # Python's own types refuse it too ("__format__() argument must be str"), one element or many
    for x in (_x(), mx.nd.ones(1)):
        with pytest.raises(ArgumentTypeError, match="format: spec must be a str"):
            x.__format__(spec)
    assert f"{mx.nd.ones(1):.1f}" == "1.0"
