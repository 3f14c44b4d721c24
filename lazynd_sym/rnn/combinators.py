"""Cells made of cells (MXNet 1.x's ``mx.rnn``): ``SequentialRNNCell`` stacks them,
``BidirectionalCell`` runs two over a sequence both ways, ``DropoutCell`` drops inputs,
``ResidualCell`` adds a cell's input to its output and ``ZoneoutCell`` keeps units of the previous step.

Examples
--------
>>> import lazynd as mx
>>> stack = mx.rnn.SequentialRNNCell()
>>> stack.add(mx.rnn.GRUCell(3, prefix="g0_"))
>>> stack.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(3, prefix="g1_")))
>>> outputs, states = stack.unroll(2, mx.sym.var("data"), merge_outputs=True)
>>> outputs.infer_shape(data=(4, 2, 5))[1]
[(4, 2, 3)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.errors import LazyNDError

from ..symbol import Symbol
from .cells import BaseRNNCell, RNNParams, _as_steps, _begin_states, _sym


class _CellGroup(BaseRNNCell):
    """A cell made of ``_cells``: their states in order, their weights (un)packed each in turn, and
    their parameters shared (``params`` given: the group's parameters are the cells' too)."""

    def __init__(self, params: RNNParams | None = None) -> None:
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list[BaseRNNCell] = []

    def _adopt(self, *cells: BaseRNNCell) -> None:
        self._cells += cells
        if self._override_cell_params:
            for cell in cells:
                cell.params._params.update(self.params._params)
        for cell in cells:
            self.params._params.update(cell.params._params)

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


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each one's output is the next one's input; the states are all the cells' in order."""

    def add(self, cell: BaseRNNCell) -> None:
        """Stack ``cell`` on top."""
        self._adopt(cell)

    def begin_state(self, func: Callable[..., Symbol] | None = None, **kwargs: Any) -> list[Symbol]:
        if self._modified:
            raise LazyNDError("SequentialRNNCell: this cell is wrapped by another; call begin_state of the wrapper")
        return super().begin_state(func=func, **kwargs)

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
        states = _begin_states(self, begin_state)
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


class ZoneoutCell(ModifierCell):
    """``base_cell`` with zoneout: in training, each unit of the output (``zoneout_outputs``) and of the
    states (``zoneout_states``) keeps its previous step's value with that probability, chosen by a
    Dropout mask (at inference every unit takes its new value).  The first step's previous output is
    zeros."""

    def __init__(self, base_cell: BaseRNNCell, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0) -> None:
        from .fused import FusedRNNCell  # fused.py builds on this module

        if isinstance(base_cell, BidirectionalCell):
            raise LazyNDError("ZoneoutCell: a BidirectionalCell cannot be zoned out; wrap each of its cells instead")
        if isinstance(base_cell, FusedRNNCell):
            raise LazyNDError("ZoneoutCell: a FusedRNNCell cannot be zoned out; wrap the cells of its unfuse() instead")
        for what, p in (("zoneout_outputs", zoneout_outputs), ("zoneout_states", zoneout_states)):
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p < 1:
                raise LazyNDError(f"ZoneoutCell: {what} must be a probability in [0, 1), got {p!r}")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output: Symbol | None = None

    def reset(self) -> None:
        super().reset()
        self._prev_output = None
        if hasattr(self, "base_cell"):  # reset runs once in BaseRNNCell.__init__, before base_cell is set
            self.base_cell.reset()

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        sym = _sym()
        output, next_states = self.base_cell(inputs, states)

        def zone_out(p: float, new: Symbol, old: Symbol) -> Symbol:
            keep_new = sym.Dropout(sym.ones_like(new), p=p)  # 0 where the unit keeps its old value
            return sym.where(keep_new, new, old)

        if self.zoneout_outputs:
            prev = self._prev_output if self._prev_output is not None else sym.zeros((0, 0))
            output = zone_out(self.zoneout_outputs, output, prev)
        if self.zoneout_states:
            next_states = [
                zone_out(self.zoneout_states, new, old) for new, old in zip(next_states, states, strict=True)
            ]
        self._prev_output = output
        return output, next_states


class BidirectionalCell(_CellGroup):
    """``l_cell`` over the sequence and ``r_cell`` over it reversed, their outputs joined per step
    (``<output_prefix>t<i>``, or ``<output_prefix>out`` merged); the states come back as two lists,
    ``[l_states, r_states]``, as MXNet's.  Only unrolled, never stepped."""

    def __init__(
        self, l_cell: BaseRNNCell, r_cell: BaseRNNCell, params: RNNParams | None = None, output_prefix: str = "bi_"
    ) -> None:
        super().__init__(params=params)
        self._output_prefix = output_prefix
        self._adopt(l_cell, r_cell)

    def __call__(self, inputs: Symbol, states: list[Symbol]) -> tuple[Symbol, list[Symbol]]:
        raise LazyNDError("BidirectionalCell cannot be stepped (it needs the whole sequence); use unroll")

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
        states = _begin_states(self, begin_state)
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
