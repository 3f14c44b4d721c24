"""Random number generation on any context, reproducible per seed.

Each context has one generator and one engine var for its state: every random
operation writes that var, so draws happen in push order and the same seed
gives the same numbers whatever the engine or the number of workers.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .context import Context, current_context
from .engine.var import Var
from .errors import OperatorError

_DEFAULT_SEED = 0


class GeneratorState:
    """The generator of one context and the var that orders its use."""

    def __init__(self, ctx: Context, seed: int) -> None:
        self.ctx = ctx
        self.var = Var()
        if ctx.device_type == "gpu":
            from .backend import get_backend

            backend = get_backend(ctx)
            with backend.device:  # type: ignore[attr-defined]
                self.generator = backend.xp.random.RandomState(seed)
        else:
            self.generator = np.random.Generator(np.random.PCG64(seed))

    def reseed(self, seed: int) -> None:
        if self.ctx.device_type == "gpu":
            self.generator.seed(seed)
        else:
            self.generator.bit_generator.state = np.random.PCG64(seed).state


_states: dict[Context, GeneratorState] = {}
_lock = threading.Lock()


def generator_for(ctx: Context) -> GeneratorState:
    state = _states.get(ctx)
    if state is None:
        with _lock:
            state = _states.get(ctx)
            if state is None:
                state = GeneratorState(ctx, _DEFAULT_SEED + 7919 * ctx.device_id + (0 if ctx.device_type == "cpu" else 104729))
                _states[ctx] = state
    return state


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
    global _DEFAULT_SEED
    if not isinstance(seed_state, (int, np.integer)):
        raise OperatorError(f"random.seed: seed must be an int, got {type(seed_state).__name__}")
    from .engine import get_engine

    seed_state = int(seed_state)
    if ctx == "all":
        _DEFAULT_SEED = seed_state
        targets = list(_states.values())
    else:
        targets = [generator_for(ctx)]  # type: ignore[arg-type]
    for state in targets:
        offset = 0 if ctx != "all" else 7919 * state.ctx.device_id + (0 if state.ctx.device_type == "cpu" else 104729)
        get_engine().push(state.reseed, (seed_state + offset,), [], [state.var], "random_seed", state.ctx, inline_ok=True)


def _sample(op: str, shape: Any, ctx: Context | None, dtype: Any, out: Any, **params: Any) -> Any:
    from .ndarray.dispatch import invoke
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


def uniform(low: float = 0.0, high: float = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Samples from U[low, high)."""
    return _sample("_random_uniform", shape, ctx, dtype, out, low=low, high=high)


def normal(loc: float = 0.0, scale: float = 1.0, shape: Any = None, ctx: Context | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Samples from N(loc, scale^2)."""
    return _sample("_random_normal", shape, ctx, dtype, out, loc=loc, scale=scale)


def randint(low: int, high: int, shape: Any = None, ctx: Context | None = None, dtype: Any = "int32", out: Any = None) -> Any:
    """Integers drawn uniformly from [low, high)."""
    return _sample("_random_randint", shape, ctx, dtype, out, low=low, high=high)
