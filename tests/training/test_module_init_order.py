"""``Module.init_params`` visits parameters in name order, as MXNet 1.x does (``sorted(arg_params)``, then the
auxiliary states): an initializer that logs, or draws from one random stream, sees the same sequence."""

from __future__ import annotations

import lazynd as mx
import lazynd_sym as sym


class _Recorder(mx.init.Initializer):
    """Writes zeros and remembers each name it was asked for, in order (a user's initializer that logs)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __call__(self, name, arr) -> None:  # type: ignore[override]
        self.names.append(str(name))
        arr[:] = 0.0


def _net() -> sym.Symbol:
    # argument order (zeta_weight, ...) differs from name order
    h = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="zeta")
    h = sym.BatchNorm(h, name="bn")
    return sym.FullyConnected(h, num_hidden=2, name="alpha")


def test_init_params_asks_the_initializer_for_arguments_then_states_each_in_name_order() -> None:
    mod = mx.mod.Module(_net(), label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (2, 4))])
    recorder = _Recorder()
    mod.init_params(recorder)
    arguments = ["alpha_bias", "alpha_weight", "bn_beta", "bn_gamma", "zeta_bias", "zeta_weight"]
    assert recorder.names == [*arguments, "bn_moving_mean", "bn_moving_var"]


def test_set_params_with_allow_missing_fills_the_missing_ones_in_name_order_too() -> None:
    mod = mx.mod.Module(_net(), label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (2, 4))])
    mod.init_params(mx.init.Zero())
    recorder = _Recorder()
    mod.init_params(recorder, arg_params={"bn_gamma": mx.nd.ones((3,))}, allow_missing=True, force_init=True)
    missing = ["alpha_bias", "alpha_weight", "bn_beta", "zeta_bias", "zeta_weight"]
    assert recorder.names == [*missing, "bn_moving_mean", "bn_moving_var"]
