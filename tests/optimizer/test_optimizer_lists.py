"""``Optimizer.update`` with lists of parameters: SGD aggregates them, as MXNet 1.9.1's does; the others refuse by name."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def _parameters(dtype: str = "float32") -> tuple[list, list]:
    weights = [mx.nd.ones((2,), dtype=dtype), mx.nd.ones((3,), dtype=dtype) * 2]
    grads = [mx.nd.ones((2,), dtype=dtype) * 0.5, mx.nd.ones((3,), dtype=dtype)]
    return weights, grads


@pytest.mark.parametrize("multi_precision", [False, True])
def test_sgd_updates_lists_of_parameters_as_mxnet(multi_precision) -> None:
    opt = mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=multi_precision)
    weights, grads = _parameters("float16" if multi_precision else "float32")
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    opt.update_multi_precision([0, 1], weights, grads, states)
    opt.update([0, 1], weights, grads, states) if not multi_precision else opt.update_multi_precision(
        [0, 1], weights, grads, states
    )
    # MXNet 1.9.1, the same two steps
    np.testing.assert_allclose(weights[0].asnumpy(), [0.855, 0.855], rtol=1e-3)
    np.testing.assert_allclose(weights[1].asnumpy(), [1.71, 1.71, 1.71], rtol=1e-3)
    assert opt.num_update == 2


@pytest.mark.parametrize("name", ["adam", "nag", "rmsprop", "adagrad"])
def test_other_optimizers_refuse_lists_by_name(name) -> None:
    opt = mx.optimizer.create(name, learning_rate=0.1)
    weights, grads = _parameters()
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    for update in (opt.update, opt.update_multi_precision):
        with pytest.raises(LazyNDError, match=r"\.update: updates one parameter \(an index\), got a list of 2"):
            update([0, 1], weights, grads, states)
