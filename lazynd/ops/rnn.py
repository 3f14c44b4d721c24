"""The fused ``RNN`` operator: stacked, optionally bidirectional LSTM, GRU or vanilla RNN layers
over a ``(time, batch, input)`` sequence, with MXNet's packed parameter layout.

Parameters are one flat vector, laid out as MXNet lays them out (so weights trained there
load here): first every weight, layer by layer and, inside a layer, the forward direction
before the backward one, each direction's input-to-hidden ``(gates * state_size, input)``
then hidden-to-hidden ``(gates * state_size, state_size)`` matrix; then every bias in the
same order (``i2h`` then ``h2h``).  Gates are ordered ``i, f, g, o`` (LSTM) and ``r, z, n``
(GRU, with ``n = tanh(x W_n + b_in + r * (h U_n + b_hn))`` and ``h' = (1 - z) n + z h``).

Each layer multiplies the whole sequence by its input weights in one GEMM, then loops over
time with one GEMM per step (``kctx.xp``: NumPy or CuPy).  The backward operator runs the
forward again, keeping every step's gates, and back-propagates through time by hand.
``p`` (dropout between layers) is accepted for compatibility and not applied.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import Param, enum, parse_bool, parse_float, parse_int
from .registry import OpDef, merge_shape, register

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}

_PARAMS = {
    "state_size": Param(parse_int, doc="size of each layer's hidden state"),
    "num_layers": Param(parse_int, doc="number of stacked layers"),
    "mode": Param(enum(*GATES), doc="lstm, gru, rnn_tanh or rnn_relu"),
    "bidirectional": Param(parse_bool, False, "run a second layer over the reversed sequence"),
    "p": Param(parse_float, 0.0, "dropout between layers (accepted for compatibility, not applied)"),
    "state_outputs": Param(parse_bool, False, "also output the final hidden (and, for lstm, cell) states"),
}


def _inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "parameters", "state", "state_cell") if attrs["mode"] == "lstm" else ("data", "parameters", "state")


def _outputs(attrs: dict) -> tuple[str, ...]:
    if not attrs["state_outputs"]:
        return ("output",)
    return ("output", "state_output", "statecell_output") if attrs["mode"] == "lstm" else ("output", "state_output")


def _directions(attrs: dict) -> int:
    return 2 if attrs["bidirectional"] else 1


def parameter_layout(attrs: dict, input_size: int) -> list[tuple[tuple[int, int], ...]]:
    """Per (layer, direction): (offset, size) of its i2h weight, h2h weight, i2h bias, h2h bias."""
    hidden, gates, dirs = attrs["state_size"], GATES[attrs["mode"]], _directions(attrs)
    rows = gates * hidden
    weights: list[tuple[tuple[int, int], tuple[int, int]]] = []
    offset = 0
    for layer in range(attrs["num_layers"]):
        width = input_size if layer == 0 else dirs * hidden
        for _ in range(dirs):
            weights.append(((offset, rows * width), (offset + rows * width, rows * hidden)))
            offset += rows * (width + hidden)
    layout: list[tuple[tuple[int, int], ...]] = []
    for i2h, h2h in weights:
        layout.append((i2h, h2h, (offset, rows), (offset + rows, rows)))
        offset += 2 * rows
    return layout


def parameter_count(attrs: dict, input_size: int) -> int:
    """The length of the packed parameter vector."""
    last = parameter_layout(attrs, input_size)[-1][3]
    return last[0] + last[1]


def _unpack(params: Any, layout: tuple, hidden: int) -> list[Any]:
    (wi, wi_n), (wh, wh_n), (bi, b_n), (bh, _) = layout
    return [
        params[wi : wi + wi_n].reshape(b_n, -1),
        params[wh : wh + wh_n].reshape(-1, hidden),
        params[bi : bi + b_n],
        params[bh : bh + b_n],
    ]


def _sigmoid(xp: Any, x: Any) -> Any:
    return 1 / (1 + xp.exp(-x))


def _activate(xp: Any, mode: str, pre: Any) -> Any:
    return xp.tanh(pre) if mode == "rnn_tanh" else xp.maximum(pre, 0)


# -- one layer in one direction ------------------------------------------------------------------------
def _layer_forward(xp: Any, mode: str, x: Any, weights: list, h: Any, c: Any) -> tuple[Any, Any, Any, list]:
    """Run one direction over ``x`` (T, N, in) from states h, c: (outputs (T, N, H), h, c, per-step cache)."""
    w_i2h, w_h2h, b_i2h, b_h2h = weights
    steps, hidden = x.shape[0], h.shape[1]
    projected = (x.reshape(-1, x.shape[2]) @ w_i2h.T + b_i2h).reshape(steps, x.shape[1], -1)
    outputs: list[Any] = []
    cache: list[tuple[Any, ...]] = []  # per step: the arrays its backward needs, which differ by mode
    for t in range(steps):
        recurrent = h @ w_h2h.T + b_h2h
        if mode == "lstm":
            gates = projected[t] + recurrent
            i, f, o = (_sigmoid(xp, gates[:, k * hidden : (k + 1) * hidden]) for k in (0, 1, 3))
            g = xp.tanh(gates[:, 2 * hidden : 3 * hidden])
            cache.append((h, c, i, f, g, o))
            c = f * c + i * g
            h = o * xp.tanh(c)
            cache[-1] += (c,)
        elif mode == "gru":
            xr, xz, xn = (projected[t][:, k * hidden : (k + 1) * hidden] for k in range(3))
            hr, hz, hn = (recurrent[:, k * hidden : (k + 1) * hidden] for k in range(3))
            r, z = _sigmoid(xp, xr + hr), _sigmoid(xp, xz + hz)
            n = xp.tanh(xn + r * hn)
            cache.append((h, r, z, n, hn))
            h = (1 - z) * n + z * h
        else:
            cache.append((h,))
            h = _activate(xp, mode, projected[t] + recurrent)
            cache[-1] += (h,)
        outputs.append(h)
    return xp.stack(outputs), h, c, cache


def _layer_backward(
    xp: Any, mode: str, x: Any, weights: list, cache: list, out_grad: Any, h_grad: Any, c_grad: Any
) -> tuple[Any, list, Any, Any]:
    """Back-propagate through one direction: (dx, [dW_i2h, dW_h2h, db_i2h, db_h2h], dh0, dc0)."""
    w_i2h, w_h2h = weights[0], weights[1]
    steps = x.shape[0]
    step_grads = [None] * steps  # d(projected input) per step
    w_h2h_grad = xp.zeros_like(w_h2h)
    b_h2h_grad = xp.zeros(w_h2h.shape[0], dtype=w_h2h.dtype)
    dh, dc = h_grad, c_grad
    for t in reversed(range(steps)):
        dh = dh + out_grad[t]
        if mode == "lstm":
            h_prev, c_prev, i, f, g, o, c = cache[t]
            tanh_c = xp.tanh(c)
            dc = dc + dh * o * (1 - tanh_c * tanh_c)
            d_input = xp.concatenate(
                [dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)],
                axis=1,
            )
            d_recurrent = d_input
            dc = dc * f
        elif mode == "gru":
            h_prev, r, z, n, hn = cache[t]
            dn = dh * (1 - z) * (1 - n * n)
            dr = dn * hn * r * (1 - r)
            dz = dh * (h_prev - n) * z * (1 - z)
            d_input = xp.concatenate([dr, dz, dn], axis=1)
            d_recurrent = xp.concatenate([dr, dz, dn * r], axis=1)
        else:
            h_prev, h = cache[t]
            slope = 1 - h * h if mode == "rnn_tanh" else (h > 0).astype(h.dtype)
            d_input = d_recurrent = dh * slope
        step_grads[t] = d_input
        w_h2h_grad += d_recurrent.T @ h_prev
        b_h2h_grad += d_recurrent.sum(axis=0)
        dh = d_recurrent @ w_h2h + (dh * z if mode == "gru" else 0)
    d_projected = xp.stack(step_grads).reshape(-1, w_i2h.shape[0])
    flat_x = x.reshape(-1, x.shape[2])
    x_grad = (d_projected @ w_i2h).reshape(x.shape)
    grads = [d_projected.T @ flat_x, w_h2h_grad, d_projected.sum(axis=0), b_h2h_grad]
    return x_grad, grads, dh, dc


# -- the stack -----------------------------------------------------------------------------------------
def _run(xp: Any, attrs: dict, data: Any, params: Any, state: Any, cell: Any) -> tuple[Any, Any, Any, list]:
    """The whole stack forward: (output, final h, final c, per-layer inputs and caches)."""
    mode, hidden, dirs = attrs["mode"], attrs["state_size"], _directions(attrs)
    layout = parameter_layout(attrs, data.shape[2])
    x, final_h, final_c, saved = data, [], [], []
    for layer in range(attrs["num_layers"]):
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            weights = _unpack(params, layout[k], hidden)
            seq = x if d == 0 else x[::-1]
            c0 = cell[k] if cell is not None else None
            out, h, c, cache = _layer_forward(xp, mode, seq, weights, state[k], c0)
            outputs.append(out if d == 0 else out[::-1])
            final_h.append(h)
            final_c.append(c)
            saved.append((seq, weights, cache))
        x = outputs[0] if dirs == 1 else xp.concatenate(outputs, axis=2)
    return x, xp.stack(final_h), (xp.stack(final_c) if cell is not None else None), saved


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    cell = inputs[3] if attrs["mode"] == "lstm" else None
    out, h, c, _ = _run(xp, attrs, inputs[0], inputs[1], inputs[2], cell)
    outputs[0][...] = out
    if attrs["state_outputs"]:
        outputs[1][...] = h
        if c is not None:
            outputs[2][...] = c


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    lstm = attrs["mode"] == "lstm"
    n_heads = len(_outputs(attrs))
    heads, (data, params, state), cell = inputs[:n_heads], inputs[n_heads : n_heads + 3], None
    if lstm:
        cell = inputs[n_heads + 3]
    _, _, _, saved = _run(xp, attrs, data, params, state, cell)
    h_grads = heads[1] if attrs["state_outputs"] else xp.zeros_like(state)
    c_grads = heads[2] if attrs["state_outputs"] and lstm else (xp.zeros_like(state) if lstm else None)
    hidden, dirs = attrs["state_size"], _directions(attrs)
    param_grad = xp.zeros_like(params)
    layout = parameter_layout(attrs, data.shape[2])
    state_grad = xp.zeros_like(state)
    cell_grad = xp.zeros_like(state) if lstm else None
    x_grad = heads[0]
    for layer in reversed(range(attrs["num_layers"])):
        below = []
        for d in range(dirs):
            k = layer * dirs + d
            seq, weights, cache = saved[k]
            dy = x_grad[:, :, d * hidden : (d + 1) * hidden]
            dy = dy if d == 0 else dy[::-1]
            dc = c_grads[k] if c_grads is not None else None
            dx, grads, dh0, dc0 = _layer_backward(xp, attrs["mode"], seq, weights, cache, dy, h_grads[k], dc)
            below.append(dx if d == 0 else dx[::-1])
            for (offset, size), grad in zip(layout[k], grads, strict=True):
                param_grad[offset : offset + size] = grad.reshape(-1)
            state_grad[k] = dh0
            if cell_grad is not None:
                cell_grad[k] = dc0
        x_grad = below[0] if dirs == 1 else below[0] + below[1]
    outputs[0][...] = x_grad
    outputs[1][...] = param_grad
    outputs[2][...] = state_grad
    if lstm:
        outputs[3][...] = cell_grad


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    for name in ("state_size", "num_layers"):
        if attrs[name] < 1:
            raise OperatorError(f"RNN: {name} must be positive, got {attrs[name]}")
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None] * len(_outputs(attrs)), aux_shapes
    if len(data) != 3:
        raise ShapeError(f"RNN: data must be (time, batch, input), got {tuple(data)}")
    dirs, hidden = _directions(attrs), attrs["state_size"]
    states = (attrs["num_layers"] * dirs, data[1], hidden)
    shapes = [tuple(data), (parameter_count(attrs, data[2]),)] + [states] * (len(in_shapes) - 2)
    names = _inputs(attrs)
    merged = [
        merge_shape("RNN", name, given, shape) for name, given, shape in zip(names, in_shapes, shapes, strict=True)
    ]
    out = (data[0], data[1], dirs * hidden)
    return merged, [out] + [states] * (len(_outputs(attrs)) - 1), aux_shapes


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return list(F._backward_RNN(*out_grads, *inputs, **attrs))


register(
    OpDef(
        "RNN",
        _forward,
        inputs=_inputs,
        outputs=_outputs,
        params=dict(_PARAMS),
        infer_shape=_infer,
        gradient=_gradient,
        doc="Stacked (bidirectional) LSTM, GRU or vanilla RNN over (time, batch, input) ``data`` with "
        "MXNet's packed ``parameters``; initial ``state`` (and ``state_cell`` for lstm) are "
        "(layers * directions, batch, state_size).",
    )
)
register(
    OpDef(
        "_backward_RNN",
        _backward,
        inputs=lambda attrs: tuple(f"{name}_grad" for name in _outputs(attrs)) + _inputs(attrs),
        outputs=lambda attrs: tuple(f"{name}_grad" for name in _inputs(attrs)),
        params=dict(_PARAMS),
        infer_shape=lambda attrs, s, a: (s, list(s[len(_outputs(attrs)) :]), a),
        infer_type=lambda attrs, t, a: (t, [t[0]] * len(_inputs(attrs)), a),
        doc="Gradients of RNN with respect to data, parameters and initial states (through time).",
    )
)
