"""Bulk execution and what a pass reads: arguments given to forward, weights updated imperatively between passes."""

from __future__ import annotations

import numpy as np
import pytest
from executor_bulk_nets import MLP_SHAPES, bind_net, mlp

import lazynd as mx


def _train_and_test(shared_bulk, monkeypatch, steps=3, lr=0.1):
    """A training executor and a test executor binding its arg arrays, with imperative SGD in between."""
    train = bind_net(mlp(), MLP_SHAPES, shared_bulk, monkeypatch)
    test = mlp().bind(
        mx.cpu(),
        {**train.arg_dict, "data": mx.nd.zeros((3, 12)), "softmax_label": mx.nd.zeros((3,))},
    )
    rng = np.random.default_rng(9)
    test_data = rng.standard_normal((3, 12)).astype(np.float32)
    results, snapshots = [], []
    names = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")
    for _ in range(steps):
        batch = rng.standard_normal(MLP_SHAPES["data"]).astype(np.float32)
        train.forward(is_train=True, data=mx.nd.array(batch))
        train.backward()
        for name in names:
            w, g = train.arg_dict[name], train.grad_dict[name]
            w[:] = w - g * lr
        # pushed right after the updates, with no wait: must read the updated weights; the
        # copies (lazy too) keep this step's values from the next step's writes
        results.append(test.forward(data=mx.nd.array(test_data))[0].copy())
        snapshots.append({name: train.arg_dict[name].copy() for name in names})
    snapshots = [{name: arr.asnumpy() for name, arr in snap.items()} for snap in snapshots]
    return [r.asnumpy() for r in results], snapshots, test_data


def _numpy_probs(train_weights, data):
    h = np.maximum(data @ train_weights["fc1_weight"].T + train_weights["fc1_bias"], 0)
    z = h @ train_weights["fc2_weight"].T + train_weights["fc2_bias"]
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_executors_sharing_weights_see_imperative_updates_in_order(bulk, engine_name, monkeypatch):
    results, snapshots, test_data = _train_and_test(bulk, monkeypatch)
    for step, (result, weights) in enumerate(zip(results, snapshots, strict=True)):
        np.testing.assert_allclose(result, _numpy_probs(weights, test_data), rtol=1e-5, atol=1e-6, err_msg=str(step))
    # every step changed the weights, so every test forward saw a different network
    assert all(not np.allclose(a, b) for a, b in zip(results, results[1:], strict=False))


def test_shared_weight_training_is_the_same_with_and_without_bulk(engine_name, monkeypatch):
    bulk_results, bulk_weights, _ = _train_and_test(True, monkeypatch)
    single_results, single_weights, _ = _train_and_test(False, monkeypatch)
    for a, b in zip(bulk_results, single_results, strict=True):
        np.testing.assert_array_equal(a, b)
    for name, arr in bulk_weights[-1].items():
        np.testing.assert_array_equal(arr, single_weights[-1][name])


def test_argument_copies_of_a_bulked_forward_are_part_of_the_pass(recording_engine, monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    data, label = mx.nd.ones(MLP_SHAPES["data"]), mx.nd.zeros(MLP_SHAPES["softmax_label"])
    recording_engine.names.clear()
    ex.forward(is_train=True, data=data, softmax_label=label)
    assert recording_engine.names == ["executor_forward"]
    np.testing.assert_array_equal(ex.arg_dict["data"].asnumpy(), data.asnumpy())


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "per-op"])
def test_forward_with_arguments_matches_copying_them_first(bulk, engine_name, monkeypatch):
    rng = np.random.default_rng(12)
    batches = [rng.standard_normal(MLP_SHAPES["data"]).astype(np.float32) for _ in range(3)]
    given, copied = bind_net(mlp(), MLP_SHAPES, bulk, monkeypatch), bind_net(mlp(), MLP_SHAPES, bulk, monkeypatch)
    for batch in batches:
        source = mx.nd.array(batch)
        given.forward(is_train=True, data=source, softmax_label=mx.nd.array(np.arange(8) % 4, dtype="float64"))
        # written right after the push, with no wait: the pass must have read the old values
        source[:] = 0.0
        copied.arg_dict["data"][:] = batch
        copied.arg_dict["softmax_label"][:] = np.arange(8) % 4
        copied.forward(is_train=True)
        for ex in (given, copied):
            ex.backward()
        np.testing.assert_array_equal(given.outputs[0].asnumpy(), copied.outputs[0].asnumpy())
        np.testing.assert_array_equal(given.grad_dict["fc1_weight"].asnumpy(), copied.grad_dict["fc1_weight"].asnumpy())
    assert given.arg_dict["softmax_label"].dtype == np.float32


