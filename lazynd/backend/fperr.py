"""Floating-point warnings off inside kernels, through NumPy's public ``np.errstate``.

MXNet computes ``log(0) = -inf``, ``0 / 0 = nan`` or an overflow to ``inf`` silently; NumPy
warns.  Every CPU kernel runs with divide, overflow and invalid-operation warnings ignored:
:class:`lazynd.ops.opdef.OpDef` wraps an operator's CPU kernel in :data:`quietly` when it is
defined, the one place, so that no route to a kernel (an NDArray call, an executor's pass,
autograd, a fused chain) and no new operator can leak a warning.  A ``Custom`` operator's
kernel is the user's Python and keeps the user's settings (``OpDef(quiet=False)``).

An executor's pass calls many kernels in a row; it takes each quiet operator's kernel as written
(``OpDef.raw_forward``) and runs the whole pass through :func:`run_quietly`, one switch of the
state for the pass instead of one per kernel (about 0.45 us each).  It does so only where every
operator of the executor is quiet, so that a ``Custom`` kernel never runs inside the switch,
and it calls a monitor's callback outside it.

Every other setting of the calling thread (underflow, an error callback) is left as it was:
NumPy 2 keeps its error state per thread and per context, so a kernel run on the user's thread
(at push, or while it waits) changes nothing the user sees once it returns, and a kernel on an
engine worker changes only that worker's state, for as long as it runs.  Used as a decorator,
``np.errstate`` sets the state for each call without building a new context manager (about
0.45 us a call on NumPy 2.4), and it is safe from several threads at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

quietly = np.errstate(divide="ignore", over="ignore", invalid="ignore")
"""Decorator: the function runs with divide, overflow and invalid warnings ignored."""


@quietly
def run_quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with divide, overflow and invalid warnings ignored: one switch for a run of
    raw kernels (see the module docstring)."""
    return fn(*args)
