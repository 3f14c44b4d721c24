"""Convolutional recurrent cells (MXNet 1.x's ``mx.rnn.ConvRNNCell``, ``ConvLSTMCell``, ``ConvGRUCell``).

They are the cells of :mod:`.cells` with each fully connected product replaced by a 2-D convolution:
the input goes through ``i2h`` (kernel, stride, pad and dilation as given), the state through ``h2h``
(an odd kernel, padded so the state keeps its height and width).  The state's shape is the ``i2h``
convolution's output shape for one step's ``input_shape``, with the batch left open (0).  Node and
parameter names are MXNet's (``ConvLSTM_t0_i2h``, ``ConvLSTM_i2h_weight``...), so checkpoints carry over.

Examples
--------
>>> import lazynd as mx
>>> cell = mx.rnn.ConvLSTMCell(input_shape=(1, 3, 8, 8), num_hidden=4)
>>> cell.state_info[0]["shape"]
(0, 4, 8, 8)
>>> outputs, states = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
>>> outputs.infer_shape(data=(1, 2, 3, 8, 8))[1]
[(1, 2, 4, 8, 8)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.errors import LazyNDError

from ..symbol import Symbol
from .cells import BaseRNNCell, RNNParams, _sym, gru_update, lstm_update

#: The layouts of a 2-D convolution that the cells accept (the channel axis is where 'C' is).
CONV_LAYOUTS = ("NCHW", "NHWC")


def leaky_relu(data: Symbol, **kwargs: Any) -> Symbol:
    """The cells' default activation, as MXNet's: ``LeakyReLU(act_type='leaky', slope=0.2)``."""
    return _sym().LeakyReLU(data, act_type="leaky", slope=0.2, **kwargs)


def _pair(cell: str, name: str, value: Any) -> tuple[int, int]:
    """``value`` as a pair of ints, or a :class:`LazyNDError` naming the cell and the argument."""
    try:
        pair = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        pair = ()
    if len(pair) != 2:
        raise LazyNDError(f"mx.rnn.{cell}: {name} must be a pair of ints (height, width), got {value!r}")
    return pair  # type: ignore[return-value]


class BaseConvRNNCell(BaseRNNCell):
    """The convolutional cells' base: the ``i2h`` and ``h2h`` convolutions, the state's shape and the
    activation (an ``Activation`` act_type, or a callable taking the symbol and ``name=``)."""

    _default_prefix = ""

    def __init__(
        self,
        input_shape: Sequence[int],
        num_hidden: int,
        h2h_kernel: Sequence[int] = (3, 3),
        h2h_dilate: Sequence[int] = (1, 1),
        i2h_kernel: Sequence[int] = (3, 3),
        i2h_stride: Sequence[int] = (1, 1),
        i2h_pad: Sequence[int] = (1, 1),
        i2h_dilate: Sequence[int] = (1, 1),
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        activation: Any = leaky_relu,
        prefix: str | None = None,
        params: RNNParams | None = None,
        conv_layout: str = "NCHW",
    ) -> None:
        super().__init__(prefix=self._default_prefix if prefix is None else prefix, params=params)
        cell = type(self).__name__
        if conv_layout not in CONV_LAYOUTS:
            raise LazyNDError(f"mx.rnn.{cell}: conv_layout must be one of {CONV_LAYOUTS}, got {conv_layout!r}")
        if isinstance(num_hidden, bool) or not isinstance(num_hidden, int) or num_hidden < 1:
            raise LazyNDError(f"mx.rnn.{cell}: num_hidden must be a positive int, got {num_hidden!r}")
        self._h2h_kernel = _pair(cell, "h2h_kernel", h2h_kernel)
        if self._h2h_kernel[0] % 2 == 0 or self._h2h_kernel[1] % 2 == 0:
            raise LazyNDError(
                f"mx.rnn.{cell}: h2h_kernel must be odd on both sides (the state keeps its size), got {h2h_kernel!r}"
            )
        self._h2h_dilate = _pair(cell, "h2h_dilate", h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel, strict=True))
        self._i2h_kernel = _pair(cell, "i2h_kernel", i2h_kernel)
        self._i2h_stride = _pair(cell, "i2h_stride", i2h_stride)
        self._i2h_pad = _pair(cell, "i2h_pad", i2h_pad)
        self._i2h_dilate = _pair(cell, "i2h_dilate", i2h_dilate)
        self._num_hidden = num_hidden
        self._conv_layout = conv_layout
        self._activation = activation
        self._input_shape = tuple(input_shape)
        if len(self._input_shape) != 4:
            raise LazyNDError(
                f"mx.rnn.{cell}: input_shape must be one step's 4-D shape in {conv_layout}, got {input_shape!r}"
            )
        self._state_shape = (0, *self._infer_state_shape()[1:])
        self._params.get("i2h_weight", **_init(i2h_weight_initializer))
        self._params.get("h2h_weight", **_init(h2h_weight_initializer))
        self._params.get("i2h_bias", **_init(i2h_bias_initializer))
        self._params.get("h2h_bias", **_init(h2h_bias_initializer))

    def _infer_state_shape(self) -> tuple[int, ...]:
        """The ``i2h`` convolution's output shape for ``input_shape`` (one gate's worth of channels)."""
        sym = _sym()
        conv = sym.Convolution(
            data=sym.var("data"), num_filter=self._num_hidden, layout=self._conv_layout, **self._i2h_settings()
        )
        return tuple(conv.infer_shape(data=self._input_shape)[1][0])

    def _i2h_settings(self) -> dict[str, Any]:
        return {
            "kernel": self._i2h_kernel,
            "stride": self._i2h_stride,
            "pad": self._i2h_pad,
            "dilate": self._i2h_dilate,
        }

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}] * self._num_states

    _num_states = 1

    @property
    def _channel_axis(self) -> int:
        return self._conv_layout.find("C")

    def _conv_forward(self, inputs: Symbol, states: list[Symbol], name: str) -> tuple[Symbol, Symbol]:
        """The step's ``i2h`` (of the input) and ``h2h`` (of the first state), all gates stacked on channels."""
        sym = _sym()
        num_filter = self._num_hidden * len(self._gate_names)
        params = self._params
        i2h = sym.Convolution(
            data=inputs,
            weight=params.get("i2h_weight"),
            bias=params.get("i2h_bias"),
            num_filter=num_filter,
            layout=self._conv_layout,
            name=f"{name}i2h",
            **self._i2h_settings(),
        )
        h2h = sym.Convolution(
            data=states[0],
            weight=params.get("h2h_weight"),
            bias=params.get("h2h_bias"),
            num_filter=num_filter,
            kernel=self._h2h_kernel,
            stride=(1, 1),
            pad=self._h2h_pad,
            dilate=self._h2h_dilate,
            layout=self._conv_layout,
            name=f"{name}h2h",
        )
        return i2h, h2h

    def _activate(self, data: Symbol, name: str | None = None) -> Symbol:
        kwargs = {} if name is None else {"name": name}
        return self._get_activation(data, self._activation, **kwargs)


