"""MXNet 1.x's ``FusedRNNCell``: a stack of recurrent layers run by one ``RNN`` operator, its weights
packed in one vector (``<prefix>parameters``), and ``mx.init.FusedRNN``, which fills that vector gate by
gate as the unfused cells' weights would be filled.

The vector's layout is the ``RNN`` operator's (see :mod:`lazynd.ops.rnn`): every weight first, layer by
layer, the forward direction (``l``) before the backward one (``r``), each direction's input-to-hidden
gates then its hidden-to-hidden gates; then every bias in the same order.  ``unpack_weights`` names the
pieces as the unfused cells of :meth:`FusedRNNCell.unfuse` name theirs, split per gate
(``<prefix>l0_i2h_i_weight``), as MXNet's RNN checkpoints store them.

Examples
--------
>>> import lazynd as mx
>>> cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode="gru", prefix="gru_")
>>> outputs, _ = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
>>> outputs.list_arguments()
['data', 'gru_parameters']
>>> outputs.infer_shape(data=(3, 2, 5))[1]
[(3, 2, 4)]
"""

from __future__ import annotations

import numbers
from typing import Any

from lazynd import initializer
from lazynd.errors import LazyNDError, MissingKeyError

from ..symbol import Symbol
from .cells import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams, _as_steps, _begin_states, _sym
from .combinators import BidirectionalCell, DropoutCell, SequentialRNNCell

GATE_NAMES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"), "gru": ("_r", "_z", "_o")}


