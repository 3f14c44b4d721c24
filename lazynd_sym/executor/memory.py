"""Host memory running out while an executor is bound: NumPy's bare ``MemoryError`` named."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lazynd.context import Context
from lazynd.errors import DeviceMemoryError


@contextlib.contextmanager
def out_of_memory_named(caller: str, ctx: Context) -> Iterator[None]:
    """Inside, an allocation that fails with a bare ``MemoryError`` (NumPy's, for arrays or planned
    storage too large for the host) raises a :class:`DeviceMemoryError` naming ``caller`` and ``ctx``.

    Examples
    --------
    >>> import lazynd as mx
    >>> with out_of_memory_named("bind", mx.cpu()):
    ...     raise MemoryError("Unable to allocate 4.00 TiB")
    Traceback (most recent call last):
    lazynd.errors.DeviceMemoryError: bind: out of memory on cpu(0): Unable to allocate 4.00 TiB
    """
    try:
        yield
    except DeviceMemoryError as error:  # the backend's, naming the device and the bytes: add the caller
        raise DeviceMemoryError(f"{caller}: {error}", str(ctx), error.nbytes) from error
    except MemoryError as error:
        raise DeviceMemoryError(f"{caller}: out of memory on {ctx}: {error}", str(ctx)) from error
