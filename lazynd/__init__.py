"""lazynd: lazy NDArrays on a dependency engine, on NumPy (CPU) and CuPy (GPU).

``import lazynd as mx`` gives MXNet's familiar faces: ``mx.nd``, ``mx.sym``,
``mx.kv``, ``mx.cpu()``, ``mx.gpu()``, ``mx.io``, ``mx.image``, ``mx.recordio``,
``mx.profiler``, ``mx.optimizer``, ``mx.init``, ``mx.metric``, ``mx.model``,
``mx.mod``, ``mx.viz``, ``mx.mon``, ``mx.autograd``.  The symbolic and kvstore faces are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import environment as _environment
from . import face_modules as _face_modules
from . import missing_faces as _missing_faces
from . import ndarray, random
from . import ndarray as nd
from . import random as rnd  # MXNet's short name, as in mx.rnd.uniform
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .engine import waitall
from .errors import (
    ContextError,
    DataError,
    DeviceMemoryError,
    EngineError,
    FormatError,
    LazyNDError,
    MissingFileError,
    MXNetError,
    OperatorError,
    ShapeError,
    UnsupportedError,
)
from .ndarray import NDArray

_missing_faces.install()  # import lazynd.gluon says what to use instead

__version__ = "0.1.0"

__all__ = [
    "Context",
    "cpu",
    "cpu_pinned",
    "gpu",
    "current_context",
    "num_gpus",
    "nd",
    "ndarray",
    "NDArray",
    "random",
    "rnd",
    "waitall",
    "LazyNDError",
    "ContextError",
    "DeviceMemoryError",
    "EngineError",
    "OperatorError",
    "ShapeError",
    "UnsupportedError",
    "FormatError",
    "DataError",
    "MissingFileError",
    "MXNetError",
]

# name -> module imported on first access (keeps `import lazynd` light and free of lazynd_sym/_kv)
_LAZY = {
    "sym": "lazynd_sym",
    "symbol": "lazynd_sym",
    "kv": "lazynd_kv",
    "kvstore": "lazynd_kv",
    "model": "lazynd_sym.model",
    "mod": "lazynd_sym.module",
    "module": "lazynd_sym.module",
    "rnn": "lazynd_sym.rnn",
    "viz": "lazynd_sym.visualization",
    "visualization": "lazynd_sym.visualization",
    "io": "lazynd.io",
    "image": "lazynd.image",
    "img": "lazynd.image",
    "recordio": "lazynd.recordio",
    "profiler": "lazynd.profiler",
    "optimizer": "lazynd.optimizer",
    "lr_scheduler": "lazynd.lr_scheduler",
    "misc": "lazynd.misc",
    "init": "lazynd.initializer",
    "initializer": "lazynd.initializer",
    "metric": "lazynd.metric",
    "callback": "lazynd.callback",
    "log": "lazynd.log",
    "mon": "lazynd.monitor",
    "monitor": "lazynd.monitor",
    "datasets": "lazynd.datasets",
    "test_utils": "lazynd.test_utils",
    "testing": "lazynd.testing",
    "engine": "lazynd.engine",
    "name": "lazynd_sym.name",
    "attribute": "lazynd_sym.attribute",
    "operator": "lazynd.operator",
    "autograd": "lazynd.autograd",
    "contrib": "lazynd.contrib",
    "base": "lazynd.base",
    "util": "lazynd.util",
    "registry": "lazynd.registry",
    "executor": "lazynd_sym.executor",
    "executor_manager": "lazynd_sym.executor_manager",
    "symbol_doc": "lazynd_sym.symbol_doc",
}
# MXNet's operator modules that are namespaces here: module name -> (module, attribute) it stands for
_NAMESPACE_MODULES = {
    "lazynd.contrib.ndarray": ("lazynd.ndarray", "contrib"),
    "lazynd.contrib.symbol": ("lazynd_sym", "contrib"),
    **{f"lazynd.ndarray.{name}": ("lazynd.ndarray", name) for name in ("contrib", "image", "linalg", "op", "random")},
    **{f"lazynd_sym.{name}": ("lazynd_sym", name) for name in ("contrib", "image", "linalg", "op")},
}
# from lazynd.module import Module, import lazynd.contrib.ndarray: as programs import them from mxnet
_face_modules.install(_LAZY, _NAMESPACE_MODULES)
# name -> (module, attribute): classes MXNet exposes at the top level
_LAZY_ATTRS = {
    "AttrScope": ("lazynd_sym.attribute", "AttrScope"),
    "rtc": ("lazynd.cuda_rtc", "Rtc"),
    "np_shape": ("lazynd.util", "np_shape"),
    "use_np_shape": ("lazynd.util", "use_np_shape"),
    "is_np_shape": ("lazynd.util", "is_np_shape"),
    "set_np_shape": ("lazynd.util", "set_np_shape"),
    "is_np_array": ("lazynd.util", "is_np_array"),
}
# MXNet's NumPy-array switches that MXNet also exports at the top level: refused as in mx.util
_NP_ARRAY_TOP_LEVEL = ("use_np", "use_np_array", "np_array")


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        value = importlib.import_module(target)
    elif name in _LAZY_ATTRS:
        module_name, attribute = _LAZY_ATTRS[name]
        value = getattr(importlib.import_module(module_name), attribute)
    elif name in _missing_faces.FACES:
        raise _missing_faces.refusal(name)
    elif name in _NP_ARRAY_TOP_LEVEL:
        from .util import np_array_refusal

        raise np_array_refusal(name)
    else:
        raise AttributeError(f"module 'lazynd' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_ATTRS))


# MXNet starts its profiler at start-up when MXNET_PROFILER_AUTOSTART=1; so does lazynd at import
_environment.start_profiler_if_asked()
