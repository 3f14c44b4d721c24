"""The fused ``RNN`` operator: stacked, optionally bidirectional LSTM, GRU or vanilla RNN layers
over a ``(time, batch, input)`` sequence, with MXNet's packed parameter layout.

Parameters are one flat vector, laid out as MXNet lays them out (so weights trained there
load here): first every weight, layer by layer and, inside a layer, the forward direction
before the backward one, each direction's input-to-hidden ``(gates * state_size, input)``
then hidden-to-hidden ``(gates * state_size, recurrent)`` matrix (then, with
``projection_size``, its ``(projection_size, state_size)`` projection); then every bias in
the same order (``i2h`` then ``h2h``).  ``recurrent`` is ``projection_size`` when given, else
``state_size``.  Gates are ordered ``i, f, g, o`` (LSTM) and ``r, z, n`` (GRU, with
``n = tanh(x W_n + b_in + r * (h U_n + b_hn))`` and ``h' = (1 - z) n + z h``).

MXNet 1.9.1's later parameters are here too: ``use_sequence_length`` (a ``sequence_length``
input of shape ``(batch,)``; the backward direction runs over each sequence's own steps),
``projection_size`` (LSTMP) and ``lstm_state_clip_min``/``_max``/``_nan``; see
:mod:`lazynd.ops.rnn_layer` for what each does to the recurrence.

Each layer multiplies the whole sequence by its input weights in one GEMM, then loops over
time with one GEMM per step (``kctx.xp``: NumPy or CuPy).  The backward operator runs the
forward again, keeping every step's gates, and back-propagates through time by hand.
In training, ``p`` drops that fraction of each layer's outputs before the next layer reads them
(not the last layer's), scaling the rest by ``1 / (1 - p)``, as MXNet does; the mask drawn is a
hidden output (``dropout_mask``, one per layer boundary) that the backward operator reads.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import FRACTION, Param, enum, optional, parse_bool, parse_float, parse_int
from .registry import OpDef, merge_shape, register
from .rnn_layer import LayerWeights, layer_backward, layer_forward
from .sequence import reversal_source

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}

_PARAMS = {
    "state_size": Param(parse_int, doc="size of each layer's hidden state"),
    "num_layers": Param(parse_int, doc="number of stacked layers"),
    "bidirectional": Param(parse_bool, False, "run a second layer over the reversed sequence"),
    "mode": Param(enum(*GATES), doc="lstm, gru, rnn_tanh or rnn_relu"),
    "p": Param(FRACTION, 0.0, "in training, dropout on each layer's outputs but the last layer's"),
    "state_outputs": Param(parse_bool, False, "also output the final hidden (and, for lstm, cell) states"),
    "projection_size": Param(optional(parse_int), None, "lstm only: project the hidden state to this size"),
    "lstm_state_clip_min": Param(optional(parse_float), None, "lstm only: the lower clip of the cell state"),
    "lstm_state_clip_max": Param(optional(parse_float), None, "lstm only: the upper clip of the cell state"),
    "lstm_state_clip_nan": Param(parse_bool, False, "with the clips: a NaN cell state becomes the lower clip"),
    "use_sequence_length": Param(parse_bool, False, "read each sequence's length from sequence_length"),
}


def _inputs(attrs: dict) -> tuple[str, ...]:
    names = (
        ("data", "parameters", "state", "state_cell") if attrs["mode"] == "lstm" else ("data", "parameters", "state")
    )
    return names + ("sequence_length",) if attrs["use_sequence_length"] else names


def _differentiable_inputs(attrs: dict) -> tuple[str, ...]:
    return tuple(name for name in _inputs(attrs) if name != "sequence_length")


def _visible_outputs(attrs: dict) -> tuple[str, ...]:
    if not attrs["state_outputs"]:
        return ("output",)
    return ("output", "state_output", "statecell_output") if attrs["mode"] == "lstm" else ("output", "state_output")


def _drops(attrs: dict) -> bool:
    """Whether the stack has dropout between layers (and so the hidden ``dropout_mask`` output)."""
    return attrs["p"] > 0 and attrs["num_layers"] > 1


def _outputs(attrs: dict) -> tuple[str, ...]:
    return _visible_outputs(attrs) + (("dropout_mask",) if _drops(attrs) else ())


def _directions(attrs: dict) -> int:
    return 2 if attrs["bidirectional"] else 1


def _recurrent_size(attrs: dict) -> int:
    """The size of the hidden state the layers pass on: the projection's when there is one."""
    return attrs["projection_size"] or attrs["state_size"]


