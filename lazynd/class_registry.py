"""The ``register`` of lazynd's class registries (initializers, metrics), in both of MXNet's forms.

MXNet programs write ``@mx.init.register`` (the class itself) or ``mx.metric.register(klass, name)``;
lazynd's own code writes ``@register("alias", ...)``.  :func:`make_register` makes one function
that takes either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
        return lambda cls: add(cls, args)

    return register
