"""A module fed batches of ever-new shapes keeps the executors of a bounded number of them
(lazynd_sym.module.module.MAX_SHAPE_SETS), least recently used leaving first, and trains on."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from blob_problem import two_class_net

import lazynd as mx
from lazynd.errors import ShapeError
from lazynd_sym.module.module import MAX_SHAPE_SETS


def _batch(size: int) -> mx.io.DataBatch:
    data = np.arange(size * 5.0, dtype=np.float32).reshape(size, 5) / (size * 5)
    return mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(np.arange(size) % 2)])


def _module() -> mx.mod.Module:
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (1, 5))], [("softmax_label", (1,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=None, optimizer_params={"learning_rate": 0.1})
    return mod


def test_ever_new_batch_sizes_keep_the_executors_of_a_bounded_number_of_them() -> None:
    mod = _module()
    mod.forward(_batch(1))
    first = weakref.ref(mod._exec_group)
    for size in range(2, MAX_SHAPE_SETS + 40):
        mod.forward(_batch(size))
        mod.backward()
        mod.update()
        assert len(mod._groups) <= MAX_SHAPE_SETS
    gc.collect()
    assert first() is None  # the least recently used set of shapes left, with its arrays


def test_a_set_of_shapes_used_again_after_it_left_gives_the_outputs_of_the_current_parameters() -> None:
    mod = _module()
    mod.forward(_batch(3), is_train=False)
    for size in range(4, MAX_SHAPE_SETS + 10):  # batch size 3 leaves
        mod.forward(_batch(size))
        mod.backward()
        mod.update()
    mod.forward(_batch(3), is_train=False)
    again = mod.get_outputs()[0].asnumpy()
    fresh = mx.mod.Module(two_class_net())
    fresh.bind([("data", (3, 5))], [("softmax_label", (3,))], for_training=False)
    fresh.set_params(*mod.get_params())
    fresh.forward(_batch(3), is_train=False)
    np.testing.assert_allclose(again, fresh.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_a_set_of_shapes_in_use_stays_while_others_come_and_go() -> None:
    mod = _module()
    for size in range(2, 3 * MAX_SHAPE_SETS):
        mod.forward(_batch(2))  # used every other batch: never the least recently used
        kept = weakref.ref(mod._exec_group)
        mod.forward(_batch(size))
        assert kept() is not None


def test_a_batch_whose_shapes_change_a_parameter_is_refused_naming_the_reshape() -> None:
    # the message spoke of buckets only, to a module that was never one: it names the reshape too
    mod = _module()
    wide = mx.io.DataBatch([mx.nd.ones((2, 6))], [mx.nd.zeros((2,))])
    with pytest.raises(ShapeError, match=r"'fc1_weight' has shape \(16, 6\) here but \(16, 5\).*before a reshape"):
        mod.forward(wide)
    with pytest.raises(ShapeError, match="or a forward of new input shapes"):
        mod.reshape([("data", (2, 6))], [("softmax_label", (2,))])
    mod.forward(_batch(3))  # the module still runs the shapes it has
    assert mod.get_outputs()[0].shape == (3, 2)