def _clip(attrs: dict) -> tuple[float, float, bool] | None:
    low, high = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    return None if low is None else (low, high, attrs["lstm_state_clip_nan"])


def _check_params(attrs: dict) -> None:
    """Refuse what MXNet 1.9.1 cannot run (it crashes or silently ignores these), naming the parameters.

    The combinations raise ShapeError (an OperatorError): they decide the inputs' shapes, and the
    symbolic shape pass lets only a ShapeError through while some shapes are still unknown.
    """
    for name in ("state_size", "num_layers"):
        if attrs[name] < 1:
            raise OperatorError(f"RNN: {name} must be positive, got {attrs[name]}")
    projection = attrs["projection_size"]
    if projection is not None and (attrs["mode"] != "lstm" or projection < 1):
        raise ShapeError(
            f"RNN: projection_size needs mode='lstm' and a positive size, got mode={attrs['mode']!r}, "
            f"projection_size={projection}"
        )
    low, high = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if low is None and high is None:
        return
    if attrs["mode"] != "lstm" or low is None or high is None or not low <= high:
        raise ShapeError(
            "RNN: lstm_state_clip_min and lstm_state_clip_max need mode='lstm' and both bounds with min <= max, "
            f"got mode={attrs['mode']!r}, lstm_state_clip_min={low}, lstm_state_clip_max={high}"
        )


def parameter_layout(attrs: dict, input_size: int) -> list[tuple[Any, ...]]:
    """Per (layer, direction): (offset, size) of its i2h weight, h2h weight, projection (None without
    ``projection_size``), i2h bias and h2h bias."""
    hidden, gates, dirs = attrs["state_size"], GATES[attrs["mode"]], _directions(attrs)
    recurrent, projection = _recurrent_size(attrs), attrs["projection_size"]
    rows = gates * hidden
    weights: list[tuple[Any, ...]] = []
    offset = 0
    for layer in range(attrs["num_layers"]):
        width = input_size if layer == 0 else dirs * recurrent
        for _ in range(dirs):
            i2h, h2h = (offset, rows * width), (offset + rows * width, rows * recurrent)
            offset += rows * (width + recurrent)
            weights.append((i2h, h2h, (offset, projection * hidden) if projection else None))
            offset += projection * hidden if projection else 0
    layout: list[tuple[Any, ...]] = []
    for entry in weights:
        layout.append((*entry, (offset, rows), (offset + rows, rows)))
        offset += 2 * rows
    return layout


def parameter_count(attrs: dict, input_size: int) -> int:
    """The length of the packed parameter vector."""
    last = parameter_layout(attrs, input_size)[-1][-1]
    return last[0] + last[1]


def _unpack(params: Any, layout: tuple, hidden: int) -> LayerWeights:
    (wi, wi_n), (wh, wh_n), projection, (bi, b_n), (bh, _) = layout
    w_proj = None if projection is None else params[projection[0] : projection[0] + projection[1]].reshape(-1, hidden)
    return LayerWeights(
        params[wi : wi + wi_n].reshape(b_n, -1),
        params[wh : wh + wh_n].reshape(b_n, -1),
        w_proj,
        params[bi : bi + b_n],
        params[bh : bh + b_n],
    )


# -- sequence lengths ----------------------------------------------------------------------------------
def _step_order(xp: Any, attrs: dict, lengths_input: Any, steps: int, batch: int) -> tuple[Any, Any]:
    """(step mask (T, N, 1) or None, the backward direction's (T, N) step order or None for plain reversal)."""
    if not attrs["use_sequence_length"]:
        return None, None
    lengths = lengths_input.reshape(-1)
    whole = lengths.astype(xp.int64)
    if bool(((whole != lengths) | (whole < 1) | (whole > steps)).any()):
        raise OperatorError(
            f"RNN: sequence_length must hold whole numbers in [1, {steps}] (the time axis), got "
            f"{lengths.tolist() if batch <= 16 else 'values outside it'}"
        )
    mask = (xp.arange(steps)[:, None] < whole[None, :])[:, :, None]
    return mask, reversal_source(xp, whole, steps)


