"""Recurrent cells that build symbols step by step (MXNet 1.x's ``mx.rnn``): ``RNNCell``, ``LSTMCell``,
``GRUCell``, and the cells that combine them, ``SequentialRNNCell``, ``BidirectionalCell``,
``DropoutCell`` and ``ResidualCell``.

A cell called on one step's input and its states returns the step's output and the next states;
``unroll`` repeats that over a sequence.  Node and parameter names are MXNet's (``lstm_t0_i2h``,
``lstm_i2h_weight``, ``lstm_begin_state_0``...), so checkpoints and symbol files carry over.

Examples
--------
>>> import lazynd as mx
>>> cell = mx.rnn.LSTMCell(num_hidden=4, prefix="lstm_")
>>> outputs, states = cell.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
>>> outputs.infer_shape(data=(2, 3, 5))[1]
[(2, 3, 4)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazynd.errors import LazyNDError

from ..symbol import Symbol


def _sym() -> Any:
    import lazynd_sym

    return lazynd_sym


class RNNParams:
    """The variables of a cell's parameters, made once per name (``<prefix><name>``) and shared."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._params: dict[str, Symbol] = {}

    def get(self, name: str, **kwargs: Any) -> Symbol:
        """The variable ``<prefix><name>``, made with ``kwargs`` (``init=``...) on first use."""
        full = self._prefix + name
        if full not in self._params:
            self._params[full] = _sym().Variable(full, **kwargs)
        return self._params[full]


