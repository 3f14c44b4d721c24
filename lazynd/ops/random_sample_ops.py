"""MXNet 1.x's samplers with per-row parameters (``sample_uniform``, ``sample_normal``,
``sample_gamma``, ...), ``sample_multinomial`` and ``shuffle``.

``sample_<dist>(p1, p2, shape=s)`` draws ``s`` values for each element of its parameter arrays
(which share one shape): the output has shape ``p1.shape + s`` and, unless ``dtype`` says
otherwise, float32.  Draws come from the context's generator, as every sampler's.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, enum, optional, parse_bool, parse_dtype, parse_shape
from .random_ops import DISTRIBUTIONS, LIMITS, draw, inside_high
from .registry import OpDef, register, unify_shapes

_FLOAT_DTYPE = enum("float16", "float32", "float64")


def _float_dtype(value: Any) -> str:
    """A float dtype by any name NumPy takes (``np.float64`` too, as MXNet; it was refused here)."""
    return _FLOAT_DTYPE(parse_dtype(value))


_float_dtype.choices = _FLOAT_DTYPE.choices  # type: ignore[attr-defined]
_SAMPLE_DTYPE = optional(_float_dtype)


def _uniform(kctx: Any, out: Any, low: Any, high: Any) -> Any:
    # scaled by hand: a row whose high is below its low draws from (high, low], as in MXNet
    # (NumPy's Generator refuses it)
    values = (low + (high - low) * draw(kctx, "uniform", out, 0.0, 1.0)).astype(out.dtype, copy=False)
    return inside_high(kctx.xp, values, low, high)


def _gamma(kctx: Any, out: Any, alpha: Any, beta: Any) -> Any:
    # a row whose alpha or beta is 0 draws the distribution's limit, all zeros, as MXNet's sample_gamma
    # (its random_gamma refuses a 0, as the scalar sampler here does)
    xp = kctx.xp
    degenerate = (alpha == 0) | (beta == 0)
    draws = draw(kctx, "gamma", out, xp.where(degenerate, 1.0, alpha), xp.where(degenerate, 1.0, beta))
    return xp.where(degenerate, 0.0, draws)


# name -> (the draw, its inputs, the CuPy RandomState methods it calls)
PER_ROW: dict[str, tuple[Any, tuple[str, ...], tuple[str, ...]]] = {
    "uniform": (_uniform, ("low", "high"), ("uniform",)),
    "normal": (lambda kctx, out, mu, sigma: draw(kctx, "normal", out, mu, sigma), ("mu", "sigma"), ("normal",)),
    **{name: (fn, tuple(defaults), methods) for name, (fn, defaults, methods) in DISTRIBUTIONS.items()},
    "gamma": (_gamma, ("alpha", "beta"), ("gamma",)),
}
# the scalar samplers' limits, but for a gamma row's 0 (see _gamma); a normal row's negative sigma is
# named here (NumPy's refusal said "scale < 0", neither the parameter nor the value)
PER_ROW_LIMITS = {
    **LIMITS,
    "gamma": [("alpha", lambda v: v >= 0, ">= 0"), ("beta", lambda v: v >= 0, ">= 0")],
    "normal": [("sigma", lambda v: v >= 0, ">= 0")],
}


def _no_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [None] * len(inputs)


def _register_per_row(name: str) -> None:
    sample, inputs, _ = PER_ROW[name]
    op = f"_sample_{name}"

    def forward(kctx: Any, attrs: dict, arrays: list, outputs: list, aux: list) -> None:
        out = outputs[0]
        trailing = (1,) * len(attrs["shape"])
        for param, ok, expected in PER_ROW_LIMITS.get(name, ()):
            values = arrays[inputs.index(param)]
            good = ok(values)
            if not bool(good.all()):
                raise OperatorError(f"{op}: {param} must be {expected}, got {values[~good].ravel()[0].item()}")
        params = [a.reshape(a.shape + trailing) for a in arrays]
        try:
            out[...] = sample(kctx, out, *params)
        except ValueError as err:  # NumPy's refusal of a row's parameter (a negative scale)
            raise OperatorError(f"{op}: {err}") from None

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        shape = unify_shapes(op, inputs, list(in_shapes))
        out = None if shape is None else tuple(shape) + tuple(attrs["shape"])
        return [shape] * len(in_shapes), [out], aux_shapes

    register(
        OpDef(
            op,
            forward,
            inputs=inputs,
            params={
                "shape": Param(parse_shape, (), "samples drawn per parameter element"),
                "dtype": Param(_SAMPLE_DTYPE, None, "output dtype (None: float32)"),
            },
            infer_shape=infer,
            infer_type=lambda attrs, t, a: (t, [attrs["dtype"] or "float32"], a),
            gradient=_no_gradient,
            needs_random=True,
            takes_bool=False,
            aliases=(f"sample_{name}",),
            doc=f"Samples from {name.replace('_', ' ')} distributions, one per element of {', '.join(inputs)}.",
        )
    )


for _name in PER_ROW:
    _register_per_row(_name)


# -- sample_multinomial -------------------------------------------------------------------------------
def _multinomial_shape(attrs: dict, data: tuple) -> tuple:
    return tuple(data[:-1]) + tuple(attrs["shape"]) or (1,)


def _multinomial_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data = inputs[0]
    k = data.shape[-1]
    probs = data.reshape(-1, k).astype(xp.float64)
    rows, per_row = probs.shape[0], math.prod(attrs["shape"])
    like = SimpleNamespace(shape=(rows, per_row), dtype=np.dtype(np.float64))  # what draw reads of an output
    uniform = draw(kctx, "uniform", like, 0.0, 1.0)
    # the category whose cumulative probability first exceeds the draw (inverse CDF)
    cdf = xp.cumsum(probs, axis=1)
    picked = xp.minimum((uniform[:, :, None] >= cdf[:, None, :]).sum(axis=2), k - 1)
    outputs[0][...] = picked.reshape(outputs[0].shape)
    if attrs["get_prob"]:
        chosen = xp.take_along_axis(probs, picked, axis=1)
        outputs[1][...] = xp.log(chosen).reshape(outputs[1].shape)


def _multinomial_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is not None and len(data) == 0:
        raise ShapeError("sample_multinomial: 'data' must have at least 1 dim (the categories)")
    out = None if data is None else _multinomial_shape(attrs, tuple(data))
    return in_shapes, [out] * (2 if attrs["get_prob"] else 1), aux_shapes


def _multinomial_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    data = in_types[0]
    if data is not None and data not in ("float16", "float32", "float64"):
        raise OperatorError(f"sample_multinomial: 'data' has dtype {data}, expected probabilities in floats")
    return in_types, [attrs["dtype"], data][: 2 if attrs["get_prob"] else 1], aux_types


def _multinomial_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    if not attrs["get_prob"]:
        return [None]
    return [F._backward_sample_multinomial(out_grads[1], inputs[0], outputs[0])]


_MULTINOMIAL_DTYPE = enum("float16", "float32", "float64", "int32", "uint8")
register(
    OpDef(
        "_sample_multinomial",
        _multinomial_forward,
        nonempty_axes={"data": (-1,)},
        outputs=lambda attrs: ("output0", "output1") if attrs["get_prob"] else ("output",),
        params={
            "shape": Param(parse_shape, (), "samples drawn per distribution"),
            "get_prob": Param(parse_bool, False, "also return the log-probability of each sample"),
            "dtype": Param(lambda v: _MULTINOMIAL_DTYPE(parse_dtype(v)), "int32", "dtype of the samples"),
        },
        infer_shape=_multinomial_infer,
        infer_type=_multinomial_type,
        gradient=_multinomial_gradient,
        needs_random=True,
        aliases=("sample_multinomial",),
        doc="Category indices drawn from the distributions in the last axis of ``data``.",
    )
)


def _backward_multinomial_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # d log p[i] / d p[i] = 1 / p[i], summed over the samples that picked i
    xp = kctx.xp
    grad, data, picked = inputs
    k = data.shape[-1]
    probs = data.reshape(-1, k)
    picked = picked.reshape(probs.shape[0], -1).astype(xp.int64)
    rows = xp.broadcast_to(xp.arange(probs.shape[0])[:, None], picked.shape)
    target = xp.zeros(probs.shape, dtype=outputs[0].dtype)
    values = grad.reshape(picked.shape) / probs[rows, picked]
    kctx.backend.scatter_add(target, (rows.reshape(-1), picked.reshape(-1)), values.reshape(-1))
    outputs[0][...] = target.reshape(outputs[0].shape)


register(
    OpDef(
        "_backward_sample_multinomial",
        _backward_multinomial_forward,
        inputs=("prob_grad", "data", "samples"),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[1]], a),
        doc="Gradient of ``sample_multinomial``'s log-probabilities with respect to the probabilities.",
    )
)


# -- shuffle ------------------------------------------------------------------------------------------
def _shuffle_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data = inputs[0]
    order = kctx.rng.permutation(data.shape[0]) if data.ndim else None
    outputs[0][...] = data if order is None else data[order]


register(
    OpDef(
        "_shuffle",
        _shuffle_forward,
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        # no gradient rule, as in MXNet: backward through it is refused (a zero gradient was silently
        # wrong, the true one being the inverse permutation, which the output does not tell)
        needs_random=True,
        aliases=("shuffle",),
        doc="The rows of ``data`` (its first axis) in a random order.",
    )
)
