"""hawkesll (``mx.nd.contrib.hawkesll``, MXNet 1.x): the log likelihood of marked self-exciting
point processes (Hawkes processes) with exponential decay, one sequence of events per sample.

Inputs, for ``N`` samples, ``K`` marks and sequences of up to ``T`` events:

- ``lda`` (N, K): the background intensity ``mu`` of each mark, per sample;
- ``alpha`` (K,): the branching ratio of each mark; ``beta`` (K,): its decay rate;
- ``state`` (N, K): the memory each mark starts with (the sum of its past excitations);
- ``lags`` (N, T): the times between events; ``marks`` (N, T): each event's mark (integers);
- ``valid_length`` (N,): how many events of each row are real; ``max_time`` (N,): the end of
  the observed interval.

The intensity of mark ``k`` at time ``t`` is ``mu_k + alpha_k * beta_k * sum exp(-beta_k (t - t_i))``
over the past events ``t_i`` of mark ``k``.  The outputs are the log likelihood of each sample (N,)
and the memory at ``max_time`` (N, K), which a caller passes as ``state`` to go on with the next
stretch of the same sequences.  Gradients flow to ``lda``, ``alpha`` and ``beta`` (from the log
likelihood only, as MXNet's); the other inputs are data.

The kernels walk the events with one step of a Python loop per event position, vectorised over
the samples, written once against ``kctx.xp`` (NumPy and CuPy).  The gradient is computed in
forward mode beside the likelihood: the memory of mark ``k`` depends on ``beta_k`` only, so one
extra (N, K) array carries its derivative.  A mark outside ``[0, K)`` or a ``valid_length``
outside ``[0, T]`` is refused (MXNet 1.9.1 reads out of bounds there): at the call on the host, at
the next wait on a GPU (a device check, as the indexing operators make).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .registry import OpDef, merge_shape, register

NAME = "_contrib_hawkesll"
INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    given = dict(zip(INPUTS, in_shapes, strict=True))
    n, k, t = 0, 0, 0
    for name, dims in (
        ("lda", "NK"),
        ("state", "NK"),
        ("alpha", "K"),
        ("beta", "K"),
        ("lags", "NT"),
        ("marks", "NT"),
        ("valid_length", "N"),
        ("max_time", "N"),
    ):
        shape = given[name]
        if shape is None:
            continue
        if len(shape) != len(dims):
            expected = "(" + ", ".join(dims) + ")"
            raise ShapeError(f"hawkesll: '{name}' has shape {tuple(shape)}, expected {len(dims)} axes {expected}")
        sizes = dict(zip(dims, shape, strict=True))
        n, k, t = n or sizes.get("N", 0), k or sizes.get("K", 0), t or sizes.get("T", 0)
    full = {"N": n, "K": k, "T": t}
    shapes = [
        merge_shape("hawkesll", name, given[name], tuple(full[d] for d in dims))
        for name, dims in zip(INPUTS, ("NK", "K", "K", "NK", "NT", "NT", "N", "N"), strict=True)
    ]
    return shapes, [(n,), (n, k)], aux_shapes


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = in_types[0] or next((t for i, t in enumerate(in_types) if t is not None and i != 5), None) or "float32"
    marks = in_types[5] or "int32"
    if np.dtype(dtype).kind != "f":
        # (MXNet 1.9.1 runs its float kernel in the integer type and truncates a log likelihood;
        # NumPy refused to cast its float steps into the integer output inside the engine)
        raise OperatorError(
            f"hawkesll: the inputs but 'marks' have dtype {np.dtype(dtype).name}, expected a floating-point type"
        )
    if not np.issubdtype(np.dtype(marks), np.integer):
        raise OperatorError(f"hawkesll: 'marks' has dtype {np.dtype(marks).name}, expected an integer type (int32)")
    types = [dtype] * len(INPUTS)
    types[5] = marks
    return types, [dtype, dtype], aux_types


def _checked_events(kctx: Any, marks: Any, valid_length: Any, num_marks: int) -> tuple[Any, Any]:
    """The valid_length as integers, and a mask (N, T) of the real events, refusing bad values.

    The checks are the backend's (:meth:`~lazynd.backend.base.Backend.check_range`): on the host
    they raise at once; on a GPU they run on the device and raise at the next wait, with no host
    read of the values (which would stall the host and keep an executor's pass out of a CUDA
    graph).  There the walk goes on meanwhile over the events whose mark is in range only, so
    that no index falls outside its array."""
    xp, steps = kctx.xp, marks.shape[1]
    kctx.backend.check_range("hawkesll", "valid_length", valid_length, 0, steps, inclusive=True)
    lengths = valid_length.astype(np.int64)
    real = xp.arange(steps)[None, :] < lengths[:, None]
    kctx.backend.check_range("hawkesll", "marks", xp.where(real, marks, 0), 0, num_marks)
    if xp is not np:  # (on the host the checks raised)
        real &= (marks >= 0) & (marks < num_marks)
    return lengths, real


def _walk(kctx: Any, inputs: list, with_gradient: bool) -> dict:
    """Walk the events of every sample; the likelihood, the final memory and, when asked, the
    per-sample derivatives of the likelihood by mu, alpha and beta (each (N, K))."""
    xp = kctx.xp
    mu, alpha, beta, state, lags, marks, valid_length, max_time = inputs
    n, k = mu.shape
    _, real = _checked_events(kctx, marks, valid_length, k)
    rows = xp.arange(n)
    now = xp.zeros(n, dtype=mu.dtype)
    last = xp.zeros((n, k), dtype=mu.dtype)
    memory = state.astype(mu.dtype, copy=True)
    loglike = xp.zeros(n, dtype=mu.dtype)
    if with_gradient:
        memory_by_beta = xp.zeros_like(memory)
        by_mu, by_alpha, by_beta = xp.zeros_like(memory), xp.zeros_like(memory), xp.zeros_like(memory)
    for j in range(marks.shape[1]):
        active = real[:, j]
        mark = xp.where(active, marks[:, j], 0)
        now = now + xp.where(active, lags[:, j], 0)
        gap = now - last[rows, mark]
        a, b, m, s = alpha[mark], beta[mark], mu[rows, mark], memory[rows, mark]
        decay = xp.exp(-b * gap)
        intensity = m + a * b * s * decay
        loglike += xp.where(active, xp.log(intensity) - (m * gap + a * s * (1 - decay)), 0)
        if with_gradient:
            ds = memory_by_beta[rows, mark]
            inverse = 1 / intensity
            d_intensity_beta = a * (s * decay + b * ds * decay - b * s * gap * decay)
            d_compensator_beta = a * (ds * (1 - decay) + s * gap * decay)
            by_mu[rows, mark] += xp.where(active, inverse - gap, 0)
            by_alpha[rows, mark] += xp.where(active, inverse * b * s * decay - s * (1 - decay), 0)
            by_beta[rows, mark] += xp.where(active, inverse * d_intensity_beta - d_compensator_beta, 0)
            memory_by_beta[rows, mark] = xp.where(active, (ds - s * gap) * decay, ds)
        memory[rows, mark] = xp.where(active, 1 + s * decay, s)
        last[rows, mark] = xp.where(active, now, last[rows, mark])
    # what the intensities add up to between each mark's last event and the end of the interval
    gap = max_time[:, None] - last
    decay = xp.exp(-beta[None, :] * gap)
    loglike -= (mu * gap + alpha[None, :] * memory * (1 - decay)).sum(axis=1)
    result = {"loglike": loglike, "memory": memory * decay}
    if with_gradient:
        by_mu -= gap
        by_alpha -= memory * (1 - decay)
        by_beta -= alpha[None, :] * (memory_by_beta * (1 - decay) + memory * gap * decay)
        result.update(mu=by_mu, alpha=by_alpha, beta=by_beta)
    return result


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    result = _walk(kctx, inputs, with_gradient=False)
    outputs[0][...] = result["loglike"]
    outputs[1][...] = result["memory"]


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    head, forward_inputs = inputs[0], inputs[1:]
    result = _walk(kctx, forward_inputs, with_gradient=True)
    weight = head[:, None]
    if outputs[0] is not None:
        outputs[0][...] = result["mu"] * weight
    if outputs[1] is not None:
        outputs[1][...] = (result["alpha"] * weight).sum(axis=0)
    if outputs[2] is not None:
        outputs[2][...] = (result["beta"] * weight).sum(axis=0)


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    grads = F._backward_contrib_hawkesll(out_grads[0], *inputs)
    return [grads[0], grads[1], grads[2]] + [None] * (len(INPUTS) - 3)


register(
    OpDef(
        NAME,
        _forward,
        inputs=INPUTS,
        outputs=("output", "out_state"),
        infer_shape=_infer_shape,
        infer_type=_infer_type,
        gradient=_gradient,
        doc=__doc__ or "",
    )
)
register(
    OpDef(
        "_backward_contrib_hawkesll",
        _backward,
        inputs=("out_grad", *INPUTS),
        outputs=("lda_grad", "alpha_grad", "beta_grad"),
        optional_outputs=True,
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2], s[3]], a),
        infer_type=lambda attrs, t, a: (t, [t[1], t[2], t[3]], a),
        doc="Gradients of hawkesll by lda, alpha and beta (inputs: the likelihood's gradient, then the forward's).",
    )
)
