"""Device contexts: where an NDArray lives and where its operations run."""

from __future__ import annotations

import threading
from typing import Any

from .errors import ContextError

_DEVICE_TYPES = {"cpu": 1, "gpu": 2, "cpu_pinned": 3}
_DEVICE_NAMES = {v: k for k, v in _DEVICE_TYPES.items()}
_HOST_TYPES = frozenset(("cpu", "cpu_pinned"))


class _ContextType(type):
    """Gives :class:`Context` MXNet's class attribute ``default_ctx``."""

    @property
    def default_ctx(cls) -> Context:
        """The default context of the calling thread (see :func:`current_context`).

        Assigning ``Context.default_ctx = mx.gpu(0)`` sets the process-wide default that
        applies outside ``with ctx:`` blocks, as MXNet 0.9 programs do; it takes effect in the
        assigning thread even where that thread had a default of its own (:func:`set_thread_default`).
        """
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value: Any) -> None:
        global _DEFAULT
        _DEFAULT = as_context(value, "Context.default_ctx")
        set_thread_default(None)


class Context(metaclass=_ContextType):
    """A device: ``cpu(0)``, ``gpu(1)``...

    Usable as a context manager that sets the default context of the calling
    thread::

        >>> import lazynd as mx
        >>> with mx.cpu(0):
        ...     mx.nd.zeros((2,)).context
        cpu(0)
    """

    __slots__ = ("device_type", "device_id", "_old")
    device_type: str
    device_id: int

    _local: _ThreadContexts  # set below the class: each thread's ``with ctx:`` stack and default
    # MXNet's tables between numeric and named device types
    devtype2str = dict(_DEVICE_NAMES)
    devstr2type = dict(_DEVICE_TYPES)

    def __init__(self, device_type: str | int | Context, device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            self.device_type, self.device_id = device_type.device_type, device_type.device_id
        else:
            if isinstance(device_type, int):
                if device_type not in _DEVICE_NAMES:
                    raise ContextError(f"unknown device type id {device_type}; expected one of {sorted(_DEVICE_NAMES)}")
                device_type = _DEVICE_NAMES[device_type]
            if not isinstance(device_type, str) or device_type not in _DEVICE_TYPES:
                raise ContextError(f"unknown device type {device_type!r}; expected one of {sorted(_DEVICE_TYPES)}")
            try:
                number = int(device_id)
            except (TypeError, ValueError, OverflowError):  # None, 'abc', a list, NaN, inf
                raise ContextError(f"device id must be an integer >= 0, got {device_id!r}") from None
            if number < 0:
                raise ContextError(f"device id must be >= 0, got {device_id}")
            self.device_type = device_type
            self.device_id = number
        self._old: list[Context] = []

    @property
    def device_typeid(self) -> int:
        """MXNet's numeric device type (cpu 1, gpu 2, cpu_pinned 3)."""
        return _DEVICE_TYPES[self.device_type]

    @property
    def is_gpu(self) -> bool:
        return self.device_type == "gpu"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Context) and self.device_type == other.device_type and self.device_id == other.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (Context, (self.device_type, self.device_id))

    def __enter__(self) -> Context:
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().pop()

    def empty_cache(self) -> None:
        """Release cached device memory (GPU pool); a no-op on the CPU."""
        if self.is_gpu:
            from .backend import get_backend

            get_backend(self).empty_cache()


class _ThreadContexts(threading.local):
    """A thread's ``with ctx:`` stack (innermost last) and its own default context.

    The class attributes are what a thread reads before it sets its own, so reading them never
    raises (a ``getattr`` with a default on a plain ``threading.local`` raises and catches
    AttributeError inside: 0.4 us of every call that asks for the current context).
    """

    stack: list[Context] | None = None
    default: Context | None = None


Context._local = _ThreadContexts()


def _stack() -> list[Context]:
    local = Context._local
    stack = local.stack
    if stack is None:
        stack = local.stack = []
    return stack


