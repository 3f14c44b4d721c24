"""Parameter initializers (``mx.init``).

An initializer is called with a parameter's name and its NDArray and fills
the array according to the name's suffix (``*_weight``, ``*_bias``,
``*_gamma``, ``*_beta``, ``*_moving_mean``, ``*_moving_var``).  A variable's
``__init__`` attribute (an initializer's ``dumps()``) overrides that choice.
Random draws go through ``lazynd.random``, so ``mx.random.seed`` makes them
reproducible.  ``base`` holds ``Initializer``, ``InitDesc``, the registry and
``create``; ``random_weights`` and ``fixed_weights`` the initializers of each
kind; ``by_name`` those that choose per parameter name (``Load``, ``Mixed``).
"""

from __future__ import annotations

from typing import Any

from .base import InitDesc, Initializer, _fused_rnn, bilinear_filter, create, register
from .by_name import Load, Mixed
from .fixed_weights import Bilinear, Constant, LSTMBias, One, Zero
from .random_weights import MSRAPrelu, Normal, Orthogonal, Uniform, Xavier

__all__ = [
    "Initializer",
    "InitDesc",
    "register",
    "create",
    "bilinear_filter",
    "Load",
    "Mixed",
    "Zero",
    "One",
    "Constant",
    "LSTMBias",
    "Bilinear",
    "Uniform",
    "Normal",
    "Orthogonal",
    "Xavier",
    "MSRAPrelu",
]


def __getattr__(name: str) -> Any:
    if name == "FusedRNN":
        return _fused_rnn()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
