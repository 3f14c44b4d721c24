"""Autograd's flags, per thread: is this thread recording, is it in training mode; and their scopes.

Each thread has its own flags (recording in one thread records nothing of another).  While
any thread has a flag set, imperative calls go through the recorder
(:mod:`.recording`, installed as :data:`lazynd.ndarray.dispatch.recorder`); when none has,
it is removed again, so a program that never uses autograd pays one global read a call.
A thread that ends with a flag set (``set_training(True)`` in a worker thread, never undone)
no longer counts: its flags end with it, as MXNet's thread-local ones do.
"""

from __future__ import annotations

import threading
from types import ModuleType, TracebackType

from ..arguments import flag
from ..ndarray import dispatch


class _ThreadFlags(threading.local):
    """This thread's flags (the class attributes are every new thread's defaults)."""

    recording = False
    training = False
    counted: _Counted | None = None  # while a flag is set: this thread's place in the count


flags = _ThreadFlags()
_lock = threading.RLock()  # reentrant: a _Counted may be dropped (its __del__) while this thread holds it
_threads_with_flags = 0  # threads with a flag set: the recorder is installed while there is one


def _count_thread(change: int) -> None:
    global _threads_with_flags
    with _lock:
        _threads_with_flags += change
        dispatch.recorder = _recorder() if _threads_with_flags else None


class _Counted:
    """One thread counted among those with a flag set, for as long as this object lives: it is
    dropped when the thread's flags are cleared, or with the thread's other locals when the
    thread ends (a thread that ends with a flag set would otherwise keep every other thread's
    calls going through the recorder: 2.3 times slower each)."""

    __slots__ = ()

    def __init__(self) -> None:
        _count_thread(1)

    def __del__(self) -> None:
        _count_thread(-1)


def set_flags(recording: bool, training: bool) -> tuple[bool, bool]:
    """Set this thread's flags; return the previous ones."""
    before = (flags.recording, flags.training)
    recording, training = bool(recording), bool(training)
    flags.recording, flags.training = recording, training
    was_set, is_set = before[0] or before[1], recording or training
    if was_set != is_set:
        flags.counted = _Counted() if is_set else None
    return before


def _recorder() -> ModuleType:
    """:mod:`.recording` (imported on first use: it imports this module)."""
    global _recording_module
    if _recording_module is None:
        from . import recording

        _recording_module = recording
    return _recording_module


_recording_module: ModuleType | None = None


def is_recording() -> bool:
    """Whether this thread records operations for autograd.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.autograd.is_recording()
    False
    >>> with mx.autograd.record():
    ...     mx.autograd.is_recording()
    True
    """
    return flags.recording


def is_training() -> bool:
    """Whether operators with training behaviour (Dropout, BatchNorm) run in training mode in this thread.

    Examples
    --------
    >>> import lazynd as mx
    >>> with mx.autograd.record():
    ...     mx.autograd.is_training()
    True
    >>> with mx.autograd.record(train_mode=False):
    ...     mx.autograd.is_training()
    False
    """
    return flags.training


def set_recording(is_recording: bool) -> bool:
    """Turn recording on or off in this thread; return the previous setting (prefer :func:`record`)."""
    return set_flags(flag("autograd.set_recording", "is_recording", is_recording), flags.training)[0]


def set_training(train_mode: bool) -> bool:
    """Turn training mode on or off in this thread; return the previous setting (prefer :func:`train_mode`)."""
    return set_flags(flags.recording, flag("autograd.set_training", "train_mode", train_mode))[1]


class _Scope:
    """A ``with`` block that sets this thread's flags on entry and restores them on exit
    (None leaves a flag as it is)."""

    def __init__(self, recording: bool | None, training: bool | None) -> None:
        self._recording = recording
        self._training = training
        # per thread (one scope object may be entered by several threads at once), a stack (and
        # again inside itself): the flags to restore
        self._before: dict[int, list[tuple[bool, bool]]] = {}

    def __enter__(self) -> _Scope:
        recording = flags.recording if self._recording is None else self._recording
        training = flags.training if self._training is None else self._training
        self._before.setdefault(threading.get_ident(), []).append(set_flags(recording, training))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        thread = threading.get_ident()
        stack = self._before[thread]
        set_flags(*stack.pop())
        if not stack:
            del self._before[thread]


def record(train_mode: bool = True) -> _Scope:
    """A ``with`` block whose operations are recorded for :func:`backward` (training mode by default).

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.array([1.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x * 3).sum()
    >>> y.backward()
    >>> x.grad.asnumpy()
    array([3., 3.], dtype=float32)
    """
    return _Scope(True, flag("autograd.record", "train_mode", train_mode))


def pause(train_mode: bool = False) -> _Scope:
    """A ``with`` block inside :func:`record` whose operations are not recorded (prediction mode by default).

    Examples
    --------
    >>> import lazynd as mx
    >>> with mx.autograd.record():
    ...     with mx.autograd.pause():
    ...         mx.autograd.is_recording(), mx.autograd.is_training()
    (False, False)
    """
    return _Scope(False, flag("autograd.pause", "train_mode", train_mode))


def train_mode() -> _Scope:
    """A ``with`` block in training mode (Dropout drops, BatchNorm uses batch statistics); recording unchanged.

    Examples
    --------
    >>> import lazynd as mx
    >>> with mx.autograd.train_mode():
    ...     mx.autograd.is_training(), mx.autograd.is_recording()
    (True, False)
    """
    return _Scope(None, True)


def predict_mode() -> _Scope:
    """A ``with`` block in prediction mode (e.g. inside :func:`record`); recording unchanged.

    Examples
    --------
    >>> import lazynd as mx
    >>> with mx.autograd.record():
    ...     with mx.autograd.predict_mode():
    ...         mx.autograd.is_training(), mx.autograd.is_recording()
    (False, True)
    """
    return _Scope(None, False)
