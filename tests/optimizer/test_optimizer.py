"""lazynd.optimizer and lazynd.lr_scheduler: registry, multipliers, updates vs NumPy, states."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
from lazynd import lr_scheduler, optimizer
from lazynd.errors import LazyNDError
from lazynd.testing import assert_almost_equal


@pytest.fixture
def problem() -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(5)
    return rng.standard_normal(6).astype(np.float32), [rng.standard_normal(6).astype(np.float32) * 3 for _ in range(4)]


def run(opt: optimizer.Optimizer, w0: np.ndarray, grads: list[np.ndarray], index=0) -> np.ndarray:
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0)
    for g in grads:
        updater(index, mx.nd.array(g), weight)
    return weight.asnumpy()


def prep(g: np.ndarray, rescale: float = 0.5, clip: float = 1.0) -> np.ndarray:
    return np.clip(g * rescale, -clip, clip)


KW = {"wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 1.0}


def test_sgd_with_momentum_matches_reference(problem):
    w0, grads = problem
    w, m = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        m = 0.9 * m - 0.1 * (prep(g) + 0.01 * w)
        w = w + m
    assert_almost_equal(run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, **KW), w0, grads), w, rtol=1e-5)


def test_plain_sgd_and_ccsgd_alias_match_reference(problem):
    w0, grads = problem
    w = w0.astype(np.float64)
    for g in grads:
        w = w - 0.1 * (prep(g) + 0.01 * w)
    assert_almost_equal(run(optimizer.create("ccsgd", learning_rate=0.1, **KW), w0, grads), w, rtol=1e-5)
    assert isinstance(optimizer.create("ccsgd"), optimizer.SGD)


def test_nag_matches_reference(problem):
    w0, grads = problem
    w, m = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g) + 0.01 * w
        m = 0.9 * m - 0.1 * eff
        w = w + 0.9 * m - 0.1 * eff
    assert_almost_equal(run(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW), w0, grads), w, rtol=1e-5)


def test_nag_given_lists_of_parameters_is_still_nesterov(problem):
    # a Module's updater hands lists; they went to SGD's fused multi_sgd_mom_update (heavy-ball
    # momentum). MXNet 1.9.1, updater([0, 1], ...) with lr 0.1, momentum 0.9, rescale_grad 0.1:
    updater = optimizer.get_updater(optimizer.create("nag", learning_rate=0.1, momentum=0.9, rescale_grad=0.1))
    weights = [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0])]
    for g in ([0.5, -1.0], [0.25, 0.5], [1.0, 1.0]):
        updater([0, 1], [mx.nd.array(g), mx.nd.array([1.0])], weights)
    assert_almost_equal(weights[0].asnumpy(), np.array([0.95702994, 2.00184], np.float32), rtol=1e-6)
    assert_almost_equal(weights[1].asnumpy(), np.array([2.9195101], np.float32), rtol=1e-6)
    w0, grads = problem
    one_by_one = run(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW), w0, grads)
    updater = optimizer.get_updater(optimizer.create("nag", learning_rate=0.1, momentum=0.9, **KW))
    pair = [mx.nd.array(w0), mx.nd.array(w0)]
    for g in grads:
        updater([0, 1], [mx.nd.array(g), mx.nd.array(g)], pair)
    assert_almost_equal(pair[0].asnumpy(), one_by_one, rtol=1e-6)


def test_adam_applies_bias_correction_to_the_learning_rate(problem):
    w0, grads = problem
    w, m, v = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for t, g in enumerate(grads, 1):
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        m = 0.9 * m + 0.1 * eff
        v = 0.999 * v + 0.001 * eff**2
        lr = 0.01 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w = w - lr * m / (np.sqrt(v) + 1e-8)
    assert_almost_equal(run(optimizer.create("adam", learning_rate=0.01, **KW), w0, grads), w, rtol=1e-4, atol=1e-6)


def test_rmsprop_matches_reference(problem):
    w0, grads = problem
    w, n = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        n = 0.1 * eff**2 + 0.9 * n
        w = w - 0.01 * eff / np.sqrt(n + 1e-8)
    assert_almost_equal(run(optimizer.create("rmsprop", learning_rate=0.01, **KW), w0, grads), w, rtol=1e-4, atol=1e-6)


def test_centered_rmsprop_matches_reference(problem):
    w0, grads = problem
    w, n, gm, delta = w0.astype(np.float64), np.zeros(6), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = np.clip(0.5 * g + 0.01 * w, -1, 1)
        n = 0.1 * eff**2 + 0.9 * n
        gm = 0.1 * eff + 0.9 * gm
        delta = 0.9 * delta - 0.01 * eff / np.sqrt(n - gm**2 + 1e-8)
        w = np.clip(w + delta, -1, 1)
    opt = optimizer.create("rmsprop", learning_rate=0.01, centered=True, clip_weights=1.0, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-4, atol=1e-5)


def test_adagrad_matches_reference(problem):
    w0, grads = problem
    w, h = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g)
        h = h + eff**2
        w = w - 0.1 * (eff / np.sqrt(h + 1e-7) + 0.01 * w)
    assert_almost_equal(run(optimizer.create("adagrad", learning_rate=0.1, **KW), w0, grads), w, rtol=1e-5)


def test_adadelta_matches_reference(problem):
    w0, grads = problem
    w, acc_g, acc_d = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = prep(g)
        acc_g = 0.9 * acc_g + 0.1 * eff**2
        step = np.sqrt(acc_d + 1e-5) / np.sqrt(acc_g + 1e-5) * eff
        acc_d = 0.9 * acc_d + 0.1 * step**2
        w = w - step - 0.01 * w
    assert_almost_equal(run(optimizer.create("adadelta", **KW), w0, grads), w, rtol=1e-5)


def test_ftrl_matches_reference(problem):
    w0, grads = problem
    w, z, n = w0.astype(np.float64), np.zeros(6), np.zeros(6)
    for g in grads:
        eff = prep(g)
        z += eff - (np.sqrt(n + eff**2) - np.sqrt(n)) * w / 0.1
        n += eff**2
        w = (np.sign(z) * 0.02 - z) / ((1.0 + np.sqrt(n)) / 0.1 + 0.01) * (np.abs(z) > 0.02)
    opt = optimizer.create("ftrl", lamda1=0.02, **KW)
    assert opt.lr == 0.1  # Ftrl's own default learning rate
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-4, atol=1e-6)


def test_sgld_takes_half_a_step_plus_seeded_gaussian_noise(problem):
    w0, grads = problem
    mx.random.seed(7)
    got = run(optimizer.create("sgld", learning_rate=0.04, **KW), w0, grads[:1])
    mx.random.seed(7)
    noise = mx.random.normal(0.0, 0.2, shape=w0.shape).asnumpy()
    expected = w0 - 0.02 * (prep(grads[0]) + 0.01 * w0) + noise
    assert_almost_equal(got, expected, rtol=1e-5, atol=1e-6)


def test_sgld_noise_has_variance_lr():
    weight = mx.nd.zeros((100_000,))
    optimizer.create("sgld", learning_rate=0.04).update(0, weight, mx.nd.zeros((100_000,)), None)
    values = weight.asnumpy()
    assert abs(values.mean()) < 0.005 and abs(values.std() - 0.2) < 0.005


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_dcasgd_matches_reference(problem, momentum):
    w0, grads = problem
    w, previous, mom = w0.astype(np.float64), w0.astype(np.float64), np.zeros(6)
    for g in grads:
        eff = prep(g)
        step = -0.05 * (eff + 0.01 * w + 0.1 * eff * eff * (w - previous))
        mom = momentum * mom + step
        previous = w
        w = w + mom
    opt = optimizer.create("dcasgd", learning_rate=0.05, momentum=momentum, lamda=0.1, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.0, 0.8])
def test_signum_matches_reference(problem, momentum):
    w0, grads = problem
    w, mom = w0.astype(np.float64), np.zeros(6)
    for g in grads:
        if momentum:
            mom = momentum * mom - (1 - momentum) * (prep(g) + 0.01 * w)
            w = (1 - 0.05 * 0.02) * w + 0.05 * np.sign(mom)
        else:
            w = (1 - 0.05 * 0.01) * w - 0.05 * np.sign(g)
    opt = optimizer.create("signum", learning_rate=0.05, momentum=momentum, wd_lh=0.02, **KW)
    assert_almost_equal(run(opt, w0, grads), w, rtol=1e-5, atol=1e-6)


def test_unknown_optimizer_name_is_an_error():
    with pytest.raises(LazyNDError, match="unknown optimizer 'sgdd'"):
        optimizer.create("sgdd")


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("sgd", {"learning_rate": -1}, "learning_rate"),
        ("sgd", {"momentum": 1.5}, "momentum"),
        ("sgd", {"clip_gradient": -2}, "clip_gradient"),
        ("adam", {"beta1": 1.0}, "beta1"),
        ("rmsprop", {"gamma1": 2}, "gamma1"),
        ("adadelta", {"rho": -0.5}, "rho"),
        ("rmsprop", {"gamma2": 1.0}, "gamma2"),
        ("ftrl", {"lamda1": -1}, "lamda1"),
        ("dcasgd", {"momentum": 2}, "momentum"),
        ("signum", {"momentum": 1.0}, "momentum"),
        ("signum", {"wd_lh": -1}, "wd_lh"),
    ],
)
def test_bad_hyperparameters_are_errors(name, kwargs, message):
    with pytest.raises(LazyNDError, match=message):
        optimizer.create(name, **kwargs)


def test_register_adds_a_custom_optimizer():
    @optimizer.register
    class HalveOnly(optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight * 0.5

    opt = optimizer.Optimizer.create_optimizer("halveonly")
    assert run(opt, np.ones(2, np.float32), [np.ones(2, np.float32)]).tolist() == [0.5, 0.5]


def test_biases_get_no_weight_decay_and_multipliers_apply_by_name():
    opt = optimizer.create(
        "sgd", learning_rate=1.0, wd=0.1, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"}
    )
    opt.set_lr_mult({"fc_weight": 0.5})
    assert opt._get_wd(0) == pytest.approx(0.1)
    assert opt._get_wd(1) == 0.0
    assert opt._get_wd(2) == pytest.approx(0.1)
    assert opt._get_lr(0) == 0.5
    assert opt._get_lr(1) == 1.0


def test_multipliers_come_from_symbol_attributes():
    import lazynd_sym as sym

    net = sym.Variable("w", lr_mult=3.0, wd_mult=0.0)
    opt = optimizer.create("sgd", learning_rate=0.1, wd=0.2, sym=net, param_idx2name={0: "w"})
    assert opt._get_lr(0) == pytest.approx(0.3)
    assert opt._get_wd(0) == 0.0


def test_lr_scheduler_drives_the_learning_rate_by_update_count():
    opt = optimizer.create("sgd", learning_rate=1.0, lr_scheduler=lr_scheduler.FactorScheduler(step=2, factor=0.5))
    weight = mx.nd.zeros((1,))
    updater = optimizer.get_updater(opt)
    for _ in range(5):
        updater(0, mx.nd.ones((1,)), weight)
    # updates 1-2 at lr 1, 3-4 at 0.5, 5 at 0.25
    assert_almost_equal(weight.asnumpy(), [-3.25])
    assert opt.num_update == 5


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_update_multi_matches_one_update_per_parameter(momentum):
    rng = np.random.default_rng(7)
    names = {0: "a_weight", 1: "a_bias", 2: "b_weight"}
    shapes = [(3, 4), (3,), (2, 3)]
    w0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) * 3 for s in shapes] for _ in range(5)]
    results = []
    for multi in (True, False):
        opt = optimizer.create(
            "sgd", learning_rate=0.5, momentum=momentum, wd=0.1, rescale_grad=0.5, clip_gradient=1.0,
            param_idx2name=names, lr_scheduler=lr_scheduler.FactorScheduler(step=2, factor=0.5),
        )  # fmt: skip
        opt.set_lr_mult({"b_weight": 0.25})
        opt.set_wd_mult({0: 2.0})
        updater = optimizer.get_updater(opt)
        weights = [mx.nd.array(w) for w in w0]
        for batch in grads:
            g = [mx.nd.array(x) for x in batch]
            if multi:
                updater([0, 1, 2], g, weights)
            else:
                for i in range(3):
                    updater(i, g[i], weights[i])
        results.append(([w.asnumpy() for w in weights], opt.num_update, dict(opt._index_update_count)))
    (multi_w, multi_n, multi_counts), (single_w, single_n, single_counts) = results
    for a, b in zip(multi_w, single_w, strict=True):
        assert_almost_equal(a, b, rtol=1e-6, atol=1e-7)
    assert multi_n == single_n == 5 and multi_counts == single_counts == {0: 5, 1: 5, 2: 5}


def test_update_multi_asks_the_lr_scheduler_once_per_call():
    calls = []

    class Counting(lr_scheduler.LRScheduler):
        def __call__(self, num_update: int) -> float:
            calls.append(num_update)
            return 0.1

    opt = optimizer.create("sgd", lr_scheduler=Counting())
    weights = [mx.nd.zeros((2,)) for _ in range(3)]
    optimizer.get_updater(opt)([0, 1, 2], [mx.nd.ones((2,))] * 3, weights)
    assert calls == [1]  # as MXNet 1.x's _get_lrs: one rate for every parameter of the call
    assert_almost_equal(weights[2].asnumpy(), [-0.1, -0.1])


def test_update_multi_of_mixed_dtypes_updates_each_parameter_alone():
    opt = optimizer.create("sgd", learning_rate=1.0)
    weights = [mx.nd.zeros((2,)), mx.nd.zeros((2,), dtype="float64")]
    optimizer.get_updater(opt)([0, 1], [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")], weights)
    assert [w.asnumpy().tolist() for w in weights] == [[-1.0, -1.0], [-1.0, -1.0]]
    assert weights[1].dtype == np.float64 and opt.num_update == 1


def test_begin_num_update_offsets_the_count():
    opt = optimizer.create("sgd", begin_num_update=10)
    optimizer.get_updater(opt)(0, mx.nd.ones((1,)), mx.nd.zeros((1,)))
    assert opt.num_update == 11


def test_factor_scheduler_steps_and_floors():
    sched = lr_scheduler.FactorScheduler(step=10, factor=0.1, stop_factor_lr=0.005, base_lr=1.0)
    assert [sched(n) for n in (1, 10, 11, 21, 31, 41)] == pytest.approx([1.0, 1.0, 0.1, 0.01, 0.005, 0.005])


def test_step_schedulers_log_mxnets_lines_when_the_rate_changes(caplog):
    # MXNet 1.9.1's lines, which training-log parsers look for
    factor = lr_scheduler.FactorScheduler(step=3, factor=0.5, stop_factor_lr=0.3, base_lr=1.0)
    multi = lr_scheduler.MultiFactorScheduler(step=[2], factor=0.5, base_lr=1.0)
    with caplog.at_level("INFO"):
        for n in range(9):
            factor(n)
            multi(n)
    assert [r.getMessage() for r in caplog.records] == [
        "Update[3]: Change learning rate to 5.00000e-01",
        "Update[4]: Change learning rate to 5.00000e-01",
        "Update[7]: now learning rate arrived at 3.00000e-01, will not change in the future",
    ]


def test_multi_factor_scheduler_steps_at_each_listed_update():
    sched = lr_scheduler.MultiFactorScheduler(step=[5, 8], factor=0.5, base_lr=2.0)
    assert [sched(n) for n in (5, 6, 8, 9, 100)] == pytest.approx([2.0, 1.0, 1.0, 0.5, 0.5])


@pytest.mark.parametrize(
    "make",
    [
        lambda: lr_scheduler.FactorScheduler(step=0),
        lambda: lr_scheduler.FactorScheduler(step=5, factor=2.0),
        lambda: lr_scheduler.MultiFactorScheduler(step=[5, 3]),
        lambda: lr_scheduler.MultiFactorScheduler(step=[]),
    ],
)
def test_bad_scheduler_arguments_are_errors(make):
    with pytest.raises(LazyNDError):
        make()


def test_updater_states_round_trip_through_bytes(problem):
    w0, grads = problem
    opt = optimizer.create("adam", learning_rate=0.01)
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0)
    updater(0, mx.nd.array(grads[0]), weight)
    saved = updater.get_states()
    assert isinstance(saved, bytes)
    restored = optimizer.get_updater(optimizer.create("adam", learning_rate=0.01))
    restored.set_states(saved)
    for a, b in zip(updater.states[0], restored.states[0], strict=True):
        assert_almost_equal(a.asnumpy(), b.asnumpy())


def test_updater_rejects_states_that_are_not_pickled_dicts():
    import pickle

    updater = optimizer.get_updater(optimizer.create("sgd"))
    with pytest.raises(LazyNDError, match="could not unpickle"):
        updater.set_states(b"not a pickle")
    with pytest.raises(LazyNDError, match="expected a pickled dict"):
        updater.set_states(pickle.dumps([1, 2]))


def test_sgd_without_momentum_keeps_no_state():
    assert optimizer.create("sgd").create_state(0, mx.nd.ones((2,))) is None
    assert optimizer.create("sgd", momentum=0.9).create_state(0, mx.nd.ones((2,))).shape == (2,)


# -- updaters given lists: one multi-parameter operation -----------------------------------------
def _params(seed: int) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (3,), (2, 2)]
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return weights, [[rng.standard_normal(s).astype(np.float32) * 3 for s in shapes] for _ in range(3)]


@pytest.mark.parametrize(("name", "kwargs"), [("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {})])
def test_updater_given_lists_matches_one_call_per_parameter(name, kwargs):
    w0, steps = _params(7)
    names = {0: "fc_weight", 1: "fc_bias", 2: "out_weight"}

    def make():
        opt = optimizer.create(name, learning_rate=0.1, param_idx2name=names, **KW, **kwargs)
        opt.set_lr_mult({"out_weight": 0.5})
        return opt, optimizer.get_updater(opt)

    (opt_a, listed), (opt_b, single) = make(), make()
    weights_a, weights_b = [mx.nd.array(w) for w in w0], [mx.nd.array(w) for w in w0]
    for grads in steps:
        listed([0, 1, 2], [mx.nd.array(g) for g in grads], weights_a)
        for i, g in enumerate(grads):
            single(i, mx.nd.array(g), weights_b[i])
    for a, b in zip(weights_a, weights_b, strict=True):
        assert_almost_equal(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)
    assert opt_a.num_update == opt_b.num_update == 3
    assert sorted(listed.states) == [0, 1, 2]


def test_updater_given_lists_of_different_lengths_is_an_error():
    updater = optimizer.get_updater(optimizer.create("sgd"))
    with pytest.raises(LazyNDError, match="2 indices, 1 gradients and 2 weights"):
        updater([0, 1], [mx.nd.ones((2,))], [mx.nd.ones((2,)), mx.nd.ones((2,))])


def test_sgd_with_parameters_of_two_dtypes_falls_back_to_one_update_each():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.5))
    weights = [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")]
    grads = [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")]
    updater([0, 1], grads, weights)
    for w in weights:
        assert_almost_equal(w.asnumpy(), np.full(2, 0.5))
    assert weights[1].dtype == np.float64


def _float32_sgd_momentum(w0: np.ndarray, grads: list[np.ndarray], lr: float, momentum: float) -> np.ndarray:
    master, mom = w0.astype(np.float32), np.zeros(w0.shape, np.float32)
    for g in grads:
        mom = momentum * mom - lr * g.astype(np.float32)
        master = master + mom
    return master


def test_multi_precision_updates_float16_weights_through_a_float32_master_copy():
    # steps of 1e-4 on weights near 1 are below float16's resolution: only a float32 copy keeps them
    w0 = np.full(4, 1.0, np.float16)
    grads = [np.full(4, -1e-4, np.float16)] * 10
    opt = optimizer.create("sgd", learning_rate=1.0, momentum=0.5, multi_precision=True)
    updater = optimizer.get_updater(opt)
    weight = mx.nd.array(w0, dtype="float16")
    for g in grads:
        updater(0, mx.nd.array(g, dtype="float16"), weight)
    master = _float32_sgd_momentum(w0, grads, lr=1.0, momentum=0.5)
    assert weight.dtype == np.float16
    np.testing.assert_array_equal(weight.asnumpy(), master.astype(np.float16))
    mom_state, master_state = updater.states[0]
    assert master_state.dtype == np.float32 and mom_state.dtype == np.float32
    np.testing.assert_allclose(master_state.asnumpy(), master, rtol=1e-6)
    assert weight.asnumpy()[0] > 1.0  # plain float16 updates would have left it at 1.0


def test_multi_precision_through_lists_and_saved_states_matches_one_call_each():
    w0, grads = np.linspace(-1, 1, 6).astype(np.float16), [np.full(6, 0.3, np.float16)] * 3

    def make():
        return optimizer.get_updater(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True))

    single, listed = make(), make()
    a, b = mx.nd.array(w0, dtype="float16"), mx.nd.array(w0, dtype="float16")
    for g in grads[:2]:
        single(0, mx.nd.array(g, dtype="float16"), a)
        listed([0], [mx.nd.array(g, dtype="float16")], [b])
    restored = make()
    restored.set_states(listed.get_states())
    restored(0, mx.nd.array(grads[2], dtype="float16"), b)
    single(0, mx.nd.array(grads[2], dtype="float16"), a)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_multi_precision_leaves_float32_weights_as_they_are(problem):
    w0, grads = problem
    plain = run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9), w0, grads)
    mixed = run(optimizer.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True), w0, grads)
    np.testing.assert_array_equal(plain, mixed)


@pytest.mark.parametrize("name", ["sgd", "nag", "adagrad", "ftrl"])
def test_an_lr_scheduler_keeps_its_base_lr_when_no_learning_rate_is_given(name):
    # MXNet 1.9.1 starts these at the scheduler's 0.5, not at the optimizer's default rate
    opt = optimizer.create(name, lr_scheduler=lr_scheduler.FactorScheduler(step=2, base_lr=0.5))
    assert opt.learning_rate == 0.5


def test_a_learning_rate_given_replaces_the_schedulers_base_lr():
    opt = optimizer.create("sgd", learning_rate=0.2, lr_scheduler=lr_scheduler.FactorScheduler(step=2, base_lr=0.5))
    assert opt.learning_rate == 0.2
    assert optimizer.create("sgd").learning_rate == 0.01 and optimizer.create("ftrl").learning_rate == 0.1


UPDATES = [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 20, 21, 30, 100]


def test_factor_scheduler_warms_up_linearly_then_decays_as_mxnet():
    sched = lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2)
    # MXNet 1.9.1's rates at UPDATES
    expected = [0.2, 0.4, 0.6, 0.8, 0.5, 0.5, 0.5, 0.25, 0.125, 0.125, 0.125, 0.015625, 0.015625, 0.001953125, 1e-08]
    assert [sched(n) for n in UPDATES] == pytest.approx(expected)


def test_constant_warmup_holds_the_begin_rate():
    sched = lr_scheduler.MultiFactorScheduler(
        step=[5], factor=0.1, base_lr=1.0, warmup_steps=3, warmup_begin_lr=0.3, warmup_mode="constant"
    )
    assert [sched(n) for n in (0, 2, 3, 5, 6)] == pytest.approx([0.3, 0.3, 1.0, 1.0, 0.1])


def test_poly_and_cosine_schedulers_match_mxnet():
    poly = lr_scheduler.PolyScheduler(max_update=20, base_lr=1.0, pwr=2, final_lr=0.1)
    cosine = lr_scheduler.CosineScheduler(max_update=20, base_lr=1.0, final_lr=0.1)
    # MXNet 1.9.1's rates at UPDATES
    expected_poly = [1.0, 0.91225, 0.829, 0.75025, 0.676, 0.60625, 0.541, 0.37225, 0.325, 0.28225, 0.244]
    expected_cosine = [1.0, 0.99445975, 0.97797543, 0.95095294, 0.91405765, 0.86819805, 0.81450336, 0.62039551]
    expected_cosine += [0.55, 0.47960449, 0.41094235]
    assert [poly(n) for n in UPDATES] == pytest.approx(expected_poly + [0.1] * 4)
    assert [cosine(n) for n in UPDATES] == pytest.approx(expected_cosine + [0.1] * 4)


def test_poly_scheduler_warms_up_and_an_optimizer_sets_where_it_starts():
    sched = lr_scheduler.PolyScheduler(max_update=12, pwr=1, warmup_steps=2, warmup_begin_lr=0.0)
    optimizer.create("sgd", learning_rate=2.0, lr_scheduler=sched)
    assert [sched(n) for n in (0, 1, 2, 7, 12)] == pytest.approx([0.0, 1.0, 2.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: lr_scheduler.FactorScheduler(step=2, warmup_steps=-1),
        lambda: lr_scheduler.FactorScheduler(step=2, base_lr=0.1, warmup_begin_lr=0.5),
        lambda: lr_scheduler.MultiFactorScheduler(step=[2], warmup_mode="cubic"),
        lambda: lr_scheduler.PolyScheduler(max_update=0),
        lambda: lr_scheduler.CosineScheduler(max_update=5, warmup_steps=5),
    ],
)
def test_bad_warmup_and_decay_arguments_are_errors(make):
    with pytest.raises(LazyNDError):
        make()


def test_states_dumped_with_the_optimizer_bring_back_its_settings_and_counts(problem):
    w0, grads = problem
    uninterrupted = run(optimizer.create("adam", learning_rate=0.05, wd=0.1), w0, grads)
    first = optimizer.get_updater(optimizer.create("adam", learning_rate=0.05, wd=0.1))
    weight = mx.nd.array(w0)
    for g in grads[:2]:
        first(0, mx.nd.array(g), weight)
    # as MXNet's get_states(dump_optimizer=True): Adam's bias correction needs the update count
    restored = optimizer.get_updater(optimizer.create("adam"))
    restored.set_states(first.get_states(dump_optimizer=True))
    assert restored.optimizer.lr == 0.05 and restored.optimizer.wd == 0.1
    for g in grads[2:]:
        restored(0, mx.nd.array(g), weight)
    assert_almost_equal(weight.asnumpy(), uninterrupted, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, kwargs", [("sgd", {"momentum": 0.9}), ("adam", {})])
def test_lazy_update_is_accepted_and_changes_nothing_on_dense_arrays(name, kwargs, problem):
    # MXNet 1.x programs pass lazy_update (a row-sparse option) to SGD and Adam
    w0, grads = problem
    lazy = run(optimizer.create(name, lazy_update=True, **kwargs), w0, grads)
    eager = run(optimizer.create(name, lazy_update=False, **kwargs), w0, grads)
    np.testing.assert_array_equal(lazy, eager)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("sgd", {}),
        ("sgd", {"momentum": 0.9}),
        ("nag", {"momentum": 0.9}),
        ("adam", {}),
        ("rmsprop", {}),
        ("rmsprop", {"centered": True}),
        ("signum", {}),
        ("ftrl", {}),
    ],
)
def test_clip_gradient_zero_does_not_clip_the_fused_optimizers(name, kwargs, problem):
    # MXNet 1.9.1 hands clip_gradient to the fused operators only when it is truthy
    w0, grads = problem
    unclipped = run(optimizer.create(name, wd=0.01, **kwargs), w0, grads)
    np.testing.assert_allclose(run(optimizer.create(name, wd=0.01, clip_gradient=0.0, **kwargs), w0, grads), unclipped)


def test_clip_gradient_zero_does_not_clip_sgd_given_lists(problem):
    w0, grads = problem
    plain = optimizer.get_updater(optimizer.create("sgd", momentum=0.9))
    zero = optimizer.get_updater(optimizer.create("sgd", momentum=0.9, clip_gradient=0))
    a, b = [mx.nd.array(w0), mx.nd.array(w0 * 2)], [mx.nd.array(w0), mx.nd.array(w0 * 2)]
    for g in grads:
        plain([0, 1], [mx.nd.array(g), mx.nd.array(g)], a)
        zero([0, 1], [mx.nd.array(g), mx.nd.array(g)], b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(y.asnumpy(), x.asnumpy())


@pytest.mark.parametrize("name", ["adagrad", "adadelta", "nadam", "dcasgd"])
def test_clip_gradient_zero_zeroes_the_gradient_of_the_optimizers_written_with_operators(name, problem):
    # as MXNet 1.9.1 clips there (``if clip_gradient is not None``): no weight decay, so no step
    w0, grads = problem
    np.testing.assert_allclose(run(optimizer.create(name, clip_gradient=0.0), w0, grads), w0)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: lr_scheduler.MultiFactorScheduler(step=5), "step must be a list"),
        (lambda: lr_scheduler.MultiFactorScheduler(step=None), "step must be a list"),
        (lambda: lr_scheduler.MultiFactorScheduler(step="58"), "step must be a list"),
        (lambda: lr_scheduler.MultiFactorScheduler(step=[2, "x"]), r"step\[1\] must be a number"),
        (lambda: lr_scheduler.FactorScheduler(step="5"), "step must be a number"),
        (lambda: lr_scheduler.FactorScheduler(step=2, factor="x"), "factor must be a number"),
        (lambda: lr_scheduler.LRScheduler(base_lr="0.1"), "base_lr must be a number"),
        (lambda: lr_scheduler.PolyScheduler(max_update=10, pwr=None), "pwr must be a number"),
        (lambda: lr_scheduler.CosineScheduler(max_update=10, final_lr=None), "final_lr must be a number"),
    ],
)
def test_scheduler_arguments_of_the_wrong_type_are_named(make, message):
    with pytest.raises(LazyNDError, match=message):
        make()


def test_multi_factor_scheduler_takes_any_iterable_of_steps():
    sched = lr_scheduler.MultiFactorScheduler(step=np.array([5, 8]), factor=0.5, base_lr=2.0)
    assert [sched(n) for n in (5, 6, 9)] == pytest.approx([2.0, 1.0, 0.5])


@pytest.mark.parametrize("name", ["adam", "rmsprop", "adagrad", "signum", "dcasgd"])
def test_a_float16_weights_state_holds_the_master_copy_first_as_mxnets_base_class(name):
    w = mx.nd.array([0.5, -1.25, 2.0], dtype="float16")
    opt = optimizer.create(name, multi_precision=True)
    master, inner = opt.create_state_multi_precision(0, w)
    assert master.dtype == np.float32 and master.shape == w.shape
    np.testing.assert_array_equal(master.asnumpy(), w.asnumpy().astype(np.float32))
    assert repr(type(inner)) == repr(type(opt.create_state(0, master)))


@pytest.mark.parametrize("name", ["sgd", "nag"])
def test_sgd_and_nag_keep_a_float16_weights_state_before_the_master_copy_as_mxnet(name):
    w = mx.nd.array([0.5, -1.25, 2.0], dtype="float16")
    mom, master = optimizer.create(name, momentum=0.9, multi_precision=True).create_state_multi_precision(0, w)
    assert mom.dtype == np.float32 and master.dtype == np.float32
    np.testing.assert_array_equal(master.asnumpy(), w.asnumpy().astype(np.float32))
    np.testing.assert_array_equal(mom.asnumpy(), np.zeros(3, np.float32))


def test_an_mxnet_style_optimizer_unpacking_the_master_copy_first_trains_float16_weights():
    class ScaledSGD(optimizer.Optimizer):
        """Written as for MXNet: the base class's mixed-precision state, unpacked by hand."""

        def update(self, index, weight, grad, state):
            weight[:] = weight - 0.5 * grad

        def update_multi_precision(self, index, weight, grad, state):
            if self.multi_precision and weight.dtype == np.float16:
                master, original_state = state[0], state[1]
                self.update(index, master, grad.astype(np.float32), original_state)
                master.astype(weight.dtype).copyto(weight)
            else:
                self.update(index, weight, grad, state)

    updater = optimizer.get_updater(ScaledSGD(multi_precision=True))
    w = mx.nd.array([1.0, 2.0], dtype="float16")
    updater(0, mx.nd.array([1.0, 1.0], dtype="float16"), w)
    np.testing.assert_array_equal(w.asnumpy(), np.array([0.5, 1.5], np.float16))