def _reverse(xp: Any, x: Any, order: Any) -> Any:
    """``x`` (T, N, C) with each sequence reversed (whole when ``order`` is None); its own inverse."""
    return x[::-1] if order is None else xp.take_along_axis(x, order[:, :, None], axis=0)


# -- the stack -----------------------------------------------------------------------------------------
def _run(xp: Any, attrs: dict, inputs: list, drop: Any = None) -> tuple[Any, Any, Any, list, Any, Any]:
    """The whole stack forward: (output, final h, final c, per-layer inputs and caches, mask, order).

    ``drop`` (layers - 1, T, N, width): the dropout mask each layer's input above the first is
    multiplied by, or None."""
    data, params, state = inputs[:3]
    cell = inputs[3] if attrs["mode"] == "lstm" else None
    lengths = inputs[-1] if attrs["use_sequence_length"] else None
    mode, hidden, dirs, clip = attrs["mode"], attrs["state_size"], _directions(attrs), _clip(attrs)
    mask, order = _step_order(xp, attrs, lengths, data.shape[0], data.shape[1])
    layout = parameter_layout(attrs, data.shape[2])
    x, final_h, final_c, saved = data, [], [], []
    for layer in range(attrs["num_layers"]):
        if layer and drop is not None:
            x = x * drop[layer - 1]
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            weights = _unpack(params, layout[k], hidden)
            seq = x if d == 0 else _reverse(xp, x, order)
            c0 = cell[k] if cell is not None else None
            out, h, c, cache = layer_forward(xp, mode, seq, weights, state[k], c0, clip, mask)
            outputs.append(out if d == 0 else _reverse(xp, out, order))
            final_h.append(h)
            final_c.append(c)
            saved.append((seq, weights, cache))
        x = outputs[0] if dirs == 1 else xp.concatenate(outputs, axis=2)
    return x, xp.stack(final_h), (xp.stack(final_c) if cell is not None else None), saved, mask, order


