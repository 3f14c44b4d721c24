"""Module.bind / init_params / init_optimizer and DataDesc refuse arguments of the wrong type by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, DataError


def _bound_module() -> Any:
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc"), name="softmax")
    module = mx.mod.Module(net, context=mx.cpu())
    module.bind([("data", (2, 3))], [("softmax_label", (2,))])
    return module


@pytest.mark.parametrize("shape", ["x", ("x", 3), 5, None, (2.5, 3), (True, 3)])
def test_a_data_shape_that_is_not_integers_is_refused_naming_the_input(shape: Any) -> None:
    with pytest.raises(DataError, match="DataDesc 'data': shape must be a tuple of integers"):
        mx.io.DataDesc("data", shape)
    module = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2), label_names=None)
    with pytest.raises(DataError, match="DataDesc 'data': shape must be a tuple of integers"):
        module.bind([("data", shape)])


@pytest.mark.parametrize("shape", [[2, 3], np.array([2, 3]), (np.int64(2), 3), (2.0, 3)])
def test_data_shapes_of_whole_numbers_in_any_sequence_are_read(shape: Any) -> None:
    assert mx.io.DataDesc("data", shape).shape == (2, 3)


def test_a_data_desc_dtype_that_is_not_a_dtype_is_refused() -> None:
    with pytest.raises(DataError, match="dtype 'bogus' is not a dtype"):
        mx.io.DataDesc("data", (2, 3), dtype="bogus")


def test_bind_refuses_a_shared_module_that_is_not_a_module() -> None:
    module = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2), label_names=None)
    with pytest.raises(ArgumentTypeError, match="shared_module is a int, not a Module"):
        module.bind([("data", (2, 3))], shared_module=5)


def test_init_params_refuses_an_initializer_that_is_not_callable() -> None:
    with pytest.raises(ArgumentTypeError, match="initializer must be an Initializer"):
        _bound_module().init_params(initializer=5)


def test_init_optimizer_refuses_optimizer_params_that_are_not_a_dict() -> None:
    module = _bound_module()
    module.init_params()
    with pytest.raises(ArgumentTypeError, match="optimizer_params must be a dict or \\(key, value\\) pairs"):
        module.init_optimizer(optimizer_params="learning_rate=0.1")


def test_a_shape_that_is_an_ndarray_is_a_type_error_as_mxnet() -> None:
    # MXNet programs catch TypeError here; lazynd's error is a DataError too
    module = mx.mod.Module(mx.sym.Variable("data") * 2, label_names=None)
    with pytest.raises(TypeError, match="DataDesc 'data': shape must be a tuple of integers"):
        module.bind(data_shapes=[("data", mx.nd.array([10, 10]))])
    assert not module.binded
    with pytest.raises(TypeError, match="DataBatch: data must be a list of NDArrays"):
        mx.io.DataBatch(data=mx.nd.ones((2,)))


@pytest.mark.parametrize("entry", ["data", ("data",), 3])
def test_a_data_shapes_entry_that_is_not_a_pair_is_a_type_error_as_mxnet(entry: Any) -> None:
    # MXNet unpacks each entry into DataDesc(*entry), which raises TypeError for these
    module = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1), label_names=None)
    with pytest.raises(TypeError, match="data_shapes must be a list of"):
        module.bind(data_shapes=[entry, mx.nd.zeros((2, 1))])
