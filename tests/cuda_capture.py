"""Stream capture, emulated on the CPU CUDA emulator's fake CuPy, for the tests.

On a GPU an executor's pass is captured into a CUDA graph from its second run
(:mod:`lazynd.backend.cuda.graphs`), and a capture refuses what a graph cannot hold: a transfer
between host and device (CuPy raises ``RuntimeError: the current stream is capturing, so D2H
transfers are disallowed``, or ``H2D``) and every call through CuPy's cuBLAS and cuSOLVER
bindings (``NotImplementedError: calling cuBLAS API during stream capture is currently
unsupported``).  The emulator has no capture, so an operator whose kernel reads a device value on
the host or calls ``cupy.matmul`` passes there and is refused only on a GPU.

:func:`emulate_capture` gives the fake CuPy the capture API the graphs module uses and, while a
thread "captures", makes the fake refuse what CuPy refuses then:

- device to host: ``ndarray.get``, ``cupy.asnumpy``, ``int()``/``float()``/``bool()``/``item()``/
  ``tolist()`` of a device array (an element, ``x[0]``, is a 0-d device array, as in CuPy); the
  calls whose result's size depends on the values (``nonzero``, ``unique``, ``bincount``... and a
  boolean mask in an index), for which CuPy reads a count;
- host to device: ``cupy.asarray``/``array``/... of host data (a NumPy array, a list, a scalar),
  ``ndarray.set``, a host index array or list in an index;
- cuBLAS through CuPy: ``cupy.matmul``/``dot``/``tensordot``/``inner``/``vdot``/``einsum``, the
  ``@`` operator and ``ndarray.dot`` (so :mod:`lazynd.backend.cuda.gemm`'s ``cupy.matmul`` fallback
  too).

cuBLAS's C functions through ctypes, which a capture records, are the stand-in library of
:mod:`cublas_stand_in` here (GEMMs computed on the host memory behind the fake's pointers).  The
work launched during an emulated capture runs at once, so the captured run's outputs are real;
the graph it gives is launched once (that run) and refuses a replay, which only a GPU can do.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import numpy as np
import pytest

D2H = "the current stream is capturing, so D2H transfers are disallowed"
H2D = "the current stream is capturing, so H2D transfers are disallowed"
CUBLAS = "calling cuBLAS API during stream capture is currently unsupported"
# the CuPy functions that call cuBLAS
CUBLAS_FUNCTIONS = frozenset({"matmul", "dot", "tensordot", "inner", "vdot", "einsum"})
# the CuPy functions whose result's size depends on the values: CuPy reads a count back to the host
SIZED_BY_VALUES = frozenset({"nonzero", "argwhere", "flatnonzero", "unique", "bincount", "extract", "compress"})
# the CuPy functions that take host data to the device
HOST_TO_DEVICE = frozenset({"asarray", "array", "ascontiguousarray", "asfortranarray", "asanyarray"})

_state = threading.local()


def capturing() -> bool:
    """Whether this thread is inside an emulated capture."""
    return getattr(_state, "capturing", False)


class _Graph:
    """What an emulated capture gives: its work already ran during the capture, so its first launch
    (the captured run's) does nothing; a replay cannot be emulated and says so."""

    def __init__(self) -> None:
        self.launches = 0

    def launch(self, stream: Any = None) -> None:
        self.launches += 1
        if self.launches > 1:
            raise RuntimeError("emulated capture: a graph's replay runs only on a GPU")


class _MemoryPool:
    def malloc(self, size: int) -> None:  # the fake's allocations ignore allocators
        return None


def _begin_capture(stream: Any, mode: Any = None) -> None:
    if capturing():
        raise RuntimeError("emulated capture: this thread already captures")
    _state.capturing = True


def _end_capture(stream: Any) -> _Graph:
    _state.capturing = False
    return _Graph()


def _is_host_data(value: Any, cupy: Any) -> bool:
    if isinstance(value, cupy.ndarray):
        return False
    return isinstance(value, (np.ndarray, np.generic, list, tuple, int, float, complex, bool))


def _key_has_host_arrays(key: Any, cupy: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, list) or (isinstance(k, np.ndarray) and not isinstance(k, cupy.ndarray)) for k in parts)