def _draw_dropout(kctx: Any, p: float, mask: Any) -> None:
    """Fill ``mask`` with kept units scaled by ``1 / (1 - p)`` in training, with ones otherwise."""
    if kctx.is_train:  # p = 1 (MXNet takes it) drops every unit, as Dropout's does
        mask[...] = (kctx.rng.uniform(0.0, 1.0, mask.shape) >= p) * (1.0 / (1.0 - p) if p < 1 else 0.0)
    else:
        mask[...] = 1


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    drop = None
    if _drops(attrs):
        drop = outputs[-1]
        _draw_dropout(kctx, attrs["p"], drop)
    out, h, c, _, _, _ = _run(kctx.xp, attrs, inputs, drop)
    outputs[0][...] = out
    if attrs["state_outputs"]:
        outputs[1][...] = h
        if c is not None:
            outputs[2][...] = c


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    lstm = attrs["mode"] == "lstm"
    n_heads = len(_visible_outputs(attrs))
    heads, forward_inputs = inputs[:n_heads], inputs[n_heads:]
    drop = None
    if _drops(attrs):
        forward_inputs, drop = forward_inputs[:-1], forward_inputs[-1]
    data, params, state = forward_inputs[:3]
    _, _, _, saved, mask, order = _run(xp, attrs, forward_inputs, drop)
    cell_shape = forward_inputs[3].shape if lstm else None
    h_grads = heads[1] if attrs["state_outputs"] else xp.zeros_like(state)
    c_grads = (heads[2] if attrs["state_outputs"] else xp.zeros(cell_shape, dtype=state.dtype)) if lstm else None
    recurrent, dirs, clip = _recurrent_size(attrs), _directions(attrs), _clip(attrs)
    param_grad = xp.zeros_like(params)
    layout = parameter_layout(attrs, data.shape[2])
    state_grad = xp.zeros_like(state)
    cell_grad = xp.zeros(cell_shape, dtype=state.dtype) if lstm else None
    x_grad = heads[0]
    for layer in reversed(range(attrs["num_layers"])):
        below = []
        for d in range(dirs):
            k = layer * dirs + d
            seq, weights, cache = saved[k]
            dy = x_grad[:, :, d * recurrent : (d + 1) * recurrent]
            dy = dy if d == 0 else _reverse(xp, dy, order)
            dc = c_grads[k] if c_grads is not None else None
            dx, grads, dh0, dc0 = layer_backward(xp, attrs["mode"], seq, weights, cache, dy, h_grads[k], dc, clip, mask)
            below.append(dx if d == 0 else _reverse(xp, dx, order))
            for place, grad in zip(layout[k], grads, strict=True):
                if place is not None:
                    param_grad[place[0] : place[0] + place[1]] = grad.reshape(-1)
            state_grad[k] = dh0
            if cell_grad is not None:
                cell_grad[k] = dc0
        x_grad = below[0] if dirs == 1 else below[0] + below[1]
        if layer and drop is not None:  # the layer read the one below through the dropout mask
            x_grad = x_grad * drop[layer - 1]
    outputs[0][...] = x_grad
    outputs[1][...] = param_grad
    outputs[2][...] = state_grad
    if lstm:
        outputs[3][...] = cell_grad


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    _check_params(attrs)
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None] * len(_outputs(attrs)), aux_shapes
    if len(data) != 3:
        raise ShapeError(f"RNN: data must be (time, batch, input), got {tuple(data)}")
    layers_dirs, batch = attrs["num_layers"] * _directions(attrs), data[1]
    states = (layers_dirs, batch, _recurrent_size(attrs))
    cells = (layers_dirs, batch, attrs["state_size"])
    shapes = {
        "data": tuple(data),
        "parameters": (parameter_count(attrs, data[2]),),
        "state": states,
        "state_cell": cells,
        "sequence_length": (batch,),
    }
    merged = [
        merge_shape("RNN", name, given, shapes[name]) for name, given in zip(_inputs(attrs), in_shapes, strict=True)
    ]
    out = (data[0], batch, _directions(attrs) * _recurrent_size(attrs))
    outs: list[tuple[Any, ...]] = [out, states, cells]
    del outs[len(_visible_outputs(attrs)) :]
    if _drops(attrs):
        outs.append((attrs["num_layers"] - 1, *out))
    return merged, outs, aux_shapes


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    """Every input has the data's type but ``sequence_length``, which may be any number type."""
    types = [in_types[0]] * len(_differentiable_inputs(attrs))
    if attrs["use_sequence_length"]:
        types.append(in_types[-1] or in_types[0])
    return types, [in_types[0]] * len(_outputs(attrs)), aux_types


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    visible = len(_visible_outputs(attrs))
    grads = list(F._backward_RNN(*out_grads[:visible], *inputs, *outputs[visible:], **attrs))
    return grads + [None] if attrs["use_sequence_length"] else grads


register(
    OpDef(
        "RNN",
        _forward,
        inputs=_inputs,
        # MXNet lists every input any mode takes before the parameters
        positional_inputs=("data", "parameters", "state", "state_cell", "sequence_length"),
        outputs=_outputs,
        num_visible_outputs=lambda attrs: len(_visible_outputs(attrs)),
        params=dict(_PARAMS),
        needs_random=_drops,
        infer_shape=_infer,
        infer_type=_infer_type,
        gradient=_gradient,
        doc="Stacked (bidirectional) LSTM, GRU or vanilla RNN over (time, batch, input) ``data`` with "
        "MXNet's packed ``parameters``; initial ``state`` (and ``state_cell`` for lstm) are "
        "(layers * directions, batch, state_size); ``sequence_length`` (batch,) with use_sequence_length.",
    )
)
register(
    OpDef(
        "_backward_RNN",
        _backward,
        inputs=lambda attrs: (
            tuple(f"{name}_grad" for name in _visible_outputs(attrs))
            + _inputs(attrs)
            + (("dropout_mask",) if _drops(attrs) else ())
        ),
        outputs=lambda attrs: tuple(f"{name}_grad" for name in _differentiable_inputs(attrs)),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (
            s,
            list(s[len(_visible_outputs(attrs)) :][: len(_differentiable_inputs(attrs))]),
            a,
        ),
        infer_type=lambda attrs, t, a: (t, [t[0]] * len(_differentiable_inputs(attrs)), a),
        doc="Gradients of RNN with respect to data, parameters and initial states (through time).",
    )
)
