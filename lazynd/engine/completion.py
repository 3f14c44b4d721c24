"""Operations that end after their function returns: the function hands back a :class:`Completion`.

Most operations are over when their function returns.  Some only *start* their work there: a
device copy launched on a stream, work handed to another thread.  Such a function returns a
:class:`Completion` (``return Completion()`` after arranging for someone to call
:meth:`~Completion.finish`); the engine then keeps the operation's vars claimed, and the
operation pending, until ``finish()`` is called, from any thread, exactly once.  Only then do
the vars it writes count as written: operations that read them, waits on them and
``waitall`` all wait for the finish.  ``finish(error)`` fails the operation as an exception
raised by its function would: the error is recorded on the vars it writes and raised at the
next wait that touches them (or ``waitall``).

The thread that runs the function is free as soon as it returns, which is the point: a GPU
device thread that launched a device->host copy goes on launching while another thread waits
for the copy.  Where an engine cannot end an operation later (the naive engine, which runs
each operation to its end at push, and one part of a merged chain, whose next part runs
right after it), it waits for the finish on the spot.

Examples
--------
>>> import threading
>>> from lazynd.engine import Completion, ThreadedEngine, Var
>>> engine, var, box = ThreadedEngine(num_workers=1), Var(), []
>>> def start_elsewhere():
...     done = Completion()
...     threading.Timer(0.01, lambda: (box.append(1), done.finish())).start()
...     return done
>>> engine.push(start_elsewhere, (), [], [var], "late")
>>> engine.wait_for_var(var); box
[1]
>>> engine.shutdown()
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import LazyNDError


class Completion:
    """The end, still to come, of an operation whose function has returned (see the module docstring)."""

    __slots__ = ("_lock", "_finished", "_error", "_then")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._finished = False
        self._error: BaseException | None = None
        self._then: Callable[[BaseException | None], None] | None = None

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` has been called."""
        return self._finished

    def finish(self, error: BaseException | None = None) -> None:
        """End the operation, successfully or with ``error``; call it exactly once, from any thread.

        The engine's bookkeeping (releasing the vars, queueing what that makes ready) runs on
        the calling thread before this returns.
        """
        with self._lock:
            if self._finished:
                raise LazyNDError("Completion.finish: the operation was already finished")
            self._finished = True
            self._error = error
            then = self._then
            self._then = None
        if then is not None:
            then(error)

    def when_finished(self, then: Callable[[BaseException | None], None]) -> None:
        """Have ``then(error)`` called once the operation is finished (at once if it is).

        For the engine: one callback per completion.
        """
        with self._lock:
            if not self._finished:
                if self._then is not None:
                    raise LazyNDError("Completion.when_finished: a callback is already attached")
                self._then = then
                return
        then(self._error)

    def wait(self) -> BaseException | None:
        """Block until the operation is finished; return its error (None when it succeeded)."""
        finished = threading.Event()
        self.when_finished(lambda _error: finished.set())
        finished.wait()
        return self._error
