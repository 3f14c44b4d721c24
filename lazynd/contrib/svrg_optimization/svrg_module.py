"""``mx.contrib.svrg_optimization.svrg_module``: hands on :class:`lazynd_sym.module.svrg_module.SVRGModule`,
imported on first use so that ``lazynd`` does not import ``lazynd_sym``."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name != "SVRGModule":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module("lazynd_sym.module.svrg_module").SVRGModule
    globals()[name] = value
    return value