def _key_has_device_masks(key: Any, cupy: Any) -> bool:
    """A boolean device array in an index: CuPy reads the number of its True values to the host."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, cupy.ndarray) and k.dtype == np.bool_ for k in parts)


def emulate_capture(monkeypatch: pytest.MonkeyPatch, stand_in: Any) -> None:
    """Make the fake CuPy capture as described in the module docstring, with ``stand_in`` (a
    :func:`cublas_stand_in.build_stand_in` library) as cuBLAS's C library, until ``monkeypatch``
    undoes it (the test's end)."""
    import cupy

    from lazynd.backend.cuda import gemm

    if not hasattr(cupy, "_call"):
        pytest.skip("emulates capture on the CUDA emulator's fake CuPy only")
    ndarray = cupy.ndarray

    def refusing(error: type[Exception], message: str, original: Any) -> Any:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            if capturing():
                raise error(message)
            return original(self, *args, **kwargs)

        return method

    for name in ("get", "item", "tolist", "__int__", "__float__", "__bool__", "__index__", "__complex__"):
        monkeypatch.setattr(ndarray, name, refusing(RuntimeError, D2H, getattr(ndarray, name)))
    monkeypatch.setattr(ndarray, "set", refusing(RuntimeError, H2D, ndarray.set))
    monkeypatch.setattr(ndarray, "dot", refusing(NotImplementedError, CUBLAS, ndarray.dot))

    def refuse_host_index(original: Any) -> Any:
        def method(self: Any, key: Any, *rest: Any) -> Any:
            if capturing() and _key_has_host_arrays(key, cupy):
                raise RuntimeError(H2D)
            if capturing() and _key_has_device_masks(key, cupy):
                raise RuntimeError(D2H)
            found = original(self, key, *rest)
            # an element is a 0-d device array in CuPy (the fake's is a NumPy scalar, read freely)
            return np.asarray(found).view(ndarray) if isinstance(found, np.generic) else found

        return method

    monkeypatch.setattr(ndarray, "__getitem__", refuse_host_index(ndarray.__getitem__))
    monkeypatch.setattr(ndarray, "__setitem__", refuse_host_index(ndarray.__setitem__))

    ufunc = ndarray.__array_ufunc__

    def array_ufunc(self: Any, function: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if capturing() and function.__name__ == "matmul":
            raise NotImplementedError(CUBLAS)
        return ufunc(self, function, method, *inputs, **kwargs)

    monkeypatch.setattr(ndarray, "__array_ufunc__", array_ufunc)
    ufunc_call = cupy._Ufunc.__call__  # cupy.matmul is a ufunc in the fake, as NumPy's is

    def checked_ufunc_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if capturing() and self.__name__ in CUBLAS_FUNCTIONS:
            raise NotImplementedError(CUBLAS)
        return ufunc_call(self, *args, **kwargs)

    monkeypatch.setattr(cupy._Ufunc, "__call__", checked_ufunc_call)

    call = cupy._call

    def checked_call(name: str, function: Any, args: tuple, kwargs: dict) -> Any:
        if capturing():
            if name in CUBLAS_FUNCTIONS:
                raise NotImplementedError(CUBLAS)
            if name in SIZED_BY_VALUES or (name == "where" and len(args) + len(kwargs) == 1):
                raise RuntimeError(D2H)
            if name in HOST_TO_DEVICE and args and _is_host_data(args[0], cupy):
                raise RuntimeError(H2D)
        return call(name, function, args, kwargs)

    monkeypatch.setattr(cupy, "_call", checked_call)
    asnumpy = cupy.asnumpy

    def checked_asnumpy(a: Any, *args: Any, **kwargs: Any) -> Any:
        if capturing():
            raise RuntimeError(D2H)
        return asnumpy(a, *args, **kwargs)

    monkeypatch.setattr(cupy, "asnumpy", checked_asnumpy)

    # the capture API lazynd.backend.cuda.graphs uses
    monkeypatch.setattr(cupy.cuda.Stream, "begin_capture", _begin_capture, raising=False)
    monkeypatch.setattr(cupy.cuda.Stream, "end_capture", _end_capture, raising=False)
    monkeypatch.setattr(cupy.cuda, "MemoryPool", _MemoryPool, raising=False)
    monkeypatch.setattr(cupy.cuda, "using_allocator", lambda allocator=None: contextlib.nullcontext(), raising=False)

    # cuBLAS's C functions, as gemm finds them on a GPU
    functions = gemm.LibraryBlas(stand_in)
    monkeypatch.setattr(gemm, "bindings", lambda: gemm.Bindings(functions, lambda: 1, lambda: 7))
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
