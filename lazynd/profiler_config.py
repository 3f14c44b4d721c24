"""The arguments of :func:`lazynd.profiler.set_config`: MXNet 0.9's ``mode`` and ``filename``, and
MXNet 1.x's ``profile_*`` keywords, read into a mode and a path or refused by name.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

from .arguments import is_choice
from .errors import LazyNDError

MODES = ("symbolic", "all")

# MXNet 1.x's set_config keywords that only tune MXNet's own profiler (memory, C API, dump timing,
# aggregation, which lazynd's dumps() always does): accepted, and change nothing here
_MXNET1_TUNING = ("profile_memory", "profile_api", "continuous_dump", "dump_period", "aggregate_stats")
_MXNET1_KEYWORDS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_process", *_MXNET1_TUNING)
_FLAGS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory", "profile_api")


def _is_flag(value: Any) -> bool:
    """Whether ``value`` is a boolean (Python's, NumPy's, or the ints 0 and 1), as MXNet's flags take."""
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return True
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")


def check_process(profile_process: str, what: str) -> None:
    """Refuse a ``profile_process`` other than ``'worker'`` (MXNet's kvstore server profiling)."""
    if not is_choice(profile_process, ("worker",)):
        raise LazyNDError(f"profiler.{what}: profile_process {profile_process!r} is not supported; only 'worker'")


def config_from(mode: str | None, filename: Any, kwargs: dict[str, Any]) -> tuple[str, str]:
    """The ``(mode, path)`` that ``set_config(mode, filename, **kwargs)`` asks for.

    Examples
    --------
    >>> config_from(None, "p.json", {"profile_all": True, "aggregate_stats": True})
    ('all', 'p.json')
    """
    unknown = sorted(set(kwargs) - set(_MXNET1_KEYWORDS))
    if unknown:
        raise LazyNDError(
            f"profiler.set_config: unknown argument(s) {unknown}; expected mode, filename or {list(_MXNET1_KEYWORDS)}"
        )
    check_process(kwargs.get("profile_process", "worker"), "set_config")
    for key in _FLAGS:
        if key in kwargs and not _is_flag(kwargs[key]):  # (a string such as 'false' is true: it would record)
            raise LazyNDError(f"profiler.set_config: {key} must be True or False, got {kwargs[key]!r}")
    if mode is None:
        mode = "all" if kwargs.get("profile_all") or kwargs.get("profile_imperative") else "symbolic"
    if not is_choice(mode, MODES):
        raise LazyNDError(f"profiler.set_config: mode {mode!r} is not one of {list(MODES)}")
    if not isinstance(filename, (str, os.PathLike)) or not str(filename):
        raise LazyNDError(f"profiler.set_config: filename must be a non-empty path, got {filename!r}")
    return mode, os.fspath(filename)
