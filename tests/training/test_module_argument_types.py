"""Module.bind / init_params / init_optimizer and DataDesc refuse arguments of the wrong type by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, DataError, DataTypeError


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


_NOT_A_LIST = [1.5, 3, float("nan"), True]


@pytest.mark.parametrize("symbol", [None, "net", 3, [mx.sym.Variable("data")]], ids=repr)
def test_a_module_of_something_that_is_not_a_symbol_is_refused(symbol: Any) -> None:
    # AttributeError "'NoneType' object has no attribute 'list_arguments'" before
    with pytest.raises(DataTypeError, match="Module: symbol must be a Symbol, got "):
        mx.mod.Module(symbol)


@pytest.mark.parametrize("names", [*_NOT_A_LIST, "data"], ids=repr)
@pytest.mark.parametrize("what", ["data_names", "label_names", "state_names", "fixed_param_names"])
def test_names_that_are_not_a_list_of_names_are_refused_by_name(what: str, names: Any) -> None:
    # "'float' object is not iterable" before; a bare string was read as its letters
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc"), name="softmax")
    with pytest.raises(DataTypeError, match=f"Module: {what} must be a list of names, got "):
        mx.mod.Module(net, **{what: names})


def test_no_data_names_are_none_as_in_mxnet() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    assert mx.mod.Module(net, data_names=None, label_names=None).data_names == []


@pytest.mark.parametrize("shapes", _NOT_A_LIST, ids=repr)
@pytest.mark.parametrize("what", ["data_shapes", "label_shapes"])
def test_bind_shapes_that_are_not_a_list_are_refused_by_name(what: str, shapes: Any) -> None:
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc"), name="softmax")
    given = {"data_shapes": [("data", (2, 3))], "label_shapes": [("softmax_label", (2,))], what: shapes}
    with pytest.raises(DataTypeError, match=f"Module.bind: {what} must be a list of"):
        mx.mod.Module(net).bind(**given)


@pytest.mark.parametrize("params", [*_NOT_A_LIST, [("fc_weight", 1)]], ids=repr)
@pytest.mark.parametrize("call", ["init_params", "set_params"])
@pytest.mark.parametrize("what", ["arg_params", "aux_params"])
def test_params_that_are_not_a_dict_are_refused_by_name(call: str, what: str, params: Any) -> None:
    # "argument of type 'float' is not iterable" before
    module = _bound_module()
    kwargs = {"arg_params": {}, "aux_params": {}, what: params, "allow_missing": True}
    with pytest.raises(DataTypeError, match=f"{call}: {what} must be a dict of name -> NDArray"):
        getattr(module, call)(**kwargs)


@pytest.mark.parametrize(
    "batch",
    [
        lambda: mx.io.DataBatch([mx.nd.ones((2, 3))], [None]),
        lambda: mx.io.DataBatch([mx.nd.ones((2, 3))], ["abc"]),
        lambda: mx.io.DataBatch([1, 2]),
        lambda: mx.io.DataBatch([None]),
    ],
    ids=["None label", "str label", "int data", "None data"],
)
def test_a_batch_of_things_that_are_not_arrays_is_refused_by_name(batch: Any) -> None:
    # AttributeError "'NoneType' object has no attribute 'shape'" before
    module = _bound_module()
    module.init_params()
    with pytest.raises(DataTypeError, match="Module.forward: a DataBatch's data and label must be lists of NDArrays"):
        module.forward(batch())


@pytest.mark.parametrize("out_grads", [1.5, "abc", [None]], ids=repr)
def test_backward_out_grads_that_are_not_arrays_are_refused_by_name(out_grads: Any) -> None:
    # "'float' object is not iterable" before
    module = _bound_module()
    module.init_params()
    module.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(ArgumentTypeError, match="Module.backward: out_grads must be NDArrays"):
        module.backward(out_grads)


@pytest.mark.parametrize(
    "which", ["batch_end_callback", "epoch_end_callback", "eval_end_callback", "eval_batch_end_callback"]
)
@pytest.mark.parametrize("callback", ["speedometer", 1.5, [print, 3]], ids=repr)
def test_fit_refuses_a_callback_that_cannot_be_called_before_training(which: str, callback: Any) -> None:
    # "'str' object is not callable" at the end of the first batch or epoch before
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="softmax")
    train = mx.io.NDArrayIter(np.ones((4, 3)), np.zeros(4), 2)
    with pytest.raises(ArgumentTypeError, match=f"fit: {which} must be a callable or a list of them"):
        mx.mod.Module(net).fit(train, eval_data=train, num_epoch=1, **{which: callback})
