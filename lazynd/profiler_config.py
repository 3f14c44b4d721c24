"""The arguments of :func:`lazynd.profiler.set_config`: MXNet 0.9's ``mode`` and ``filename``, and
MXNet 1.x's ``profile_*`` keywords, read into a mode and a path or refused by name.
"""

from __future__ import annotations

import os
from typing import Any

from .arguments import is_choice
from .errors import LazyNDError
from .ops.params import parse_bool

MODES = ("symbolic", "all")

# MXNet 1.x's set_config keywords that only tune MXNet's own profiler (memory, C API, dump timing,
# aggregation, which lazynd's dumps() always does): accepted, and change nothing here
_MXNET1_TUNING = ("profile_memory", "profile_api", "continuous_dump", "dump_period", "aggregate_stats")
_MXNET1_KEYWORDS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_process", *_MXNET1_TUNING)
_FLAGS = (
    "profile_all",
    "profile_symbolic",
    "profile_imperative",
    "profile_memory",
    "profile_api",
    "continuous_dump",
    "aggregate_stats",
)


def _flag_value(key: str, value: Any) -> bool:
    """The truth of a flag as MXNet reads it, with the operators' parser (:func:`~lazynd.ops.params.parse_bool`):
    a boolean, the int 0 or 1, or the string of one (``'True'``, ``'false'``, ``'1'``...: MXNet passes every
    value as its string).  Anything else is refused: ``bool('false')`` would be true and turn on what the
    program turned off.
    """
    try:
        return parse_bool(value)
    except ValueError:
        raise LazyNDError(f"profiler.set_config: {key} must be True or False, got {value!r}") from None


def _dump_period(value: Any, continuous_dump: bool) -> float:
    """``dump_period`` as MXNet reads it: a number of seconds (or its string), above 0 unless
    ``continuous_dump`` is off."""
    try:
        seconds = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        seconds = None
    if seconds is None or seconds != seconds:  # (NaN)
        raise LazyNDError(f"profiler.set_config: dump_period must be a number of seconds, got {value!r}")
    if continuous_dump and seconds <= 0:
        raise LazyNDError(
            f"profiler.set_config: dump_period must be above 0 while continuous_dump is on, got {value!r}"
        )
    return seconds


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
    flags = {key: _flag_value(key, kwargs[key]) for key in _FLAGS if key in kwargs}
    # continuous_dump is on unless turned off, as in MXNet; lazynd writes at stop and exit either way
    _dump_period(kwargs.get("dump_period", 1.0), flags.get("continuous_dump", True))
    if mode is None:
        mode = "all" if flags.get("profile_all") or flags.get("profile_imperative") else "symbolic"
    if not is_choice(mode, MODES):
        raise LazyNDError(f"profiler.set_config: mode {mode!r} is not one of {list(MODES)}")
    if not isinstance(filename, (str, os.PathLike)) or not str(filename):
        raise LazyNDError(f"profiler.set_config: filename must be a non-empty path, got {filename!r}")
    return mode, os.fspath(filename)
