"""Operator families; importing this package registers every operator."""

from __future__ import annotations

import importlib
import pkgutil

from . import registry  # noqa: F401

_SKIP = {"registry", "opdef", "params", "conv_columns"}

# every module in this package except the infrastructure above is an operator family
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name not in _SKIP and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
