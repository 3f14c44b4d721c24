"""Interrupts: a Ctrl-C that lands in an operation the user's own thread runs.

The engine runs operations on the user's threads too: the pushing thread runs a cheap one at
push, and a waiting thread runs what its wait needs (:mod:`.policy`).  That is where Python
raises the ``KeyboardInterrupt`` of a Ctrl-C (signals go to the main thread), or where a
Custom operator's ``sys.exit()`` raises ``SystemExit``.  Such an exception - a
``BaseException`` that is not an ``Exception`` - is not the operation's failure to hold for a
later wait: the user's thread must see it at once, as it would without the engine.  But it
must not cut the engine's bookkeeping short either (the vars the operation claimed would
never be released, and every later wait on them would hang).

So the operation is recorded as failed like any other (its outputs hold no value: a read of
one raises the :class:`~lazynd.errors.EngineError` that names it), :func:`note` keeps the
interrupt for the thread, the engine completes the operation and a wait stops running further
ones (:func:`pending`), and :func:`raise_pending` then raises the interrupt itself
where the engine hands control back to the user (the push, the wait).  It counts as reported:
a later ``waitall`` does not raise it again.  A worker thread has no user to hand it to:
:func:`drop` forgets it there, and the failure reaches a wait as any operation's does.
"""

from __future__ import annotations

import _thread
import os
import signal
import site
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Engine

# per thread: (engine, the interrupt, the EngineError recorded on the operation's outputs)
_local = threading.local()
# interrupts noted and not yet raised or dropped, all threads together: read at every push that
# runs its operation at once, which looks at its own thread's only when this is not 0
noted = 0


def note(engine: Engine, interrupt: BaseException, recorded: BaseException) -> None:
    """Keep ``interrupt``, raised by an operation this thread ran, until :func:`raise_pending`
    (the first one, when several operations are interrupted before it)."""
    global noted
    if getattr(_local, "pending", None) is None:
        _local.pending = (engine, interrupt, recorded)
        noted += 1


def pending() -> bool:
    """Whether an interrupt waits to be raised on this thread (run no further operation)."""
    return bool(noted) and getattr(_local, "pending", None) is not None


def raise_pending() -> None:
    """Raise the interrupt this thread's operation raised, if any, as reported (see above)."""
    global noted
    kept = getattr(_local, "pending", None)
    if kept is None:
        return
    _local.pending = None
    noted -= 1
    engine, interrupt, recorded = kept
    engine.forget_unreported(recorded)
    raise interrupt


def drop() -> None:
    """Forget this thread's interrupt (a worker's: its failure stays for a wait to report)."""
    global noted
    if noted and getattr(_local, "pending", None) is not None:
        _local.pending = None
        noted -= 1


# -- a Ctrl-C in the engine's own bookkeeping -------------------------------------------------------
# Python runs the SIGINT handler on the main thread between two bytecodes, wherever it is.  Inside
# the engine's bookkeeping (a var claimed but not queued, the engine's lock taken and not yet
# released) the KeyboardInterrupt would leave the engine half way: the next push or wait, from any
# thread, then hangs on the lock or on a var nobody releases.  So while the default handler is in
# place, lazynd's handler looks at where the main thread is.  Sleeping in a wait, or running the
# program's own code in an operation (a CustomOp's; the operation then fails and the interrupt is
# raised as above), it raises at once.  In bookkeeping, or in a built-in operator's kernel (see
# _bookkeeping), it lets it finish: the interrupt is raised when the outermost function
# of that bookkeeping returns (a trace on that one frame), or, when the thread has gone to sleep in
# a wait meanwhile, by the Ctrl-C delivered again a moment later.  Nothing is added to the pushes:
# the cost is one look at the stack per Ctrl-C.

# a deferred Ctrl-C is delivered again after this long, and again until it is raised
REDELIVER_S = 0.002
_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_library_dirs: tuple[str, ...] | None = None  # see _is_program_code (found at the first Ctrl-C)
_interruptible: set[CodeType] = set()  # engine functions that sleep with nothing half done
_operation_runners: set[CodeType] = set()  # engine functions that call an operation's code
_deferred = False  # a Ctrl-C waits for the bookkeeping to end
_redelivered = False  # the SIGINT being handled is the timer's, not the user's
# the handler asks the redelivery thread through this queue: SimpleQueue.put is safe in a signal
# handler (a thread started there, or a lock taken there, can deadlock with the interrupted code)
_redelivery_requests: SimpleQueue[None] = SimpleQueue()


