"""Metrics that users wrote for MXNet: subclasses that override ``reset`` with their own sums.

MXNet's multi-task example keeps one sum per task (lists) in a ``reset`` of its own that never
calls the base class's; MXNet then reports the local value wherever a global one is asked for.
"""

from __future__ import annotations

from typing import Any

import pytest

import lazynd as mx


class _PerTaskCount(mx.metric.EvalMetric):
    """Counts instances per task in lists, with its own ``reset``, ``reset_local`` and ``get``."""

    def __init__(self, tasks: int) -> None:
        self.tasks = tasks
        super().__init__("per-task")

    def reset(self) -> None:
        self.num_inst = [0] * self.tasks
        self.sum_metric = [0.0] * self.tasks

    def reset_local(self) -> None:
        self.reset()

    def update(self, labels: list[Any], preds: list[Any]) -> None:
        for task in range(self.tasks):
            self.sum_metric[task] += 1.0
            self.num_inst[task] += 2

    def get(self) -> Any:
        # as MXNet's example returns it: a zip of (name, value) pairs, that only its own
        # get_name_value knows how to read
        return zip(
            *((f"{self.name}-task{t}", self.sum_metric[t] / self.num_inst[t]) for t in range(self.tasks)), strict=False
        )

    def get_name_value(self) -> list[tuple[str, float]]:
        names, values = self.get()
        return list(zip(names, values, strict=True))


def test_a_subclass_with_its_own_reset_reports_its_local_value_as_global() -> None:
    metric = _PerTaskCount(tasks=2)
    metric.update([], [])
    assert list(metric.get_global()) == [("per-task-task0", "per-task-task1"), (0.5, 0.5)]
    assert metric.get_global_name_value() == [("per-task-task0", 0.5), ("per-task-task1", 0.5)]
    assert metric.global_num_inst == [2, 2]


def test_reset_local_of_a_subclass_with_its_own_reset_keeps_no_global_sums() -> None:
    class OnlyReset(mx.metric.EvalMetric):
        def reset(self) -> None:
            self.num_inst = 0
            self.sum_metric = 0.0

    metric = OnlyReset("only-reset")
    metric.sum_metric, metric.num_inst = 3.0, 4
    metric.reset_local()
    assert (metric.sum_metric, metric.num_inst) == (0.0, 0)
    metric.sum_metric, metric.num_inst = 1.0, 2
    assert metric.get_global() == metric.get() == ("only-reset", 0.5)


class _Counting(mx.metric.EvalMetric):
    """A user's metric in MXNet's usual form: it adds to ``sum_metric``/``num_inst`` only (the k-th
    update adds k)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("counting", **kwargs)
        self.k = 0

    def update(self, labels, preds) -> None:
        self.k += 1
        self.sum_metric += self.k
        self.num_inst += 1


def _three_updates_over_two_periods(metric):
    metric.update(None, None)
    metric.update(None, None)
    metric.reset_local()  # what a Speedometer(auto_reset=True) does
    metric.update(None, None)
    return metric


def test_a_users_metric_reports_its_local_value_as_the_global_one_as_mxnet():
    # MXNet 1.9.1: global statistics only where asked for (its own metrics ask); the epoch's value a
    # training loop logs is then the last period's (3.0), not the mean of every update (2.0)
    metric = _three_updates_over_two_periods(_Counting())
    assert metric.get_global_name_value() == metric.get_name_value() == [("counting", 3.0)]
    assert "has_global_stats" not in metric.get_config()


def test_a_users_metric_asking_for_global_stats_and_builtin_subclasses_keep_them():
    metric = _three_updates_over_two_periods(_Counting(has_global_stats=True))
    assert metric.get_global_name_value() == [("counting", 2.0)] and metric.get() == ("counting", 3.0)

    class Squared(mx.metric.MSE):  # a built-in's subclass: MXNet's MSE asks for global statistics
        pass

    squared = Squared()
    for value in (0.0, 2.0):
        squared.update([mx.nd.array([0.0])], [mx.nd.array([value])])
    squared.reset_local()
    squared.update([mx.nd.array([0.0])], [mx.nd.array([3.0])])
    assert squared.get_global_name_value() == [("mse", pytest.approx(13 / 3))]  # MXNet 1.9.1's values
    assert squared.get_name_value() == [("mse", 9.0)]


class _KeepsItsOwnGlobalSums(_Counting):
    """MXNet 1.x's own metrics' form: ``update`` adds to the global sums too (the k-th update adds k)."""

    def update(self, labels, preds) -> None:
        super().update(labels, preds)
        self.global_sum_metric += self.k
        self.global_num_inst += 1


class _AccuracyKeepingItsOwnGlobalSums(mx.metric.Accuracy):
    """A built-in's subclass whose ``update`` was copied from MXNet's (global sums kept by hand)."""

    def update(self, labels, preds) -> None:
        self.sum_metric += 4.0
        self.global_sum_metric += 4.0
        self.num_inst += 2
        self.global_num_inst += 2


@pytest.mark.parametrize(
    "make, global_value",
    [
        (_KeepsItsOwnGlobalSums, 3.0),  # no global statistics asked for: the local value (MXNet 1.9.1)
        (lambda: _KeepsItsOwnGlobalSums(has_global_stats=True), 2.0),
        (_AccuracyKeepingItsOwnGlobalSums, 2.0),
    ],
)
def test_a_subclass_adding_to_the_global_sums_itself_counts_each_update_once_as_mxnet(make, global_value):
    metric = _three_updates_over_two_periods(make())
    # MXNet 1.9.1's values: the sums the update set, each update counted once
    assert metric.get_global_name_value() == [(metric.name, global_value)]
    if isinstance(metric, _KeepsItsOwnGlobalSums):
        assert (metric.global_sum_metric, metric.global_num_inst) == (6.0, 3)
        assert metric.get() == ("counting", 3.0)
    else:
        assert (metric.global_sum_metric, metric.global_num_inst) == (12.0, 6)
    metric.reset()
    assert (metric.global_sum_metric, metric.global_num_inst, metric.sum_metric, metric.num_inst) == (0.0, 0, 0.0, 0)
    metric.update(None, None)
    assert metric.global_num_inst == metric.num_inst


def test_a_subclass_resetting_the_global_sums_in_its_own_reset_keeps_them() -> None:
    class OwnReset(_KeepsItsOwnGlobalSums):
        def reset(self) -> None:
            self.sum_metric, self.num_inst = 0.0, 0
            self.global_sum_metric, self.global_num_inst = 0.0, 0

    metric = _three_updates_over_two_periods(OwnReset(has_global_stats=True))
    assert (metric.global_sum_metric, metric.global_num_inst) == (6.0, 3)
    assert metric.get_global() == ("counting", 2.0) and metric.get() == ("counting", 3.0)
