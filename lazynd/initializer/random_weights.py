"""Initializers that draw weights at random (through ``lazynd.random``, so ``mx.random.seed`` repeats them):
``Uniform``, ``Normal``, ``Orthogonal``, ``Xavier`` and ``MSRAPrelu``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import random as _random
from ..arguments import is_choice
from ..errors import DataValueError, ShapeError
from .base import Initializer, _check_number, register


@register()
class Uniform(Initializer):
    """Weights drawn from U(-scale, scale).

    Examples
    --------
    >>> import lazynd as mx
    >>> arr = mx.nd.zeros((100,)); Uniform(0.1)("w_weight", arr)
    >>> bool(abs(arr.asnumpy()).max() <= 0.1)
    True
    """

    def __init__(self, scale: float = 0.07) -> None:
        _check_number("Uniform", "scale", scale)
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: Any) -> None:
        _random.uniform(-self.scale, self.scale, out=arr)


@register()
class Normal(Initializer):
    """Weights drawn from N(0, sigma^2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        _check_number("Normal", "sigma", sigma)
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: Any) -> None:
        _random.normal(0, self.sigma, out=arr)


@register()
class Orthogonal(Initializer):
    """Orthogonal rows (or columns) from the SVD of a random matrix, times ``scale``."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        if not is_choice(rand_type, ("uniform", "normal")):
            raise DataValueError(f"Orthogonal: rand_type must be 'uniform' or 'normal', got {rand_type!r}")
        _check_number("Orthogonal", "scale", scale)
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, name: str, arr: Any) -> None:
        if len(arr.shape) < 2:
            raise ShapeError(f"Orthogonal: {name!r} needs at least 2 dimensions, got shape {tuple(arr.shape)}")
        rows, cols = arr.shape[0], int(np.prod(arr.shape[1:]))
        draw = _random.uniform if self.rand_type == "uniform" else _random.normal
        sample = (
            draw(-1.0, 1.0, shape=(rows, cols)) if self.rand_type == "uniform" else draw(0.0, 1.0, shape=(rows, cols))
        )
        u, _, v = np.linalg.svd(sample.asnumpy().astype(np.float64), full_matrices=False)
        basis = u if u.shape == (rows, cols) else v
        arr[:] = (self.scale * basis).reshape(arr.shape).astype(np.float32)


@register()
class Xavier(Initializer):
    """Scale from fan-in/fan-out: ``sqrt(magnitude / factor)``.

    Parameters
    ----------
    rnd_type : {'uniform', 'gaussian'}
    factor_type : {'avg', 'in', 'out'}
        ``factor`` is the mean of fan-in and fan-out, fan-in, or fan-out.
    magnitude : float
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3) -> None:
        if not is_choice(rnd_type, ("uniform", "gaussian")):
            raise DataValueError(f"Xavier: rnd_type must be 'uniform' or 'gaussian', got {rnd_type!r}")
        if not is_choice(factor_type, ("avg", "in", "out")):
            raise DataValueError(f"Xavier: factor_type must be 'avg', 'in' or 'out', got {factor_type!r}")
        _check_number("Xavier", "magnitude", magnitude)
        if magnitude < 0:
            raise DataValueError(f"Xavier: magnitude must be a number >= 0, got {magnitude!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: Any) -> None:
        shape = tuple(arr.shape)
        if len(shape) < 2:
            raise ShapeError(f"Xavier: {name!r} needs at least 2 dimensions, got shape {shape}")
        if 0 in shape:
            return  # nothing to fill, and a fan of 0 has no scale
        receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            _random.uniform(-scale, scale, out=arr)
        else:
            _random.normal(0, scale, out=arr)


@register()
class MSRAPrelu(Xavier):
    """He/MSRA initialization for PReLU nets: Gaussian Xavier with magnitude ``2 / (1 + slope^2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        _check_number("MSRAPrelu", "slope", slope)
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}
