"""One direction of one layer of the fused ``RNN`` operator, forward and back-propagated through time.

The stack, the packed parameters and the registration live in :mod:`lazynd.ops.rnn`; this module is
the recurrence itself, written once with ``xp`` (NumPy or CuPy) for both devices.  Three options of
MXNet 1.9.1's operator reach it:

- ``step_mask`` (from ``use_sequence_length``): ``(time, batch, 1)``, true inside each sequence.  A
  step outside it leaves the states as they were and outputs zeros, so the final states are those
  of each sequence's own last step; its gradients are zero and the state gradients pass through.
- ``w_proj`` (from ``projection_size``, LSTM only): the recurrent state is ``(o * tanh(c)) @ w_proj.T``
  (LSTMP); the cell keeps ``state_size`` numbers, the hidden state ``projection_size``.
- ``clip`` (from ``lstm_state_clip_min``/``_max``/``_nan``, LSTM only): ``(low, high, nan)``; each new
  cell state is clipped to ``[low, high]`` (with ``nan``, a NaN cell becomes ``low``, as
  ``min(max(c, low), high)`` gives in CUDA), and the gradient stops where the clip acts.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class LayerWeights(NamedTuple):
    """One direction's slices of the packed vector; ``w_proj`` is None without a projection."""

    w_i2h: Any
    w_h2h: Any
    w_proj: Any
    b_i2h: Any
    b_h2h: Any


def _sigmoid(xp: Any, x: Any) -> Any:
    return 1 / (1 + xp.exp(-x))


def _activate(xp: Any, mode: str, pre: Any) -> Any:
    return xp.tanh(pre) if mode == "rnn_tanh" else xp.maximum(pre, 0)


def _clip_cell(xp: Any, c: Any, clip: tuple | None) -> Any:
    if clip is None:
        return c
    low, high, nan = clip
    clipped = xp.clip(c, low, high)
    return xp.where(xp.isnan(c), c.dtype.type(low), clipped) if nan else clipped


def _clip_passes(xp: Any, c: Any, clip: tuple | None) -> Any:
    """Where the gradient of the cell clip is one (inside the range; NaN passes unless ``nan``)."""
    if clip is None:
        return True
    low, high, nan = clip
    inside = (c >= low) & (c <= high)
    return inside if nan else inside | xp.isnan(c)


def layer_forward(
    xp: Any, mode: str, x: Any, weights: LayerWeights, h: Any, c: Any, clip: tuple | None, step_mask: Any
) -> tuple[Any, Any, Any, list]:
    """Run one direction over ``x`` (T, N, in) from states h, c: (outputs (T, N, H), h, c, per-step cache)."""
    w_i2h, w_h2h, w_proj, b_i2h, b_h2h = weights
    steps, hidden = x.shape[0], w_h2h.shape[0] // {"lstm": 4, "gru": 3}.get(mode, 1)
    projected = (x.reshape(-1, x.shape[2]) @ w_i2h.T + b_i2h).reshape(steps, x.shape[1], -1)
    outputs: list[Any] = []
    cache: list[tuple[Any, ...]] = []  # per step: the arrays its backward needs, which differ by mode
    for t in range(steps):
        recurrent = h @ w_h2h.T + b_h2h
        new_c = None
        if mode == "lstm":
            gates = projected[t] + recurrent
            i, f, o = (_sigmoid(xp, gates[:, k * hidden : (k + 1) * hidden]) for k in (0, 1, 3))
            g = xp.tanh(gates[:, 2 * hidden : 3 * hidden])
            raw_c = f * c + i * g
            new_c = _clip_cell(xp, raw_c, clip)
            tanh_c = xp.tanh(new_c)
            full_h = o * tanh_c
            new_h = full_h if w_proj is None else full_h @ w_proj.T
            cache.append((h, c, i, f, g, o, raw_c, tanh_c, full_h))
        elif mode == "gru":
            xr, xz, xn = (projected[t][:, k * hidden : (k + 1) * hidden] for k in range(3))
            hr, hz, hn = (recurrent[:, k * hidden : (k + 1) * hidden] for k in range(3))
            r, z = _sigmoid(xp, xr + hr), _sigmoid(xp, xz + hz)
            n = xp.tanh(xn + r * hn)
            cache.append((h, r, z, n, hn))
            new_h = (1 - z) * n + z * h
        else:
            new_h = _activate(xp, mode, projected[t] + recurrent)
            cache.append((h, new_h))
        if step_mask is None:
            h, c = new_h, new_c
            outputs.append(new_h)
        else:
            inside = step_mask[t]
            h = xp.where(inside, new_h, h)
            c = xp.where(inside, new_c, c) if new_c is not None else c
            outputs.append(xp.where(inside, new_h, new_h.dtype.type(0)))
    return xp.stack(outputs), h, c, cache


def layer_backward(
    xp: Any,
    mode: str,
    x: Any,
    weights: LayerWeights,
    cache: list,
    out_grad: Any,
    h_grad: Any,
    c_grad: Any,
    clip: tuple | None,
    step_mask: Any,
) -> tuple[Any, list, Any, Any]:
    """Back-propagate through one direction: (dx, gradients of ``weights`` in their order, dh0, dc0);
    the gradient of an absent ``w_proj`` is None."""
    w_i2h, w_h2h, w_proj = weights.w_i2h, weights.w_h2h, weights.w_proj
    steps = x.shape[0]
    zero = w_h2h.dtype.type(0)
    step_grads = [None] * steps  # d(projected input) per step
    w_h2h_grad = xp.zeros_like(w_h2h)
    w_proj_grad = xp.zeros_like(w_proj) if w_proj is not None else None
    b_h2h_grad = xp.zeros(w_h2h.shape[0], dtype=w_h2h.dtype)
    dh, dc = h_grad, c_grad
    for t in reversed(range(steps)):
        if step_mask is not None:  # a padded step passes the state gradients through untouched
            inside = step_mask[t]
            kept_h, kept_c = dh, dc
            dh = xp.where(inside, dh + out_grad[t], zero)
            dc = xp.where(inside, dc, zero) if dc is not None else None
        else:
            dh = dh + out_grad[t]
        if mode == "lstm":
            h_prev, c_prev, i, f, g, o, raw_c, tanh_c, full_h = cache[t]
            if w_proj is not None:
                w_proj_grad += dh.T @ full_h
                dh = dh @ w_proj
            dc = (dc + dh * o * (1 - tanh_c * tanh_c)) * _clip_passes(xp, raw_c, clip)
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
        if step_mask is not None:
            dh = xp.where(inside, dh, kept_h)
            dc = xp.where(inside, dc, kept_c) if dc is not None else None
    d_projected = xp.stack(step_grads).reshape(-1, w_i2h.shape[0])
    flat_x = x.reshape(-1, x.shape[2])
    x_grad = (d_projected @ w_i2h).reshape(x.shape)
    grads = [d_projected.T @ flat_x, w_h2h_grad, w_proj_grad, d_projected.sum(axis=0), b_h2h_grad]
    return x_grad, grads, dh, dc
