"""FeedForward on several devices: the batch is split, gradients summed through a KVStore, weights kept equal."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
import lazynd_sym as sym
from lazynd.errors import DataError
from lazynd_sym.executor_group import DataParallelExecutorGroup, split_input_slice
from lazynd_sym.model import FeedForward
from lazynd_sym.model import kvstore_setup as model_module

BATCH = 24
STEPS = 5


def _net() -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=12, name="fc1")
    net = sym.Activation(net, act_type="tanh", name="tanh1")
    net = sym.FullyConnected(net, num_hidden=3, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def _problem(count: int = BATCH * STEPS) -> tuple[np.ndarray, np.ndarray, dict]:
    rng = np.random.default_rng(3)
    data = rng.normal(size=(count, 7)).astype(np.float32)
    label = rng.integers(0, 3, count).astype(np.float32)
    params = {
        "fc1_weight": rng.normal(scale=0.4, size=(12, 7)).astype(np.float32),
        "fc1_bias": rng.normal(scale=0.1, size=(12,)).astype(np.float32),
        "fc2_weight": rng.normal(scale=0.4, size=(3, 12)).astype(np.float32),
        "fc2_bias": np.zeros(3, np.float32),
    }
    return data, label, params


def _train(ctx, kvstore="local", work_load_list=None, epochs: int = 2, optimizer="sgd", **kwargs) -> FeedForward:
    data, label, params = _problem()
    ff = FeedForward(
        _net(),
        ctx=ctx,
        num_epoch=epochs,
        optimizer=optimizer,
        arg_params={k: mx.nd.array(v) for k, v in params.items()},
        progress_bar=False,
        learning_rate=0.5 if optimizer == "sgd" else 0.01,
        wd=1e-3,
        **({"momentum": 0.9} if optimizer == "sgd" else {}),
        **kwargs,
    )
    train = mx.io.NDArrayIter(data, label, batch_size=BATCH, shuffle=False, layout="NC")
    return ff.fit(train, kvstore=kvstore, work_load_list=work_load_list)


def _weights(ff: FeedForward) -> dict[str, np.ndarray]:
    return {k: v.asnumpy() for k, v in ff.arg_params.items()}


def _assert_same_weights(got: FeedForward, want: FeedForward) -> None:
    got_w, want_w = _weights(got), _weights(want)
    assert sorted(got_w) == sorted(want_w)
    for name in want_w:
        np.testing.assert_allclose(got_w[name], want_w[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.fixture(scope="module")
def single_device() -> FeedForward:
    return _train(mx.cpu(0))


def test_training_moves_the_weights(single_device) -> None:
    _, _, start = _problem()
    assert not np.allclose(_weights(single_device)["fc1_weight"], start["fc1_weight"], atol=1e-3)


@pytest.mark.parametrize("kvstore", ["local", "device"])
def test_two_devices_match_one_device_on_the_combined_batch(single_device, kvstore) -> None:
    _assert_same_weights(_train([mx.cpu(0), mx.cpu(1)], kvstore=kvstore), single_device)


def test_three_devices_with_uneven_work_loads_match_one_device(single_device) -> None:
    ff = _train([mx.cpu(0), mx.cpu(1), mx.cpu(2)], work_load_list=[1, 2, 3])
    _assert_same_weights(ff, single_device)


def test_updating_on_the_devices_instead_of_the_store_gives_the_same_weights(single_device, monkeypatch) -> None:
    # a 'local' store only sums parameters above the limit; each device then runs the optimizer itself
    monkeypatch.setattr(model_module, "LOCAL_UPDATE_LIMIT", 0)
    assert model_module.create_kvstore("local", 2, {"w": mx.nd.zeros((2,))})[1] is False
    _assert_same_weights(_train([mx.cpu(0), mx.cpu(1)]), single_device)


def test_a_kvstore_object_runs_the_optimizer(single_device) -> None:
    store = lazynd_kv.create("local")
    ff = _train([mx.cpu(0), mx.cpu(1)], kvstore=store)
    _assert_same_weights(ff, single_device)
    out = mx.nd.zeros((12, 7))
    store.pull(0, out=out)  # key 0 is fc1_weight: the store holds the trained weight
    np.testing.assert_allclose(out.asnumpy(), _weights(ff)["fc1_weight"], rtol=1e-6)


def test_adam_on_two_devices_matches_one_device() -> None:
    want = _train(mx.cpu(0), optimizer="adam", epochs=1)
    got = _train([mx.cpu(0), mx.cpu(1)], optimizer="adam", epochs=1)
    _assert_same_weights(got, want)


@pytest.mark.parametrize("kvstore", ["local", "aggregate_only"])
def test_every_device_holds_the_same_weights_after_every_batch(kvstore, monkeypatch) -> None:
    if kvstore == "aggregate_only":  # each device runs its own optimizer on the summed gradients
        monkeypatch.setattr(model_module, "LOCAL_UPDATE_LIMIT", 0)
    data, label, params = _problem()
    seen = []

    def check_devices(param) -> None:
        group = param.locals["group"]
        assert [exe.arg_dict["data"].shape for exe in group.execs] == [(BATCH // 2, 7)] * 2
        for per_device in group.param_arrays:
            np.testing.assert_array_equal(per_device[0].asnumpy(), per_device[1].asnumpy())
        seen.append(param.nbatch)

    ff = FeedForward(
        _net(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=1, learning_rate=0.5, momentum=0.9, progress_bar=False
    )
    ff.fit(mx.io.NDArrayIter(data, label, batch_size=BATCH), batch_end_callback=check_devices, kvstore="local")
    assert seen == list(range(1, STEPS + 1))


def test_predict_and_score_after_training_on_two_devices(single_device) -> None:
    data, label, _ = _problem()
    ff = _train([mx.cpu(0), mx.cpu(1)])
    probs = ff.predict(data[:50])
    assert probs.shape == (50, 3)
    np.testing.assert_allclose(probs, single_device.predict(data[:50]), rtol=1e-4, atol=1e-6)
    score = ff.score(mx.io.NDArrayIter(data, label, batch_size=BATCH))
    assert score == pytest.approx(single_device.score(mx.io.NDArrayIter(data, label, batch_size=BATCH)))


def test_training_metric_counts_each_example_once_with_padding() -> None:
    data, label, params = _problem(50)  # two batches of 24 and one padded batch of 2 (+22 pad)
    seen = []
    params = {k: mx.nd.array(v) for k, v in params.items()}
    ff = FeedForward(_net(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=1, arg_params=params, progress_bar=False)
    ff.fit(
        mx.io.NDArrayIter(data, label, batch_size=BATCH, last_batch_handle="pad"),
        batch_end_callback=lambda p: seen.append(p.eval_metric.num_inst),
    )
    assert seen == [24, 48, 50]


def test_several_devices_without_a_kvstore_each_train_their_own_copy() -> None:
    # MXNet 1.9.1 (and lazynd's Module): without a store each device updates its own copy from its
    # slice of every batch (rescale_grad stays 1 / the whole batch) and arg_params gets the copies' mean.
    # One device on half of each batch at half the rate (no weight decay) makes the same updates.
    data, label, params = _problem()

    def fit(ctx, rows: np.ndarray, batch: int, rate: float) -> dict[str, np.ndarray]:
        ff = FeedForward(
            _net(),
            ctx=ctx,
            num_epoch=1,
            learning_rate=rate,
            arg_params={k: mx.nd.array(v) for k, v in params.items()},
            progress_bar=False,
        )
        ff.fit(mx.io.NDArrayIter(data[rows], label[rows], batch_size=batch), kvstore=None)
        return _weights(ff)

    both = fit([mx.cpu(0), mx.cpu(1)], np.arange(BATCH * STEPS), BATCH, 0.5)
    half = BATCH // 2
    copies = [
        fit(
            mx.cpu(0),
            np.concatenate([np.arange(s * BATCH + k * half, s * BATCH + (k + 1) * half) for s in range(STEPS)]),
            half,
            0.25,
        )
        for k in (0, 1)
    ]
    assert not np.allclose(copies[0]["fc2_weight"], copies[1]["fc2_weight"])
    for name, value in both.items():
        np.testing.assert_allclose(value, (copies[0][name] + copies[1][name]) / 2, rtol=1e-4, atol=1e-6, err_msg=name)


def test_a_batch_too_small_for_the_devices_is_refused() -> None:
    data, label, _ = _problem(4)
    ff = FeedForward(_net(), ctx=[mx.cpu(i) for i in range(3)], num_epoch=1, numpy_batch_size=2, progress_bar=False)
    with pytest.raises(ValueError, match="a batch of 2 cannot be split over 3 devices"):  # as MXNet's
        ff.fit(data, label)


def test_work_load_list_must_have_one_entry_per_device() -> None:
    data, label, _ = _problem(48)
    ff = FeedForward(_net(), ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=1, progress_bar=False)
    with pytest.raises(DataError, match="work_load_list has 3 entries for 2 devices"):
        ff.fit(data, label, work_load_list=[1, 1, 1])


@pytest.mark.parametrize(
    ("batch", "loads", "sizes"), [(10, [1, 1], [5, 5]), (7, [1, 1], [4, 3]), (12, [1, 2, 3], [2, 4, 6])]
)
def test_split_input_slice_follows_the_work_loads(batch, loads, sizes) -> None:
    slices = split_input_slice(batch, loads)
    assert [s.stop - s.start for s in slices] == sizes
    assert slices[0].start == 0 and slices[-1].stop == batch


def test_split_input_slice_rejects_non_positive_work_loads() -> None:
    with pytest.raises(DataError, match=r"one positive number per device, got \[1, 0\]"):
        split_input_slice(8, [1, 0])


def test_the_batch_is_split_along_the_layout_batch_axis() -> None:
    # a time-major input (layout TNC): the batch is axis 1, the label's is axis 0
    data = sym.Variable("data")
    net = sym.sum(data, axis=(0, 2))
    group = DataParallelExecutorGroup(
        net, [mx.cpu(0), mx.cpu(1)], None, [mx.io.DataDesc("data", (3, 4, 2), layout="TNC")], [], {}, {}, False
    )
    assert [exe.arg_dict["data"].shape for exe in group.execs] == [(3, 2, 2), (3, 2, 2)]
    batch = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    group.load_batch(["data"], [mx.nd.array(batch)])
    group.forward()
    got = np.concatenate([exe.outputs[0].asnumpy() for exe in group.execs])
    np.testing.assert_allclose(got, batch.sum(axis=(0, 2)))


@pytest.mark.parametrize("contexts", [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]])
def test_load_batch_copies_into_each_executors_bound_input(contexts) -> None:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    group = DataParallelExecutorGroup(
        net, contexts, None, [("data", (4, 3))], ["fc_weight", "fc_bias"], params, {}, True
    )
    targets = group.input_arrays("data")
    assert targets == [exe.arg_dict["data"] for exe in group.execs] and group.input_arrays("data") is targets
    batch = np.arange(12, dtype=np.float32).reshape(4, 3)
    group.load_batch(["data"], [mx.nd.array(batch)])
    np.testing.assert_array_equal(np.concatenate([t.asnumpy() for t in targets]), batch)
    with pytest.raises(DataError, match="the executors were bound for batches of 4"):
        group.load_batch(["data"], [mx.nd.zeros((3, 3))])


def test_aux_states_are_averaged_over_devices() -> None:
    net = sym.BatchNorm(sym.Variable("data"), name="bn")
    group = DataParallelExecutorGroup(
        net, [mx.cpu(0), mx.cpu(1)], None, [("data", (4, 2))], ["bn_gamma", "bn_beta"], {}, {}, True
    )
    group.aux_arrays[0][0][:] = 1.0  # bn_moving_mean
    group.aux_arrays[0][1][:] = 3.0
    aux = {"bn_moving_mean": mx.nd.zeros((2,)), "bn_moving_var": mx.nd.zeros((2,))}
    group.copy_params_to({}, aux)
    np.testing.assert_allclose(aux["bn_moving_mean"].asnumpy(), [2.0, 2.0])
