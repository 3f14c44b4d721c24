"""SequenceMask, SequenceLast, SequenceReverse: with and without sequence lengths, both time axes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)
DATA = np.arange(4 * 3 * 2, dtype=np.float32).reshape(4, 3, 2) + 1
LENGTHS = np.array([1, 4, 2], np.float32)


def np_mask(x, lengths, value=0.0, axis=0):
    x = np.moveaxis(x.copy(), axis, 0)
    for n, length in enumerate(lengths.astype(int)):
        x[length:, n] = value
    return np.moveaxis(x, 0, axis)


def np_last(x, lengths, axis=0):
    x = np.moveaxis(x, axis, 0)
    return np.stack([x[int(length) - 1, n] for n, length in enumerate(lengths)])


def np_reverse(x, lengths):
    out = x.copy()
    for n, length in enumerate(lengths.astype(int)):
        out[:length, n] = x[:length, n][::-1]
    return out


def test_sequence_mask_sets_steps_past_the_length_to_value(ctx):
    params = {"use_sequence_length": True, "value": -1}
    out = check_forward("SequenceMask", [DATA, LENGTHS], params, lambda x, n: np_mask(x, n, -1), ctx=ctx)[0]
    # MXNet 1.9.1 gives these for the first feature
    np.testing.assert_array_equal(out[:, :, 0], [[1, 3, 5], [-1, 9, 11], [-1, 15, -1], [-1, 21, -1]])


def test_sequence_mask_on_axis_1_and_without_lengths(ctx):
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    lengths = np.array([1, 5, 3], np.float32)
    params = {"use_sequence_length": True, "axis": 1}
    check_forward("SequenceMask", [x, lengths], params, lambda a, n: np_mask(a, n, axis=1), ctx=ctx)
    check_forward("SequenceMask", [x], {}, lambda a: a, ctx=ctx)


def test_sequence_mask_gradient(ctx):
    x = rng.standard_normal((4, 3, 2))
    grads = check_gradient("SequenceMask", [x, LENGTHS], {"use_sequence_length": True, "value": 3.0}, ctx=ctx)
    assert grads[1] is None


def test_sequence_last_takes_each_sequences_last_step(ctx):
    params = {"use_sequence_length": True}
    out = check_forward("SequenceLast", [DATA, LENGTHS], params, np_last, ctx=ctx)[0]
    np.testing.assert_array_equal(out, [[1, 2], [21, 22], [11, 12]])  # MXNet 1.9.1
    check_forward("SequenceLast", [DATA], {}, lambda x: x[-1], ctx=ctx)
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    lengths = np.array([2, 5, 1], np.float32)
    check_forward("SequenceLast", [x, lengths], {**params, "axis": 1}, lambda a, n: np_last(a, n, 1), ctx=ctx)


def test_sequence_last_gradient(ctx):
    check_gradient("SequenceLast", [rng.standard_normal((4, 3, 2)), LENGTHS], {"use_sequence_length": True}, ctx=ctx)
    check_gradient("SequenceLast", [rng.standard_normal((3, 4, 2)), LENGTHS], {"use_sequence_length": True, "axis": 1})


def test_sequence_reverse_reverses_inside_the_length_and_keeps_padding(ctx):
    params = {"use_sequence_length": True}
    out = check_forward("SequenceReverse", [DATA, LENGTHS], params, np_reverse, ctx=ctx)[0]
    np.testing.assert_array_equal(out[:, :, 0], [[1, 21, 11], [7, 15, 5], [13, 9, 17], [19, 3, 23]])  # MXNet 1.9.1
    check_forward("SequenceReverse", [DATA], {}, lambda x: x[::-1], ctx=ctx)


def test_sequence_reverse_gradient(ctx):
    check_gradient("SequenceReverse", [rng.standard_normal((4, 3, 2)), LENGTHS], {"use_sequence_length": True}, ctx=ctx)


def test_sequence_ops_list_sequence_length_only_when_used():
    data = sym.Variable("data")
    assert sym.SequenceMask(data, name="m").list_arguments() == ["data"]
    masked = sym.SequenceMask(data, use_sequence_length=True, name="m")
    assert masked.list_arguments() == ["data", "m_sequence_length"]
    args, outs, _ = sym.SequenceLast(data, use_sequence_length=True, name="s").infer_shape(data=(7, 4, 3))
    assert args == [(7, 4, 3), (4,)] and outs == [(4, 3)]


def test_sequence_ops_reject_bad_axis_and_lengths():
    with pytest.raises(OperatorError, match="SequenceReverse: axis must be one of \\(0,\\), got 1"):
        mx.nd.SequenceReverse(mx.nd.zeros((2, 3)), axis=1)
    with pytest.raises(ShapeError, match="sequence_length"):
        mx.nd.SequenceMask(mx.nd.zeros((2, 3)), mx.nd.zeros((2,)), use_sequence_length=True)


def test_sequence_mask_casts_value_to_integer_data_as_mxnet(ctx):
    # MXNet 1.9.1: static_cast<DType>(value), so -1 in uint8 data is 255 and 2.7 in int32 is 2
    data = mx.nd.array(DATA, dtype="uint8", ctx=ctx)
    lengths = mx.nd.array(LENGTHS, dtype="uint8", ctx=ctx)
    out = mx.nd.SequenceMask(data, lengths, use_sequence_length=True, value=-1)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), np_mask(DATA, LENGTHS, 255).astype(np.uint8))
    out = mx.nd.SequenceMask(data.astype("int32"), lengths, use_sequence_length=True, value=2.7)
    np.testing.assert_array_equal(out.asnumpy(), np_mask(DATA, LENGTHS, 2).astype(np.int32))


def test_sequence_mask_refuses_a_value_integer_data_cannot_hold_at_the_call():
    data = mx.nd.array(DATA, dtype="int32")
    with pytest.raises(OperatorError, match="SequenceMask: value=nan has no value in data of int32"):
        mx.nd.SequenceMask(data, mx.nd.array(LENGTHS), use_sequence_length=True, value=float("nan"))