# What MXNet 1.9.1's Updater.get_states() returned after one step of
# SGD(momentum=0.9, multi_precision=True) on float16 [1, 2] with gradient [1, 1]:
# {0: (momentum [-0.01, -0.01], float32 master copy [0.99, 1.99])}, NDArrays pickled as records.
MXNET_SGD_MP_STATES = (
    b"\x80\x04\x95\xc3\x00\x00\x00\x00\x00\x00\x00}\x94K\x00\x8c\x15mxnet.ndarray.ndarray\x94\x8c\x07NDArray"
    b"\x94\x93\x94N\x85\x94R\x94}\x94\x8c\x06handle\x94\x8c\x08builtins\x94\x8c\tbytearray\x94\x93\x94C("
    b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\x00\x00\n\xd7#\xbc\n\xd7#\xbc\x94\x85\x94R\x94sbh\x03h\x04R\x94}\x94h\x07h\nC(\xc9\xfa"
    b"\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\xa4p}?R\xb8\xfe?\x94\x85\x94R\x94sb\x86\x94s."
)


def test_updater_reads_states_pickled_by_mxnet_and_trains_on_from_them():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.01, momentum=0.9, multi_precision=True))
    updater.set_states(MXNET_SGD_MP_STATES)
    mom, master = updater.states[0]
    assert mom.dtype == np.float32 and master.dtype == np.float32
    np.testing.assert_allclose(mom.asnumpy(), [-0.01, -0.01], rtol=1e-6)
    np.testing.assert_allclose(master.asnumpy(), [0.99, 1.99], rtol=1e-6)
    weight = mx.nd.array([0.99, 1.99], dtype="float16")
    updater(0, mx.nd.array([1.0, 1.0], dtype="float16"), weight)
    # momentum 0.9 * -0.01 - 0.01 * 1 = -0.019 added to the master copy
    np.testing.assert_allclose(updater.states[0][1].asnumpy(), [0.971, 1.971], rtol=1e-6)