def _as_steps(length: int, inputs: Any, layout: str, merge: bool | None, in_layout: str | None = None) -> Any:
    """``inputs`` as a list of ``length`` steps (``merge`` False), one symbol with a time axis (True),
    or as they are (None); a symbol's time axis is moved from ``in_layout``'s place to ``layout``'s."""
    sym = _sym()
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if axis < 0:
        raise LazyNDError(f"mx.rnn: layout {layout!r} has no time axis 'T' (expected 'NTC' or 'TNC')")
    if isinstance(inputs, Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise LazyNDError("mx.rnn: unroll takes one symbol with a time axis, or a list of one symbol per step")
            inputs = list(sym.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise LazyNDError(f"mx.rnn: unroll of length {length} was given {len(inputs)} step inputs")
        if merge is True:
            inputs = sym.Concat(*[sym.expand_dims(step, axis=axis) for step in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, Symbol) and axis != in_axis:
        inputs = sym.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs


class BaseRNNCell:
    """A recurrent cell: ``cell(inputs, states) -> (output, next_states)`` for one step.

    ``prefix`` starts the names of its parameters and nodes; ``params`` (an :class:`RNNParams`)
    shares another cell's parameters.
    """

    _num_hidden = 0  # the gated cells' hidden size, which splits their fused weights per gate

    def __init__(self, prefix: str = "", params: RNNParams | None = None) -> None:
        self._own_params = params is None
        self._prefix = prefix
        self._params = RNNParams(prefix) if params is None else params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step and begin-state counters (``unroll`` does it first)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", []):
            cell.reset()

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        raise NotImplementedError(f"{type(self).__name__} does not implement one step")

    @property
    def params(self) -> RNNParams:
        """The cell's parameters (handed to another cell, they are shared)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        """``shape`` (batch 0: taken from the graph) and ``__layout__`` of each state."""
        return []

    @property
    def state_shape(self) -> list[tuple[int, ...]]:
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ()

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        """The initial states, ``func(name=..., shape=..., __layout__=...)`` each (default: zeros)."""
        if self._modified:
            raise LazyNDError(
                f"{type(self).__name__}: this cell is wrapped by another; call begin_state of the wrapper"
            )
        make = func or _sym().zeros
        states = []
        for info in self.state_info:
            self._init_counter += 1
            states.append(make(name=f"{self._prefix}begin_state_{self._init_counter}", **{**info, **kwargs}))
        return states

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with each fused ``i2h``/``h2h`` weight and bias split into one array per gate
        (``<prefix>i2h<gate>_weight``), as MXNet's RNN checkpoints store them."""
        args = dict(args)
        if not self._gate_names:
            return args
        hidden = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * hidden : (j + 1) * hidden].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * hidden : (j + 1) * hidden].copy()
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """The inverse of :meth:`unpack_weights`: the gates' arrays joined into one per group."""
        from lazynd import ndarray as nd

        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                pieces = [args.pop(f"{self._prefix}{group}{gate}_{kind}") for gate in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = nd.concatenate(pieces, axis=0)
        return args

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        """Apply the cell ``length`` times: ``inputs`` is one symbol with a time axis (where ``layout``
        puts 'T') or a list of one symbol per step.  Returns the outputs (one symbol with ``merge_outputs``,
        a list without; as given with None) and the last states."""
        self.reset()
        steps = _as_steps(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else list(begin_state)
        outputs = []
        for step in steps:
            output, states = self(step, states)
            outputs.append(output)
        return _as_steps(length, outputs, layout, merge_outputs), states

    def _step_name(self) -> str:
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _fully_connected(self, data: Symbol, group: str, num_hidden: int, name: str) -> Symbol:
        weight = self._params.get(f"{group}_weight")
        bias = self._params.get(f"{group}_bias")
        return _sym().FullyConnected(data=data, weight=weight, bias=bias, num_hidden=num_hidden, name=name)


class RNNCell(BaseRNNCell):
    """The Elman cell: ``h' = activation(W x + b + U h + c)``."""

    def __init__(
        self, num_hidden: int, activation: str = "tanh", prefix: str = "rnn_", params: RNNParams | None = None
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        for name in ("i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias"):
            self._params.get(name)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        name = self._step_name()
        i2h = self._fully_connected(inputs, "i2h", self._num_hidden, f"{name}i2h")
        h2h = self._fully_connected(states[0], "h2h", self._num_hidden, f"{name}h2h")
        output = _sym().Activation(i2h + h2h, act_type=self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """The long short-term memory cell: gates i, f, c, o from one i2h and one h2h product; the
    forget gate's bias starts at ``forget_bias`` (``mx.init.LSTMBias``)."""

    def __init__(
        self, num_hidden: int, prefix: str = "lstm_", params: RNNParams | None = None, forget_bias: float = 1.0
    ) -> None:
        from lazynd import initializer

        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._params.get("i2h_weight")
        self._params.get("h2h_weight")
        self._params.get("i2h_bias", init=initializer.LSTMBias(forget_bias=forget_bias))
        self._params.get("h2h_bias")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}] * 2

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        sym = _sym()
        name = self._step_name()
        i2h = self._fully_connected(inputs, "i2h", 4 * self._num_hidden, f"{name}i2h")
        h2h = self._fully_connected(states[0], "h2h", 4 * self._num_hidden, f"{name}h2h")
        gates = sym.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = sym.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = sym.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        candidate = sym.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = sym.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = sym._internal._plus(forget_gate * states[1], in_gate * candidate, name=f"{name}state")
        next_h = sym._internal._mul(out_gate, sym.Activation(next_c, act_type="tanh"), name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """The gated recurrent unit: reset and update gates, ``h' = (1 - z) * h~ + z * h``."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: RNNParams | None = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        for name in ("i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias"):
            self._params.get(name)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        sym = _sym()
        name = self._step_name()
        hidden = self._num_hidden
        i2h = self._fully_connected(inputs, "i2h", 3 * hidden, f"{name}_i2h")
        h2h = self._fully_connected(states[0], "h2h", 3 * hidden, f"{name}_h2h")
        i2h_r, i2h_z, i2h = sym.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = sym.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = sym.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update_gate = sym.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = sym.Activation(i2h + reset_gate * h2h, act_type="tanh", name=f"{name}_h_act")
        next_h = sym._internal._plus((1.0 - update_gate) * candidate, update_gate * states[0], name=f"{name}out")
        return next_h, [next_h]


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each one's output is the next one's input; the states are all the cells' in order."""

    def __init__(self, params: RNNParams | None = None) -> None:
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list[BaseRNNCell] = []

    def add(self, cell: BaseRNNCell) -> None:
        """Stack ``cell`` on top."""
        self._cells.append(cell)
        if self._override_cell_params:
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        if self._modified:
            raise LazyNDError("SequentialRNNCell: this cell is wrapped by another; call begin_state of the wrapper")
        return [state for cell in self._cells for state in cell.begin_state(func=func, **kwargs)]

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def _split_states(self, states: list[Symbol]) -> list[list[Symbol]]:
        pieces, start = [], 0
        for cell in self._cells:
            count = len(cell.state_info)
            pieces.append(list(states[start : start + count]))
            start += count
        return pieces

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        self._counter += 1
        next_states: list[Symbol] = []
        for cell, cell_states in zip(self._cells, self._split_states(states), strict=True):
            inputs, cell_states = cell(inputs, cell_states)
            next_states += cell_states
        return inputs, next_states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        states = self.begin_state() if begin_state is None else list(begin_state)
        next_states: list[Symbol] = []
        last = len(self._cells) - 1
        for i, (cell, cell_states) in enumerate(zip(self._cells, self._split_states(states), strict=True)):
            inputs, cell_states = cell.unroll(
                length,
                inputs,
                begin_state=cell_states,
                layout=layout,
                merge_outputs=merge_outputs if i == last else None,
            )
            next_states += cell_states
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on each step's input (no state); unrolled over a merged sequence, one Dropout node."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params: RNNParams | None = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self.dropout = dropout

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        if self.dropout > 0:
            inputs = _sym().Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs = _as_steps(length, inputs, layout, merge_outputs)
        if isinstance(inputs, Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell that changes what ``base_cell`` computes; its parameters and states are the base cell's."""

    def __init__(self, base_cell: BaseRNNCell) -> None:
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return self.base_cell.state_info

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.pack_weights(args)


class ResidualCell(ModifierCell):
    """``base_cell``'s output plus its input (a residual connection), step by step or unrolled."""

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        output, states = self.base_cell(inputs, states)
        return _sym()._internal._plus(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout, merge_outputs)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, Symbol) if merge_outputs is None else merge_outputs
        inputs = _as_steps(length, inputs, layout, merge)
        plus = _sym()._internal._plus
        if merge:
            return plus(outputs, inputs, name=f"{outputs.name}_plus_residual"), states
        return [plus(o, i, name=f"{o.name}_plus_residual") for o, i in zip(outputs, inputs, strict=True)], states


class BidirectionalCell(BaseRNNCell):
    """``l_cell`` over the sequence and ``r_cell`` over it reversed, their outputs joined per step
    (``<output_prefix>t<i>``, or ``<output_prefix>out`` merged); the states come back as two lists,
    ``[l_states, r_states]``, as MXNet's.  Only unrolled, never stepped."""

    def __init__(
        self, l_cell: BaseRNNCell, r_cell: BaseRNNCell, params: RNNParams | None = None, output_prefix: str = "bi_"
    ) -> None:
        super().__init__(prefix="", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        raise LazyNDError("BidirectionalCell cannot be stepped (it needs the whole sequence); use unroll")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        return [state for cell in self._cells for state in cell.begin_state(func=func, **kwargs)]

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: list[Symbol] | None = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
    ) -> tuple[Any, list[Any]]:
        sym = _sym()
        self.reset()
        axis = layout.find("T")
        steps = _as_steps(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else list(begin_state)
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(
            length, steps, begin_state=states[:n_left], layout=layout, merge_outputs=merge_outputs
        )
        r_outputs, r_states = r_cell.unroll(
            length, list(reversed(steps)), begin_state=states[n_left:], layout=layout, merge_outputs=merge_outputs
        )
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, Symbol) and isinstance(r_outputs, Symbol)
        if merge_outputs:
            l_outputs = _as_steps(length, l_outputs, layout, True)
            r_merged = _as_steps(length, r_outputs, layout, True)
            merged = sym.Concat(l_outputs, sym.reverse(r_merged, axis=axis), dim=2, name=f"{self._output_prefix}out")
            return merged, [l_states, r_states]
        l_list = _as_steps(length, l_outputs, layout, False)
        r_list = list(reversed(_as_steps(length, r_outputs, layout, False)))
        outputs = [
            sym.Concat(left, right, dim=1, name=f"{self._output_prefix}t{i}")
            for i, (left, right) in enumerate(zip(l_list, r_list, strict=True))
        ]
        return outputs, [l_states, r_states]