def _check_count(what: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise LazyNDError(f"FusedRNNCell: {what} must be a positive int, got {value!r}")


class FusedRNNCell(BaseRNNCell):
    """``num_layers`` recurrent layers (``mode`` 'lstm', 'gru', 'rnn_tanh' or 'rnn_relu'), both ways with
    ``bidirectional``, as one ``RNN`` operator.  Only unrolled, never stepped; ``get_next_state`` makes
    ``unroll`` return the last states (shape ``(layers * directions, batch, num_hidden)``).  ``dropout``
    is the operator's ``p``: in training, dropout on each layer's outputs but the last layer's (see
    :mod:`lazynd.ops.rnn`), as ``unfuse`` puts a ``DropoutCell`` between the layers."""

    def __init__(
        self,
        num_hidden: int,
        num_layers: int = 1,
        mode: str = "lstm",
        bidirectional: bool = False,
        dropout: float = 0.0,
        get_next_state: bool = False,
        forget_bias: float = 1.0,
        prefix: str | None = None,
        params: RNNParams | None = None,
    ) -> None:
        if mode not in GATE_NAMES:
            raise LazyNDError(f"FusedRNNCell: mode must be one of {sorted(GATE_NAMES)}, got {mode!r}")
        _check_count("num_hidden", num_hidden)
        _check_count("num_layers", num_layers)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
            raise LazyNDError(f"FusedRNNCell: dropout must be a probability in [0, 1), got {dropout!r}")
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden = int(num_hidden)
        self._num_layers: int = int(num_layers)
        self._mode: str = mode
        self._bidirectional: bool = bool(bidirectional)
        self._dropout: float = float(dropout)
        self._get_next_state: bool = bool(get_next_state)
        self._forget_bias: float = forget_bias
        self._directions: tuple[str, ...] = ("l", "r") if bidirectional else ("l",)
        fill = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter: Symbol = self._params.get("parameters", init=fill)
        self._packed_name: str = str(self._parameter.name)  # <params prefix>parameters

    @property
    def state_info(self) -> list[dict[str, Any]]:
        shape = (len(self._directions) * self._num_layers, 0, self._num_hidden)
        return [{"shape": shape, "__layout__": "LNC"}] * (2 if self._mode == "lstm" else 1)

    @property
    def _gate_names(self) -> tuple[str, ...]:
        return GATE_NAMES[self._mode]

    def _pieces(self, input_size: int) -> list[tuple[str, tuple[int, ...]]]:
        """The name and shape of each piece of the packed vector, in its order."""
        hidden, prefix = self._num_hidden, self._prefix
        weights: list[tuple[str, tuple[int, ...]]] = []
        biases: list[tuple[str, tuple[int, ...]]] = []
        for layer in range(self._num_layers):
            layer_input = input_size if layer == 0 else len(self._directions) * hidden
            for direction in self._directions:
                for group, columns in (("i2h", layer_input), ("h2h", hidden)):
                    for gate in self._gate_names:
                        name = f"{prefix}{direction}{layer}_{group}{gate}"
                        weights.append((f"{name}_weight", (hidden, columns)))
                        biases.append((f"{name}_bias", (hidden,)))
        return weights + biases

    def _input_size(self, size: int) -> int:
        """The input size a packed vector of ``size`` numbers was made for."""
        directions, gates, hidden = len(self._directions), len(self._gate_names), self._num_hidden
        per_direction, rest = divmod(size, directions * gates * hidden)
        input_size = per_direction - (self._num_layers - 1) * (directions * hidden + hidden + 2) - hidden - 2
        if rest or input_size < 1:
            raise LazyNDError(
                f"FusedRNNCell: {self._packed_name} has {size} numbers, which no input size gives for "
                f"{self._num_layers} {self._mode} layer(s) of {hidden} hidden units"
                f"{' both ways' if self._bidirectional else ''}"
            )
        return input_size

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with ``<prefix>parameters`` replaced by one array per layer, direction, group and gate."""
        args = dict(args)
        name = self._packed_name
        if name not in args:
            raise MissingKeyError(f"FusedRNNCell.unpack_weights: {name!r} is not among the arguments")
        packed = args.pop(name)
        offset = 0
        for piece, shape in self._pieces(self._input_size(packed.size)):
            count = shape[0] * (shape[1] if len(shape) == 2 else 1)
            args[piece] = packed[offset : offset + count].reshape(shape).copy()
            offset += count
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """The inverse of :meth:`unpack_weights`: the pieces joined into ``<prefix>parameters``."""
        from lazynd import ndarray as nd

        args = dict(args)
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            raise MissingKeyError(f"FusedRNNCell.pack_weights: {first!r} is not among the arguments")
        pieces = self._pieces(args[first].shape[1])
        missing = [piece for piece, _ in pieces if piece not in args]
        if missing:
            raise MissingKeyError(
                f"FusedRNNCell.pack_weights: missing {missing[:3]}{'...' if len(missing) > 3 else ''}"
            )
        flat = []
        for piece, shape in pieces:
            value = args.pop(piece)
            if tuple(value.shape) != shape:
                raise LazyNDError(f"FusedRNNCell.pack_weights: {piece} has shape {value.shape}, expected {shape}")
            flat.append(value.reshape((-1,)))
        args[self._packed_name] = nd.concatenate(flat, axis=0)
        return args

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        raise LazyNDError("FusedRNNCell cannot be stepped (it runs the whole sequence); use unroll")

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        """Run the layers over ``length`` steps in one ``RNN`` operator (which takes time first: an 'NTC'
        sequence is swapped in and out).  Returns the outputs as :meth:`BaseRNNCell.unroll` does and the
        last states with ``get_next_state`` (no states without)."""
        sym = _sym()
        if layout not in ("NTC", "TNC"):
            raise LazyNDError(f"FusedRNNCell: layout must be 'NTC' or 'TNC', got {layout!r}")
        self.reset()
        data = _as_steps(length, inputs, layout, True)
        if layout == "NTC":
            data = sym.swapaxes(data, dim1=0, dim2=1)
        states = _begin_states(self, begin_state)
        state_args = {"state": states[0]}
        if self._mode == "lstm":
            state_args["state_cell"] = states[1]
        rnn = sym.RNN(
            data=data,
            parameters=self._parameter,
            state_size=self._num_hidden,
            num_layers=self._num_layers,
            bidirectional=self._bidirectional,
            p=self._dropout,
            state_outputs=self._get_next_state,
            mode=self._mode,
            name=f"{self._prefix}rnn",
            **state_args,
        )
        if self._get_next_state:
            # as MXNet: a module then joins the states of several devices along their batch axis (1)
            rnn[1]._set_attr(__layout__="LNC")
            outputs, next_states = rnn[0], [rnn[i] for i in range(1, len(states) + 1)]
        else:
            outputs, next_states = rnn, []
        if layout == "NTC":
            outputs = sym.swapaxes(outputs, dim1=0, dim2=1)
        return _as_steps(length, outputs, layout, merge_outputs), next_states

    def unfuse(self) -> SequentialRNNCell:
        """The same network as unfused cells (``<prefix>l0_``, ``<prefix>r0_``...), whose weights are those
        :meth:`unpack_weights` names, with a ``DropoutCell`` between layers when ``dropout`` is set."""
        hidden = self._num_hidden

        def make(prefix: str) -> BaseRNNCell:
            if self._mode == "lstm":
                return LSTMCell(hidden, prefix=prefix, forget_bias=self._forget_bias)
            if self._mode == "gru":
                return GRUCell(hidden, prefix=prefix)
            return RNNCell(hidden, activation=self._mode[len("rnn_") :], prefix=prefix)

        stack = SequentialRNNCell()
        for layer in range(self._num_layers):
            if self._bidirectional:
                stack.add(
                    BidirectionalCell(
                        make(f"{self._prefix}l{layer}_"),
                        make(f"{self._prefix}r{layer}_"),
                        output_prefix=f"{self._prefix}bi_l{layer}_",
                    )
                )
            else:
                stack.add(make(f"{self._prefix}l{layer}_"))
            if self._dropout > 0 and layer != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{layer}_"))
        return stack


@initializer.register()
class FusedRNN(initializer.Initializer):
    """Fill a :class:`FusedRNNCell`'s packed vector piece by piece: each weight and bias with ``init``
    (an initializer or its ``dumps()``; None: the initializer the vector is initialised with), except an
    LSTM's forget-gate biases, set to ``forget_bias``."""

    def __init__(
        self,
        init: Any,
        num_hidden: int,
        num_layers: int,
        mode: str,
        bidirectional: bool = False,
        forget_bias: float = 1.0,
    ) -> None:
        if init is not None:
            init = initializer.create(init)
        super().__init__(
            init=None if init is None else init.dumps(),
            num_hidden=num_hidden,
            num_layers=num_layers,
            mode=mode,
            bidirectional=bidirectional,
            forget_bias=forget_bias,
        )
        self._init = init
        self._shape = (num_hidden, num_layers, mode, bidirectional, forget_bias)

    def _init_weight(self, desc: str, arr: Any) -> None:
        fallback = getattr(desc, "global_init", None)
        fill = self._init if self._init is not None else fallback
        if isinstance(fill, FusedRNN):  # a FusedRNN cannot fill the pieces themselves
            raise LazyNDError(
                f"mx.init.FusedRNN: {str(desc)!r} carries its cell's FusedRNN initializer, which fills the pieces "
                "with the global initializer, and that is a FusedRNN too: give init_params a plain initializer "
                "(mx.init.Xavier()...), or set the variable's own init to mx.init.FusedRNN(<initializer>, ...)"
            )
        if fill is None:
            raise LazyNDError(
                f"mx.init.FusedRNN: {str(desc)!r} needs an initializer for its pieces: give init= "
                "(mx.init.FusedRNN(mx.init.Xavier(), ...)) or initialise it through another initializer"
            )
        num_hidden, num_layers, mode, bidirectional, forget_bias = self._shape
        cell = FusedRNNCell(num_hidden, num_layers, mode, bidirectional, forget_bias=forget_bias, prefix="")
        pieces = cell.unpack_weights({"parameters": arr})
        for name, piece in pieces.items():
            if mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = forget_bias
            else:
                fill(initializer.InitDesc(name, global_init=fallback), piece)
        cell.pack_weights(pieces)["parameters"].copyto(arr)
