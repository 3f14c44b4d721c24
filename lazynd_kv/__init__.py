"""lazynd_kv: KVStores that keep parameters in sync across devices and across machines.

``lazynd_kv.create('local' | 'device' | 'dist_sync' | 'dist_device_sync')``, also
reachable as ``mx.kv.create``; a user's own store derives from :class:`KVStoreBase`
and registers with ``@KVStoreBase.register``, as MXNet's ``'teststore'`` does.  The ``dist_*`` stores run on MPI (``mpi4py``),
imported only when one is created.
"""

from __future__ import annotations

from lazynd.missing_faces import missing_name

from . import device, dist, local
from .base import KVKeyError, KVStore, MixedKeyTypesError, create, register, supported_types
from .registry import KVStoreBase
from .teststore import TestStore

__all__ = [
    "KVStore",
    "KVStoreBase",
    "TestStore",
    "KVKeyError",
    "MixedKeyTypesError",
    "create",
    "register",
    "supported_types",
    "local",
    "device",
    "dist",
]


def __getattr__(name: str) -> object:
    raise missing_name("kv", name, __name__)
