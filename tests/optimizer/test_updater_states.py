"""Updater states: saved and loaded, MXNet's pickles read, wrong states and arguments refused."""

from __future__ import annotations

import ctypes
import io
import pickle
import re

import numpy as np
import pytest
from optimizer_reference import run

import lazynd as mx
from lazynd import optimizer
from lazynd.errors import LazyNDError, ShapeError
from lazynd.testing import assert_almost_equal


def test_updater_states_round_trip_through_bytes(problem):
    w0, grads = problem
    opt = optimizer.create("adam", learning_rate=0.01)
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0)
    updater(0, mx.nd.array(grads[0]), weight)
    saved = updater.get_states()
    assert isinstance(saved, bytes)
    restored = optimizer.get_updater(optimizer.create("adam", learning_rate=0.01))
    restored.set_states(saved)
    for a, b in zip(updater.states[0], restored.states[0], strict=True):
        assert_almost_equal(a.asnumpy(), b.asnumpy())


def test_updater_rejects_states_that_are_not_pickled_dicts():

    updater = optimizer.get_updater(optimizer.create("sgd"))
    with pytest.raises(LazyNDError, match="could not unpickle"):
        updater.set_states(b"not a pickle")
    with pytest.raises(LazyNDError, match="expected a pickled dict"):
        updater.set_states(pickle.dumps([1, 2]))


def test_sgd_without_momentum_keeps_no_state():
    assert optimizer.create("sgd").create_state(0, mx.nd.ones((2,))) is None
    assert optimizer.create("sgd", momentum=0.9).create_state(0, mx.nd.ones((2,))).shape == (2,)


def test_states_dumped_with_the_optimizer_bring_back_its_settings_and_counts(problem):
    w0, grads = problem
    uninterrupted = run(optimizer.create("adam", learning_rate=0.05, wd=0.1), w0, grads)
    first = optimizer.get_updater(optimizer.create("adam", learning_rate=0.05, wd=0.1))
    weight = mx.nd.array(w0)
    for g in grads[:2]:
        first(0, mx.nd.array(g), weight)
    # as MXNet's get_states(dump_optimizer=True): Adam's bias correction needs the update count
    restored = optimizer.get_updater(optimizer.create("adam"))
    restored.set_states(first.get_states(dump_optimizer=True))
    assert restored.optimizer.lr == 0.05 and restored.optimizer.wd == 0.1
    for g in grads[2:]:
        restored(0, mx.nd.array(g), weight)
    assert_almost_equal(weight.asnumpy(), uninterrupted, rtol=1e-6, atol=1e-7)


# What MXNet 1.9.1's Updater.get_states() returned after one step of
# SGD(momentum=0.9, multi_precision=True) on float16 [1, 2] with gradient [1, 1]:
# {0: (momentum [-0.01, -0.01], float32 master copy [0.99, 1.99])}, NDArrays pickled as records.
MXNET_SGD_MP_STATES = (
    b"\x80\x04\x95\xc3\x00\x00\x00\x00\x00\x00\x00}\x94K\x00\x8c\x15mxnet.ndarray.ndarray\x94\x8c\x07NDArray"
    b"\x94\x93\x94N\x85\x94R\x94}\x94\x8c\x06handle\x94\x8c\x08builtins\x94\x8c\tbytearray\x94\x93\x94C("
    b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\x00\x00\n\xd7#\xbc\n\xd7#\xbc\x94\x85\x94R\x94sbh\x03h\x04R\x94}\x94h\x07h\nC(\xc9\xfa"
    b"\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\xa4p}?R\xb8\xfe?\x94\x85\x94R\x94sb\x86\x94s."
)


def test_updater_reads_states_pickled_by_mxnet_and_trains_on_from_them():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.01, momentum=0.9, multi_precision=True))
    updater.set_states(MXNET_SGD_MP_STATES)
    mom, master = updater.states[0]
    assert mom.dtype == np.float32 and master.dtype == np.float32
    np.testing.assert_allclose(mom.asnumpy(), [-0.01, -0.01], rtol=1e-6)
    np.testing.assert_allclose(master.asnumpy(), [0.99, 1.99], rtol=1e-6)
    weight = mx.nd.array([0.99, 1.99], dtype="float16")
    updater(0, mx.nd.array([1.0, 1.0], dtype="float16"), weight)
    # momentum 0.9 * -0.01 - 0.01 * 1 = -0.019 added to the master copy
    np.testing.assert_allclose(updater.states[0][1].asnumpy(), [0.971, 1.971], rtol=1e-6)


