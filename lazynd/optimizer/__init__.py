"""Optimizers (MXNet's API): a registry, per-parameter learning-rate and weight-decay multipliers.

``SGD``, ``Adam``, ``RMSProp``, ``Ftrl`` and ``Signum`` make one fused call per
parameter (``sgd_update``, ``adam_update``, ``ftrl_update``, ...), writing the
weight and its states in place; the others (NAG, AdaGrad, AdaDelta, SGLD,
DCASGD, Adamax, Nadam) are written with NDArray operators; FTML, LAMB, LARS (``layerwise``)
and LBSGD are MXNet 1.x's, and so is ``Test`` (``'test'``), the plain sum MXNet's KVStore tests use.
Given lists, an updater hands them to ``Optimizer.update_multi``, which ``SGD`` runs as ONE
``multi_sgd_update`` / ``multi_sgd_mom_update`` operation for all of them (a subclass that
overrides ``update`` only has that ``update`` called once per parameter).  An :class:`Updater`
applies an optimizer to indexed parameters and keeps their states, which it can
save and restore as pickled bytes.

Examples
--------
>>> import lazynd as mx
>>> opt = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> updater = mx.optimizer.get_updater(opt)
>>> updater(0, g, w)
>>> [round(float(v), 4) for v in w.asnumpy()]
[0.9, 0.9]
"""

from __future__ import annotations

from . import contrib
from .adam_variants import Adamax, Nadam
from .adaptive import AdaDelta, AdaGrad
from .base import Optimizer, create, register
from .layerwise import FTML, LAMB, LARS
from .lbsgd import LBSGD
from .optimizers import DCASGD, NAG, SGD, SGLD, Adam, Ftrl, RMSProp, Signum, ccSGD
from .summing import Test
from .updater import Updater, get_updater

__all__ = [
    "Optimizer",
    "SGD",
    "ccSGD",
    "NAG",
    "Adam",
    "Adamax",
    "Nadam",
    "RMSProp",
    "AdaGrad",
    "AdaDelta",
    "Ftrl",
    "SGLD",
    "DCASGD",
    "Signum",
    "FTML",
    "LAMB",
    "LARS",
    "LBSGD",
    "Test",
    "Updater",
    "contrib",
    "create",
    "get_updater",
    "register",
]
