"""``FTML``, ``LAMB``, ``LARS`` and ``LBSGD``: four steps on two parameters give MXNet 1.9.1's weights."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

NAMES = {0: "fc_weight", 1: "fc_bias"}


def _initial() -> list:
    return [mx.nd.array([1.0, -1.0, 0.25]), mx.nd.array([[2.0, 3.0]])]


def _grad(w: mx.nd.NDArray, step: int, i: int) -> mx.nd.NDArray:
    return mx.nd.array(np.sin(np.arange(w.size).reshape(w.shape) + step + i) * 2)


def _steps(name: str, steps: int = 4, **kwargs: float) -> list[np.ndarray]:
    opt = mx.optimizer.create(name, param_idx2name=NAMES, **kwargs)
    weights = _initial()
    states = [opt.create_state(i, w) for i, w in enumerate(weights)]
    for step in range(steps):
        for i, w in enumerate(weights):
            opt.update(i, w, _grad(w, step, i), states[i])
    return [w.asnumpy() for w in weights]


# (name, kwargs, weights after four steps in MXNet 1.9.1, printed to 6 decimals)
CASES = [
    (
        "ftml",
        {"learning_rate": 0.1},
        [[0.8363900184631348, -1.1271799802780151, 0.250203013420105], [[1.8728200197219849, 3.000204086303711]]],
    ),
    (
        "ftml",
        {"learning_rate": 0.05, "wd": 0.1, "rescale_grad": 0.5, "clip_gradient": 0.3},
        [[0.8563159704208374, -1.0581949949264526, 0.2336360067129135], [[1.9304089546203613, 2.986435890197754]]],
    ),
    (
        "lamb",
        {"learning_rate": 0.1},
        [[0.6816759705543518, -1.359913945198059, 0.11974599957466125], [[1.0097930431365967, 2.7359280586242676]]],
    ),
    (
        "lamb",
        {
            "learning_rate": 0.05,
            "wd": 0.1,
            "rescale_grad": 0.5,
            "clip_gradient": 0.3,
            "lower_bound": 0.5,
            "upper_bound": 2.0,
        },
        [[0.8310949802398682, -1.15140700340271, 0.1629749983549118], [[1.6790820360183716, 2.914262056350708]]],
    ),
    (
        "lamb",
        {"learning_rate": 0.1, "bias_correction": False, "wd": 0.01},
        [[0.6808050274848938, -1.3586399555206299, 0.1194010004401207], [[1.0097930431365967, 2.735929012298584]]],
    ),
    (
        "lars",
        {"learning_rate": 0.1, "eta": 1.0},
        [[0.7671970129013062, -1.1336950063705444, 0.338331013917923], [[1.7729829549789429, 3.1330618858337402]]],
    ),
    (
        "lars",
        {
            "learning_rate": 0.1,
            "eta": 0.5,
            "momentum": 0.9,
            "wd": 0.1,
            "rescale_grad": 0.5,
            "clip_gradient": 0.8,
            "eps": 0.001,
        },
        [[0.7504540085792542, -1.1802979707717896, 0.1981540024280548], [[1.5569469928741455, 2.910429000854492]]],
    ),
    (
        "lbsgd",
        {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
        [[0.16195200383663177, -1.962594985961914, 0.026806000620126724], [[1.0261319875717163, 2.777467966079712]]],
    ),
    (
        "lbsgd",
        {"learning_rate": 0.1, "batch_scale": 2, "warmup_epochs": 1, "updates_per_epoch": 4},
        [[0.6636959910392761, -1.1394790410995483, 0.4355829954147339], [[1.8605209589004517, 3.1855831146240234]]],
    ),
    (
        "lbsgd",
        {"learning_rate": 0.1, "warmup_strategy": "lars", "wd": 0.1},
        [[0.752252995967865, -1.1058299541473389, 0.32919201254844666], [[1.581820011138916, 3.242877960205078]]],
    ),
    (
        "lbsgd",
        {"learning_rate": 0.1, "batch_scale": 4, "warmup_strategy": "sqrt", "warmup_epochs": 1, "updates_per_epoch": 8},
        [[0.7047399878501892, -1.1771479845046997, 0.3538320064544678], [[1.8228520154953003, 3.1038320064544678]]],
    ),
]


@pytest.mark.parametrize(("name", "kwargs", "expected"), CASES)
def test_four_steps_match_mxnet(name: str, kwargs: dict, expected: list) -> None:
    for got, want in zip(_steps(name, **kwargs), expected, strict=True):
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=2e-5, atol=2e-6)


def test_lars_momentum_correction_follows_the_scheduler() -> None:
    # MXNet 1.9.1: the momentum is scaled by this update's rate over the last one's
    scheduler = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
    got = _steps("lars", learning_rate=0.1, eta=0.5, momentum=0.9, lr_scheduler=scheduler)
    np.testing.assert_allclose(got[0], [0.937722, -1.126581, 0.175494], rtol=2e-5)
    np.testing.assert_allclose(got[1], [[1.18033, 2.432211]], rtol=2e-5)


def _lars_six_parameters_through_the_updater() -> list[list[float]]:
    names = {i: f"l{i // 2}_{'weight' if i % 2 == 0 else 'bias'}" for i in range(6)}
    scheduler = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
    opt = mx.optimizer.create(
        "lars", learning_rate=0.1, eta=0.5, momentum=0.9, param_idx2name=names, lr_scheduler=scheduler
    )
    updater = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(np.cos(np.arange(3) + i) * (i + 1)) for i in range(6)]
    for step in range(3):
        updater(list(range(6)), [mx.nd.array(np.sin(np.arange(3) + step + i) * 2) for i in range(6)], weights)
    return [w.asnumpy().tolist() for w in weights]


# MXNet 1.9.1's weights after three updates of six parameters given to its updater as one list
# (the first four are the same with either aggregation size)
LARS_FIRST_FOUR = [
    [0.959123, 0.438665, -0.4851],
    [0.663594, -1.115439, -1.868943],
    [-1.473992, -2.887096, -1.645816],
    [-3.848927, -2.211437, 1.459239],
]


@pytest.mark.parametrize(
    ("size", "last_two"),
    [
        # groups of 4 (MXNet's default): the rate's change corrects the first group's momentum only
        (None, [[-2.533675, 2.064976, 4.765098], [2.24195, 5.738169, 3.958743]]),
        # one group of all six: every momentum is corrected
        ("6", [[-2.778726, 1.80744, 4.731854], [2.026564, 5.708637, 4.142217]]),
    ],
)
def test_lars_steps_a_list_in_groups_of_the_aggregation_size_as_mxnet(monkeypatch, size, last_two) -> None:
    if size is None:
        monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    else:
        monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", size)
    got = _lars_six_parameters_through_the_updater()
    np.testing.assert_allclose(got, LARS_FIRST_FOUR + last_two, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["ftml", "lamb", "lars", "lbsgd"])
def test_registered_by_name(name: str) -> None:
    opt = mx.optimizer.create(name)
    assert type(opt).__name__ == name.upper()
    assert isinstance(opt, getattr(mx.optimizer, name.upper()))


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("lars", {"eta": 0.5}),
        ("lars", {"eta": 0.5, "momentum": 0.9}),
        ("lamb", {"wd": 0.01, "lower_bound": 0.5, "upper_bound": 3.0, "clip_gradient": 1.0}),
    ],
)
def test_updater_with_lists_matches_one_at_a_time(name: str, kwargs: dict) -> None:
    results = []
    for together in (False, True):
        opt = mx.optimizer.create(name, learning_rate=0.1, param_idx2name=NAMES, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        weights = _initial()
        for step in range(3):
            grads = [_grad(w, step, i) for i, w in enumerate(weights)]
            if together:
                updater([0, 1], grads, weights)
            else:
                for i in range(2):
                    updater(i, grads[i], weights[i])
        results.append([w.asnumpy() for w in weights])
    for one, many in zip(*results, strict=True):
        np.testing.assert_allclose(one, many, rtol=1e-6)


@pytest.mark.parametrize(("name", "kwargs"), [("lamb", {}), ("lars", {"momentum": 0.9, "eta": 0.5}), ("ftml", {})])
def test_multi_precision_follows_the_float32_update(name: str, kwargs: dict) -> None:
    results = []
    for dtype in ("float32", "float16"):
        opt = mx.optimizer.create(name, learning_rate=0.05, multi_precision=True, param_idx2name=NAMES, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        weights = [w.astype(dtype) for w in _initial()]
        for step in range(3):
            for i, w in enumerate(weights):
                updater(i, _grad(w, step, i).astype(dtype), w)
        assert weights[0].dtype == np.dtype(dtype)
        results.append([w.asnumpy().astype(np.float32) for w in weights])
    for full, half in zip(*results, strict=True):
        np.testing.assert_allclose(full, half, rtol=2e-3, atol=2e-3)


def test_lamb_multi_precision_moves_the_master_copy() -> None:
    opt = mx.optimizer.create("lamb", learning_rate=0.1, multi_precision=True)
    weight = mx.nd.array([3.0, -4.0], dtype="float16")
    state = opt.create_state_multi_precision(0, weight)
    master, (mean, var) = state
    opt.update_multi_precision(0, weight, mx.nd.array([0.5, -2.0], dtype="float16"), state)
    np.testing.assert_allclose(master.asnumpy(), [2.646447, -3.646447], rtol=1e-5)


@pytest.mark.parametrize("name", ["ftml", "lamb", "lars", "lbsgd"])
def test_states_pickle_and_restore(name: str) -> None:
    kwargs = {"momentum": 0.9} if name in ("lars", "lbsgd") else {}
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kwargs))
    weight = mx.nd.array([1.0, -1.0, 0.25])
    updater(0, _grad(weight, 0, 0), weight)
    saved = updater.get_states(dump_optimizer=True)
    restored = mx.optimizer.get_updater(mx.optimizer.create(name))
    restored.set_states(saved)
    assert type(restored.optimizer).__name__ == name.upper()
    copy = weight.copy()
    updater(0, _grad(weight, 1, 0), weight)
    restored(0, _grad(copy, 1, 0), copy)
    np.testing.assert_allclose(copy.asnumpy(), weight.asnumpy(), rtol=1e-6)
    pickle.loads(pickle.dumps(restored.optimizer))


def test_lars_decays_only_weights() -> None:
    opt = mx.optimizer.create("lars", wd=0.1, param_idx2name={0: "bn_gamma", 1: "fc_weight"})
    assert opt._get_wd(0) == 0.0
    assert opt._get_wd(1) == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("name", "kwargs", "match"),
    [
        ("lbsgd", {"warmup_strategy": "cosine"}, "LBSGD: warmup_strategy must be one of"),
        ("lbsgd", {"batch_scale": 0}, "LBSGD: batch_scale must be an integer >= 1, got 0"),
        ("lars", {"momentum": 1.5}, "LARS: momentum must be in"),
        ("lamb", {"beta1": 1.0}, "LAMB: beta1 must be in"),
        ("ftml", {"beta2": -0.1}, "FTML: beta2 must be in"),
    ],
)
def test_bad_settings_are_refused_by_name(name: str, kwargs: dict, match: str) -> None:
    with pytest.raises(LazyNDError, match=match):
        mx.optimizer.create(name, **kwargs)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("lamb", {"learning_rate": 0.05}),
        ("ftml", {"learning_rate": 0.2}),
        ("lars", {"learning_rate": 0.5, "eta": 1.0, "momentum": 0.9}),
        ("lbsgd", {"learning_rate": 0.5, "momentum": 0.9}),
    ],
)
def test_module_fit_trains_with_the_optimizer(name: str, params: dict) -> None:
    mx.random.seed(3)
    rng = np.random.default_rng(3)
    data = rng.standard_normal((200, 4)).astype(np.float32)
    label = (data[:, 0] + data[:, 1] > 0).astype(np.float32)
    train = mx.io.NDArrayIter(data, label, batch_size=20, shuffle=False)
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"), context=mx.cpu())
    mod.fit(train, num_epoch=8, optimizer=name, optimizer_params=params, initializer=mx.init.Xavier())
    assert mod.score(train, "acc")[0][1] > 0.85


def test_lbsgd_logs_its_settings_as_mxnet(caplog: pytest.LogCaptureFixture) -> None:
    # MXNet's image-classification fit.py passes the warm-up settings; MXNet 1.9.1 logs these two lines
    with caplog.at_level("INFO", logger="lazynd.optimizer"):
        mx.optimizer.create("lbsgd", batch_scale=2, warmup_epochs=3, warmup_strategy="sqrt", updates_per_epoch=7)
    assert [r.getMessage() for r in caplog.records if r.name == "lazynd.optimizer"] == [
        "Running Large-Batch SGD Algorithm",
        "(Batch_scale=2.000000, warmup_epochs=3, warmup_strategy=sqrt, updates_per_epoch=7)",
    ]