def test_updater_refuses_an_mxnet_optimizer_pickled_with_the_states_by_name():
    with pytest.raises(LazyNDError, match=r"mxnet\.optimizer\.optimizer\.Adam.*dump_optimizer"):
        optimizer.get_updater(optimizer.create("adam")).set_states(b"cmxnet.optimizer.optimizer\nAdam\n.")


def test_an_unknown_optimizer_name_is_refused():
    with pytest.raises(LazyNDError, match="unknown optimizer 'nosuch'"):
        optimizer.create("nosuch")
    with pytest.raises(AttributeError):
        optimizer.NoSuchOptimizer  # noqa: B018


def test_ccsgd_is_mxnets_deprecated_name_of_sgd():
    assert mx.optimizer.ccSGD is optimizer.SGD
    assert type(optimizer.create("ccsgd")) is optimizer.SGD


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("sgd", {"learning_rate": "0.1"}, "learning_rate must be a number"),
        ("sgd", {"wd": None}, "wd must be a number"),
        ("sgd", {"rescale_grad": "a"}, "rescale_grad must be a number"),
        ("sgd", {"clip_gradient": "1"}, "clip_gradient must be a number"),
        ("sgd", {"momentum": "0.9"}, "SGD: momentum must be a number"),
        ("nag", {"momentum": None}, "NAG: momentum must be a number"),
        ("adam", {"beta1": "0.9"}, "beta1 must be a number"),
        ("adam", {"begin_num_update": "3"}, "begin_num_update must be an int >= 0"),
        ("adam", {"begin_num_update": -1}, "begin_num_update must be an int >= 0"),
        ("rmsprop", {"clip_weights": "1"}, "clip_weights must be a number"),
        ("adadelta", {"rho": None}, "rho must be a number"),
        ("adagrad", {"eps": "1e-7"}, "eps must be a number"),
        ("ftrl", {"lamda1": "0.1"}, "lamda1 must be a number"),
        ("dcasgd", {"lamda": None}, "lamda must be a number"),
        ("signum", {"wd_lh": "0"}, "wd_lh must be a number"),
        ("adamax", {"beta2": None}, "beta2 must be a number"),
        ("sgd", {"lr_scheduler": 3}, "lr_scheduler must be an LRScheduler"),
        ("sgd", {"param_idx2name": {0: 3}}, "param_idx2name must be a dict of index -> name"),
    ],
)
def test_arguments_of_the_wrong_type_are_refused_by_name(name, kwargs, message):
    with pytest.raises(LazyNDError, match=message):
        optimizer.create(name, **kwargs)


