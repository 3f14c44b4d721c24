"""Random number generation on any context, reproducible per seed (``mx.random``).

Each context has one generator and one engine var for its state
(:mod:`lazynd.runtime.random_state`): every random operation writes that var, so
draws happen in push order and the same seed gives the same numbers whatever the
engine or the number of workers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import Context, as_context, current_context
from .errors import OperatorError, ShapeError
from .runtime import push
from .runtime.random_state import context_offset, generator_for, seed_all

_SEED_RANGE = 2**64  # the generators' seeds: 0 <= seed < 2**64


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """Seed the generator of ``ctx`` (a Context or its name, ``'cpu'``, ``'gpu(1)'``; or every
    context with ``'all'``).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.random.seed(42); a = mx.random.uniform(shape=(3,)).asnumpy()
    >>> mx.random.seed(42); b = mx.random.uniform(shape=(3,)).asnumpy()
    >>> bool((a == b).all())
    True
    """
    if not isinstance(seed_state, (int, np.integer)):
        raise OperatorError(f"random.seed: seed must be an int, got {type(seed_state).__name__}")
    # any int seeds, as in MXNet (a negative one too): the generators take 0 <= seed < 2**64
    seed_state = int(seed_state) % _SEED_RANGE
    if isinstance(ctx, str) and ctx == "all":
        targets = [(state, (seed_state + context_offset(state.ctx)) % _SEED_RANGE) for state in seed_all(seed_state)]
    else:
        targets = [(generator_for(as_context(ctx, "random.seed: ctx")), seed_state)]
    for state, value in targets:
        push(state.ctx, state.reseed, (value,), [], [state.var], "random_seed", 0)


def _check_out(op: str, out: Any, shape: Any, dtype: Any) -> None:
    """A ``shape`` or ``dtype`` given with ``out`` must be out's: MXNet refuses the rest (lazynd wrote
    the draws in out's shape and dtype, silently)."""
    from .ops.params import parse_dtype, parse_shape

    if shape is not None and parse_shape(shape) != tuple(out.shape):
        raise ShapeError(f"{op}: shape {parse_shape(shape)} differs from that of 'out', {tuple(out.shape)}")
    if dtype is not None and parse_dtype(dtype) != np.dtype(out.dtype).name:
        raise OperatorError(f"{op}: dtype {parse_dtype(dtype)} differs from that of 'out', {np.dtype(out.dtype).name}")


_CONTEXT_NAMES = ("cpu", "gpu", "cpu_pinned")


def _is_context(value: Any) -> bool:
    return isinstance(value, Context) or (isinstance(value, str) and value.split("(")[0] in _CONTEXT_NAMES)


def _ctx_and_dtype(ctx: Any, dtype: Any) -> tuple[Any, Any]:
    """The context and dtype, whichever positional slot each came in: MXNet 0.9 took ``(shape, ctx)``
    after the parameters and MXNet 1.x takes ``(shape, dtype, ctx)``, and programs of both are run.
    A Context or a context name is the context; a dtype is the dtype; anything else in the ``ctx``
    slot is a ContextError (it was reported as a bad dtype, the slot it was moved to)."""
    if (ctx is not None and not _is_context(ctx)) or _is_context(dtype):
        if ctx is not None and not _is_dtype(ctx):
            as_context(ctx, "ctx")  # raises, naming the value and the contexts expected
        return dtype, ctx
    return ctx, dtype


def _is_dtype(value: Any) -> bool:
    from .ops.params import parse_dtype

    try:
        parse_dtype(value)
    except ValueError:
        return False
    return True


def _sample(op: str, shape: Any, ctx: Context | None, dtype: Any, out: Any, **params: Any) -> Any:
    from .ndarray.dispatch import invoke  # the nd face, imported when first sampling
    from .ops import registry

    ctx, dtype = _ctx_and_dtype(ctx, dtype)
    kwargs = dict(params)
    if out is not None:
        _check_out(op, out, shape, dtype)
        kwargs["shape"] = out.shape
        kwargs["dtype"] = np.dtype(out.dtype).name
        kwargs["ctx"] = out.context
    else:
        kwargs["shape"] = shape if shape is not None else (1,)
        kwargs["ctx"] = ctx if ctx is not None else current_context()
        if dtype is not None:
            kwargs["dtype"] = dtype
    return invoke(registry.get(op), [], kwargs, out)