def _init(initializer: Any) -> dict[str, Any]:
    return {} if initializer is None else {"init": initializer}


class ConvRNNCell(BaseConvRNNCell):
    """The convolutional Elman cell: ``h' = activation(conv_i2h(x) + conv_h2h(h))``."""

    _default_prefix = "ConvRNN_"

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        name = self._begin_step(states)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._activate(i2h + h2h, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """The convolutional LSTM (Shi et al., 2015): the LSTM's gates from convolutions; the candidate and
    the output's squashing use ``activation`` (MXNet's default: leaky ReLU), the gates sigmoid."""

    _default_prefix = "ConvLSTM_"
    _num_states = 2

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        name = self._begin_step(states)
        i2h, h2h = self._conv_forward(inputs, states, name)
        next_h, next_c = lstm_update(i2h + h2h, states[1], name, self._activate, axis=self._channel_axis)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """The convolutional GRU: reset and update gates from convolutions, ``h' = (1 - z) * h~ + z * h``,
    the candidate ``h~`` through ``activation``."""

    _default_prefix = "ConvGRU_"

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        name = self._begin_step(states)
        i2h, h2h = self._conv_forward(inputs, states, name)
        # the gates split on the channel axis (MXNet 1.9.1 splits on axis 1 whatever the layout)
        axis = None if self._channel_axis == 1 else self._channel_axis
        next_h = gru_update(i2h, h2h, states[0], name, self._activate, axis=axis)
        return next_h, [next_h]
