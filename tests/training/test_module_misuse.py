"""Module misuse: stages out of order, bad arguments, batches and parameter values are refused clearly."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ArgumentTypeError, ContextError, DataError, LazyNDError


def test_stages_out_of_order_raise_clear_errors() -> None:
    mod = mx.mod.Module(two_class_net())
    batch = mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))])
    with pytest.raises(LazyNDError, match="forward: call bind\\(\\) first"):
        mod.forward(batch)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    with pytest.raises(LazyNDError, match="call init_params\\(\\) first"):
        mod.forward(batch)
    mod.init_params()
    with pytest.raises(LazyNDError, match="update: call init_optimizer\\(\\) first"):
        mod.update()


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(DataError, match="data_names \\['image'\\] are not arguments"):
        mx.mod.Module(two_class_net(), data_names=["image"])
    with pytest.raises(DataError, match="fixed_param_names \\['fc9_weight'\\] are not arguments of the symbol"):
        mx.mod.Module(two_class_net(), fixed_param_names=["fc9_weight"])
    with pytest.raises(ContextError, match="context must be a Context"):
        mx.mod.Module(two_class_net(), context="cpu")
    with pytest.raises(DataError, match="work_load_list has 1 entries for 2 contexts"):
        mx.mod.Module(two_class_net(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    mod = mx.mod.Module(two_class_net())
    with pytest.raises(DataError, match="data_shapes name \\['x'\\], the module's data_names are \\['data'\\]"):
        mod.bind([("x", (4, 5))])
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    # MXNet visits the names in sorted order and reports the first missing one: fc1_bias
    with pytest.raises(DataError, match="'fc1_bias' is not in the given parameters"):
        mod.init_params(arg_params={"fc2_weight": mx.nd.zeros((2, 16))})
    with pytest.raises(LazyNDError, match="'fc1_weight' is given with shape \\(3, 3\\), the module needs \\(16, 5\\)"):
        mod.init_params(arg_params={"fc1_weight": mx.nd.zeros((3, 3))}, allow_missing=True)
    with pytest.raises(DataError, match="num_epoch is required"):
        mod.fit(mx.io.NDArrayIter(*two_class_blobs(8), batch_size=4))


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.mod.Module(two_class_net(), data_names=["image"]),
        lambda: mx.mod.Module(two_class_net(), state_names=["h0"]),
        lambda: mx.mod.Module(two_class_net(), fixed_param_names=["fc9_weight"]),
        lambda: mx.mod.Module(two_class_net()).bind([("x", (4, 5))]),
        lambda: mx.mod.Module(two_class_net()).bind([("data", (4, 5))], [("lab", (4,))]),
    ],
    ids=["data_names", "state_names", "fixed_param_names", "data_shapes", "label_shapes"],
)
def test_names_the_symbol_or_module_lacks_raise_a_value_error(make) -> None:
    # MXNet 1.9.1 raises ValueError for these (a KeyError after a warning for label_shapes); lazynd's
    # DataError was a RuntimeError only, so ``except ValueError`` missed it
    with pytest.raises(ValueError, match="name|are not arguments"):
        make()


def test_forward_refuses_what_is_not_a_batch_and_warns_of_inputs_a_batch_leaves_out() -> None:
    # a list of arrays once failed inside with AttributeError
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(DataError, match=r"Module.forward: expected a DataBatch .*got a list holding \[.NDArray.\]"):
        mod.forward([mx.nd.ones((4, 5))])
    two = mx.mod.Module(sym.Variable("a") + sym.Variable("b"), data_names=["a", "b"], label_names=None)
    two.bind([("a", (2,)), ("b", (2,))], for_training=False)
    two.init_params()
    # a batch short of an input leaves it as it is, as MXNet does (with a warning naming it)
    two.forward(mx.io.DataBatch([mx.nd.ones((2,)), mx.nd.full((2,), 3.0)]))
    with pytest.warns(UserWarning, match=r"holds 1 data array\(s\), the module takes 2 \(\['a', 'b'\]\): \['b'\] keep"):
        two.forward(mx.io.DataBatch([mx.nd.full((2,), 5.0)]))
    np.testing.assert_array_equal(two.get_outputs()[0].asnumpy(), [8.0, 8.0])


def test_set_params_takes_numpy_values_and_refuses_other_types_by_name() -> None:
    # a NumPy value once failed inside with AttributeError ('copyto')
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    host = host_values(start_params())
    mod.set_params(host, {})
    np.testing.assert_array_equal(mod.get_params()[0]["fc2_weight"].asnumpy(), host["fc2_weight"])
    with pytest.raises(DataError, match="'fc1_bias' is given as list; expected an NDArray"):
        mod.set_params({**host, "fc1_bias": [0.0] * 16}, {})


def test_bind_names_the_arguments_whose_shapes_the_inputs_leave_unknown() -> None:
    # MXNet-SSD's detector bound the training graph's detection head without its label
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    net = sym.LinearRegressionOutput(net, label=sym.Reshape(sym.Variable("label"), shape=(-1, 3)), name="out")
    mod = mx.mod.Module(net, label_names=None)
    with pytest.raises(
        LazyNDError, match="cannot infer the shapes of \\['label'\\] from the inputs \\{'data': \\(2, 4\\)\\}"
    ):
        mod.bind([("data", (2, 4))], for_training=False)


def test_bind_that_cannot_infer_a_shape_raises_without_a_warning_first() -> None:
    # MXNet's bind raises alone; lazynd warned "softmax_label: ()" from infer_shape before its error
    net = sym.SoftmaxOutput(
        sym.FullyConnected(sym.Variable("data"), num_hidden=3),
        label=sym.Reshape(sym.Variable("softmax_label"), shape=(-1,)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LazyNDError, match=r"Module.bind: cannot infer the shapes of \['softmax_label'\]"):
            mx.mod.Module(net).bind([("data", (2, 4))], for_training=False)
        with pytest.raises(LazyNDError, match=r"simple_bind: cannot infer the shapes of \['softmax_label'\]"):
            net.simple_bind(mx.cpu(), data=(2, 4))


def test_update_on_a_module_bound_for_inference_is_refused() -> None:
    # MXNet 1.9 fails inside its executor group (TypeError); lazynd used to return without updating anything
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))], for_training=False)
    mod.init_params()
    mod.init_optimizer(kvstore=None)
    with pytest.raises(LazyNDError, match="Module.update: the module was bound with for_training=False"):
        mod.update()


def test_out_grads_that_are_not_ndarrays_are_refused_by_name() -> None:
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))]))
    with pytest.raises(ArgumentTypeError, match="out_grads must be NDArrays, one per output; got \\['ndarray'\\]"):
        mod.backward([np.ones((4, 2), np.float32)])


@pytest.mark.parametrize("module_kind", ["Module", "BucketingModule"])
def test_install_monitor_refuses_what_is_not_a_monitor_and_keeps_none(module_kind: str) -> None:
    if module_kind == "Module":
        mod = mx.mod.Module(two_class_net())
    else:
        mod = mx.mod.BucketingModule(lambda key: (two_class_net(), ("data",), ("softmax_label",)), default_bucket_key=5)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(
        ArgumentTypeError, match="monitor must be an mx.mon.Monitor \\(with install\\(\\)\\), got NoneType"
    ):
        mod.install_monitor(None)
    # nothing was kept: a batch of another size binds new executors without tripping on it
    mod.forward(mx.io.DataBatch([mx.nd.ones((3, 5))], [mx.nd.zeros((3,))]))
    assert mod.get_outputs()[0].shape == (3, 2)


def test_get_outputs_before_a_forward_on_the_current_shapes_is_refused() -> None:
    # MXNet hands out the unwritten output buffers (whatever the memory held)
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(LazyNDError, match="get_outputs: no forward has run .* \\(data \\(4, 5\\)\\)"):
        mod.get_outputs()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.zeros((4,))]))
    assert mod.get_outputs()[0].shape == (4, 2)
    mod.reshape([("data", (3, 5))], [("softmax_label", (3,))])
    with pytest.raises(LazyNDError, match="get_outputs: no forward has run .* \\(data \\(3, 5\\)\\)"):
        mod.get_outputs()


def test_update_metric_before_a_forward_is_refused() -> None:
    mod = mx.mod.Module(two_class_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(LazyNDError, match="update_metric: no forward has run .* \\(data \\(4, 5\\)\\)"):
        mod.update_metric(mx.metric.Accuracy(), [mx.nd.zeros((4,))])
