"""The random-number state: one generator per context, and the engine var that orders its use.

Every random operation writes its context's var, so draws happen in push order and
the same seed gives the same numbers whatever the engine or the number of workers.
The public face (``mx.random.seed``, ``uniform``...) is :mod:`lazynd.random`.
"""

from __future__ import annotations

import threading

import numpy as np

from ..context import Context
from ..engine.var import Var

# offsets that give every context its own stream from one seed
_DEVICE_STRIDE = 7919
_GPU_OFFSET = 104729


class GeneratorState:
    """The generator of one context and the var that orders its use."""

    def __init__(self, ctx: Context, seed: int) -> None:
        self.ctx = ctx
        self.var = Var()
        if ctx.device_type == "gpu":
            from ..backend import get_backend

            backend = get_backend(ctx)
            with backend.device:  # type: ignore[attr-defined]
                self.generator = backend.xp.random.RandomState(seed)
        else:
            self.generator = np.random.Generator(np.random.PCG64(seed))

    def reseed(self, seed: int) -> None:
        """Restart the generator from ``seed`` (run by the engine, after the draws pushed before)."""
        if self.ctx.device_type == "gpu":
            self.generator.seed(seed)
        else:
            self.generator.bit_generator.state = np.random.PCG64(seed).state


_default_seed = 0
_states: dict[Context, GeneratorState] = {}
_lock = threading.Lock()


def context_offset(ctx: Context) -> int:
    """What is added to a global seed for ``ctx``'s generator (cpu_pinned draws as cpu does)."""
    return _DEVICE_STRIDE * ctx.device_id + (0 if ctx.device_type != "gpu" else _GPU_OFFSET)


def generator_for(ctx: Context) -> GeneratorState:
    """The generator state of ``ctx``, created on first use from the current global seed.

    ``cpu_pinned(n)`` draws from the generator of ``cpu(n)``, as MXNet's cpu_pinned takes the
    CPU's random resource (two generators from one seed would give both the same numbers).
    """
    if ctx.device_type == "cpu_pinned":
        ctx = Context("cpu", ctx.device_id)
    state = _states.get(ctx)
    if state is None:
        with _lock:
            state = _states.get(ctx)
            if state is None:
                state = _states[ctx] = GeneratorState(ctx, (_default_seed + context_offset(ctx)) % 2**64)
    return state


def seed_all(seed: int) -> list[GeneratorState]:
    """Make ``seed`` the global seed for generators created from now on; return the existing ones."""
    global _default_seed
    _default_seed = seed
    return list(_states.values())
