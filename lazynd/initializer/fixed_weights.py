"""Initializers that fill fixed values: ``Zero``, ``One``, ``Constant``, ``LSTMBias`` and ``Bilinear``."""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from .base import Initializer, _check_number, bilinear_filter, register


@register("zeros")
class Zero(Initializer):
    """All zeros."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 0.0


@register("ones")
class One(Initializer):
    """All ones."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 1.0


@register()
class Constant(Initializer):
    """Every weight equal to ``value``."""

    def __init__(self, value: float) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = self.value


@register()
class LSTMBias(Initializer):
    """An LSTM's biases: zeros, except the forget gate's (the second of the four gates) set to ``forget_bias``.

    Examples
    --------
    >>> import lazynd as mx
    >>> bias = mx.nd.empty((8,))
    >>> mx.init.LSTMBias(forget_bias=1.0)._init_weight("lstm_i2h_bias", bias)
    >>> bias.asnumpy()
    array([0., 0., 1., 1., 0., 0., 0., 0.], dtype=float32)
    """

    def __init__(self, forget_bias: float = 1.0) -> None:
        _check_number("LSTMBias", "forget_bias", forget_bias)
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name: str, arr: Any) -> None:
        if len(arr.shape) == 0:
            raise ShapeError(f"LSTMBias: {name!r} must have the four gates' biases along its first axis, got a scalar")
        num_hidden = arr.shape[0] // 4
        arr[:] = 0.0
        arr[num_hidden : 2 * num_hidden] = self.forget_bias


@register()
class Bilinear(Initializer):
    """Bilinear upsampling weights for a ``Deconvolution`` (see :func:`bilinear_filter`)."""

    def _init_weight(self, name: str, arr: Any) -> None:
        arr[:] = bilinear_filter(name, tuple(arr.shape))
