"""``mx.sym.random``: graph nodes that draw random values (MXNet 1.x's symbolic samplers).

Each function builds a registered operator's node, as ``mx.nd.random``'s call it: numbers as
parameters give ``_random_<name>`` (``shape`` samples), symbols give ``_sample_<name>`` (``shape``
samples per element of the parameters); ``multinomial`` is ``_sample_multinomial``, ``shuffle``
is ``_shuffle`` and ``<name>_like`` is ``_random_<name>_like``.

Examples
--------
>>> import lazynd as mx
>>> mx.sym.random.uniform(-1, 1, shape=(2, 3)).infer_shape()[1]
[(2, 3)]
>>> mx.sym.random.multinomial(mx.sym.var("p"), shape=2).infer_shape(p=(3, 4))[1]
[(3, 2), (3, 2)]
"""

from __future__ import annotations

import numbers
from typing import Any

from lazynd.errors import LazyNDError

from . import creation
from .symbol import Symbol


def _node(op_name: str, inputs: list[Symbol], params: dict[str, Any]) -> Symbol:
    # None stands for MXNet's _Null: the operator's default.  The defaults of the functions below are
    # MXNet's as written (0 and 1, not 0.0 and 1.0): they are the text of the node's JSON.
    return creation.invoke(op_name, inputs, {k: v for k, v in params.items() if v is not None})


def _draw(name: str, values: dict[str, Any], shape: Any, dtype: Any, kwargs: dict[str, Any]) -> Symbol:
    """``_random_<name>`` when the distribution's parameters are numbers, ``_sample_<name>`` when symbols."""
    symbols = [isinstance(v, Symbol) for v in values.values()]
    if all(symbols):
        return _node(f"_sample_{name}", list(values.values()), {"shape": shape, "dtype": dtype, **kwargs})
    if not any(symbols) and all(isinstance(v, numbers.Number) for v in values.values()):
        return _node(f"_random_{name}", [], {**values, "shape": shape, "dtype": dtype, **kwargs})
    given = ", ".join(f"{k}={type(v).__name__}" for k, v in values.items())
    raise LazyNDError(f"mx.sym.random.{name}: parameters must be all symbols or all numbers, got {given}")


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from U[low, high)."""
    return _draw("uniform", {"low": low, "high": high}, shape, dtype, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from N(loc, scale^2)."""
    return _draw("normal", {"loc": loc, "scale": scale}, shape, dtype, kwargs)


def randn(*shape: int, **kwargs: Any) -> Symbol:
    """Samples from N(loc, scale^2) (keywords, default 0 and 1) of shape ``shape``."""
    loc, scale, dtype = kwargs.pop("loc", 0), kwargs.pop("scale", 1), kwargs.pop("dtype", None)
    return _draw("normal", {"loc": loc, "scale": scale}, shape or None, dtype, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from a Poisson distribution of rate ``lam``."""
    return _draw("poisson", {"lam": lam}, shape, dtype, kwargs)


def exponential(scale: Any = 1.0, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from an exponential distribution of mean ``scale`` (rate ``1 / scale``)."""
    return _draw("exponential", {"lam": 1.0 / scale}, shape, dtype, kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from a gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _draw("gamma", {"alpha": alpha, "beta": beta}, shape, dtype, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples the failures before the ``k``-th success of trials succeeding with probability ``p``."""
    return _draw("negative_binomial", {"k": k, "p": p}, shape, dtype, kwargs)


def generalized_negative_binomial(
    mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any
) -> Symbol:
    """Samples from a negative binomial of mean ``mu`` and dispersion ``alpha``."""
    return _draw("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, dtype, kwargs)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Integers drawn uniformly from [low, high)."""
    return _node("_random_randint", [], {"low": low, "high": high, "shape": shape, "dtype": dtype, **kwargs})


def multinomial(data: Symbol, shape: Any = None, get_prob: bool = True, dtype: Any = "int32", **kwargs: Any) -> Symbol:
    """Category indices drawn from the probabilities in the last axis of ``data``, ``shape`` per
    distribution; with ``get_prob`` (the default here, as MXNet's symbol function) a second
    output holds each sample's log-probability."""
    return _node("_sample_multinomial", [data], {"shape": shape, "get_prob": get_prob, "dtype": dtype, **kwargs})


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """The rows of ``data`` (its first axis) in a random order."""
    return _node("_shuffle", [data], kwargs)


_LIKE = ("uniform", "normal", "exponential", "gamma", "poisson", "negative_binomial", "generalized_negative_binomial")


def __getattr__(name: str) -> Any:
    if name.endswith("_like") and name[: -len("_like")] in _LIKE:
        # samples shaped and typed as the input: the operator's own function, parameters in its order
        import lazynd_sym

        function = getattr(lazynd_sym, f"_random_{name}")
        globals()[name] = function
        return function
    raise AttributeError(f"module 'lazynd_sym.random' has no attribute {name!r}")