def uniform(
    low: float = 0.0,
    high: float = 1.0,
    shape: Any = None,
    ctx: Context | None = None,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    """Samples from U[low, high) (``shape`` per element of NDArray ``low`` and ``high``)."""
    return _distribution("uniform", shape, ctx, dtype, out, low=low, high=high)


def normal(
    loc: float = 0.0,
    scale: float = 1.0,
    shape: Any = None,
    ctx: Context | None = None,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    """Samples from N(loc, scale^2) (``shape`` per element of NDArray ``loc`` and ``scale``)."""
    return _distribution("normal", shape, ctx, dtype, out, loc=loc, scale=scale)


def randint(
    low: int, high: int, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None
) -> Any:
    """Integers drawn uniformly from [low, high) (``dtype`` None: int32, or out's)."""
    return _sample("_random_randint", shape, ctx, dtype, out, low=low, high=high)


def _is_array(value: Any) -> bool:
    from .ndarray import NDArray

    return isinstance(value, NDArray)


def _distribution(name: str, shape: Any, ctx: Context | None, dtype: Any, out: Any, **params: Any) -> Any:
    """``_random_<name>`` with scalar parameters, or ``_sample_<name>`` (``shape`` draws per
    element) when they are NDArrays, as MXNet's ``mx.random`` functions choose."""
    ctx, dtype = _ctx_and_dtype(ctx, dtype)
    arrays = [v for v in params.values() if _is_array(v)]
    if not arrays:
        return _sample(f"_random_{name}", shape, ctx, dtype, out, **params)
    if len(arrays) != len(params):
        raise OperatorError(f"random.{name}: parameters {', '.join(params)} must be all NDArrays or all numbers")
    from .ndarray.dispatch import invoke
    from .ops import registry

    kwargs: dict[str, Any] = {"shape": () if shape is None else shape}
    if dtype is not None:
        kwargs["dtype"] = dtype
    elif out is not None:
        kwargs["dtype"] = np.dtype(out.dtype).name  # MXNet's sampler draws in out's dtype (float32 refused it)
    return invoke(registry.get(f"_sample_{name}"), list(params.values()), kwargs, out)


def exponential(
    scale: Any = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None
) -> Any:
    """Samples from an exponential distribution of mean ``scale`` (rate ``1 / scale``)."""
    if not _is_array(scale) and not scale > 0:
        # MXNet refuses it too (its rate 1 / scale); here 1 / 0 was a bare ZeroDivisionError
        raise OperatorError(f"random.exponential: scale must be > 0, got {scale}")
    return _distribution("exponential", shape, ctx, dtype, out, lam=1.0 / scale)


def gamma(
    alpha: Any = 1.0, beta: Any = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None
) -> Any:
    """Samples from a gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _distribution("gamma", shape, ctx, dtype, out, alpha=alpha, beta=beta)


def poisson(lam: Any = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Samples from a Poisson distribution of rate ``lam`` (counts, stored as floats)."""
    return _distribution("poisson", shape, ctx, dtype, out, lam=lam)


def negative_binomial(
    k: Any = 1, p: Any = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None
) -> Any:
    """Samples the failures before the ``k``-th success of trials succeeding with probability ``p``."""
    return _distribution("negative_binomial", shape, ctx, dtype, out, k=k, p=p)


def generalized_negative_binomial(
    mu: Any = 1.0, alpha: Any = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None
) -> Any:
    """Samples from a negative binomial of mean ``mu`` and dispersion ``alpha`` (Poisson for alpha 0)."""
    return _distribution("generalized_negative_binomial", shape, ctx, dtype, out, mu=mu, alpha=alpha)


def _like(name: str, data: Any, out: Any, **params: Any) -> Any:
    """``_random_<name>_like``: samples shaped, typed and placed as ``data``."""
    from .ndarray.dispatch import invoke
    from .ops import registry

    return invoke(registry.get(f"_random_{name}_like"), [data], params, out)


def uniform_like(data: Any, low: float = 0.0, high: float = 1.0, out: Any = None) -> Any:
    """Samples from U[low, high) of the shape, dtype and context of ``data``."""
    return _like("uniform", data, out, low=low, high=high)


def normal_like(data: Any, loc: float = 0.0, scale: float = 1.0, out: Any = None) -> Any:
    """Samples from N(loc, scale^2) of the shape, dtype and context of ``data``."""
    return _like("normal", data, out, loc=loc, scale=scale)


def exponential_like(data: Any, lam: float = 1.0, out: Any = None) -> Any:
    """Samples from an exponential distribution of rate ``lam`` (MXNet's parameter here, not a scale)
    of the shape, dtype and context of ``data``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.random.exponential_like(mx.nd.zeros((2, 3)), lam=4.0).shape
    (2, 3)
    """
    return _like("exponential", data, out, lam=lam)


def gamma_like(data: Any, alpha: float = 1.0, beta: float = 1.0, out: Any = None) -> Any:
    """Samples from a gamma distribution (shape ``alpha``, scale ``beta``) shaped as ``data``."""
    return _like("gamma", data, out, alpha=alpha, beta=beta)


def poisson_like(data: Any, lam: float = 1.0, out: Any = None) -> Any:
    """Samples from a Poisson distribution of rate ``lam`` shaped as ``data``."""
    return _like("poisson", data, out, lam=lam)


def negative_binomial_like(data: Any, k: int = 1, p: float = 1.0, out: Any = None) -> Any:
    """Failures before the ``k``-th success (success probability ``p``), shaped as ``data``."""
    return _like("negative_binomial", data, out, k=k, p=p)


def generalized_negative_binomial_like(data: Any, mu: float = 1.0, alpha: float = 1.0, out: Any = None) -> Any:
    """Samples from a negative binomial of mean ``mu`` and dispersion ``alpha``, shaped as ``data``."""
    return _like("generalized_negative_binomial", data, out, mu=mu, alpha=alpha)


def multinomial(data: Any, shape: Any = None, get_prob: bool = False, out: Any = None, dtype: Any = "int32") -> Any:
    """Category indices drawn from the probabilities in the last axis of ``data``."""
    from .ndarray.dispatch import invoke
    from .ops import registry

    kwargs = {"shape": () if shape is None else shape, "get_prob": get_prob, "dtype": dtype}
    return invoke(registry.get("_sample_multinomial"), [data], kwargs, out)


def shuffle(data: Any, out: Any = None) -> Any:
    """The rows of ``data`` (its first axis) in a random order."""
    from .ndarray.dispatch import invoke
    from .ops import registry

    return invoke(registry.get("_shuffle"), [data], {}, out)


def randn(
    *shape: int, loc: float = 0.0, scale: float = 1.0, dtype: Any = None, ctx: Context | None = None, out: Any = None
) -> Any:
    """Samples from N(loc, scale^2) of the shape given by position (``mx.nd.random.randn(2, 3)``).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.random.randn(2, 3, loc=1.0).shape
    (2, 3)
    """
    return normal(loc, scale, shape if shape else None, ctx, dtype, out)
