"""The inputs and the case record of the operator sweep (tests/ops/sweep_cases.py assembles the cases)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SHAPE = (3, 4)
DOMAIN = (0.2, 0.8)  # inside the domain of every unary function below (log, arcsin, arctanh, ...)


@dataclass(frozen=True)
class In:
    """One input: its shape, dtype and domain; ``integer`` draws whole numbers (indices, labels)."""

    shape: tuple[int, ...] = SHAPE
    low: float = DOMAIN[0]
    high: float = DOMAIN[1]
    dtype: str = "float32"
    integer: bool = False
    values: Any = None  # fixed values instead of a draw

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """The input's values."""
        if self.values is not None:
            return np.asarray(self.values, dtype=self.dtype).reshape(self.shape)
        if self.integer:
            return rng.integers(int(self.low), int(self.high) + 1, size=self.shape).astype(self.dtype)
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclass
class Case:
    """A sample call of one operator."""

    inputs: list[In]
    params: dict[str, Any] = field(default_factory=dict)
    aux: list[In] = field(default_factory=list)
    reference: Callable[..., Any] | None = None
    grad: bool = True  # check the gradient rule numerically (float inputs only)
    random: bool = False  # draws random numbers: nd and the executor are compared under the same seed
    rtol: float | None = None
    atol: float | None = None
    xfail: str | None = None  # a known bug (strict xfail)
    gpu_needs: tuple[str, ...] = ()  # CuPy APIs the GPU path calls (skipped where CuPy lacks one)


def _f(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference giving float32 results (comparisons, argmax: MXNet returns them as floats)."""
    return lambda *xs: np.asarray(fn(*xs)).astype(np.float32)


def _assign(a: np.ndarray, value: Any) -> np.ndarray:
    out = a.copy()
    out[0:2, 1:3] = value
    return out
