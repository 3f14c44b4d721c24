"""Floating-point warnings off inside kernels, at a fraction of ``np.errstate``'s cost.

MXNet computes ``log(0) = -inf`` or ``0 / 0 = nan`` silently; NumPy warns.  Kernels
that can meet such values run under :class:`quiet`, which ignores divide, overflow
and invalid-operation warnings and leaves every other setting of the calling
thread (underflow, ``bufsize``, an error callback) as it was.

``np.errstate`` builds a fresh error-state object on every entry: about 2.5 us,
as much as the rest of an imperative call's Python.  NumPy 2 keeps that state in
a context variable; :class:`quiet` builds the quiet variant of each state it
meets once, keeps it, and only sets and resets the variable (about 0.3 us).  On
a NumPy without that variable it falls back to ``np.errstate``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:  # NumPy 2: the ufunc error state is a context variable holding an opaque object
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - NumPy 1.x
    _extobj_contextvar = None

# the caller's state -> the same state with divide/over/invalid ignored (few distinct states
# exist in a program; the table is emptied if it ever grows past this)
_MAX_STATES = 64
_quiet_states: dict[Any, Any] = {}


def _new_quiet_state(current: Any) -> Any:
    """Build and remember the quiet variant of ``current``, the calling thread's state."""
    # _make_extobj starts from the current state: only the three settings named change
    state = _make_extobj(divide="ignore", over="ignore", invalid="ignore")
    if len(_quiet_states) >= _MAX_STATES:
        _quiet_states.clear()
    _quiet_states[current] = state
    return state


class quiet:  # noqa: N801 - used like np.errstate
    """``with quiet(): ...`` runs NumPy with divide, overflow and invalid warnings ignored."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        current = _extobj_contextvar.get()
        state = _quiet_states.get(current)
        if state is None:
            state = _new_quiet_state(current)
        self._token = _extobj_contextvar.set(state)

    def __exit__(self, *exc_info: object) -> None:
        _extobj_contextvar.reset(self._token)


def quietly(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` run under :class:`quiet` (for kernels passed around as functions)."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with quiet():
            return f(*args, **kwargs)

    return run


if _extobj_contextvar is None:  # pragma: no cover - NumPy 1.x

    def quiet() -> Any:  # type: ignore[no-redef]  # noqa: F811
        return np.errstate(divide="ignore", over="ignore", invalid="ignore")