def _is_program_code(filename: str) -> bool:
    """Whether ``filename`` is the program's own code (a CustomOp's ``forward``): not lazynd's, not
    the standard library's or an installed package's (NumPy's Python functions a kernel calls)."""
    if filename.startswith("<frozen "):
        return False
    global _library_dirs
    if _library_dirs is None:
        paths = sysconfig.get_paths()
        paths["usersite"] = site.getusersitepackages() if site.ENABLE_USER_SITE else paths["purelib"]
        lazynd_root = os.path.dirname(os.path.dirname(_ENGINE_DIR.rstrip(os.sep)))
        _library_dirs = tuple(
            {os.path.abspath(paths[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib", "usersite")}
            | {os.path.join(lazynd_root, package) + os.sep for package in ("lazynd", "lazynd_sym", "lazynd_kv")}
        )
    return not os.path.abspath(filename).startswith(_library_dirs)


def _bookkeeping(frame: FrameType | None) -> FrameType | None:
    """The outermost frame of the engine bookkeeping the main thread is in (``frame`` is its
    innermost one), or None where a KeyboardInterrupt may be raised.

    An operation's code counts as bookkeeping unless the program's own code runs in it: a
    built-in kernel interrupted half way would leave its outputs failed, and an update in place
    (``w -= lr * g``, an optimizer's step) would lose the weights a Ctrl-C handler goes on to
    save.  Its NumPy calls hold the interrupt until they return anyway, so the rest of it delays
    the interrupt by microseconds; a CustomOp's ``forward``, which may loop for minutes, does not
    hold it.
    """
    in_program = False  # a frame of the program's own code run by an operation was passed
    while frame is not None and not frame.f_code.co_filename.startswith(_ENGINE_DIR):
        in_program = in_program or _is_program_code(frame.f_code.co_filename)
        frame = frame.f_back
    if frame is None or frame.f_code in _interruptible or (in_program and frame.f_code in _operation_runners):
        return None
    while (outer := frame.f_back) is not None and outer.f_code.co_filename.startswith(_ENGINE_DIR):
        if outer.f_code in _interruptible:
            break
        frame = outer
    return frame


def _raise_deferred() -> None:
    global _deferred
    if _deferred:
        _deferred = False
        raise KeyboardInterrupt


def _on_return(frame: FrameType, event: str, arg: Any) -> Any:
    if event == "return":
        sys.settrace(None)
        _raise_deferred()
    return _on_return


def _redeliver_when_asked() -> None:
    """The redelivery thread: a moment after each request, deliver the deferred Ctrl-C again."""
    global _redelivered
    while True:
        _redelivery_requests.get()
        time.sleep(REDELIVER_S)
        if _deferred:
            _redelivered = True
            _thread.interrupt_main(signal.SIGINT)


def start_redelivery() -> None:
    """Start the redelivery thread (at install; again in a child made by fork, which has none)."""
    threading.Thread(target=_redeliver_when_asked, name="lazynd-ctrl-c", daemon=True).start()


def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """lazynd's SIGINT handler: a KeyboardInterrupt, unless the engine is in bookkeeping (see above)."""
    global _deferred, _redelivered
    again, _redelivered = _redelivered, False
    target = _bookkeeping(frame)
    if target is None:
        if again and not _deferred:  # raised meanwhile, on a return: this one is spent
            return
        _deferred = False
        if sys.gettrace() is _no_new_frames:
            sys.settrace(None)
        raise KeyboardInterrupt
    first = not _deferred
    _deferred = True
    if first and sys.gettrace() is None:  # (a debugger's or coverage's trace is left alone)
        target.f_trace, target.f_trace_lines = _on_return, False
        sys.settrace(_no_new_frames)
    _redelivery_requests.put(None)


def _no_new_frames(frame: FrameType, event: str, arg: Any) -> None:
    """The thread's trace function while a deferred Ctrl-C waits: it traces no new frame."""
    return None


def guard_ctrl_c(interruptible: Sequence[Callable[..., Any]], operation_runners: Sequence[Callable[..., Any]]) -> None:
    """Install the handler above for SIGINT if the default one is in place (on the main thread).

    ``interruptible``: engine functions a Ctrl-C may interrupt (they sleep in a wait with
    nothing half done); ``operation_runners``: those that call an operation's code, which a
    Ctrl-C may interrupt (not their own bookkeeping).
    """
    _interruptible.update(f.__code__ for f in interruptible)
    _operation_runners.update(f.__code__ for f in operation_runners)
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        start_redelivery()
        signal.signal(signal.SIGINT, on_ctrl_c)