def test_forward_with_an_argument_of_the_wrong_shape_is_an_error(monkeypatch):
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    with pytest.raises(mx.LazyNDError, match=r"forward: 'data' has shape \(2, 12\).*\(8, 12\)"):
        ex.forward(data=mx.nd.ones((2, 12)))
    # a LazyNDError, and a TypeError as MXNet 1.9.1's "Unknown argument weights"
    with pytest.raises(mx.LazyNDError, match="'weights' is not an argument") as raised:
        ex.forward(weights=mx.nd.ones((2, 12)))
    assert isinstance(raised.value, TypeError)


class _FailOnNegative(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        if (in_data[0].asnumpy() < 0).any():
            raise ValueError("a negative input")
        self.assign(out_data[0], req[0], in_data[0])


@mx.operator.register("_bulk_inputs_fail_on_negative")
class _FailOnNegativeProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return _FailOnNegative()


def test_an_argument_given_to_forward_does_not_inherit_a_failed_pass(engine_name):
    # the pass writes what it copies in and reads it afterwards: the argument's old value (and
    # the error a failed pass left on it) is not an input of the next pass
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="_bulk_inputs_fail_on_negative") * 2
    ex = net.simple_bind(mx.cpu(), data=(2,))
    ex.forward(data=mx.nd.array([1.0, -1.0]))
    with pytest.raises(mx.LazyNDError, match="a negative input"):
        ex.outputs[0].asnumpy()
    ex.forward(data=mx.nd.array([1.0, 2.0]))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [2.0, 4.0])


def test_a_bulked_forward_reads_each_call_s_sources_and_writes_the_arguments_it_copies(monkeypatch):
    # what the copies add to the pass's vars is worked out once per set of arguments given; the
    # sources' vars are each call's own
    ex = bind_net(mlp(), MLP_SHAPES, True, monkeypatch)
    pushed = []

    def note(ctx, fn, args, reads, writes, name, work=None, **kwargs):  # records, then pushes
        pushed.append((list(reads), list(writes)))
        push(ctx, fn, args, reads, writes, name, work, **kwargs)

    from lazynd_sym.executor import run

    push = run.push
    monkeypatch.setattr(run, "push", note)
    data_arg, label_arg = ex.arg_dict["data"], ex.arg_dict["softmax_label"]
    for _ in range(2):
        data, label = mx.nd.ones(MLP_SHAPES["data"]), mx.nd.zeros(MLP_SHAPES["softmax_label"])
        ex.forward(is_train=True, data=data, softmax_label=label)
        reads, writes = pushed.pop()
        assert data.var in reads and label.var in reads
        assert data_arg.var in writes and label_arg.var in writes
        assert data_arg.var not in reads and label_arg.var not in reads
        ex.forward(is_train=True, data=data)  # another set: the label argument is read, not written
        reads, writes = pushed.pop()
        assert data.var in reads and label_arg.var in reads and data_arg.var not in reads
        assert data_arg.var in writes and label_arg.var not in writes
    assert len(ex._copies_access) == 2  # one entry per set of arguments, not per call
    np.testing.assert_array_equal(data_arg.asnumpy(), data.asnumpy())
