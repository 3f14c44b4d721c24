"""Recurrent cells that build symbols step by step (MXNet 1.x's ``mx.rnn``): the base cell and its
unroll, ``RNNCell``, ``LSTMCell`` and ``GRUCell`` (``combinators`` holds the cells made of cells).

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

import numbers
from collections.abc import Callable, Sequence
from typing import Any

from lazynd.errors import ArgumentTypeError, ArgumentValueError, LazyNDError, MissingKeyError

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
    _check_length(length, inputs, merge)
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


def _check_length(length: Any, inputs: Any, merge: bool | None) -> None:
    """Refuse an unroll ``length`` that is not a count of steps, before it is taken for one.

    A string or float length was compared with the number of step inputs (``'2'`` against 2 was
    reported as "length 2 was given 2 step inputs"), and a length below 1 reached ``SliceChannel``
    and was reported as its ``num_outputs``.  None is let through where nothing is split (a list of
    steps, or a whole sequence kept whole).
    """
    splits = isinstance(inputs, Symbol) and merge is False
    if length is None and not splits:
        return
    if isinstance(length, bool) or not isinstance(length, numbers.Integral):
        raise ArgumentTypeError(f"mx.rnn: unroll's length must be an int (the number of steps), got {length!r}")
    if length < (1 if splits else 0):
        raise ArgumentValueError(
            f"mx.rnn: unroll's length must be at least {1 if splits else 0} to split a sequence into steps, "
            f"got {length}"
        )


def _check_states(cell: BaseRNNCell, states: Any, method: str, argument: str) -> list[Symbol]:
    """``states`` as a list of one symbol per entry of ``cell.state_info``, or a LazyNDError naming the
    cell, the method and the count and types given (a short list was an IndexError deep in a step)."""
    states = [states] if isinstance(states, Symbol) and len(states.list_outputs()) == 1 else list(states)
    expected = len(cell.state_info)
    if len(states) != expected or not all(isinstance(state, Symbol) for state in states):
        given = [type(state).__name__ for state in states]
        raise LazyNDError(
            f"{type(cell).__name__}.{method}: {argument} must be a list of {expected} symbols (one per entry "
            f"of state_info), got {len(states)}: {given}"
        )
    return states


def _begin_states(cell: BaseRNNCell, begin_state: Any) -> list[Symbol]:
    """``begin_state`` as a list of one symbol per state of ``cell`` (its own zeros when None)."""
    if begin_state is None:
        return cell.begin_state()
    return _check_states(cell, begin_state, "unroll", "begin_state")


def _take(args: dict[str, Any], name: str, cell: BaseRNNCell, method: str) -> Any:
    """``args.pop(name)``, or a MissingKeyError naming the cell, the method and the arguments there are."""
    if name not in args:
        present = sorted(args)
        raise MissingKeyError(
            f"{type(cell).__name__}.{method}: {name!r} is not among the arguments "
            f"({present[:6]}{'...' if len(present) > 6 else ''}); is the cell's prefix {cell._prefix!r} theirs?"
        )
    return args.pop(name)


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
        """``shape`` (batch 0: taken from the graph) and ``__layout__`` of each state.

        A cell written to MXNet 0.9's interface overrides ``state_shape`` alone; it has one state
        per shape listed there (a shape of None leaves the state's shape to inference), as MXNet 0.9
        made them.  A cell that overrides neither has no state.
        """
        if type(self).state_shape is BaseRNNCell.state_shape:
            return []
        return [{} if shape is None else {"shape": tuple(shape)} for shape in self.state_shape]

    @property
    def state_shape(self) -> list[tuple[int, ...]]:
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ()

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        """The initial states, ``func(name=..., shape=..., __layout__=...)`` each (default: zeros).

        ``kwargs`` go to ``func`` too, but a state's own ``shape`` and ``__layout__`` win over them,
        as in MXNet: a ``shape=(batch, hidden)`` given here leaves the batch to the graph."""
        if self._modified:
            raise LazyNDError(
                f"{type(self).__name__}: this cell is wrapped by another; call begin_state of the wrapper"
            )
        make = func or _sym().zeros
        states = []
        for info in self.state_info:
            self._init_counter += 1
            states.append(make(name=f"{self._prefix}begin_state_{self._init_counter}", **{**kwargs, **info}))
        return states

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with each fused ``i2h``/``h2h`` weight and bias split into one array per gate
        (``<prefix>i2h<gate>_weight``), as MXNet's RNN checkpoints store them."""
        args = dict(args)
        if not self._gate_names:
            return args
        hidden = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = _take(args, f"{self._prefix}{group}_weight", self, "unpack_weights")
            bias = _take(args, f"{self._prefix}{group}_bias", self, "unpack_weights")
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
                pieces = [
                    _take(args, f"{self._prefix}{group}{gate}_{kind}", self, "pack_weights")
                    for gate in self._gate_names
                ]
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
        states = _begin_states(self, begin_state)
        outputs = []
        for step in steps:
            output, states = self(step, states)
            outputs.append(output)
        return _as_steps(length, outputs, layout, merge_outputs), states

    def _begin_step(self, states: list[Symbol]) -> str:
        """The next step's node prefix (``<prefix>t<i>_``), once ``states`` are checked to be the cell's."""
        _check_states(self, states, "__call__", "states")
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _get_activation(self, inputs: Symbol, activation: Any, **kwargs: Any) -> Symbol:
        """``activation`` applied to ``inputs``: an ``Activation`` act_type (``"tanh"``), or a callable
        taking the symbol and the keyword arguments (``name=``).  MXNet's name: cells that users write
        on ``BaseRNNCell`` call it."""
        if isinstance(activation, str):
            return _sym().Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

    def _fully_connected(self, data: Symbol, group: str, num_hidden: int, name: str) -> Symbol:
        weight = self._params.get(f"{group}_weight")
        bias = self._params.get(f"{group}_bias")
        return _sym().FullyConnected(data=data, weight=weight, bias=bias, num_hidden=num_hidden, name=name)


class RNNCell(BaseRNNCell):
    """The Elman cell: ``h' = activation(W x + b + U h + c)``; ``activation`` is an act_type or a callable
    taking the symbol and ``name=``."""

    def __init__(
        self, num_hidden: int, activation: Any = "tanh", prefix: str = "rnn_", params: RNNParams | None = None
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
        name = self._begin_step(states)
        i2h = self._fully_connected(inputs, "i2h", self._num_hidden, f"{name}i2h")
        h2h = self._fully_connected(states[0], "h2h", self._num_hidden, f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
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
        name = self._begin_step(states)
        i2h = self._fully_connected(inputs, "i2h", 4 * self._num_hidden, f"{name}i2h")
        h2h = self._fully_connected(states[0], "h2h", 4 * self._num_hidden, f"{name}h2h")
        next_h, next_c = lstm_update(i2h + h2h, states[1], name, tanh)
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
        name = self._begin_step(states)
        hidden = self._num_hidden
        i2h = self._fully_connected(inputs, "i2h", 3 * hidden, f"{name}_i2h")
        h2h = self._fully_connected(states[0], "h2h", 3 * hidden, f"{name}_h2h")
        next_h = gru_update(i2h, h2h, states[0], name, tanh)
        return next_h, [next_h]


def tanh(data: Symbol, name: str | None = None) -> Symbol:
    """``Activation(act_type='tanh')``, the squashing of the LSTM and GRU cells."""
    return _sym().Activation(data, act_type="tanh", **({} if name is None else {"name": name}))


def lstm_update(
    gates: Symbol, prev_c: Symbol, name: str, activate: Callable[..., Symbol], axis: int | None = None
) -> tuple[Symbol, Symbol]:
    """One LSTM step from the summed ``i2h + h2h`` products (gates i, f, c, o stacked on ``axis``, 1
    when None): ``(next_h, next_c)``, the candidate and the output squashed by ``activate``."""
    sym = _sym()
    split = sym.SliceChannel(gates, num_outputs=4, name=f"{name}slice", **({} if axis is None else {"axis": axis}))
    in_gate = sym.Activation(split[0], act_type="sigmoid", name=f"{name}i")
    forget_gate = sym.Activation(split[1], act_type="sigmoid", name=f"{name}f")
    candidate = activate(split[2], name=f"{name}c")
    out_gate = sym.Activation(split[3], act_type="sigmoid", name=f"{name}o")
    next_c = sym._internal._plus(forget_gate * prev_c, in_gate * candidate, name=f"{name}state")
    next_h = sym._internal._mul(out_gate, activate(next_c), name=f"{name}out")
    return next_h, next_c


def gru_update(
    i2h: Symbol, h2h: Symbol, prev_h: Symbol, name: str, activate: Callable[..., Symbol], axis: int | None = None
) -> Symbol:
    """One GRU step from the ``i2h`` and ``h2h`` products (gates r, z, candidate stacked on ``axis``,
    1 when None): ``(1 - z) * activate(i2h + r * h2h) + z * prev_h``."""
    sym = _sym()
    where = {} if axis is None else {"axis": axis}
    i2h_r, i2h_z, i2h = sym.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice", **where)
    h2h_r, h2h_z, h2h = sym.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice", **where)
    reset_gate = sym.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
    update_gate = sym.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
    candidate = activate(i2h + reset_gate * h2h, name=f"{name}_h_act")
    return sym._internal._plus((1.0 - update_gate) * candidate, update_gate * prev_h, name=f"{name}out")
