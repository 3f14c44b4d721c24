"""``mx.contrib.svrg_optimization``: MXNet 1.x's SVRG training (``svrg_module.SVRGModule``)."""

from __future__ import annotations

from . import svrg_module

__all__ = ["svrg_module"]