def test_multipliers_must_be_a_dict_of_numbers():
    opt = optimizer.create("sgd")
    with pytest.raises(LazyNDError, match="set_lr_mult: expected a dict"):
        opt.set_lr_mult([("fc_weight", 0.1)])
    with pytest.raises(LazyNDError, match=r"set_wd_mult: \['fc_weight'\] must be a number"):
        opt.set_wd_mult({"fc_weight": "0"})


def test_a_plain_function_of_the_update_count_is_a_scheduler_as_in_mxnet():
    opt = optimizer.create("sgd", lr_scheduler=lambda num_update: 0.5 / num_update)
    weight = mx.nd.ones((2,))
    updater = optimizer.get_updater(opt)
    updater(0, mx.nd.ones((2,)), weight)
    updater(0, mx.nd.ones((2,)), weight)
    np.testing.assert_allclose(weight.asnumpy(), 1 - 0.5 - 0.25)


@pytest.mark.parametrize(
    "grad, weight, index, message",
    [
        (None, mx.nd.ones((2,)), 0, "the gradient of parameter 0 must be an NDArray, got NoneType"),
        (mx.nd.ones((2,)), np.ones(2), "fc_weight", "the weight of parameter 'fc_weight' must be an NDArray"),
    ],
)
def test_updater_refuses_what_is_not_an_array_by_parameter(grad, weight, index, message):
    updater = optimizer.get_updater(optimizer.create("adam"))
    with pytest.raises(LazyNDError, match=message):
        updater(index, grad, weight)
    with pytest.raises(LazyNDError, match=message):
        updater([index, 1], [grad, mx.nd.ones((2,))], [weight, mx.nd.ones((2,))])


