"""NDArrays stored: ``nd.save`` / ``nd.load`` in MXNet's binary NDArray-list format (see
``lazynd.formats.ndarray_file``), and the function pickle calls to rebuild an NDArray."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..errors import ArgumentTypeError, ContextError, FormatError, OperatorError
from ..log import warn_from_user_code
from ..util import is_np_shape
from .creation import array


def save(fname: str, data: Any) -> None:
    """Save an NDArray, a list of NDArrays or a dict name -> NDArray to ``fname`` (atomically).

    A value that is no NDArray (a NumPy array, a number) or a dict key that is no string is a
    ``TypeError``, as in MXNet 1.9.1; ``data`` of another kind is a ``ValueError``.

    ``fname`` may be a local path or a URL (``s3://``, ``memory://``...) when fsspec is installed.

    Under ``mx.np_shape()`` the file is MXNet's NumPy-shape layout (V3 records), as MXNet 1.9.1 writes
    there: it keeps 0-d arrays, and MXNet loads it under ``np_shape(True)`` only.  Outside it a 0-d
    array is refused (MXNet 1.9.1 writes one there that it cannot read back).  :func:`load` reads both.

    Examples
    --------
    >>> import lazynd as mx, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), 'x.params')
    >>> mx.nd.save(path, {'w': mx.nd.ones((2,))})
    >>> mx.nd.load(path)['w'].asnumpy()
    array([1., 1.], dtype=float32)
    """
    from ..formats import ndarray_file as fmt
    from .ndarray import NDArray

    def record(value: Any, key: str) -> Any:
        if not isinstance(value, NDArray):
            raise ArgumentTypeError(f"save: {key} must be an NDArray, got {type(value).__name__}")
        return fmt.ArrayRecord(value.asnumpy(), value.context.device_typeid, value.context.device_id)

    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        payload: Any = {}
        for k, v in data.items():
            if not isinstance(k, str):
                raise ArgumentTypeError(f"save: dict keys must be strings, got {type(k).__name__}")
            payload[k] = record(v, f"value of {k!r}")
    elif isinstance(data, (list, tuple)):
        payload = [record(v, f"item {i}") for i, v in enumerate(data)]
    else:
        raise OperatorError(f"save: data must be an NDArray, a list or a dict, got {type(data).__name__}")
    fmt.save_arrays(fname, payload, np_shape=is_np_shape())


def load(fname: str, ctx: Context | None = None) -> Any:
    """Load what :func:`save` (or MXNet's ``nd.save``) wrote: a list, or a dict when names were saved.

    Arrays go to ``ctx`` when given, else to the CPU (MXNet files record their
    device; loading onto a GPU that is not there would fail).
    """
    from ..formats import ndarray_file as fmt

    return _as_ndarrays(fmt.load_arrays(fname), str(fname), ctx)


def load_frombuffer(buf: bytes | bytearray | memoryview) -> Any:
    """:func:`load` from the bytes of a saved file (what ``nd.save`` writes) instead of a path.

    Examples
    --------
    >>> import lazynd as mx, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), 'x.params')
    >>> mx.nd.save(path, [mx.nd.ones((2,))])
    >>> mx.nd.load_frombuffer(open(path, 'rb').read())[0].asnumpy()
    array([1., 1.], dtype=float32)
    """
    from ..formats import ndarray_file as fmt

    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise OperatorError(f"load_frombuffer: buf must be bytes, got {type(buf).__name__}")
    return _as_ndarrays(fmt.decode(buf, "<buffer>"), "<buffer>", None)


def _as_ndarrays(loaded: Any, source: str, ctx: Context | None) -> Any:
    """The decoded records as NDArrays on ``ctx`` (default the CPU): a list, or a dict by name."""
    target = ctx if ctx is not None else Context("cpu", 0)

    def convert(rec: Any, key: str) -> Any:
        if rec.array is None:
            raise FormatError(
                f"{source}: {key} is MXNet's empty ('none') array, which has no shape; an NDArray cannot hold it"
            )
        return array(rec.array, ctx=target, dtype=rec.array.dtype)

    if isinstance(loaded, dict):
        return {k: convert(v, f"array {k!r}") for k, v in loaded.items()}
    return [convert(v, f"array {i}") for i, v in enumerate(loaded)]


def unpickle(values: np.ndarray, device_type: str, device_id: int) -> Any:
    """The NDArray a pickle holds (``NDArray.__reduce__`` gives its values and its device).

    An array pickled on a GPU that cannot be used here (no CuPy, no GPU, fewer GPUs) loads on
    ``cpu(0)`` with a warning, as MXNet built without CUDA loads it: its values are all there,
    and no other array can be on that GPU to meet it.
    """
    ctx = Context(device_type, device_id)
    if ctx.device_type == "gpu":
        try:
            return array(values, ctx=ctx, dtype=values.dtype)
        except ContextError as err:
            warn_from_user_code(f"unpickling an NDArray saved on {ctx}: {err}; it is loaded on cpu(0)")
            ctx = Context("cpu", 0)
    return array(values, ctx=ctx, dtype=values.dtype)
