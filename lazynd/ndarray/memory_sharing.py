"""NDArrays that share memory with other libraries: ``from_numpy(zero_copy=True)`` and DLPack
(``from_dlpack``, ``to_dlpack_for_read``/``_for_write``, the ``__dlpack__`` protocol)."""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

import numpy as np

from ..backend import get_backend
from ..context import Context
from ..engine.var import Var
from ..errors import ArgumentTypeError, ArgumentValueError, OperatorError
from . import creation, dispatch  # (creation, which hands this module's functions on, is read at call time)

__all__ = ["dlpack_capsule", "from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write"]


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> Any:
    """An NDArray from a NumPy array, sharing its memory unless ``zero_copy=False`` (a copy).

    As MXNet's: sharing is the default and takes a C-contiguous array of one of lazynd's dtypes;
    a write into the NDArray shows in ``ndarray`` once done.  MXNet also marks ``ndarray`` read-only
    (a write through NumPy would pass the engine by); lazynd leaves its flags alone, and a read or
    write through NumPy is the program's to order (``wait_to_read`` first).

    Examples
    --------
    >>> import numpy as np
    >>> host = np.zeros(3, np.float32)
    >>> x = from_numpy(host)
    >>> x += 1
    >>> x.wait_to_read()  # (the engine writes it; NumPy does not wait)
    >>> host.tolist()
    [1.0, 1.0, 1.0]
    """
    if not isinstance(ndarray, np.ndarray):
        raise ArgumentTypeError(f"from_numpy: expected a NumPy array, got {type(ndarray).__name__}")
    if not zero_copy or not ndarray.flags["WRITEABLE"]:  # (operators write into what they share)
        return creation.array(ndarray, dtype=ndarray.dtype)
    # an OperatorError for a dtype lazynd lacks (int16, complex64), as MXNet refuses it
    creation.as_dtype(ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ArgumentValueError(
            f"from_numpy: zero_copy takes a C-contiguous array, got strides {ndarray.strides} for shape "
            f"{ndarray.shape} (pass zero_copy=False, or np.ascontiguousarray)"
        )
    return dispatch.NDArray(ndarray, Var(holds_value=True))  # on cpu(0), the shared context of host arrays


class _DLPackCapsule:
    """A bare DLPack capsule (what ``to_dlpack_for_read``/``_for_write`` and MXNet hand out) offered
    through the ``__dlpack__``/``__dlpack_device__`` protocol that NumPy's and CuPy's ``from_dlpack`` take."""

    _NAME = b"dltensor"  # an unconsumed capsule's name; a consumer renames it 'used_dltensor'
    _is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_IsValid", ctypes.pythonapi)
    )
    _get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )

    def __init__(self, capsule: Any) -> None:
        if not self.is_unconsumed(capsule):
            raise OperatorError(
                "from_dlpack: the DLPack capsule was already imported (a capsule can be consumed only once); "
                "take a new one with to_dlpack_for_read() or to_dlpack_for_write()"
            )
        self._capsule = capsule
        self.address = self.managed_address(capsule)
        self.key = self.export_key(capsule)
        # DLManagedTensor starts with DLTensor {void *data; DLDevice {int32 device_type, device_id}; ...}
        device = (ctypes.c_int32 * 2).from_address(self.address + ctypes.sizeof(ctypes.c_void_p))
        self._device = (int(device[0]), int(device[1]))

    @classmethod
    def is_unconsumed(cls, capsule: Any) -> bool:
        """Whether ``capsule`` is an unversioned DLPack capsule that nothing has imported yet."""
        return bool(cls._is_valid(capsule, cls._NAME))

    @classmethod
    def managed_address(cls, capsule: Any) -> int:
        """The address of an unconsumed capsule's DLManagedTensor."""
        return int(cls._get_pointer(capsule, cls._NAME))

    @classmethod
    def export_key(cls, capsule: Any) -> tuple[int, int]:
        """An unconsumed capsule's DLManagedTensor address and the address of the memory it points at
        (DLTensor's first field): the pair that tells one capsule from any other alive with it."""
        address = cls.managed_address(capsule)
        return address, int(ctypes.c_void_p.from_address(address).value or 0)

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device

    def host_array(self) -> np.ndarray:
        """The capsule's host memory as a writable NumPy array (an MXNet array is always writable; NumPy
        marks what it imports from an unversioned capsule read-only, as such a capsule carries no flags)."""
        return np.asarray(_WritableHostMemory(np.from_dlpack(self)))


