"""MXNet 1.x's ``random_pdf_*``: densities (or, ``is_log``, log-densities) of samples under
distributions whose parameters are arrays.

``random_pdf_normal(sample, mu, sigma)``: the parameters share one shape ``P``, the sample has
shape ``P + M`` (``M`` may be empty): row ``i`` of the sample holds draws of distribution ``i``, and
the result has the sample's shape.  ``random_pdf_dirichlet(sample, alpha)`` takes ``alpha`` of
shape ``P + (K,)`` and samples of shape ``P + M + (K,)``, one density per K-vector (the result
drops the last axis).  Parameterisations are MXNet's: gamma's ``beta`` is a rate, negative
binomial counts failures ``x`` before ``k`` successes of probability ``p``, the generalised
negative binomial is the one of mean ``mu`` and dispersion ``alpha`` (``k = 1/alpha``); discrete
densities take non-integer counts through the gamma function, as MXNet's do.

Outside a distribution's support the density is 0 (log-density ``-inf``) and its gradients 0;
MXNet 1.9.1 evaluates the formula there (a uniform density of 1 at 2.0 for [0, 1]).

Gradients are MXNet's: for every parameter, and for the sample of the continuous distributions
(the discrete ones and the uniform give the sample none).  One backward operator per
distribution computes them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ShapeError
from . import registry
from .params import Param, parse_bool
from .registry import BackwardOpGradient, OpDef, register


def _special(kctx: Any, name: str, x: Any) -> Any:
    """The registered elementwise operator ``name`` (``gammaln``, ``_digamma``) on ``x``, on x's device."""
    op = registry.get(name)
    out = kctx.xp.empty_like(x)
    kernel = op.forward_gpu if kctx.xp is not np and op.forward_gpu is not None else op.forward
    kernel(kctx, op.parse({}), [x], [out], [])
    return out


@dataclass(frozen=True)
class Dist:
    """One distribution: its parameter names, the log-density, its gradients and its support.

    ``log_pdf(kctx, x, *params)`` and ``gradients(kctx, x, *params)`` (d log-density / d sample,
    then / d each parameter; ``None`` for no sample gradient) take the parameters broadcast
    against the sample; ``support(xp, x, *params)`` is where the density is not 0.
    """

    params: tuple[str, ...]
    log_pdf: Callable[..., Any]
    gradients: Callable[..., list]
    support: Callable[..., Any]


def _log_choose(kctx: Any, x: Any, k: Any) -> Any:
    """log of Gamma(x + k) / (Gamma(x + 1) Gamma(k)), the negative binomial's coefficient."""
    return _special(kctx, "gammaln", x + k) - _special(kctx, "gammaln", x + 1) - _special(kctx, "gammaln", k)


def _gnb_terms(xp: Any, x: Any, mu: Any, alpha: Any) -> tuple[Any, Any]:
    """k = 1/alpha and log(1 + alpha*mu) of the generalised negative binomial."""
    return 1 / alpha, xp.log1p(alpha * mu)


