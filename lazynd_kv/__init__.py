"""lazynd_kv: KVStores that keep parameters in sync across devices and across machines.

``lazynd_kv.create('local' | 'device' | 'dist_sync' | 'dist_device_sync')``, also
reachable as ``mx.kv.create``.  The ``dist_*`` stores run on MPI (``mpi4py``),
imported only when one is created.
"""

from __future__ import annotations

from . import device, dist, local
from .base import KVKeyError, KVStore, create, register, supported_types

__all__ = ["KVStore", "KVKeyError", "create", "register", "supported_types", "local", "device", "dist"]
