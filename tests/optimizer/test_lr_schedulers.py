"""lazynd.lr_scheduler: the schedules, warm-up, logging, and how optimizers drive them."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import lr_scheduler, optimizer
from lazynd.errors import LazyNDError
from lazynd.testing import assert_almost_equal


def test_lr_scheduler_drives_the_learning_rate_by_update_count():
    opt = optimizer.create("sgd", learning_rate=1.0, lr_scheduler=lr_scheduler.FactorScheduler(step=2, factor=0.5))
    weight = mx.nd.zeros((1,))
    updater = optimizer.get_updater(opt)
    for _ in range(5):
        updater(0, mx.nd.ones((1,)), weight)
    # updates 1-2 at lr 1, 3-4 at 0.5, 5 at 0.25
    assert_almost_equal(weight.asnumpy(), [-3.25])
    assert opt.num_update == 5


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


def test_a_plain_function_of_the_update_count_is_a_scheduler_as_in_mxnet():
    opt = optimizer.create("sgd", lr_scheduler=lambda num_update: 0.5 / num_update)
    weight = mx.nd.ones((2,))
    updater = optimizer.get_updater(opt)
    updater(0, mx.nd.ones((2,)), weight)
    updater(0, mx.nd.ones((2,)), weight)
    np.testing.assert_allclose(weight.asnumpy(), 1 - 0.5 - 0.25)


@pytest.mark.parametrize("warmup_steps", [0, 5])
def test_a_negative_update_count_is_refused_by_name(warmup_steps):
    with pytest.raises(LazyNDError, match="FactorScheduler: num_update must be >= 0, got -5"):
        lr_scheduler.FactorScheduler(step=2, base_lr=0.1, warmup_steps=warmup_steps)(-5)


_EVERY_SCHEDULER = [
    lambda: lr_scheduler.LRScheduler(base_lr=0.1),
    lambda: lr_scheduler.FactorScheduler(step=2, base_lr=0.1),
    lambda: lr_scheduler.MultiFactorScheduler(step=[2, 4], base_lr=0.1),
    lambda: lr_scheduler.PolyScheduler(max_update=5, base_lr=0.1),
    lambda: lr_scheduler.CosineScheduler(max_update=5, base_lr=0.1),
]


@pytest.mark.parametrize("make", _EVERY_SCHEDULER)
@pytest.mark.parametrize("num_update", ["3", None, float("nan"), float("inf"), True, [3]])
def test_an_update_count_that_is_not_a_number_is_refused_by_name(make, num_update):
    sched = make()
    with pytest.raises(LazyNDError, match=f"{type(sched).__name__}: num_update must be a number of updates"):
        sched(num_update)


def _stepped_factor_rates(updates, step, factor, stop_factor_lr, base_lr):
    """The rates of a factor schedule stepped one boundary at a time (MXNet's loop), for comparison."""
    rates, count, rate = [], 0, base_lr
    for num_update in updates:
        while num_update > count + step:
            count += step
            rate = max(rate * factor, stop_factor_lr)
        rates.append(rate)
    return rates


@pytest.mark.parametrize("factor, stop_factor_lr", [(1.0, 1e-8), (0.5, 0.01), (0.9, 1e-8), (0.0, 1e-3)])
def test_factor_scheduler_jumps_to_the_rate_of_a_late_update_as_stepping_would(factor, stop_factor_lr):
    updates = [0, 3, 7, 8, 9, 40, 41, 101, 1000, 1001, 5003]
    sched = lr_scheduler.FactorScheduler(step=4, factor=factor, stop_factor_lr=stop_factor_lr, base_lr=1.0)
    assert [sched(n) for n in updates] == pytest.approx(_stepped_factor_rates(updates, 4, factor, stop_factor_lr, 1.0))


def test_factor_scheduler_answers_a_huge_update_count_at_once():
    # MXNet steps there one boundary at a time: 5 * 10**11 steps
    sched = lr_scheduler.FactorScheduler(step=2, base_lr=0.1)
    assert sched(10**12) == 0.1
    assert sched.count == 10**12 - 2
    slow = lr_scheduler.FactorScheduler(step=2, factor=0.5, stop_factor_lr=1e-3, base_lr=1.0)
    assert slow(10**12) == 1e-3


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda v: lr_scheduler.LRScheduler(base_lr=v), "LRScheduler: base_lr must be a finite number"),
        (lambda v: lr_scheduler.FactorScheduler(step=2, factor=v), "FactorScheduler: factor must be a finite number"),
        (lambda v: lr_scheduler.FactorScheduler(step=v), "FactorScheduler: step must be a finite number"),
        (lambda v: lr_scheduler.MultiFactorScheduler([1, 3], factor=v), "factor must be a finite number"),
        (lambda v: lr_scheduler.PolyScheduler(10, pwr=v), "PolyScheduler: pwr must be a finite number"),
        (lambda v: lr_scheduler.CosineScheduler(10, final_lr=v), "final_lr must be a finite number"),
    ],
)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_scheduler_argument_that_is_nan_or_infinite_is_refused_by_name(make, message, value):
    # accepted before: a NaN rate or factor passes every comparison and makes every rate NaN
    with pytest.raises(LazyNDError, match=message):
        make(value)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: lr_scheduler.FactorScheduler(step=0), "step must be >= 1 update, got 0"),
        (lambda: lr_scheduler.FactorScheduler(step=10, factor=1.5), "factor must be <= 1"),
        (lambda: lr_scheduler.MultiFactorScheduler(step=[10, 5]), r"steps must increase, got \[10, 5\]"),
        (lambda: lr_scheduler.MultiFactorScheduler(step=[0, 5]), r"step\[0\] must be >= 1, got 0"),
        (lambda: lr_scheduler.MultiFactorScheduler(step=[5], factor=2.0), "factor must be <= 1"),
        (lambda: lr_scheduler.FactorScheduler(step=10, base_lr=0.1, warmup_begin_lr=0.5, warmup_steps=3), "exceed"),
        (lambda: lr_scheduler.FactorScheduler(step=10, warmup_steps=3, warmup_mode="foo"), "warmup_mode"),
        (lambda: lr_scheduler.PolyScheduler(max_update=0), "max_update must be an int larger"),
        (lambda: lr_scheduler.CosineScheduler(max_update=0), "max_update must be an int larger"),
    ],
)
def test_scheduler_arguments_out_of_range_are_value_errors_as_mxnet(make, message):
    # MXNet 1.9.1 raises ValueError for each of these ("Schedule step must be greater or equal
    # than 1 round", "Factor must be no more than 1 to make lr reduce", ...)
    with pytest.raises(ValueError, match=message):
        make()
