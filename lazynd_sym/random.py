"""``mx.sym.random``: graph nodes that draw random values (MXNet 1.x's symbolic samplers).

Each one is the registered ``_random_<name>`` operator; a sampler with no operator
registered yet says so by name.

Examples
--------
>>> import lazynd as mx
>>> mx.sym.random.uniform(-1, 1, shape=(2, 3)).infer_shape()[1]
[(2, 3)]
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import LazyNDError
from lazynd.ops import registry

from . import creation
from .symbol import Symbol


def _draw(name: str, params: dict[str, Any]) -> Symbol:
    op_name = f"_random_{name}"
    if not registry.exists(op_name):
        raise LazyNDError(f"mx.sym.random.{name}: not supported by lazynd yet (no operator {op_name} is registered)")
    return creation.invoke(op_name, [], {k: v for k, v in params.items() if v is not None})


def uniform(low: float = 0.0, high: float = 1.0, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from U[low, high)."""
    return _draw("uniform", {"low": low, "high": high, "shape": shape, "dtype": dtype, **kwargs})


def normal(loc: float = 0.0, scale: float = 1.0, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from N(loc, scale^2)."""
    return _draw("normal", {"loc": loc, "scale": scale, "shape": shape, "dtype": dtype, **kwargs})


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Integers drawn uniformly from [low, high)."""
    return _draw("randint", {"low": low, "high": high, "shape": shape, "dtype": dtype, **kwargs})


def __getattr__(name: str) -> Any:
    if name in ("exponential", "gamma", "poisson", "negative_binomial", "generalized_negative_binomial"):
        return lambda **params: _draw(name, params)
    raise AttributeError(f"module 'lazynd_sym.random' has no attribute {name!r}")
