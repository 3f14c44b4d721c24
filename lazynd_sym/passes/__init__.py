"""Graph passes, registered by name; the executor applies them at bind.

Built-in passes: ``expand_control_flow``, ``infer_shape``, ``infer_type``, ``gradient``, ``plan_memory``.
A user pass is ``fn(graph) -> graph | None`` registered with ``at_bind=True``: every
executor then runs it on its indexed graph after memory planning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.errors import LazyNDError

from .expand_control_flow import expand_control_flow, shape_reader
from .gradient import gradient
from .infer_shape import infer_shape
from .infer_type import infer_type
from .plan_memory import plan_memory

_PASSES: dict[str, Callable[..., Any]] = {}
_AT_BIND: list[str] = []


def register(name: str, fn: Callable[..., Any], at_bind: bool = False) -> Callable[..., Any]:
    """Register pass ``fn`` as ``name``; ``at_bind`` makes every bind apply it.

    Examples
    --------
    >>> seen = []
    >>> _ = register("count_nodes", lambda g: seen.append(len(g.nodes)))
    >>> "count_nodes" in list_passes()
    True
    """
    if name in _PASSES:
        raise LazyNDError(f"pass {name!r} is already registered")
    _PASSES[name] = fn
    if at_bind:
        _AT_BIND.append(name)
    return fn


def unregister(name: str) -> None:
    _PASSES.pop(name, None)
    if name in _AT_BIND:
        _AT_BIND.remove(name)


def get(name: str) -> Callable[..., Any]:
    if name not in _PASSES:
        raise LazyNDError(f"unknown pass {name!r}; registered: {sorted(_PASSES)}")
    return _PASSES[name]


def list_passes() -> list[str]:
    return sorted(_PASSES)


def bind_passes() -> list[Callable[..., Any]]:
    """The user passes applied at every bind, in registration order."""
    return [_PASSES[n] for n in _AT_BIND]


for _name, _fn in (
    ("expand_control_flow", expand_control_flow),
    ("infer_shape", infer_shape),
    ("infer_type", infer_type),
    ("gradient", gradient),
    ("plan_memory", plan_memory),
):
    register(_name, _fn)

__all__ = [
    "register",
    "unregister",
    "get",
    "list_passes",
    "bind_passes",
    "expand_control_flow",
    "shape_reader",
    "infer_shape",
    "infer_type",
    "gradient",
    "plan_memory",
]
