"""``mx.misc``: the iteration-based learning-rate schedules that older MXNet programs import."""

from __future__ import annotations

import pytest

import lazynd as mx


def test_misc_is_importable_the_ways_programs_import_it() -> None:
    from lazynd import misc

    assert mx.misc is misc and misc.FactorScheduler is mx.misc.FactorScheduler


def test_factor_scheduler_computes_the_rate_from_the_iteration_alone() -> None:
    schedule = mx.misc.FactorScheduler(step=10, factor=0.1)
    schedule.base_lr = 1.0
    assert [schedule(i) for i in (0, 9, 10, 19, 20)] == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01])
    assert schedule(5) == 1.0  # called out of order it still answers for that iteration


def test_an_optimizer_drives_the_schedule_from_its_learning_rate() -> None:
    schedule = mx.misc.FactorScheduler(step=2, factor=0.5)
    optimizer = mx.optimizer.create("sgd", learning_rate=0.4, lr_scheduler=schedule)
    weight, grad = mx.nd.ones((1,)), mx.nd.ones((1,))
    rates = []
    for _ in range(4):
        before = weight.asnumpy()[0]
        optimizer.update(0, weight, grad, None)
        rates.append(before - weight.asnumpy()[0])
    assert rates == pytest.approx([0.4, 0.2, 0.2, 0.1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"step": 0}, "step must be >= 1 iteration, got 0"),
        ({"step": 5, "factor": 1.5}, "factor must be < 1 so the rate decreases, got 1.5"),
        ({"step": "5"}, "step must be a number, got '5'"),
    ],
)
def test_factor_scheduler_refuses_bad_arguments_by_name(kwargs, message) -> None:
    with pytest.raises(mx.LazyNDError, match=message):
        mx.misc.FactorScheduler(**kwargs)