def test_updater_refuses_an_index_that_cannot_key_a_state():
    updater = optimizer.get_updater(optimizer.create("sgd", momentum=0.9))
    with pytest.raises(LazyNDError, match=r"parameter index \[0\] must be an int or a name"):
        updater([[0], 1], [mx.nd.ones((2,))] * 2, [mx.nd.ones((2,)), mx.nd.ones((2,))])


@pytest.mark.parametrize("warmup_steps", [0, 5])
def test_a_negative_update_count_is_refused_by_name(warmup_steps):
    with pytest.raises(LazyNDError, match="FactorScheduler: num_update must be >= 0, got -5"):
        lr_scheduler.FactorScheduler(step=2, base_lr=0.1, warmup_steps=warmup_steps)(-5)


def test_loaded_states_of_another_optimizer_or_shape_are_refused_at_the_first_update() -> None:
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    adam = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    adam(0, g, w)
    sgd = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    sgd.set_states(adam.get_states())  # (mean, var) where SGD keeps one momentum array
    with pytest.raises(
        mx.LazyNDError, match=r"parameter 0 is \('array\(3,\)', 'array\(3,\)'\), but SGD keeps array\(3,\)"
    ):
        sgd(0, g, w)
    momentum = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    momentum(0, g, w)
    other_shape = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    other_shape.set_states(momentum.get_states())
    with pytest.raises(mx.LazyNDError, match=r"keeps array\(4,\) for a weight of shape \(4,\)"):
        other_shape([0], [mx.nd.ones((4,))], [mx.nd.ones((4,))])
    same = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    same.set_states(momentum.get_states())
    same(0, g, w)  # what this optimizer keeps: taken as it is
    np.testing.assert_allclose(same.states[0].asnumpy(), 0.9 * momentum.states[0].asnumpy() - 0.01 * 1.0, rtol=1e-6)


def test_updater_gives_states_saved_by_parameter_name_to_each_index_of_that_name():
    # MXNet's store-side updater keys states by name; lazynd's Module numbers the copies on its devices
    import pickle

    opt = optimizer.create("sgd", momentum=0.9, param_idx2name={0: "w", 1: "w", 2: "b"})
    updater = optimizer.get_updater(opt)
    updater.set_states(pickle.dumps({"w": np.array([1.0, 2.0], np.float32), "other": None}))
    assert sorted(updater.states, key=str) == [0, 1, "other"]
    np.testing.assert_array_equal(updater.states[1].asnumpy(), [1.0, 2.0])
    assert updater.states[0] is not updater.states[1]
