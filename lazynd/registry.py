"""MXNet's ``mx.registry``: one registry of classes per base class, and the ``register``, ``alias``
and ``create`` functions made for it.

Programs build factories of their own classes with it::

    register = mx.registry.get_register_func(Augmenter, "augmenter")
    create = mx.registry.get_create_func(Augmenter, "augmenter")

    @register
    class Flip(Augmenter): ...

    create("flip", p=0.5)        # also create('["flip", {"p": 0.5}]'), create({"augmenter": "flip", "p": 0.5})

The registries of lazynd's initializers and metrics are the ones ``mx.init.create`` and
``mx.metric.create`` read, so a class registered here under ``mx.init.Initializer`` is created by
``mx.init.create`` too, as in MXNet (whose optimizers keep a registry of their own,
``mx.optimizer.Optimizer.register``, as lazynd's do).  Names are case-insensitive.  Misuse raises a :class:`~lazynd.errors.ArgumentTypeError` (a class that is no
subclass, a name that is no string) or an :class:`~lazynd.errors.ArgumentValueError` (a name nobody
registered, arguments given with an instance), where MXNet fails an ``assert``; arguments the class does not
take raise a :class:`~lazynd.errors.DataTypeError` (a ``TypeError``) naming them, as the other ``create``
functions do.  Configs are read by :mod:`lazynd.class_registry`, as ``mx.init.create``'s and ``mx.metric.create``'s are.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

from .class_registry import check_arguments, is_config, parse_config
from .errors import ArgumentTypeError, ArgumentValueError, DataError

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRIES: dict[type, dict[str, type]] = {}


def _registry_of(base_class: type) -> dict[str, type]:
    """The registry of ``base_class``: lazynd's own for its initializers and metrics."""
    if not isinstance(base_class, type):
        raise ArgumentTypeError(f"mx.registry: base_class must be a class, got {base_class!r}")
    if base_class not in _REGISTRIES:
        initializer = importlib.import_module("lazynd.initializer.base")
        metric = importlib.import_module("lazynd.metric.base")
        own = {initializer.Initializer: initializer._REGISTRY, metric.EvalMetric: metric._REGISTRY}
        _REGISTRIES[base_class] = own.get(base_class, {})
    return _REGISTRIES[base_class]


def get_registry(base_class: type) -> dict[str, type]:
    """A copy of the registry of ``base_class``: lower-case name -> class.

    Examples
    --------
    >>> import lazynd as mx
    >>> get_registry(mx.init.Initializer)["xavier"].__name__
    'Xavier'
    """
    return dict(_registry_of(base_class))


def get_register_func(base_class: type, nickname: str) -> Callable[..., type]:
    """``register(klass, name=None)``: add a subclass of ``base_class`` under ``name`` (default: its
    class name), lower-cased; it returns the class, so it also decorates.  Replacing a name warns.

    Examples
    --------
    >>> class Shape: pass
    >>> register = get_register_func(Shape, "shape")
    >>> @register
    ... class Square(Shape): pass
    >>> sorted(get_registry(Shape))
    ['square']
    """
    registry = _registry_of(base_class)

    def register(klass: type, name: str | None = None) -> type:
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise ArgumentTypeError(
                f"register: only subclasses of {base_class.__name__} are registered as {nickname!r}, got {klass!r}"
            )
        key = (klass.__name__ if name is None else name).lower()
        if key in registry and registry[key] is not klass:
            warnings.warn(
                f"register: the {nickname} {klass.__module__}.{klass.__name__} replaces "
                f"{registry[key].__module__}.{registry[key].__name__} under the name {key!r}",
                UserWarning,
                stacklevel=2,
            )
        registry[key] = klass
        return klass

    register.__doc__ = f"Register a {nickname} (a subclass of {base_class.__name__}) by name."
    return register


def get_alias_func(base_class: type, nickname: str) -> Callable[..., Callable[[type], type]]:
    """``alias(*names)``: a decorator registering its class under each of ``names``.

    Examples
    --------
    >>> class Shape: pass
    >>> alias = get_alias_func(Shape, "shape")
    >>> @alias("circle", "round")
    ... class Circle(Shape): pass
    >>> sorted(get_registry(Shape))
    ['circle', 'round']
    """
    register = get_register_func(base_class, nickname)

    def alias(*aliases: str) -> Callable[[type], type]:
        def registered(klass: type) -> type:
            for name in aliases:
                register(klass, name)
            return klass

        return registered

    return alias


def get_create_func(base_class: type, nickname: str) -> Callable[..., Any]:
    """``create(name, *args, **kwargs)``: an instance of the class registered as ``name``.

    ``name`` (or the keyword ``nickname``) may also be an instance of ``base_class`` (returned as it
    is), a dict naming the class under ``nickname`` with its arguments, or the JSON text of such a
    dict or of a ``[name, {kwargs}]`` pair.

    Examples
    --------
    >>> class Shape:
    ...     def __init__(self, size=1): self.size = size
    >>> _ = get_register_func(Shape, "shape")(type("Square", (Shape,), {}))
    >>> create = get_create_func(Shape, "shape")
    >>> create("square", size=3).size, create('["Square", {"size": 2}]').size, create({"shape": "square"}).size
    (3, 2, 1)
    """
    registry = _registry_of(base_class)

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            spec, args = args[0], args[1:]
        elif nickname in kwargs:
            spec = kwargs.pop(nickname)
        else:
            raise ArgumentTypeError(f"create: give the {nickname} to create, by name or as the keyword {nickname!r}")
        if isinstance(spec, base_class):
            if args or kwargs:
                raise ArgumentValueError(f"create: the {nickname} is already an instance; it takes no arguments")
            return spec
        if is_config(spec):  # a dict or JSON naming the class under ``nickname``, or a [name, kwargs] pair
            if args or kwargs:
                raise ArgumentValueError(f"create: a {nickname} given as a config takes no other arguments")
            try:
                spec, kwargs = parse_config(spec, nickname, "create")
            except DataError as err:
                raise ArgumentValueError(str(err)) from None
        elif not isinstance(spec, str):
            raise ArgumentTypeError(f"create: the {nickname} must be a name, a dict or JSON text, got {spec!r}")
        klass = registry.get(spec.lower())
        if klass is None:
            raise ArgumentValueError(f"create: no {nickname} is registered as {spec!r}; registered: {sorted(registry)}")
        check_arguments("create", spec, klass, args, kwargs)
        return klass(*args, **kwargs)

    create.__doc__ = f"Create a {nickname} by name, config or instance (see mx.registry.get_create_func)."
    return create
