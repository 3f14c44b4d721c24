"""``mx.module.executor_group.DataParallelExecutorGroup`` called with MXNet 1.x's methods, as the
modules users wrote on ``BaseModule`` call it."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params, trained_by_hand

import lazynd as mx
from lazynd.errors import ParameterError
from lazynd_sym.module.executor_group import DataParallelExecutorGroup

PARAM_NAMES = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]


def _batches() -> mx.io.NDArrayIter:
    data, label = two_class_blobs(240)
    return mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False)


def _group(contexts: list, for_training: bool = True) -> DataParallelExecutorGroup:
    batches = _batches()
    group = DataParallelExecutorGroup(
        two_class_net(), contexts, None, batches.provide_data, batches.provide_label, PARAM_NAMES, for_training, False
    )
    group.set_params(start_params(), {})
    return group


def test_programs_import_it_from_mxnets_module_path() -> None:
    import lazynd.module.executor_group as face

    assert face.DataParallelExecutorGroup is DataParallelExecutorGroup


def test_a_loop_calling_the_group_as_mxnet_trains_as_module_does() -> None:
    contexts = [mx.cpu(0), mx.cpu(1)]
    group = _group(contexts)
    updater = mx.optimizer.get_updater(
        mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, rescale_grad=1.0 / 40)
    )
    for batch in list(_batches())[:6]:
        group.forward(batch)  # is_train defaults to for_training
        group.backward()
        mx.model._update_params(group.param_arrays, group.grad_arrays, updater, len(contexts))
    got: dict = {
        name: mx.nd.zeros(arrays[0].shape) for name, arrays in zip(PARAM_NAMES, group.param_arrays, strict=True)
    }
    group.get_params(got, {})
    expected = host_values(trained_by_hand(contexts, kvstore=None).get_params()[0])
    for name, value in expected.items():
        np.testing.assert_allclose(got[name].asnumpy(), value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("pre_sliced", [False, True], ids=["whole-batch", "per-device"])
def test_update_metric_takes_the_labels_as_mxnet_passes_them(pre_sliced: bool) -> None:
    group = _group([mx.cpu(0), mx.cpu(1)], for_training=False)
    batch = next(iter(_batches()))
    group.forward(batch, is_train=False)
    labels = batch.label
    if pre_sliced:
        labels = [[labels[0][part]] for part in group.slices]
    metric = mx.metric.Accuracy()
    group.update_metric(metric, labels, pre_sliced)
    probs = group.get_outputs()[0].asnumpy()
    expected = float((probs.argmax(axis=1) == batch.label[0].asnumpy()).mean())
    assert metric.get() == ("accuracy", pytest.approx(expected))
    assert metric.num_inst == 40


def test_backward_with_head_gradients_and_the_output_shapes() -> None:
    group = _group([mx.cpu(0), mx.cpu(1)])
    group.forward(next(iter(_batches())), is_train=True)
    assert group.get_output_shapes() == [("softmax_output", (40, 2))]
    assert group.get_outputs(begin=1) == []
    group.backward(out_grads=[mx.nd.ones((40, 2))])
    assert all(grads[0] is not None for grads in group.grad_arrays)


def test_set_params_refuses_a_name_the_symbol_lacks_unless_allow_extra() -> None:
    group = _group([mx.cpu(0)])
    extra = dict(start_params(), fc3_weight=mx.nd.ones((2, 2)))
    with pytest.raises(ParameterError, match=r"DataParallelExecutorGroup.set_params: arg_params names 'fc3_weight'"):
        group.set_params(extra, {})
    group.set_params(extra, {}, allow_extra=True)


def test_the_group_has_mxnets_attributes_of_its_arrays_and_names() -> None:
    # read by user modules and scripts (``mod._exec_group.data_arrays``); lazynd's group lacked them
    batches = _batches()
    group = DataParallelExecutorGroup(
        two_class_net(), [mx.cpu(0), mx.cpu(1)], [1, 3], batches.provide_data, batches.provide_label,
        PARAM_NAMES, True, True, fixed_param_names=["fc1_bias"],
    )  # fmt: skip
    assert [[(part, arr.shape) for part, arr in pairs] for pairs in group.data_arrays] == [
        [(slice(0, 10), (10, 5)), (slice(10, 40), (30, 5))]
    ]
    assert [[part for part, _ in pairs] for pairs in group.label_arrays] == [[slice(0, 10), slice(10, 40)]]
    assert group.data_arrays[0][1][1] is group.execs[1].arg_dict["data"]
    assert [[g.shape for g in grads] for grads in group.input_grad_arrays] == [[(10, 5), (30, 5)]]
    assert group.input_grad_arrays[0][0] is group.execs[0].grad_dict["data"]
    assert group.arg_names == two_class_net().list_arguments() and group.workload == [1, 3]
    assert group.fixed_param_names == ["fc1_bias"] and group.output_names == ["softmax_output"]
    assert (group.num_outputs, group.data_layouts, group.label_layouts, group.output_layouts) == (1, [0], [0], [0])
    unlabelled = DataParallelExecutorGroup(
        two_class_net(), [mx.cpu()], None, batches.provide_data, None, PARAM_NAMES, False, False
    )
    assert unlabelled.label_arrays is None and unlabelled.input_grad_arrays is None