_DISTS: dict[str, Dist] = {
    "uniform": Dist(
        ("low", "high"),
        lambda kctx, x, low, high: kctx.xp.broadcast_to(-kctx.xp.log(high - low), x.shape),
        lambda kctx, x, low, high: [None, 1 / (high - low) + 0 * x, -1 / (high - low) + 0 * x],
        lambda xp, x, low, high: (x >= low) & (x <= high),
    ),
    "normal": Dist(
        ("mu", "sigma"),
        lambda kctx, x, mu, sigma: -0.5 * ((x - mu) / sigma) ** 2 - kctx.xp.log(sigma) - 0.5 * np.log(2 * np.pi),
        lambda kctx, x, mu, sigma: [
            -(x - mu) / sigma**2,
            (x - mu) / sigma**2,
            ((x - mu) ** 2 / sigma**2 - 1) / sigma,
        ],
        lambda xp, x, mu, sigma: xp.ones(x.shape, dtype=bool),
    ),
    "gamma": Dist(
        ("alpha", "beta"),
        lambda kctx, x, alpha, beta: (
            alpha * kctx.xp.log(beta)
            + (alpha - 1) * kctx.xp.log(x)
            - beta * x
            - _special(kctx, "gammaln", alpha + 0 * x)
        ),
        lambda kctx, x, alpha, beta: [
            (alpha - 1) / x - beta,
            kctx.xp.log(beta) + kctx.xp.log(x) - _special(kctx, "_digamma", alpha + 0 * x),
            alpha / beta - x,
        ],
        lambda xp, x, alpha, beta: x > 0,
    ),
    "exponential": Dist(
        ("lam",),
        lambda kctx, x, lam: kctx.xp.log(lam) - lam * x,
        lambda kctx, x, lam: [-lam + 0 * x, 1 / lam - x],
        lambda xp, x, lam: x >= 0,
    ),
    "poisson": Dist(
        ("lam",),
        lambda kctx, x, lam: x * kctx.xp.log(lam) - lam - _special(kctx, "gammaln", x + 1),
        lambda kctx, x, lam: [None, x / lam - 1],
        lambda xp, x, lam: x >= 0,
    ),
    "negative_binomial": Dist(
        ("k", "p"),
        lambda kctx, x, k, p: _log_choose(kctx, x, k) + k * kctx.xp.log(p) + x * kctx.xp.log1p(-p),
        lambda kctx, x, k, p: [
            None,
            _special(kctx, "_digamma", x + k) - _special(kctx, "_digamma", k + 0 * x) + kctx.xp.log(p),
            k / p - x / (1 - p),
        ],
        lambda xp, x, k, p: x >= 0,
    ),
    "generalized_negative_binomial": Dist(
        ("mu", "alpha"),
        lambda kctx, x, mu, alpha: (
            _log_choose(kctx, x, 1 / alpha) - (1 / alpha + x) * kctx.xp.log1p(alpha * mu) + x * kctx.xp.log(alpha * mu)
        ),
        lambda kctx, x, mu, alpha: [
            None,
            x / mu - (1 + x * alpha) / (1 + alpha * mu),
            (
                kctx.xp.log1p(alpha * mu)
                - _special(kctx, "_digamma", x + 1 / alpha)
                + _special(kctx, "_digamma", 1 / alpha + 0 * x)
            )
            / alpha**2
            - (1 / alpha + x) * mu / (1 + alpha * mu)
            + x / alpha,
        ],
        lambda xp, x, mu, alpha: x >= 0,
    ),
}


# -- the Dirichlet: one density per K-vector -------------------------------------------------------
def _dirichlet_log_pdf(kctx: Any, x: Any, alpha: Any) -> Any:
    xp = kctx.xp
    alpha = alpha + 0 * x
    norm = _special(kctx, "gammaln", alpha.sum(axis=-1)) - _special(kctx, "gammaln", alpha).sum(axis=-1)
    return norm + ((alpha - 1) * xp.log(x)).sum(axis=-1)


def _dirichlet_gradients(kctx: Any, x: Any, alpha: Any) -> list:
    xp = kctx.xp
    alpha = alpha + 0 * x
    total = _special(kctx, "_digamma", alpha.sum(axis=-1, keepdims=True))
    return [(alpha - 1) / x, total - _special(kctx, "_digamma", alpha) + xp.log(x)]


_DIRICHLET = Dist(("alpha",), _dirichlet_log_pdf, _dirichlet_gradients, lambda xp, x, alpha: (x > 0).all(axis=-1))


# -- shapes ----------------------------------------------------------------------------------------
def _spread(param: Any, sample_ndim: int, dirichlet: bool) -> Any:
    """A parameter of shape P (P + (K,) for the Dirichlet) viewed against samples P + M (+ (K,))."""
    extra = sample_ndim - param.ndim
    if dirichlet:
        return param.reshape(*param.shape[:-1], *(1,) * extra, param.shape[-1])
    return param.reshape(*param.shape, *(1,) * extra)


