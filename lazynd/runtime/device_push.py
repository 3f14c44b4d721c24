"""The one device-aware push: every face (nd, the symbolic executor, the KVStore) hands work to the engine here.

On a GPU the kernel is wrapped by the device's backend (streams and events) and pushed to
run as soon as its inputs are launched.  On the CPU an operation of at most
``INLINE_MAX_ELEMENTS`` elements may run on the pushing thread when its vars are free (a
hand-off to a worker would cost more than the work); larger ones go to the engine's workers.

One shortcut lives here and nowhere else: a small CPU operation whose outputs are fresh
(allocated for this call, so no other operation can know their vars) runs at once, with no
engine bookkeeping, when nothing pending writes what it reads (:meth:`Engine.run_now`);
otherwise it is pushed as usual, so errors still reach a wait.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from .. import engine as engine_module
from ..backend import get_backend
from ..context import Context
from ..engine import get_engine
from ..engine.base import NOT_READY
from ..engine.var import Var
from ..ops.registry import KernelContext

# CPU operations of at most this many elements (inputs and outputs together) may run on the
# pushing thread; read at every push, so a change applies at once
INLINE_MAX_ELEMENTS = int(os.environ.get("LAZYND_INLINE_MAX", "32768"))

_kernel_contexts: dict[tuple[Context, bool], KernelContext] = {}


def kernel_context(ctx: Context, is_train: bool = False) -> KernelContext:
    """The :class:`KernelContext` of ``ctx`` (array module, backend, device), one per context and mode."""
    key = (ctx, is_train)
    kctx = _kernel_contexts.get(key)
    if kctx is None:
        backend = get_backend(ctx)
        kctx = _kernel_contexts[key] = KernelContext(backend.xp, backend, ctx.device_id, is_train)
    return kctx


def with_generator(kctx: KernelContext, generator: Any) -> KernelContext:
    """``kctx`` for a kernel that draws random numbers from ``generator``."""
    return KernelContext(kctx.xp, kctx.backend, kctx.device_id, kctx.is_train, generator)


def push(
    ctx: Context,
    fn: Callable[..., Any],
    args: tuple,
    reads: Sequence[Var],
    writes: Sequence[Var],
    name: str,
    work: int | None = None,
    kind: str = "compute",
    fresh: bool = False,
) -> None:
    """Push ``fn(*args)`` on ``ctx``'s device; it reads ``reads`` and writes ``writes``.

    ``work`` is the number of elements the operation touches (None: large or unknown; it
    then never runs on the pushing thread on the CPU).  ``kind`` is the GPU stream kind
    (``compute``, ``h2d``, ``d2h``).  ``fresh`` says that every var in ``writes`` is new
    and unknown to any other operation: a small ready CPU operation then runs at once.
    """
    if ctx.device_type == "gpu":
        fn = get_backend(ctx).wrap(fn, reads, writes, kind)
        (engine_module._engine or get_engine()).push(fn, args, reads, writes, name, ctx, True)
        return
    engine = engine_module._engine or get_engine()
    if work is None or work > INLINE_MAX_ELEMENTS:
        engine.push(fn, args, reads, writes, name, ctx, False)
    elif not fresh or engine.run_now(fn, args, reads) is NOT_READY:
        engine.push(fn, args, reads, writes, name, ctx, True)
