"""MXNet 1.9.1's parameter names and positions, where a program passes them, and its names lazynd refuses.

Every expected value here was read from MXNet 1.9.1 itself (CPU build), calling it the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym


def test_nd_array_takes_source_array_by_name() -> None:
    np.testing.assert_array_equal(mx.nd.array(source_array=[1, 2]).asnumpy(), [1.0, 2.0])


def test_nd_power_takes_base_and_exp_by_name() -> None:
    np.testing.assert_array_equal(mx.nd.power(base=mx.nd.array([2, 3]), exp=2).asnumpy(), [4.0, 9.0])


def test_from_numpy_takes_ndarray_by_name() -> None:
    out = mx.nd.from_numpy(ndarray=np.arange(3.0))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 1.0, 2.0])


def test_dlpack_functions_take_mxnets_parameter_names() -> None:
    x = mx.nd.arange(3)
    np.testing.assert_array_equal(mx.nd.from_dlpack(dlpack=mx.nd.to_dlpack_for_read(data=x)).asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(mx.nd.from_dlpack(dlpack=mx.nd.to_dlpack_for_write(data=x)).asnumpy(), [0, 1, 2])


# each metric built with MXNet's positional order, output_names and label_names included
METRICS_BY_POSITION = [
    ("Accuracy", (1, "a", ["o"], ["l"])),
    ("TopKAccuracy", (2, "t", ["o"], ["l"])),
    ("F1", ("f", ["o"], ["l"], "micro")),
    ("MCC", ("m", ["o"], ["l"], "micro")),
    ("PearsonCorrelation", ("p", ["o"], ["l"], "micro")),
    ("PCC", ("c", ["o"], ["l"], True)),
    ("MAE", ("x", ["o"], ["l"])),
    ("MSE", ("x", ["o"], ["l"])),
    ("RMSE", ("x", ["o"], ["l"])),
    ("CrossEntropy", (1e-6, "x", ["o"], ["l"])),
    ("NegativeLogLikelihood", (1e-6, "x", ["o"], ["l"])),
    ("Perplexity", (-1, 1, "x", ["o"], ["l"])),
    ("Loss", ("x", ["o"], ["l"])),
    ("Torch", ("x", ["o"], ["l"])),
    ("Caffe", ("x", ["o"], ["l"])),
    ("CompositeEvalMetric", (None, "x", ["o"], ["l"])),
]


@pytest.mark.parametrize(("name", "args"), METRICS_BY_POSITION, ids=[name for name, _ in METRICS_BY_POSITION])
def test_metric_takes_output_and_label_names_by_position(name: str, args: tuple) -> None:
    metric = getattr(mx.metric, name)(*args)
    assert (metric.output_names, metric.label_names) == (["o"], ["l"])
    assert metric.get_config()["output_names"] == ["o"]


@pytest.mark.parametrize("name", ["F1", "MCC", "PearsonCorrelation"])
def test_average_comes_after_the_names_as_in_mxnet(name: str) -> None:
    metric = getattr(mx.metric, name)("m", None, None, "micro")
    assert metric.average == "micro" and metric.output_names is None


def test_custom_metric_takes_output_and_label_names_by_position() -> None:
    metric = mx.metric.CustomMetric(lambda label, pred: 0.0, "c", False, ["o"], ["l"])
    assert (metric.output_names, metric.label_names) == (["o"], ["l"])


def test_composite_update_dict_takes_labels_and_preds_by_name() -> None:
    metric = mx.metric.CompositeEvalMetric()
    metric.add(mx.metric.Accuracy())
    metric.update_dict(labels={"softmax_label": mx.nd.array([1])}, preds={"out": mx.nd.array([[0.1, 0.9]])})
    assert metric.get() == (["accuracy"], [1.0])


def test_set_monitor_callback_takes_monitor_all_second() -> None:
    executor = sym.relu(sym.var("x"), name="r").simple_bind(mx.cpu(), x=(2,))
    seen: list[str] = []
    executor.set_monitor_callback(lambda name, array: seen.append(name), True)
    executor.forward()
    mx.nd.waitall()
    assert seen == ["x", "r_input0", "r_output"]


def test_sequential_module_names_its_add_options() -> None:
    assert mx.mod.SequentialModule.META_TAKE_LABELS == "take_labels"
    assert mx.mod.SequentialModule.META_AUTO_WIRING == "auto_wiring"


def test_image_iter_takes_dtype_and_last_batch_handle_by_position(tmp_path) -> None:
    it = mx.image.ImageIter(
        2, (3, 8, 8), 1, None, None, str(tmp_path), None, False, 0, 1, [], [[1.0, "a.jpg"]],
        "data", "softmax_label", "int32", "discard",
    )  # fmt: skip
    assert (it.dtype, it.last_batch_handle) == ("int32", "discard")


def test_load_params_takes_prefix_and_epoch_by_name(tmp_path) -> None:
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 3, None, {"w": mx.nd.ones((2,))}, {"m": mx.nd.zeros((1,))})
    arg_params, aux_params = mx.model.load_params(prefix=prefix, epoch=3)
    assert sorted(arg_params) == ["w"] and sorted(aux_params) == ["m"]


def test_util_counts_gpus_as_the_context_does() -> None:
    assert mx.util.get_gpu_count() == mx.context.num_gpus()


def test_util_gpu_memory_names_a_missing_gpu() -> None:
    if mx.context.num_gpus() > 0:
        free, total = mx.util.get_gpu_memory(0)
        assert 0 <= free <= total
    else:
        with pytest.raises(mx.ContextError, match="gpu"):
            mx.util.get_gpu_memory(0)


def test_util_cuda_compute_capability_refuses_a_cpu_context() -> None:
    with pytest.raises(mx.ContextError, match="get_cuda_compute_capability: expected a gpu context"):
        mx.util.get_cuda_compute_capability(mx.cpu())


def test_numpy_array_semantics_are_reported_off() -> None:
    assert mx.util.is_np_array() is False
    assert mx.is_np_array() is False


@pytest.mark.parametrize("name", ["set_np", "reset_np", "use_np", "use_np_array", "np_array"])
def test_numpy_array_switches_are_refused_by_name(name: str) -> None:
    assert not hasattr(mx.util, name)
    with pytest.raises(mx.UnsupportedError, match=rf"mx\.util\.{name}: MXNet's NumPy array semantics"):
        getattr(mx.util, name)


@pytest.mark.parametrize("name", ["use_np", "use_np_array", "np_array"])
def test_top_level_numpy_array_switches_are_refused_by_name(name: str) -> None:
    with pytest.raises(mx.UnsupportedError, match=rf"{name}: MXNet's NumPy array semantics"):
        getattr(mx, name)


@pytest.mark.parametrize(
    ("namespace", "face", "message"),
    [("", "onnx", "ONNX"), ("", "library", "compiled operator libraries"), ("contrib", "tensorrt", "TensorRT")],
)
def test_faces_lazynd_lacks_are_refused_by_name(namespace: str, face: str, message: str) -> None:
    owner = getattr(mx, namespace) if namespace else mx
    assert not hasattr(owner, face)
    with pytest.raises(mx.UnsupportedError, match=message):
        getattr(owner, face)


def test_importing_onnx_names_it() -> None:
    with pytest.raises(mx.UnsupportedError, match=r"mx\.onnx: ONNX"):
        import lazynd.onnx  # noqa: F401
