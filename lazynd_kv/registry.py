"""Which stores ``create(name)`` can build: one registry, and MXNet 1.x's base class for stores.

lazynd's own stores register under one or more names with :func:`register`
(``@register('local', 'local_update_cpu')``) and are built as ``cls(name)``.  A store
written by a user derives from :class:`KVStoreBase` and registers with MXNet's
``@KVStoreBase.register``, under its lower-cased class name; ``create`` builds it as
``cls()``.  Both land in the same table, so ``create`` and :func:`supported_types`
see every store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from lazynd.errors import ArgumentTypeError, LazyNDError
from lazynd.log import warn_from_user_code

__all__ = ["KVStoreBase", "create", "register", "supported_types"]

_Store = TypeVar("_Store", bound=type)

# name -> (the class, how create builds it)
_STORES: dict[str, tuple[type, Callable[[], Any]]] = {}


class KVStoreBase:
    """MXNet 1.x's interface of a key-value store for data-parallel training.

    Subclass it and register with ``@KVStoreBase.register`` to make a store that
    ``mx.kv.create('<classname>')``, ``Module.fit(kvstore=...)`` and ``FeedForward.fit``
    accept.  A store that can run the optimizer (``is_capable(KVStoreBase.OPTIMIZER)``)
    gets ``set_optimizer``, then each parameter's ``broadcast`` and each batch's
    ``pushpull(key, grads, out=weights)``; one that cannot also needs ``init(key, value)``,
    and gets ``pushpull(key, grads)`` to sum the gradients in place.  Every method here
    raises ``NotImplementedError`` until a subclass defines it, as in MXNet.

    Examples
    --------
    >>> import lazynd as mx
    >>> @mx.kv.KVStoreBase.register
    ... class EchoStore(mx.kv.KVStoreBase):
    ...     pass
    >>> type(mx.kv.create('EchoStore')).__name__
    'EchoStore'
    """

    OPTIMIZER = "optimizer"  # the capability of running the optimizer on the store (set_optimizer)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Give ``key`` the value ``value`` (rank 0's) and write it into ``out`` (an NDArray or a list)."""
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum ``value`` (an NDArray or a list) for ``key`` and write the result into ``out`` (``value`` when None)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on the store: a pushed gradient then updates the stored weight."""
        raise NotImplementedError()

    def is_capable(self, capability: str) -> bool:
        """Whether the store can do ``capability`` (such as :attr:`OPTIMIZER`)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer's states (and the optimizer with ``dump_optimizer``) to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        """Restore the optimizer's states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError()

    @property
    def type(self) -> str:
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        """This worker's rank, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        """How many workers share the store."""
        raise NotImplementedError()

    @staticmethod
    def register(klass: _Store) -> _Store:
        """Class decorator: make ``create(name)`` build ``klass()`` for its lower-cased class name.

        Registering a second class under a name warns (MXNet's warning) and replaces the first.
        """
        if not isinstance(klass, type):
            raise ArgumentTypeError(f"KVStoreBase.register: expected a class, got {type(klass).__name__}")
        name = klass.__name__.lower()
        if name in _STORES:
            old = _STORES[name][0]
            warn_from_user_code(
                f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is overriding "
                f"existing kvstore {old.__module__}.{old.__name__}"
            )
        _STORES[name] = (klass, klass)
        return klass


class OneWorker:
    """The rank and worker count of a store that one process runs alone (the local stores, MXNet's
    test store): a base listed before :class:`KVStoreBase`, whose properties raise."""

    @property
    def rank(self) -> int:
        """0: the only worker."""
        return 0

    @property
    def num_workers(self) -> int:
        """1."""
        return 1


def register(*names: str) -> Callable[[_Store], _Store]:
    """Class decorator for lazynd's stores: make ``create(name)`` build ``cls(name)`` for each of ``names``."""

    def deco(cls: _Store) -> _Store:
        for name in names:
            _STORES[name] = (cls, functools.partial(cls, name))
        return cls

    return deco


def supported_types() -> list[str]:
    """The names :func:`create` accepts."""
    return sorted(_STORES)


def create(name: str = "local") -> Any:
    """Create a KVStore of type ``name`` (any case, as MXNet lower-cases it).

    Parameters
    ----------
    name : str
        'local' (aggregate and update on the CPU), 'device' (on the GPUs holding the
        values), 'dist_sync' (across MPI processes) or 'dist_device_sync'.  MXNet 0.9's
        'local_update_cpu' and 'local_allreduce_cpu' make a 'local' store,
        'local_allreduce_device' a 'device' one, as does MXNet 1.x's 'nccl' (the
        'device' store sums values on several GPUs with NCCL).  A store registered
        with ``@KVStoreBase.register`` is found by its lower-cased class name.  A
        store object is handed back as it is.

    Examples
    --------
    >>> import lazynd_kv
    >>> kv = lazynd_kv.create('local')
    >>> kv.type, kv.rank, kv.num_workers
    ('local', 0, 1)
    """
    if isinstance(name, KVStoreBase):
        return name
    if not isinstance(name, str):
        raise ArgumentTypeError(f"KVStore create: name must be a string such as 'local', got {type(name).__name__}")
    entry = _STORES.get(name.lower())
    if entry is None:
        supported = f"supported types: {', '.join(supported_types())}"
        if name.lower() in _MXNET_ONLY:
            raise LazyNDError(
                f"KVStore type {name!r} is MXNet's {_MXNET_ONLY[name.lower()]}, which lazynd does not have; "
                f"{supported} (distributed training: 'dist_sync', over MPI)"
            )
        raise LazyNDError(f"unknown KVStore type {name!r}; {supported}")
    return entry[1]()


# MXNet 1.9.1's store types that lazynd does not have, and what they are
_MXNET_ONLY = {
    "dist_async": "asynchronous parameter-server store",
    "dist_device_async": "asynchronous parameter-server store",
    "dist": "parameter-server store",
    "horovod": "Horovod store",
    "byteps": "BytePS store",
    "p3": "P3 parameter-server store",
}
