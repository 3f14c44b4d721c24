"""``mx.util``: the names MXNet 1.x programs import from ``mxnet.util``.

``getenv``/``setenv`` are the ones of :mod:`lazynd.testing_environment` (lazynd reads its settings
from :data:`os.environ`; MXNet's set its C runtime's environment).

Examples
--------
>>> import lazynd as mx
>>> mx.util.setenv("LAZYND_EXAMPLE", "3"); mx.util.getenv("LAZYND_EXAMPLE")
'3'
>>> mx.util.setenv("LAZYND_EXAMPLE", None)
"""

from __future__ import annotations

from .testing_environment import getenv, setenv

__all__ = ["getenv", "setenv"]
