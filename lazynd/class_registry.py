"""The ``register`` of lazynd's class registries (initializers, metrics), in both of MXNet's forms.

MXNet programs write ``@mx.init.register`` (the class itself) or ``mx.metric.register(klass, name)``;
lazynd's own code writes ``@register("alias", ...)``.  :func:`make_register` makes one function
that takes either.  :func:`parse_config` reads the configs MXNet's ``create`` functions take besides a
name: a dict or JSON object naming the class under a key (``{"metric": "Accuracy", "axis": 0}``, what
``get_config`` returns) and a JSON ``[name, kwargs]`` pair (what ``Initializer.dumps`` returns).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from .errors import DataError, DataTypeError


def make_register(registry: dict[str, Any]) -> Callable[..., Any]:
    """A ``register`` adding classes to ``registry`` under their lower-case name and any aliases.

    Examples
    --------
    >>> registry = {}
    >>> register = make_register(registry)
    >>> @register
    ... class Plain: pass
    >>> @register("other")
    ... class Named: pass
    >>> _ = register(int, "integer")
    >>> sorted(registry)
    ['int', 'integer', 'named', 'other', 'plain']
    """

    def add(cls: Any, aliases: tuple[str, ...]) -> Any:
        for name in (cls.__name__.lower(), *(alias.lower() for alias in aliases)):
            registry[name] = cls
        return cls

    def register(*args: Any) -> Any:
        if args and isinstance(args[0], type):  # MXNet's forms: register(klass) or register(klass, name)
            return add(args[0], tuple(a for a in args[1:] if a is not None))
        for alias in args:
            if not isinstance(alias, str):
                raise DataError(f"register: expected a class or alias names, got {alias!r}")
        return lambda cls: add(cls, args)

    return register


def check_arguments(caller: str, name: str, cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A ``DataTypeError`` (a ``DataError`` and a ``TypeError``, as MXNet's constructor raises) naming
    ``caller`` and the class's ``name`` unless ``cls(*args, **kwargs)`` would bind (before a missing or
    unexpected argument becomes a bare ``TypeError`` inside the constructor).

    Examples
    --------
    >>> class Scaled:
    ...     def __init__(self, scale, name="scaled"): pass
    >>> try:
    ...     check_arguments("create", "scaled", Scaled, (0.5,), {"bogus": 1})
    ... except DataError as err:
    ...     print(err)
    create: 'scaled' cannot take ['#0', 'bogus']: got an unexpected keyword argument 'bogus'; its arguments: (scale, name='scaled')
    """
    try:
        signature = inspect.signature(cls)
        signature.bind(*args, **kwargs)
    except TypeError as err:
        given = [*(f"#{i}" for i in range(len(args))), *sorted(kwargs)]
        raise DataTypeError(f"{caller}: {name!r} cannot take {given}: {err}; its arguments: {signature}") from None


def is_config(spec: Any) -> bool:
    """Whether ``spec`` is one of the config forms :func:`parse_config` reads (not a plain name)."""
    return isinstance(spec, dict) or (isinstance(spec, str) and spec.lstrip()[:1] in ("[", "{"))


def parse_config(spec: dict[str, Any] | str, key: str, caller: str) -> tuple[str, dict[str, Any]]:
    """The class name and keyword arguments in a config: a dict or JSON object with the name under ``key``,
    or a JSON ``[name, kwargs]`` pair.  A malformed config is a ``DataError`` naming ``caller``.

    Examples
    --------
    >>> parse_config('{"metric": "Accuracy", "axis": 0}', "metric", "metric.create")
    ('Accuracy', {'axis': 0})
    >>> parse_config('["uniform", {"scale": 0.5}]', "init", "initializer.create")
    ('uniform', {'scale': 0.5})
    """
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError as exc:
            raise DataError(f"{caller}: {spec!r} is not valid JSON ({exc})") from None
    if isinstance(spec, list):
        if len(spec) != 2 or not isinstance(spec[0], str):
            raise DataError(f"{caller}: expected a JSON [name, {{kwargs}}] pair, got {spec!r}")
        name, kwargs = spec
        if not isinstance(kwargs, dict):
            raise DataError(f"{caller}: the arguments of {name!r} must be a JSON object, got {kwargs!r}")
        return name, dict(kwargs)
    if not isinstance(spec, dict) or not isinstance(spec.get(key), str):
        raise DataError(f"{caller}: a config must name its class under {key!r}, got {spec!r}")
    kwargs = dict(spec)
    return kwargs.pop(key), kwargs
