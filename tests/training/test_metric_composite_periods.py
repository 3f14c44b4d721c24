"""CompositeEvalMetric over local periods: what ``fit`` logs as Train-<name> after a Speedometer reset."""

from __future__ import annotations

import numpy as np
import pytest

from lazynd import metric


def test_composite_global_name_value_covers_every_period_as_fit_logs_it() -> None:
    # Module.fit logs Train-<name> from get_global_name_value after a Speedometer reset the local
    # period: with eval_metric=['acc', 'ce'] it must be the whole epoch, as MXNet 1.9.1 logs it
    composite = metric.create(["acc", "ce"])
    composite.update([np.array([0, 1])], [np.array([[0.1, 0.9], [0.1, 0.9]])])  # 1 of 2
    composite.reset_local()
    composite.update([np.array([0, 1])], [np.array([[0.9, 0.1], [0.1, 0.9]])])  # 2 of 2
    assert composite.get_name_value()[0] == ("accuracy", 1.0)
    values = dict(composite.get_global_name_value())
    assert values["accuracy"] == 0.75
    assert values["cross-entropy"] == pytest.approx(-(np.log(0.1) + 3 * np.log(0.9)) / 4)