class _WritableHostMemory:
    """The memory of a read-only import, offered writable through NumPy's array interface; the array
    made from it keeps this object, and so the import, the capsule and the producer's memory, alive."""

    def __init__(self, imported: np.ndarray) -> None:
        self.imported = imported
        address = imported.__array_interface__["data"][0]
        self.__array_interface__ = dict(imported.__array_interface__, data=(address, False))


# The var of each array whose capsule to_dlpack_for_read/_for_write or __dlpack__ handed out, by
# the capsule's DLManagedTensor: an import of that capsule shares the var, so the engine orders the
# two arrays' reads and writes of the one memory (a GPU array's write through the import, then the
# source's copy to the host on another stream).  Weak: an entry goes with its array; an address
# reused by a foreign capsule over the same memory while the entry lives can only add an ordering,
# never lose one (the key holds the memory's address too).
_exported_vars: weakref.WeakValueDictionary[tuple[int, int], Var] = weakref.WeakValueDictionary()


def _exported(data: Any, **protocol: Any) -> Any:
    """A capsule of ``data``'s memory (``protocol``: the keywords of ``__dlpack__``), noted with its
    var for :func:`from_dlpack`.  A versioned capsule (``max_version``) is for another consumer:
    from_dlpack takes only unversioned ones, so it is not noted."""
    capsule = data._data.__dlpack__(**protocol)
    if _DLPackCapsule.is_unconsumed(capsule):
        _exported_vars[_DLPackCapsule.export_key(capsule)] = data._var
    return capsule


def from_dlpack(dlpack: Any) -> Any:
    """Zero-copy import of a DLPack capsule or of a DLPack-capable array (NumPy, CuPy, PyTorch...).

    The import of one of lazynd's own arrays (a capsule that ``to_dlpack_for_read``/``_for_write``
    or ``__dlpack__`` handed out, or the array itself) shares that array's dependencies: the engine
    orders a write through either before the other's later reads.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.arange(3)
    >>> mx.nd.from_dlpack(x.to_dlpack_for_read()).asnumpy()
    array([0., 1., 2.], dtype=float32)
    """
    source = dlpack
    var = None  # the source array's var when the capsule is one of ours
    if isinstance(source, dispatch.NDArray):  # one of ours through the protocol: the same memory, the same var
        return source.detach()
    if type(source).__name__ == "PyCapsule":
        source = _DLPackCapsule(source)
        var = _exported_vars.pop(source.key, None)
    elif not hasattr(source, "__dlpack__"):
        raise OperatorError(
            f"from_dlpack: expected a DLPack capsule or an object with __dlpack__, got {type(source).__name__}"
        )
    device_type, device_id = source.__dlpack_device__() if hasattr(source, "__dlpack_device__") else (1, 0)
    if int(device_type) == 1:
        data = source.host_array() if isinstance(source, _DLPackCapsule) else np.from_dlpack(source)
        return dispatch.NDArray(data, Var(holds_value=True) if var is None else var, Context("cpu", 0))
    if int(device_type) == 2:
        ctx = Context("gpu", int(device_id))
        backend: Any = get_backend(ctx)  # the CUDA backend
        # imported with our compute stream current: the producer (PyTorch, CuPy...) orders that
        # stream after its own pending work, and the event makes our other streams wait too
        data, event = backend.import_external(lambda: backend.xp.from_dlpack(source))
        if var is None:
            var = Var(holds_value=True)
            var.event = event
        return dispatch.NDArray(data, var, ctx)
    raise OperatorError(f"from_dlpack: unsupported DLPack device type {device_type}")


def to_dlpack_for_read(data: Any) -> Any:
    """A DLPack capsule of ``data`` after its pending writes are done."""
    data.wait_to_read()
    return _exported(data)


def to_dlpack_for_write(data: Any) -> Any:
    """A DLPack capsule of ``data`` after all its pending reads and writes are done.

    It counts as a write of ``data`` (``Var.note_writes``): autograd then knows that arrays it
    recorded may have been changed through the capsule.
    """
    data.wait_to_write()
    Var.note_writes([data._var])
    return _exported(data)


def dlpack_capsule(arr: Any, stream: Any, kwargs: dict[str, Any]) -> Any:
    """``arr.__dlpack__(stream, **kwargs)``: a capsule of the values for a consumer that may write them;
    ``from_dlpack`` of it shares ``arr``'s var, as of a ``to_dlpack_for_write`` capsule.

    The consumer's ``stream`` (a GPU array's) is passed on so that the producer orders it after the
    array's pending work; the wait for every pending read and write comes first, as for
    :func:`to_dlpack_for_write`.
    """
    arr.wait_to_write()
    if stream is not None and arr._ctx.device_type == "gpu":
        return _exported(arr, stream=stream, **kwargs)
    return _exported(arr, **kwargs)
