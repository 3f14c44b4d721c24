"""Random sampling operators (usable in graphs): uniform, normal, randint, and MXNet 1.x's
exponential, gamma, poisson, negative_binomial and generalized_negative_binomial.

The draws of a distribution are written once (:data:`DISTRIBUTIONS`) for NumPy's ``Generator``
(the CPU) and CuPy's ``RandomState`` (the GPU); ``random_sample_ops`` draws them with per-row
parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import OperatorError
from .params import Param, enum, optional, parse_context, parse_dtype, parse_float, parse_int, parse_long, parse_shape
from .registry import OpDef, register

FLOAT_DTYPES = ("float16", "float32", "float64")


def _dtype_parser(default: str, allowed: tuple[str, ...]) -> Callable[[Any], str]:
    """A dtype among ``allowed`` (MXNet refuses the rest: an integer uniform would be all zeros);
    ``None`` gives ``default``."""
    check = enum(*allowed)

    def parse(value: Any) -> str:
        return default if value is None or value == "None" else check(parse_dtype(value))

    return parse


def _creation_params(dtype: str = "float32", allowed: tuple[str, ...] = FLOAT_DTYPES) -> dict[str, Param]:
    return {
        "shape": Param(parse_shape, (1,), "output shape"),
        "ctx": Param(optional(parse_context), None, "context of the output (imperative use)"),
        "dtype": Param(_dtype_parser(dtype, allowed), dtype, f"output dtype, one of {', '.join(allowed)}"),
    }


def _infer_creation(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [tuple(attrs["shape"])], aux_shapes


def _infer_creation_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    return in_types, [attrs["dtype"]], aux_types


def _gpu_draw_dtype(out: Any) -> str:
    """CuPy draws float32 or float64: float64 for a float64 output (all its bits random), float32
    for the rest (cast on store)."""
    return "float64" if out.dtype == np.float64 else "float32"


def _checked(check: Callable[[dict], None]) -> Callable[..., tuple[list, list, list]]:
    """The creation shape rule, after ``check`` of the parameters: a bad one fails at the call."""

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        check(attrs)
        return _infer_creation(attrs, in_shapes, aux_shapes)

    return infer


def _check_uniform(attrs: dict) -> None:
    # written so that a NaN fails too, as in MXNet (NumPy raised a bare OverflowError in the engine)
    low, high = attrs["low"], attrs["high"]
    if not high >= low:
        raise OperatorError(f"uniform: high ({high}) must be >= low ({low})")
    if not math.isfinite(high - low):
        raise OperatorError(f"uniform: low ({low}) and high ({high}) must be finite, and high - low too")


def _check_normal(attrs: dict) -> None:
    if not attrs["scale"] > 0:  # 0 and NaN fail too, as in MXNet 1.9.1 (a NaN drew NaNs here)
        raise OperatorError(f"normal: scale must be > 0, got {attrs['scale']}")


def _check_randint(attrs: dict) -> None:
    low, high = attrs["low"], attrs["high"]
    if high <= low:
        raise OperatorError(f"randint: high ({high}) must be > low ({low})")
    dtype = attrs.get("dtype") or "int32"
    info = np.iinfo(dtype)
    if low < info.min or high - 1 > info.max:  # the draws would wrap around: numbers never asked for
        raise OperatorError(
            f"randint: [low, high) = [{low}, {high}) does not fit dtype {dtype} (values {info.min}..{info.max})"
        )


def _step_down(xp: Any, values: Any) -> Any:
    """The next value of their dtype below each of the finite ``values``, found from their bits
    (CuPy's ``nextafter`` steps a float16 on float32's grid, so it stays where it was)."""
    bits = values.view(f"int{values.dtype.itemsize * 8}")
    smallest_negative = np.iinfo(bits.dtype).min | 1  # below a zero of either sign
    stepped = xp.where(values > 0, bits - 1, xp.where(values < 0, bits + 1, smallest_negative))
    return stepped.astype(bits.dtype).view(values.dtype)


def inside_high(xp: Any, values: Any, low: Any, high: Any) -> Any:
    """``values`` (uniform draws in their output dtype) with any that rounding to that dtype carried
    onto ``high`` moved one step back inside: the interval is half-open, ``[low, high)``, as documented
    (a float32 draw from float64 reached ``high`` about once in 2**25, and in a narrow interval such as
    ``[1, 1 + 2**-20)`` once in 16, in MXNet 1.9.1 too).  ``low`` and ``high`` are taken in that dtype,
    as MXNet casts them; a row with ``high < low`` draws from ``(high, low]``; ``low == high`` draws
    ``low``."""
    if np.ndim(low) == 0 and np.ndim(high) == 0 and not hasattr(high, "device"):
        # the scalar parameters of uniform and uniform_like (high >= low, checked at the call): one
        # pass, and no device synchronisation (the step is worked out on the host)
        low, high = values.dtype.type(low), values.dtype.type(high)
        if high == low:
            return values
        return xp.minimum(values, _step_down(np, np.asarray(high))[()], out=values)
    low, high = xp.asarray(low, dtype=values.dtype), xp.asarray(high, dtype=values.dtype)
    upward = high >= low
    inside = xp.where(upward, _step_down(xp, high), -_step_down(xp, -high))
    reached = xp.where(upward, values >= high, values <= high) & (low != high)
    return xp.where(reached, inside, values)


def uniform_draws(kctx: Any, out: Any, low: Any, high: Any) -> Any:
    """Draws from ``[low, high)`` of ``out``'s shape, in ``out``'s dtype."""
    values = draw(kctx, "uniform", out, low, high).astype(out.dtype, copy=False)
    return inside_high(kctx.xp, values, low, high)


def _uniform(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = uniform_draws(kctx, outputs[0], attrs["low"], attrs["high"])


def _normal(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    if kctx.xp is np:
        out[...] = kctx.rng.normal(attrs["loc"], attrs["scale"], out.shape)
    else:
        out[...] = kctx.rng.normal(attrs["loc"], attrs["scale"], out.shape, dtype=_gpu_draw_dtype(out))


def _randint(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    low, high = attrs["low"], attrs["high"]
    if kctx.xp is np:
        out[...] = kctx.rng.integers(low, high, out.shape)
    else:
        out[...] = kctx.rng.randint(low, high, out.shape)


_NO_GRAD: Callable[..., list] = lambda F, attrs, inputs, outputs, og: []  # noqa: E731 - no inputs, nothing to differentiate

register(
    OpDef(
        "_random_uniform",
        _uniform,
        inputs=(),
        params={"low": Param(parse_float, 0.0), "high": Param(parse_float, 1.0), **_creation_params()},
        infer_shape=_checked(_check_uniform),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("uniform", "random_uniform"),
        doc="Samples from a uniform distribution on [low, high).",
    )
)
register(
    OpDef(
        "_random_normal",
        _normal,
        inputs=(),
        params={"loc": Param(parse_float, 0.0), "scale": Param(parse_float, 1.0), **_creation_params()},
        infer_shape=_checked(_check_normal),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("normal", "random_normal"),
        doc="Samples from a normal distribution N(loc, scale^2).",
    )
)
register(
    OpDef(
        "_random_randint",
        _randint,
        inputs=(),
        params={"low": Param(parse_long), "high": Param(parse_long), **_creation_params("int32", ("int32", "int64"))},
        infer_shape=_checked(_check_randint),
        infer_type=_infer_creation_type,
        gradient=_NO_GRAD,
        needs_random=True,
        creates_output=True,
        aliases=("random_randint",),
        doc="Integers drawn uniformly from [low, high).",
    )
)


# -- MXNet 1.x's further distributions ----------------------------------------------------------------
def draw(kctx: Any, method: str, out: Any, *params: Any) -> Any:
    """``rng.<method>(*params)`` of ``out``'s shape from the context's generator (parameters
    broadcast against it); on the GPU in ``out``'s float width (Poisson: integers).  ``out`` is
    anything with a shape and a dtype."""
    if kctx.xp is np:
        return getattr(kctx.rng, method)(*params, size=out.shape)
    dtype = {} if method == "poisson" else {"dtype": _gpu_draw_dtype(out)}
    return getattr(kctx.rng, method)(*params, size=out.shape, **dtype)


# NumPy's Poisson refuses a rate past about 9.2e18 (its int64 range); a rate that large is reached by
# a parameter (lam=1e19) or by a negative binomial's gamma-drawn rate (p=1e-25) alike
_POISSON_LARGEST = 1e18


def _host_poisson(rng: Any, rate: Any, shape: tuple) -> Any:
    """Poisson draws of ``rate`` (a number or an array broadcast to ``shape``).  Past
    :data:`_POISSON_LARGEST` a Poisson is its normal approximation N(rate, rate) to a skew of 1e-9,
    and is drawn as such; an infinite rate draws infinity.  (MXNet 1.9.1 gives -2**31 there.)"""
    rate = np.asarray(rate, dtype=np.float64)
    large = rate > _POISSON_LARGEST
    if not large.any():
        return rng.poisson(rate, size=shape)  # the one draw below the limit: the stream is unchanged
    samples = rng.poisson(np.where(large, 0.0, rate), size=shape).astype(np.float64)
    big = np.broadcast_to(np.where(large, rate, 0.0), shape)
    with np.errstate(invalid="ignore"):  # inf + inf * a negative draw: the infinite rates, put back below
        approx = np.rint(big + np.sqrt(big) * rng.standard_normal(shape))
    return np.where(np.broadcast_to(large, shape), np.where(np.isinf(big), big, approx), samples)


def _exponential(kctx: Any, out: Any, lam: Any) -> Any:
    return draw(kctx, "exponential", out, 1.0 / lam)


def _gamma(kctx: Any, out: Any, alpha: Any, beta: Any) -> Any:
    return draw(kctx, "gamma", out, alpha, beta)


def _poisson(kctx: Any, out: Any, lam: Any) -> Any:
    # on the host, rates past NumPy's Poisson limit are drawn apart (see _host_poisson)
    if kctx.xp is np:
        return _host_poisson(kctx.rng, lam, out.shape)
    return draw(kctx, "poisson", out, lam)


def _negative_binomial(kctx: Any, out: Any, k: Any, p: Any) -> Any:
    # failures before the k-th success: Poisson of a Gamma(k, (1 - p) / p) rate, as MXNet draws it
    return _poisson(kctx, out, draw(kctx, "gamma", out, k, (1.0 - p) / p))


def _generalized_negative_binomial(kctx: Any, out: Any, mu: Any, alpha: Any) -> Any:
    # Poisson of a Gamma(1 / alpha, alpha * mu) rate; alpha = 0 is Poisson(mu)
    xp = kctx.xp
    positive = xp.asarray(alpha > 0)  # a scalar parameter gives a bool, and cupy.where takes arrays only
    safe = xp.where(positive, alpha, 1.0)
    rate = xp.where(positive, draw(kctx, "gamma", out, 1.0 / safe, safe * mu), mu)
    return _poisson(kctx, out, rate)


# name -> (the draw, its parameters and defaults, the CuPy RandomState methods it calls)
DISTRIBUTIONS: dict[str, tuple[Callable[..., Any], dict[str, float], tuple[str, ...]]] = {
    "exponential": (_exponential, {"lam": 1.0}, ("exponential",)),
    "gamma": (_gamma, {"alpha": 1.0, "beta": 1.0}, ("gamma",)),
    "poisson": (_poisson, {"lam": 1.0}, ("poisson",)),
    "negative_binomial": (_negative_binomial, {"k": 1, "p": 1.0}, ("gamma", "poisson")),
    "generalized_negative_binomial": (
        _generalized_negative_binomial,
        {"mu": 1.0, "alpha": 1.0},
        ("gamma", "poisson"),
    ),
}

# what MXNet refuses of each distribution's parameters: (parameter, test, what it must be); the
# tests take a number or an array of a sampler's per-row parameters alike
LIMITS: dict[str, list[tuple[str, Callable[[Any], Any], str]]] = {
    "exponential": [("lam", lambda v: v > 0, "> 0")],
    "gamma": [("alpha", lambda v: v > 0, "> 0"), ("beta", lambda v: v > 0, "> 0")],
    "poisson": [("lam", lambda v: v >= 0, ">= 0")],
    "negative_binomial": [("k", lambda v: v >= 0, ">= 0"), ("p", lambda v: (v > 0) & (v <= 1), "in (0, 1]")],
    "generalized_negative_binomial": [("mu", lambda v: v >= 0, ">= 0"), ("alpha", lambda v: v >= 0, ">= 0")],
}


def _limits_check(name: str) -> Callable[[dict], None]:
    def check(attrs: dict) -> None:
        for param, ok, expected in LIMITS[name]:
            if not ok(attrs[param]):
                raise OperatorError(f"random_{name}: {param} must be {expected}, got {attrs[param]}")

    return check


def _register_distribution(name: str) -> None:
    sample, defaults, _ = DISTRIBUTIONS[name]
    check = _limits_check(name)

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        outputs[0][...] = sample(kctx, outputs[0], *(attrs[p] for p in defaults))

    params = {p: Param(parse_int if isinstance(d, int) else parse_float, d) for p, d in defaults.items()}
    register(
        OpDef(
            f"_random_{name}",
            forward,
            inputs=(),
            params={**params, **_creation_params()},
            infer_shape=_checked(check),
            infer_type=_infer_creation_type,
            gradient=_NO_GRAD,
            needs_random=True,
            creates_output=True,
            aliases=(f"random_{name}",),
            doc=f"Samples from a {name.replace('_', ' ')} distribution ({', '.join(defaults)}).",
        )
    )


for _name in DISTRIBUTIONS:
    _register_distribution(_name)


# -- *_like: a sampler taking its shape, dtype and context from an array -------------------------------
def _register_like(name: str, sample: Callable[..., Any], defaults: dict[str, float], check: Callable) -> None:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        outputs[0][...] = sample(kctx, outputs[0], *(attrs[p] for p in defaults))

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        check(attrs)
        return in_shapes, [in_shapes[0]], aux_shapes

    register(
        OpDef(
            f"_random_{name}_like",
            forward,
            params={p: Param(parse_int if isinstance(d, int) else parse_float, d) for p, d in defaults.items()},
            infer_shape=infer,
            infer_type=lambda attrs, t, a: (t, [t[0]], a),
            gradient=lambda F, attrs, inputs, outputs, og: [None],
            needs_random=True,
            float_data=True,
            doc=f"Samples from a {name.replace('_', ' ')} distribution in the shape and dtype of ``data``.",
        )
    )


_register_like(
    "uniform",
    uniform_draws,
    {"low": 0.0, "high": 1.0},
    _check_uniform,
)
_register_like(
    "normal",
    lambda kctx, out, loc, scale: draw(kctx, "normal", out, loc, scale),
    {"loc": 0.0, "scale": 1.0},
    _check_normal,
)
for _name, (_sample, _defaults, _) in DISTRIBUTIONS.items():
    _register_like(_name, _sample, _defaults, _limits_check(_name))
