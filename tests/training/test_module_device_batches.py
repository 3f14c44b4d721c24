"""Module.forward takes a list of batches, one per device, as MXNet 1.x's does (pre-sliced data).

Batch ``i`` is what device ``i`` computes on; the outputs, gradients and metric are those of the
batches joined in device order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError


def _module(work_load_list: list[float] | None = None) -> Any:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    module = mx.mod.Module(
        mx.sym.SoftmaxOutput(net, name="softmax"), context=[mx.cpu(0), mx.cpu(1)], work_load_list=work_load_list
    )
    module.bind([("data", (4, 3))], [("softmax_label", (4,))])
    module.init_params(mx.init.Xavier(magnitude=3))
    return module


def _batch(rows: int, value: float, label: float) -> mx.io.DataBatch:
    data = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) * value
    return mx.io.DataBatch([mx.nd.array(data)], [mx.nd.full((rows,), label)])


def test_each_device_computes_its_own_batch_of_the_list() -> None:
    module = _module()
    first, second = _batch(2, 0.1, 0.0), _batch(2, -0.2, 1.0)
    module.forward([first, second], is_train=True)
    module.backward()
    execs = module._exec_group.execs
    np.testing.assert_array_equal(execs[0].arg_dict["data"].asnumpy(), first.data[0].asnumpy())
    np.testing.assert_array_equal(execs[1].arg_dict["softmax_label"].asnumpy(), [1.0, 1.0])
    listed = module.get_outputs()[0].asnumpy()
    grads = [g.asnumpy() for g in module._exec_group.grad_arrays[0]]

    joined = mx.io.DataBatch(
        [mx.nd.concatenate([first.data[0], second.data[0]])], [mx.nd.concatenate([first.label[0], second.label[0]])]
    )
    module.forward(joined, is_train=True)
    module.backward()
    np.testing.assert_allclose(listed, module.get_outputs()[0].asnumpy(), rtol=1e-6)
    for got, want in zip(grads, module._exec_group.grad_arrays[0], strict=True):
        np.testing.assert_allclose(got, want.asnumpy(), rtol=1e-6)


def test_a_list_of_other_batch_sizes_reshapes_the_module() -> None:
    module = _module()
    module.forward([_batch(3, 0.1, 0.0), _batch(3, 0.2, 1.0)], is_train=False)
    assert module.get_outputs()[0].shape == (6, 2)
    assert module.data_shapes[0].shape == (6, 3)


def test_a_list_with_another_number_of_batches_than_devices_is_refused() -> None:
    with pytest.raises(DataError, match="got 3 batches for 2 devices"):
        _module().forward([_batch(2, 0.1, 0.0)] * 3, is_train=False)


def test_batches_of_different_shapes_are_refused() -> None:
    with pytest.raises(DataError, match=r"same shapes, got \[\[\(2, 3\)\], \[\(3, 3\)\]\]"):
        _module().forward([_batch(2, 0.1, 0.0), _batch(3, 0.1, 0.0)], is_train=False)


def test_batches_that_do_not_match_the_work_loads_are_refused() -> None:
    with pytest.raises(DataError, match=r"do not match the devices' shares \[1, 3\]"):
        _module(work_load_list=[1, 3]).forward([_batch(2, 0.1, 0.0), _batch(2, 0.1, 0.0)], is_train=False)


def test_a_list_holding_something_else_than_batches_is_refused() -> None:
    with pytest.raises(DataError, match=r"one DataBatch per device, got a list holding \['NDArray', 'NDArray'\]"):
        _module().forward([mx.nd.ones((2, 3)), mx.nd.ones((2, 3))], is_train=False)