def share_memory(a: Context, b: Context) -> bool:
    """Whether one operation may read arrays on ``a`` and ``b``: the same device, or host memory on both.

    Every ``cpu(n)`` and ``cpu_pinned(n)`` is this process's own memory (the id is a label, as
    in MXNet 1.x, whose operators take inputs on any of them and check only the device type), so
    a program that splits its batches over ``[mx.cpu(0), mx.cpu(1)]`` may add their gradients;
    arrays on two GPUs, or on a GPU and the host, must be copied first.
    """
    return a == b or (a.device_type in _HOST_TYPES and b.device_type in _HOST_TYPES)


def cpu(device_id: int = 0) -> Context:
    """The CPU context (``device_id`` is kept for MXNet compatibility)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """Page-locked host memory, as in MXNet: copies between it and a GPU are DMA with no host copy.

    Arrays there behave as cpu arrays in every operation.  Without CUDA (no CuPy or no GPU), or
    where page-locked memory cannot be had, they are ordinary host memory (see
    :mod:`lazynd.backend.pinned`).
    """
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """GPU ``device_id``. Using it needs CuPy and a visible NVIDIA GPU.

    Creating the object always works; the first array allocated on it raises a
    :class:`lazynd.ContextError` saying why when no GPU can be used.
    """
    return Context("gpu", device_id)


_DEFAULT = Context("cpu", 0)


def as_context(value: Any, what: str = "ctx") -> Context:
    """A :class:`Context` from a context or its text (``'cpu'``, ``'gpu(1)'``, ``'cpu_pinned(0)'``).

    Raises
    ------
    ContextError
        Naming ``what``, the value given and the forms expected.

    Examples
    --------
    >>> as_context("gpu(1)"), as_context("cpu")
    (gpu(1), cpu(0))
    """
    if isinstance(value, Context):
        return value
    expected = f"expected a Context or one of {sorted(_DEVICE_TYPES)}, optionally with an id such as 'gpu(1)'"
    if not isinstance(value, str):
        raise ContextError(f"{what} is {type(value).__name__} {value!r}; {expected}")
    text = value.strip()
    kind, id_text = text, "0"
    if text.endswith(")") and "(" in text:
        kind, _, id_text = text[:-1].partition("(")
    if kind not in _DEVICE_TYPES or not id_text.strip().isdigit():
        raise ContextError(f"{what} is {value!r}; {expected}")
    return Context(kind, int(id_text))


def current_context() -> Context:
    """The default context of this thread: the innermost ``with ctx:``, else the thread's own default
    (:func:`set_thread_default`), else the process-wide ``Context.default_ctx`` (``cpu(0)``)."""
    local = Context._local
    stack = local.stack
    if stack:
        return stack[-1]
    own = local.default
    return own if own is not None else _DEFAULT


def set_thread_default(ctx: Context | None) -> None:
    """Make ``ctx`` the calling thread's default context outside ``with`` blocks (None: the
    process-wide default again); other threads keep theirs, as MXNet 1.x's thread-local default.

    Examples
    --------
    >>> import lazynd as mx
    >>> set_thread_default(mx.cpu(1)); current_context()
    cpu(1)
    >>> set_thread_default(None); current_context()
    cpu(0)
    """
    Context._local.default = ctx


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """``(free, total)`` bytes of ``gpu(device_id)``'s memory, as MXNet 1.x's ``mx.context.gpu_memory_info``
    (memory CuPy's pool holds counts as used; ``mx.gpu(i).empty_cache()`` returns it to the driver).
    Without that GPU, a :class:`~lazynd.ContextError` names it."""
    from .backend import gpu_memory_info as memory_info

    return memory_info(int(device_id))


def num_gpus() -> int:
    """Number of GPUs CuPy can see (0 without CuPy or without a driver)."""
    from .backend import gpu_count

    return gpu_count()
