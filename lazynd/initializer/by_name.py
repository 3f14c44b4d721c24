"""Initializers that choose per parameter name: ``Load`` (saved values, else a default) and ``Mixed`` (the
initializer of the first pattern that matches)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .. import ndarray as nd
from ..errors import ArgumentValueError, DataError, DataTypeError, DataValueError, ShapeError
from .base import Initializer, register


@register()
class Load(Initializer):
    """Take values from saved parameters (a dict or an ``nd.save`` file), else ``default_init``.

    ``arg:``/``aux:`` prefixes of checkpoint files are stripped.
    """

    def __init__(
        self, param: str | dict[str, Any], default_init: Initializer | None = None, verbose: bool = False
    ) -> None:
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise DataTypeError(f"Load: expected a dict of named arrays, got {type(param).__name__}")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose
        super().__init__()

    def __call__(self, name: str, arr: Any) -> None:
        if name in self.param:
            value = self.param[name]
            if tuple(value.shape) != tuple(arr.shape):
                raise ShapeError(
                    f"Load: parameter {name!r} has shape {tuple(value.shape)} in the file but {tuple(arr.shape)} in the model"
                )
            arr[:] = value.asnumpy() if hasattr(value, "asnumpy") else value
        elif self.default_init is not None:
            self.default_init(name, arr)
        else:
            raise DataError(f"Load: {name!r} is not among the loaded parameters and no default_init was given")


@register()
class Mixed(Initializer):
    """Pick the initializer of the first regular expression that matches the name.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd.initializer import Constant, Uniform
    >>> init = Mixed(["conv.*", ".*"], [Constant(0.5), Uniform(0.1)])
    >>> arr = mx.nd.zeros((2, 2)); init("conv1_weight", arr); arr.asnumpy().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """

    def __init__(self, patterns: Sequence[str], initializers: Sequence[Initializer]) -> None:
        for what, given in (("patterns", patterns), ("initializers", initializers)):
            if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
                raise DataTypeError(f"Mixed: {what} must be a list, got {given!r}")
        if len(patterns) != len(initializers):
            raise DataValueError(f"Mixed: {len(patterns)} patterns but {len(initializers)} initializers")
        for init in initializers:
            if not callable(init):
                raise DataTypeError(f"Mixed: each initializer must be an Initializer, got {init!r}")
        self.map = [(_compiled("Mixed", p), init) for p, init in zip(patterns, initializers, strict=False)]
        super().__init__()

    def __call__(self, name: str, arr: Any) -> None:
        if not isinstance(name, str):  # (the patterns are matched against it)
            raise DataTypeError(f"Mixed: the first argument must be the parameter name, got {type(name).__name__}")
        for pattern, init in self.map:
            if pattern.match(name):
                init(name, arr)
                return
        raise ArgumentValueError(f"Mixed: no pattern matches {name!r}; add a '.*' pattern as the default")


def _compiled(owner: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except (re.error, TypeError) as err:
        raise DataValueError(f"{owner}: {pattern!r} is not a regular expression: {err}") from None
