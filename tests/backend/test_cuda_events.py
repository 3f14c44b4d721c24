"""The event pool of the GPU backend, checked on the CPU with a stand-in for CuPy's ``Event``.

The stand-in does what matters here as CuPy's does: its finaliser destroys the CUDA event, and
recording a destroyed event fails (on a real GPU: ``cudaErrorContextIsDestroyed`` or a crash).
"""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

from lazynd.backend.cuda.events import POOL_MAX, EventPool


class _Event:
    """Records and destruction, as CuPy's ``Event`` (which destroys in ``__del__``)."""

    def __init__(self, block: bool = False, disable_timing: bool = False) -> None:
        self.destroyed = False
        self.records = 0

    def record(self, stream: Any = None) -> None:
        assert not self.destroyed, "recorded a destroyed event"
        self.records += 1

    def __del__(self) -> None:
        self.destroyed = True


def _pool() -> EventPool:
    return EventPool(SimpleNamespace(cuda=SimpleNamespace(Event=_Event)))


def test_an_event_dropped_in_a_reference_cycle_comes_back_to_the_pool_alive() -> None:
    pool = _pool()
    done = pool.record(stream=None)
    cycle: list[Any] = [done]
    cycle.append(cycle)  # as a var held by a traceback's frames is
    del done, cycle  # the event is now reachable only through the cycle (and the pool's records)
    gc.collect()
    assert len(pool.free) == 1
    assert not pool.free[-1].destroyed, "the cycle's collection finalised the event the pool got back"
    again = pool.record(stream=None)
    assert again.event.records == 2


def test_events_past_the_pool_size_are_let_go() -> None:
    pool = _pool()
    held = [pool.record(stream=None) for _ in range(POOL_MAX + 3)]
    assert len(pool.lent) == POOL_MAX + 3
    del held
    assert len(pool.free) == POOL_MAX and len(pool.lent) == POOL_MAX
    assert all(not e.destroyed for e in pool.free)
