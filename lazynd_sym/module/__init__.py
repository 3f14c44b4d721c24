"""``mx.mod``: MXNet's Module API -- train a symbol in stages (bind, init_params, init_optimizer, fit).

- :mod:`~lazynd_sym.module.base_module`: :class:`BaseModule`, the loops every module shares
  (``fit``, ``score``, ``predict``, ``iter_predict``);
- :mod:`~lazynd_sym.module.module`: :class:`Module`, one symbol on one or several devices,
  with MXNet checkpoints (optimizer states included);
- :mod:`~lazynd_sym.module.bucketing_module`: :class:`BucketingModule`, one model over
  inputs of varying shape, a module per bucket sharing one set of parameters;
- :mod:`~lazynd_sym.module.sequential_module`: :class:`SequentialModule`, modules chained;
- :mod:`~lazynd_sym.module.python_module`: :class:`PythonModule`, :class:`PythonLossModule`,
  modules written in Python (a loss ending a chain);
- :mod:`~lazynd_sym.module.executor_group`: the data-parallel executors of a Module;
- :mod:`~lazynd_sym.module.shape_groups`: a Module's executor groups, one per set of input shapes;
- :mod:`~lazynd_sym.module.inputs`, :mod:`~lazynd_sym.module.params`: the input shapes of a bind and of a batch;
  the host copies of the parameters and how they are filled;
- :mod:`~lazynd_sym.module.updates`: the parameter updates through a KVStore or an updater, and the
  optimizer states on disk.
"""

from __future__ import annotations

from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import ModuleExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = [
    "BaseModule",
    "BucketingModule",
    "Module",
    "ModuleExecutorGroup",
    "PythonLossModule",
    "PythonModule",
    "SequentialModule",
]
