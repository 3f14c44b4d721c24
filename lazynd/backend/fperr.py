"""Floating-point warnings off inside kernels: each thread runs them in a quiet context of its own.

MXNet computes ``log(0) = -inf``, ``0 / 0 = nan`` or an overflow to ``inf`` silently; NumPy
warns.  Every CPU kernel runs with NumPy's divide, overflow and invalid-operation warnings
ignored: :class:`lazynd.ops.opdef.OpDef` wraps an operator's CPU kernel in :func:`quiet_kernel` when
it is defined, the one place, so that no route to a kernel (an NDArray call, an executor's pass,
autograd, a fused chain) and no new operator can leak a warning.  A ``Custom`` operator's
kernel is the user's Python and keeps the user's settings (``OpDef(quiet=False)``).

How: NumPy 2 keeps its error state in a context variable (documented: ``np.errstate`` is
thread- and asyncio-safe).  Each thread that runs a kernel makes, once, a
:class:`contextvars.Context` of its own in which every context variable has its default and
NumPy's state ignores every floating-point error, and runs kernels with ``Context.run``.  The
calling thread's context is not touched: the user's settings are the same before and after a
kernel run at push, and a kernel sees none of them, whichever thread runs it (at push, while a
wait helps, on a worker).  What else a kernel relies on is kept per thread, not per context, so the
quiet context changes nothing of it: lazynd's own state (``threading.local``) and CuPy's current
device, stream and allocator (a host kernel run on device arrays).  Entering the context costs about 0.04 us a kernel, where switching
NumPy's state with ``np.errstate`` for each call cost 0.4 us.  A kernel that runs inside the
context already (a kernel calling another one, an executor's pass) calls the next one directly.

An executor's pass calls many kernels in a row; it takes each quiet operator's kernel as written
(``OpDef.raw_forward``) and runs the whole pass through :func:`run_quietly`.  It does so only
where every operator of the executor is quiet, so that a ``Custom`` kernel never runs inside
the context, and it calls a monitor's callback outside it.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

# True only inside a quiet context: a kernel running there calls the next one directly (a
# context cannot be entered twice)
_INSIDE = contextvars.ContextVar("lazynd_quiet_kernels", default=False)


def _new_quiet_context() -> contextvars.Context:
    context = contextvars.Context()  # every variable at its default: nothing of the caller's
    context.run(np.seterr, divide="ignore", over="ignore", invalid="ignore", under="ignore")
    context.run(_INSIDE.set, True)
    return context


class _QuietContexts(threading.local):
    """The calling thread's quiet context (a context is entered by one thread at a time): made
    by ``threading.local`` in each thread at its first kernel, as ``__init__`` runs there."""

    def __init__(self) -> None:
        self.context = _new_quiet_context()


_threads = _QuietContexts()


def quietly(fn: F) -> F:
    """``fn`` made to run with NumPy's floating-point errors ignored, in the calling thread's quiet
    context (see the module docstring); directly when that context is already the current one.
    Positional arguments only (:func:`quiet_kernel` for an operator's kernel)."""

    @functools.wraps(fn)
    def quiet(*args: Any) -> Any:
        if _INSIDE.get():
            return fn(*args)
        return _threads.context.run(fn, *args)

    return quiet  # type: ignore[return-value]


def quiet_kernel(kernel: F) -> F:
    """:func:`quietly` for an operator's kernel, ``kernel(kctx, attrs, inputs, outputs, aux)``.

    The same rule, with the kernel's five arguments named: a small operation run at push spends
    a few hundred nanoseconds in the wrapper, and packing and unpacking ``*args`` was most of them.
    """

    @functools.wraps(kernel)
    def quiet(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> Any:
        if _INSIDE.get():
            return kernel(kctx, attrs, inputs, outputs, aux)
        return _threads.context.run(kernel, kctx, attrs, inputs, outputs, aux)

    return quiet  # type: ignore[return-value]


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


run_quietly = quietly(_call)
"""``run_quietly(fn, *args)``: ``fn(*args)`` as :func:`quietly` runs a kernel, one entry into the
quiet context for a run of raw kernels (an executor's pass)."""
