"""``mx.init.register`` / ``mx.metric.register`` in MXNet's forms (``@register`` on the class,
``register(klass, name)``) and ``mx.model.load_params(prefix, epoch)``.
"""

from __future__ import annotations

import numpy as np

import lazynd as mx


def test_init_register_as_a_bare_decorator() -> None:
    @mx.init.register
    class ThreeInit(mx.init.Initializer):
        def _init_weight(self, _: str, arr: mx.nd.NDArray) -> None:
            arr[:] = 3.0

    assert ThreeInit.__name__ == "ThreeInit"  # the class, not a decorator (MXNet 1.9.1: 'MyInit' from create)
    arr = mx.nd.zeros((2,))
    mx.init.create("threeinit")("fc_weight", arr)
    np.testing.assert_array_equal(arr.asnumpy(), [3.0, 3.0])


def test_metric_register_as_a_bare_decorator_and_with_a_name() -> None:
    @mx.metric.register
    class HalfMetric(mx.metric.EvalMetric):
        def __init__(self) -> None:
            super().__init__("half")

    class OtherMetric(mx.metric.EvalMetric):
        def __init__(self) -> None:
            super().__init__("o")

    assert mx.metric.register(OtherMetric, "alias_o") is OtherMetric
    # MXNet 1.9.1: create('halfmetric').name -> 'half'; create('alias_o').name -> 'o'
    assert mx.metric.create("halfmetric").name == "half"
    assert mx.metric.create("alias_o").name == "o"


def test_register_with_aliases_still_decorates() -> None:
    @mx.metric.register("half_alias")
    class AliasedMetric(mx.metric.EvalMetric):
        def __init__(self) -> None:
            super().__init__("aliased")

    assert mx.metric.create("half_alias").name == "aliased"


def test_model_load_params_takes_prefix_and_epoch(tmp_path) -> None:
    prefix = str(tmp_path / "net")
    mx.nd.save(f"{prefix}-0003.params", {"arg:fc_weight": mx.nd.ones((2,)), "aux:bn_moving_mean": mx.nd.zeros((1,))})
    arg_params, aux_params = mx.model.load_params(prefix, 3)
    assert list(arg_params) == ["fc_weight"] and list(aux_params) == ["bn_moving_mean"]
    assert list(mx.model.load_params(f"{prefix}-0003.params")[0]) == ["fc_weight"]  # a path, as before
