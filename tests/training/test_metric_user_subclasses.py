"""Metrics that users wrote for MXNet: subclasses that override ``reset`` with their own sums.

MXNet's multi-task example keeps one sum per task (lists) in a ``reset`` of its own that never
calls the base class's; MXNet then reports the local value wherever a global one is asked for.
"""

from __future__ import annotations

from typing import Any

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
