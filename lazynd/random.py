"""Random number generation on any context, reproducible per seed (``mx.random``).

Each context has one generator and one engine var for its state
(:mod:`lazynd.runtime.random_state`): every random operation writes that var, so
draws happen in push order and the same seed gives the same numbers whatever the
engine or the number of workers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import Context, current_context
from .errors import LazyNDError, OperatorError
from .runtime import push
from .runtime.random_state import context_offset, generator_for, seed_all


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """Seed the generator of ``ctx`` (or of every context with ``'all'``).

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
    seed_state = int(seed_state)
    if ctx == "all":
        targets = [(state, seed_state + context_offset(state.ctx)) for state in seed_all(seed_state)]
    else:
        targets = [(generator_for(ctx), seed_state)]  # type: ignore[arg-type]
    for state, value in targets:
        push(state.ctx, state.reseed, (value,), [], [state.var], "random_seed", 0)


def _sample(op: str, shape: Any, ctx: Context | None, dtype: Any, out: Any, **params: Any) -> Any:
    from .ndarray.dispatch import invoke  # the nd face, imported when first sampling
    from .ops import registry

    kwargs = dict(params)
    if out is not None:
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
    """Samples from U[low, high)."""
    return _sample("_random_uniform", shape, ctx, dtype, out, low=low, high=high)


def normal(
    loc: float = 0.0,
    scale: float = 1.0,
    shape: Any = None,
    ctx: Context | None = None,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    """Samples from N(loc, scale^2)."""
    return _sample("_random_normal", shape, ctx, dtype, out, loc=loc, scale=scale)


def randint(
    low: int, high: int, shape: Any = None, ctx: Context | None = None, dtype: Any = "int32", out: Any = None
) -> Any:
    """Integers drawn uniformly from [low, high)."""
    return _sample("_random_randint", shape, ctx, dtype, out, low=low, high=high)


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


# MXNet's other samplers and the operator each one calls, once that operator is registered
_SAMPLER_OPS = {
    "exponential": "_random_exponential",
    "gamma": "_random_gamma",
    "poisson": "_random_poisson",
    "negative_binomial": "_random_negative_binomial",
    "generalized_negative_binomial": "_random_generalized_negative_binomial",
    "multinomial": "_sample_multinomial",
    "shuffle": "_shuffle",
}


def __getattr__(name: str) -> Any:
    op_name = _SAMPLER_OPS.get(name)
    if op_name is None:
        raise AttributeError(f"module 'lazynd.random' has no attribute {name!r}")
    from .ops import registry

    if not registry.exists(op_name):
        raise LazyNDError(f"mx.random.{name}: not supported by lazynd yet (no operator {op_name} is registered)")
    op = registry.get(op_name)
    if not op_name.startswith("_random_"):  # multinomial and shuffle take arrays: the operator's own function
        from .ndarray.functions import make_function

        return make_function(op, name)
    distribution_params = [p for p in op.params if p not in ("shape", "ctx", "dtype")]

    def sampler(
        *args: Any, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None, **params: Any
    ) -> Any:
        params.update(zip(distribution_params, args, strict=False))
        return _sample(op_name, shape, ctx, dtype, out, **params)

    sampler.__name__ = name
    return sampler