def _infer_shape(name: str, dist: Dist, dirichlet: bool) -> Callable[..., tuple[list, list, list]]:
    op = f"random_pdf_{name}"

    def infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        sample, params = in_shapes[0], in_shapes[1:]
        known = next((p for p in params if p is not None), None)
        for arg, shape in zip(dist.params, params, strict=True):
            if shape is not None and known is not None and tuple(shape) != tuple(known):
                raise ShapeError(f"{op}: shape of '{arg}' is {tuple(shape)}, expected {tuple(known)} like the others")
        if sample is None or known is None:
            out = None if sample is None else (tuple(sample[:-1]) if dirichlet else tuple(sample))
            return [sample, *([known] * len(params))], [out], aux_shapes
        batch = known[:-1] if dirichlet else known
        fits = len(sample) >= len(known) and tuple(sample[: len(batch)]) == tuple(batch)
        if dirichlet:
            fits = fits and len(known) >= 1 and sample[-1] == known[-1]
        if not fits:
            expected = "P + M + (K,) for alpha of shape P + (K,)" if dirichlet else "P + M for parameters of shape P"
            raise ShapeError(
                f"{op}: shape of 'sample' is {tuple(sample)}, expected {expected} (parameters {tuple(known)})"
            )
        out = tuple(sample[:-1]) if dirichlet else tuple(sample)
        return [tuple(sample), *([tuple(known)] * len(params))], [out], aux_shapes

    return infer_shape


# -- kernels ---------------------------------------------------------------------------------------
def _log_density(kctx: Any, dist: Dist, dirichlet: bool, x: Any, params: list) -> tuple[Any, Any]:
    """The log-density (-inf outside the support) and the support mask, in the sample's layout."""
    xp = kctx.xp
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = dist.log_pdf(kctx, x, *params)
    inside = dist.support(xp, x, *params)
    return xp.where(inside, log_p, -xp.inf).astype(x.dtype), inside


def _make_forward(dist: Dist, dirichlet: bool) -> Callable[..., None]:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        x = inputs[0]
        params = [_spread(p, x.ndim, dirichlet) for p in inputs[1:]]
        log_p, _ = _log_density(kctx, dist, dirichlet, x, params)
        outputs[0][...] = log_p if attrs["is_log"] else kctx.xp.exp(log_p)

    return forward


def _make_backward(dist: Dist, dirichlet: bool) -> Callable[..., None]:
    def backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        xp = kctx.xp
        out_grad, x, *raw = inputs
        params = [_spread(p, x.ndim, dirichlet) for p in raw]
        log_p, inside = _log_density(kctx, dist, dirichlet, x, params)
        # d out / d log-density: 1 for is_log, the density itself otherwise; 0 outside the support
        factor = xp.where(inside, out_grad if attrs["is_log"] else out_grad * xp.exp(log_p), 0)
        if dirichlet:
            factor, inside = factor[..., None], inside[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = dist.gradients(kctx, x, *params)
        for i, (target, term) in enumerate(zip(outputs, terms, strict=True)):
            if target is None:
                continue  # a gradient nobody asked for
            if term is None:
                target[...] = 0
                continue
            grad = xp.where(inside, factor * term, 0)
            if i > 0:  # a parameter: the sum over the draws of its distribution
                axes = (
                    tuple(range(raw[i - 1].ndim - 1, x.ndim - 1))
                    if dirichlet
                    else tuple(range(raw[i - 1].ndim, x.ndim))
                )
                grad = grad.sum(axis=axes) if axes else grad
            target[...] = grad

    return backward


def _register(name: str, dist: Dist, dirichlet: bool = False) -> None:
    op = f"random_pdf_{name}"
    inputs = ("sample", *dist.params)
    is_log = {"is_log": Param(parse_bool, False, "give the log-density instead of the density")}
    register(
        OpDef(
            op,
            _make_forward(dist, dirichlet),
            inputs=inputs,
            params=dict(is_log),
            infer_shape=_infer_shape(name, dist, dirichlet),
            gradient=BackwardOpGradient(f"_backward_{op}", len(inputs)),
            float_data=True,
            aliases=(f"_random_pdf_{name}",),
            doc=f"The density (is_log: log-density) of sample under {name} distributions ({', '.join(dist.params)}).",
        )
    )
    register(
        OpDef(
            f"_backward_{op}",
            _make_backward(dist, dirichlet),
            inputs=("out_grad", *inputs),
            outputs=tuple(f"{arg}_grad" for arg in inputs),
            params=dict(is_log),
            infer_shape=lambda attrs, in_shapes, aux_shapes: (in_shapes, list(in_shapes[1:]), aux_shapes),
            optional_outputs=True,
            doc=f"The gradients of {op} for its sample and parameters.",
        )
    )


for _name, _dist in _DISTS.items():
    _register(_name, _dist)
_register("dirichlet", _DIRICHLET, dirichlet=True)
