"""``mx.contrib``: MXNet 1.x's contrib faces.

- ``mx.contrib.nd`` / ``mx.contrib.ndarray``: the contrib operators as NDArray functions (the
  same namespace as ``mx.nd.contrib``: ``mx.contrib.nd.MultiBoxPrior``...);
- ``mx.contrib.sym`` / ``mx.contrib.symbol``: the same as symbol functions (``mx.sym.contrib``),
  imported on first use so that ``lazynd`` does not import ``lazynd_sym``;
- ``mx.contrib.autograd``: the imperative autograd API of MXNet 0.9.4 and 0.10
  (``train_section``, ``grad_and_loss``...), over :mod:`lazynd.autograd`;
- ``mx.contrib.text``: vocabularies, token counting and token embeddings;
- ``mx.contrib.svrg_optimization.svrg_module.SVRGModule``: a Module trained with SVRG.

Examples
--------
>>> import lazynd as mx
>>> mx.contrib.nd.MultiBoxPrior(mx.nd.zeros((1, 3, 2, 2)), sizes=(0.5,)).shape
(1, 4, 4)
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import missing_faces

__all__ = ["autograd", "nd", "ndarray", "svrg_optimization", "sym", "symbol", "text"]


def __getattr__(name: str) -> Any:
    value: Any
    if name in ("nd", "ndarray"):
        value = importlib.import_module("lazynd.ndarray").contrib
    elif name in ("sym", "symbol"):
        value = importlib.import_module("lazynd_sym").contrib
    elif name in ("autograd", "svrg_optimization", "text"):
        value = importlib.import_module(f"{__name__}.{name}")
    elif f"contrib.{name}" in missing_faces.FACES:
        raise missing_faces.refusal(f"contrib.{name}")
    else:
        raise AttributeError(f"module 'lazynd.contrib' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
