"""A memo of objects built from an operator's parsed parameters, for kernels called at every step.

A pooling or convolution kernel builds its geometry from the parameters and the shapes; a training
step calls it with the same ones every time, so :class:`ParamsMemo` keeps what was built, per
(parameters, extra arguments).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ParamsMemo"]


class ParamsMemo:
    """``build(attrs, *extra)``, kept per (parsed parameters, extra) for kernels that would rebuild the
    same object at every call (a pooling or convolution geometry: each training step calls them with
    the same parameters and shapes).  What ``build`` returns is shared, so it must not be changed.
    Parameters with an unhashable value are built each time.

    Examples:
        >>> memo = ParamsMemo(lambda attrs, n: attrs["k"] * n)
        >>> memo({"k": 3}, 2), memo({"k": 3}, 2)
        (6, 6)
    """

    def __init__(self, build: Callable[..., Any], kept: int = 1024) -> None:
        self._build = build
        self._kept = kept
        self._built: dict[tuple, Any] = {}

    def __call__(self, attrs: dict, *extra: Any) -> Any:
        try:
            key = (tuple(attrs.items()), *extra)
            found = self._built.get(key)
        except TypeError:  # a list or dict among the values
            return self._build(attrs, *extra)
        if found is None:
            found = self._build(attrs, *extra)
            if len(self._built) >= self._kept:
                self._built.clear()
            self._built[key] = found
        return found
