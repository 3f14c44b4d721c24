"""MXNet's faces that lazynd does not have: naming one says what to use instead.

``mx.gluon`` (an attribute), ``from mxnet import gluon`` and ``import mxnet.gluon`` all raise
:class:`~lazynd.errors.UnsupportedError` with the same message.  It is a ``LazyNDError`` and an
``AttributeError``, so ``hasattr(mx, 'gluon')`` answers False.  A key with a dot is a face
inside a package (``contrib.quantization``: ``mx.contrib.quantization``, ``from
mxnet.contrib.quantization import *``); its package's ``__getattr__`` refuses the attribute.  Python turns an
``AttributeError`` met by ``from lazynd import gluon`` into a bare "cannot import name", so
the import of the submodule, which it then attempts, is answered by :class:`_Refuser` with
the message instead.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import Any

from .errors import UnsupportedError

FACES = {
    "gluon": "Gluon (mx.gluon) is not part of lazynd; use mx.mod.Module, mx.sym or mx.nd with mx.autograd",
    "np": "MXNet's NumPy interface (mx.np) is not part of lazynd; use mx.nd",
    "npx": "MXNet's NumPy extensions (mx.npx) are not part of lazynd; use mx.nd",
    "numpy": "MXNet's NumPy interface (mx.numpy) is not part of lazynd; use mx.nd",
    "numpy_extension": "MXNet's NumPy extensions (mx.numpy_extension) are not part of lazynd; use mx.nd",
    # diagnose scripts print find_lib_path(): lazynd is pure Python, there is no libmxnet to find
    "libinfo": "MXNet's native library (mx.libinfo.find_lib_path) is not part of lazynd, which is pure Python; "
    "mx.__version__ and mx.runtime.Features() describe it",
    # the recommenders' demos chart training live in Jupyter (mx.notebook.callback.LiveLearningCurve)
    "notebook": "MXNet's Jupyter charts and pandas logs (mx.notebook) are not part of lazynd; pass a "
    "batch_end_callback or eval_end_callback of your own (or mx.callback.Speedometer) to fit",
    "contrib.quantization": "quantization (mx.contrib.quantization) is not part of lazynd; models run in float32, "
    "float64 or float16",
    # MXNet 1.9's ONNX face (mx.onnx.export_model); contrib.onnx is its 1.x name
    "onnx": "ONNX export and import (mx.onnx) are not part of lazynd; a model saves as MXNet's symbol JSON and "
    ".params files (mx.model.save_checkpoint), which MXNet's own ONNX exporter reads",
    # mx.library.load loads operators compiled against libmxnet's C ABI; lazynd has no such library
    "library": "loading compiled operator libraries (mx.library.load) is not part of lazynd, which has no C "
    "library to extend; write the operator in Python with mx.operator.CustomOp, or mx.rtc for a CUDA kernel",
    "contrib.tensorrt": "TensorRT (mx.contrib.tensorrt) is not part of lazynd; models run on lazynd's own "
    "CPU and CUDA kernels",
    "contrib.onnx": "ONNX export and import (mx.contrib.onnx) are not part of lazynd; a model saves as MXNet's "
    "symbol JSON and .params files (mx.model.save_checkpoint), which MXNet's own ONNX exporter reads",
}


# classes and functions of MXNet's modules that lazynd's modules lack, and why (``face.name``: the
# name inside mx.<face>); each module's ``__getattr__`` refuses them through :func:`missing_name`
NAMES = {
    "io.LibSVMIter": "it yields CSR sparse batches, and lazynd arrays are all dense; load the data with NumPy "
    "into an NDArrayIter",
    # the class of MXNet's C++ iterators (ImageRecordIter, MNISTIter, CSVIter... are made as one)
    "io.MXDataIter": "it is the class of MXNet's C++ iterators; lazynd's iterators are Python classes "
    "deriving from mx.io.DataIter (ImageRecordIter, MNISTIter and CSVIter included)",
    "kv.KVStoreServer": "it is the server process of MXNet's parameter-server stores; lazynd's dist_sync and "
    "dist_device_sync stores run over MPI (mpirun -n N python train.py), every worker holding the parameters, "
    "with no server to start",
    "model.DataParallelExecutorManager": "it is the executor manager behind MXNet 0.x's FeedForward; lazynd's "
    "FeedForward and mx.mod.Module split each batch over their devices themselves (context=[...])",
}


def missing_name(face: str, name: str, module: str) -> AttributeError:
    """The error for ``mx.<face>.<name>``: an :class:`UnsupportedError` (an ``AttributeError`` too) saying
    why when it is one of :data:`NAMES`, else the plain ``AttributeError`` of module ``module``."""
    reason = NAMES.get(f"{face}.{name}")
    if reason is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return UnsupportedError(f"mx.{face}.{name}: not supported: {reason}")


def refusal(name: str) -> UnsupportedError:
    """The error for the missing face ``name`` (a key of :data:`FACES`)."""
    return UnsupportedError(f"mx.{name}: {FACES[name]}")


class _Refuser(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``lazynd.<face>`` for each missing face, and refuses to load it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if _face_of(fullname) not in FACES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        raise refusal(_face_of(spec.name))

    def exec_module(self, module: Any) -> None:  # never reached: create_module refuses
        raise refusal(_face_of(module.__name__))


def _face_of(module_name: str) -> str:
    """``lazynd.contrib.quantization`` -> ``contrib.quantization``; ``""`` for a name outside lazynd."""
    package, dot, face = module_name.partition(".")
    return face if package == "lazynd" and dot else ""


def install() -> None:
    """Put the refusing finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Refuser) for finder in sys.meta_path):
        sys.meta_path.append(_Refuser())