class _MXNetNDArrayAsMXNetReadsIt:
    """What MXNet 1.9.1's NDArray does on unpickling: ``__setstate__`` loads ``state['handle']`` through
    ``ctypes.c_char.from_buffer``, which takes only a writable buffer (a bytearray)."""

    def __init__(self, handle: None) -> None:
        assert handle is None

    def __setstate__(self, state: dict) -> None:
        assert list(state) == ["handle"]
        self.record = ctypes.c_char * len(state["handle"])
        self.record.from_buffer(state["handle"])
        self.raw = bytes(state["handle"])


class _UnpicklerWithoutNumPy(pickle.Unpickler):
    """Unpickles as a Python with MXNet 1.9.1 and an old NumPy does: MXNet's NDArray and bytearray
    only (a NumPy 2 pickle names ``numpy._core``, which NumPy 1.x has not)."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) == ("mxnet.ndarray.ndarray", "NDArray"):
            return _MXNetNDArrayAsMXNetReadsIt
        if (module, name) == ("builtins", "bytearray"):
            return bytearray
        raise AssertionError(f"MXNet's set_states would need {module}.{name}")


def test_updater_get_states_is_what_mxnet_get_states_writes_so_mxnet_reads_it():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.01, momentum=0.9, multi_precision=True))
    updater(0, mx.nd.array([1.0, 1.0], dtype="float16"), mx.nd.array([1.0, 2.0], dtype="float16"))
    ours = _UnpicklerWithoutNumPy(io.BytesIO(updater.get_states())).load()
    mxnet = _UnpicklerWithoutNumPy(io.BytesIO(MXNET_SGD_MP_STATES)).load()
    assert list(ours) == list(mxnet) == [0]
    assert [a.raw for a in ours[0]] == [a.raw for a in mxnet[0]]
    restored = optimizer.get_updater(optimizer.create("sgd", momentum=0.9, multi_precision=True))
    restored.set_states(updater.get_states())
    assert [a.asnumpy().tolist() for a in restored.states[0]] == [a.asnumpy().tolist() for a in updater.states[0]]


def test_updater_get_states_keeps_names_none_and_lists_in_mxnet_layout():
    updater = optimizer.get_updater(optimizer.create("sgd"))
    updater.states = {"fc_weight": None, 3: [mx.nd.ones((2,)), mx.nd.zeros((1, 2))]}
    loaded = _UnpicklerWithoutNumPy(io.BytesIO(updater.get_states())).load()
    assert loaded["fc_weight"] is None and isinstance(loaded[3], list) and len(loaded[3]) == 2
    restored = optimizer.get_updater(optimizer.create("sgd"))
    restored.set_states(updater.get_states())
    assert restored.states["fc_weight"] is None
    assert [a.shape for a in restored.states[3]] == [(2,), (1, 2)]


def test_updater_refuses_an_mxnet_optimizer_pickled_with_the_states_by_name():
    with pytest.raises(LazyNDError, match=r"mxnet\.optimizer\.optimizer\.Adam.*dump_optimizer"):
        optimizer.get_updater(optimizer.create("adam")).set_states(b"cmxnet.optimizer.optimizer\nAdam\n.")


@pytest.mark.parametrize(
    "grad, weight, index, message",
    [
        (None, mx.nd.ones((2,)), 0, "the gradient of parameter 0 must be an NDArray, got NoneType"),
        (mx.nd.ones((2,)), np.ones(2), "fc_weight", "the weight of parameter 'fc_weight' must be an NDArray"),
    ],
)
def test_updater_refuses_what_is_not_an_array_by_parameter(grad, weight, index, message):
    updater = optimizer.get_updater(optimizer.create("adam"))
    with pytest.raises(LazyNDError, match=message):
        updater(index, grad, weight)
    with pytest.raises(LazyNDError, match=message):
        updater([index, 1], [grad, mx.nd.ones((2,))], [weight, mx.nd.ones((2,))])


@pytest.mark.parametrize("name", ["adagrad", "adadelta", "adamax", "nadam", "sgld", "dcasgd", "sgd"])
@pytest.mark.parametrize("grad_shape", [(3,), (1,), (2, 1)])
def test_updater_refuses_a_gradient_of_another_shape_than_its_weight(name, grad_shape):
    # the optimizers written with NDArray operators would broadcast it: every row stepped alike
    updater = optimizer.get_updater(optimizer.create(name, learning_rate=0.1))
    weight = mx.nd.ones((2, 3))
    message = rf"gradient of parameter 'fc_weight' has shape {re.escape(str(grad_shape))}, expected its weight's shape \(2, 3\)"
    with pytest.raises(ShapeError, match=message):
        updater("fc_weight", mx.nd.ones(grad_shape), weight)
    with pytest.raises(ShapeError, match=message):
        updater(["fc_bias", "fc_weight"], [mx.nd.ones((2,)), mx.nd.ones(grad_shape)], [mx.nd.ones((2,)), weight])
    np.testing.assert_array_equal(weight.asnumpy(), np.ones((2, 3)))


@pytest.mark.parametrize("name", ["adagrad", "nag", "adamax", "dcasgd", "sgd"])
def test_updater_refuses_an_integer_weight_that_would_not_move(name):
    # AdaGrad, NAG, Adamax and DCASGD truncated each step of an int32 weight to 0
    updater = optimizer.get_updater(optimizer.create(name, learning_rate=0.1))
    weight = mx.nd.ones((3,), dtype="int32")
    with pytest.raises(LazyNDError, match=r"weight of parameter 0 has dtype int32; optimizers update float16"):
        updater(0, mx.nd.ones((3,), dtype="int32"), weight)


@pytest.mark.parametrize("name", ["adagrad", "adadelta", "nadam", "sgld", "nag", "adam"])
@pytest.mark.parametrize("grad_dtype", ["float16", "float64"])
def test_updater_refuses_a_gradient_of_another_dtype_than_its_weight_by_parameter(name, grad_dtype):
    updater = optimizer.get_updater(optimizer.create(name, learning_rate=0.1))
    message = rf"gradient of parameter 'w' has dtype {grad_dtype}, expected its weight's dtype float32"
    with pytest.raises(LazyNDError, match=message):
        updater("w", mx.nd.ones((3,), dtype=grad_dtype), mx.nd.ones((3,)))


def test_updater_takes_a_float32_gradient_of_a_float16_weight_under_multi_precision():
    updater = optimizer.get_updater(optimizer.create("adagrad", learning_rate=0.1, multi_precision=True))
    weight = mx.nd.ones((3,), dtype="float16")
    updater(0, mx.nd.ones((3,)), weight)
    assert weight.dtype == np.float16 and np.all(weight.asnumpy() < 1)


def test_updater_refuses_an_index_that_cannot_key_a_state():
    updater = optimizer.get_updater(optimizer.create("sgd", momentum=0.9))
    with pytest.raises(LazyNDError, match=r"parameter index \[0\] must be an int or a name"):
        updater([[0], 1], [mx.nd.ones((2,))] * 2, [mx.nd.ones((2,)), mx.nd.ones((2,))])


def test_loaded_states_of_another_optimizer_or_shape_are_refused_at_the_first_update() -> None:
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    adam = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    adam(0, g, w)
    sgd = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    sgd.set_states(adam.get_states())  # (mean, var) where SGD keeps one momentum array
    with pytest.raises(
        mx.LazyNDError, match=r"parameter 0 is \('array\(3,\)', 'array\(3,\)'\), but SGD keeps array\(3,\)"
    ):
        sgd(0, g, w)
    momentum = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    momentum(0, g, w)
    other_shape = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    other_shape.set_states(momentum.get_states())
    with pytest.raises(mx.LazyNDError, match=r"keeps array\(4,\) for a weight of shape \(4,\)"):
        other_shape([0], [mx.nd.ones((4,))], [mx.nd.ones((4,))])
    same = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    same.set_states(momentum.get_states())
    same(0, g, w)  # what this optimizer keeps: taken as it is
    np.testing.assert_allclose(same.states[0].asnumpy(), 0.9 * momentum.states[0].asnumpy() - 0.01 * 1.0, rtol=1e-6)


def test_updater_gives_states_saved_by_parameter_name_to_each_index_of_that_name():
    # MXNet's store-side updater keys states by name; lazynd's Module numbers the copies on its devices

    opt = optimizer.create("sgd", momentum=0.9, param_idx2name={0: "w", 1: "w", 2: "b"})
    updater = optimizer.get_updater(opt)
    updater.set_states(pickle.dumps({"w": np.array([1.0, 2.0], np.float32), "other": None}))
    assert sorted(updater.states, key=str) == [0, 1, "other"]
    np.testing.assert_array_equal(updater.states[1].asnumpy(), [1.0, 2.0])
    assert updater.states[0] is not updater.states[1]
