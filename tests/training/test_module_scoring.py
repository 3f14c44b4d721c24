"""Module inference and scoring: predict, score, and metrics that pick the outputs they name."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import two_class_blobs
from module_by_hand import trained_by_hand

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


def test_predict_and_iter_predict_remove_padding() -> None:
    mod = trained_by_hand(mx.cpu(), steps=2)
    data, _ = two_class_blobs(45, seed=3)
    batches = mx.io.NDArrayIter(data, batch_size=20, last_batch_handle="pad")
    probs = mod.predict(batches)
    assert probs.shape == (45, 2)
    np.testing.assert_allclose(probs.asnumpy().sum(axis=1), 1.0, rtol=1e-5)
    parts = [(outputs[0].asnumpy(), nbatch) for outputs, nbatch, _ in mod.iter_predict(batches)]
    assert [(p.shape[0], n) for p, n in parts] == [(20, 0), (20, 1), (5, 2)]
    np.testing.assert_allclose(np.concatenate([p for p, _ in parts]), probs.asnumpy())
    per_batch = mod.predict(batches, merge_batches=False)
    assert [[o.shape for o in outputs] for outputs in per_batch] == [[(20, 2)], [(20, 2)], [(5, 2)]]
    assert isinstance(mod.predict(batches, always_output_list=True), list)


def test_score_returns_name_value_pairs_of_the_metric() -> None:
    mod = trained_by_hand(mx.cpu())
    data, label = two_class_blobs(80, seed=4)
    batches = mx.io.NDArrayIter(data, label, batch_size=40)
    probs = mod.predict(batches).asnumpy()
    expected = float(np.mean(probs.argmax(axis=1) == label))
    assert mod.score(batches, "acc") == [("accuracy", pytest.approx(expected))]
    assert mod.score(batches, "acc", num_batch=1)[0][1] == pytest.approx(np.mean(probs[:40].argmax(1) == label[:40]))


def _two_output_module(with_label: bool = True) -> tuple[mx.mod.Module, mx.io.NDArrayIter]:
    """A softmax head ``sa`` (labelled) and a loss head ``lb`` of known per-row sums 1.38."""
    data = sym.Variable("data")
    heads = [sym.MakeLoss(sym.sum(sym.FullyConnected(data, num_hidden=2, name="fb"), axis=1), name="lb")]
    if with_label:
        heads.insert(0, sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=3, name="fa"), name="sa"))
    mod = mx.mod.Module(sym.Group(heads), label_names=["sa_label"] if with_label else None)
    features = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
    label = {"sa_label": np.array([0, 1, 2, 1], np.float32)} if with_label else None
    it = mx.io.NDArrayIter(features, label, batch_size=4)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Constant(0.1))
    return mod, it


def test_metrics_pick_the_outputs_they_name() -> None:
    # MXNet 1.9.1 hands a metric every output by name; lazynd gave the first outputs, one per label
    mod, it = _two_output_module()
    loss = mx.metric.Loss(output_names=["lb_output"])
    assert mod.score(it, loss) == [("loss", pytest.approx(1.38, rel=1e-5))]
    both = mx.metric.create(
        [mx.metric.Accuracy(output_names=["sa_output"]), mx.metric.Loss(output_names=["lb_output"])]
    )
    assert mod.score(it, both) == [("accuracy", 0.25), ("loss", pytest.approx(1.38, rel=1e-5))]


def test_a_loss_metric_scores_a_module_without_labels() -> None:
    # MXNet 1.9.1 raises a TypeError here; lazynd gave NaN
    mod, it = _two_output_module(with_label=False)
    assert mod.score(it, "loss") == [("loss", pytest.approx(1.38, rel=1e-5))]


def test_a_metric_naming_an_output_the_module_lacks_is_refused_by_name() -> None:
    mod, it = _two_output_module()
    with pytest.raises(LazyNDError, match=r"output_names \['nope'\] not among"):
        mod.score(it, mx.metric.Accuracy(output_names=["nope"]))


@pytest.mark.parametrize("as_numpy", [False, True])
def test_predict_takes_one_array_and_returns_the_first_output(as_numpy) -> None:
    net = sym.Variable("data") * 2
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (1, 4))], for_training=False)
    mod.init_params()
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mod.predict(data if as_numpy else mx.nd.array(data))
    assert isinstance(out, mx.nd.NDArray)
    np.testing.assert_array_equal(out.asnumpy(), data * 2)


def test_metric_labels_are_named_in_the_order_the_module_was_bound_with() -> None:
    # NDArrayIter sorts a label dict (reg_label before sm_label) while label_names lists sm_label first;
    # the batch's labels come in the bound order, as in MXNet 1.9.1 (lazynd named them in label_names'
    # order, so a metric's label_names picked the other label)
    data = sym.Variable("data")
    heads = [
        sym.SoftmaxOutput(sym.FullyConnected(data, num_hidden=3, name="fa"), name="sm"),
        sym.LinearRegressionOutput(sym.FullyConnected(data, num_hidden=1, name="fb"), name="reg"),
    ]
    mod = mx.mod.Module(sym.Group(heads), label_names=["sm_label", "reg_label"])
    classes = np.array([0, 1, 2, 1], np.float32)
    targets = np.full((4, 1), 2.0, np.float32)
    it = mx.io.NDArrayIter(np.ones((4, 2), np.float32), {"sm_label": classes, "reg_label": targets}, batch_size=4)
    assert [d.name for d in it.provide_label] == ["reg_label", "sm_label"]
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Zero())  # every class equally likely (argmax 0), every regression output 0
    accuracy = mx.metric.Accuracy(output_names=["sm_output"], label_names=["sm_label"])
    mse = mx.metric.MSE(output_names=["reg_output"], label_names=["reg_label"])
    assert mod.score(it, mx.metric.create([accuracy, mse])) == [("accuracy", 0.25), ("mse", 4.0)]
