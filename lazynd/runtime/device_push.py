"""The one device-aware push: every face (nd, the symbolic executor, the KVStore) hands work to the engine here.

On a GPU the kernel is wrapped by the device's backend (streams and events) and pushed to
run as soon as its inputs are launched.  On the CPU an operation of at most
``INLINE_MAX_ELEMENTS`` elements may run on the pushing thread when its vars are free (a
hand-off to a worker would cost more than the work), and larger ones go to the engine's workers.
While the host BLAS has threads of its own, a ready operation of any size runs on the pushing
thread: see :func:`inline_limit`.

One shortcut lives here and nowhere else: a small CPU operation whose outputs are fresh
(allocated for this call, so no other operation can know their vars) runs at once, with no
engine bookkeeping, when nothing pending writes what it reads (:meth:`Engine.run_now`);
otherwise it is pushed as usual, so errors still reach a wait.  And an operation that must see
its arguments as they are at the call (a NumPy array the caller may change afterwards) runs
at once on the pushing thread when its vars are free (:func:`run_if_free`): no snapshot.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import engine as engine_module
from ..backend import blas, cpu_backend, get_backend
from ..context import Context
from ..engine import get_engine
from ..engine.base import NOT_READY
from ..engine.var import Var
from ..ops.registry import KernelContext

# the inline limit while the engine's CPU workers have cores of their own (a single-threaded host
# BLAS).  Two independent multiplies, each followed by a dependent add, gain from the workers only
# from a few hundred thousand elements on (2-core development machine: 161 us on the workers against
# 71 on the pushing thread at 100k elements, 167 against 189 at 300k, 703 against 879 at 1M).  A
# chain of dependent operations, what a training loop pushes, only loses there: its operations pass
# between threads and wait for the GIL the pushing thread holds (with the limit at 32k elements the
# loops of bench/user_loops.py took 1.1-1.5x as long as at 1M: FeedForward.fit 0.70 against 0.48 s
# an epoch, the seed loop 0.66 against 0.44)
SMALL_INLINE_MAX = 1 << 20
# an inline limit no operation exceeds, those of unknown size (``work=None``) included
UNBOUNDED = sys.maxsize


def inline_limit() -> int:
    """The largest CPU operation (elements) that may run on the pushing thread when its vars are free.

    :data:`INLINE_MAX_ELEMENTS` when set (``LAZYND_INLINE_MAX``).  Else
    :data:`SMALL_INLINE_MAX` while the host BLAS is single-threaded (``OPENBLAS_NUM_THREADS=1``,
    the setting for running independent operations in parallel on the engine's workers), and
    :data:`UNBOUNDED` while it has threads of its own (:data:`lazynd.backend.blas.BLAS_VAR`
    set; its default is a thread per core): the machine's parallelism is then inside each
    GEMM, and a worker running a pass while the pushing thread pushes the next one only
    competes with the BLAS's threads for the cores (an MNIST MLP epoch on 2 cores: 1.5-1.7 ms
    a batch handed to workers, 0.8 ms on the pushing thread).

    Examples
    --------
    >>> from lazynd.backend import blas
    >>> inline_limit() == (SMALL_INLINE_MAX if blas.BLAS_VAR is None else UNBOUNDED)  # no LAZYND_INLINE_MAX
    True
    """
    setting = INLINE_MAX_ELEMENTS
    if setting is not None:
        return setting
    return SMALL_INLINE_MAX if blas.BLAS_VAR is None else UNBOUNDED


# CPU operations of at most this many elements (inputs and outputs together) may run on the
# pushing thread; None: chosen by the host BLAS (:func:`inline_limit`).  Read at every push,
# so a change applies at once
_setting = os.environ.get("LAZYND_INLINE_MAX", "").strip()
INLINE_MAX_ELEMENTS: int | None = int(_setting) if _setting else None

_kernel_contexts: dict[tuple[Context, bool], KernelContext] = {}
# the open :class:`lazynd.runtime.capture.PushCapture`, if any: it sees every push and
# run_if_free before it runs (the one check a push pays for captures)
capture: Any = None


def kernel_context(ctx: Context, is_train: bool = False) -> KernelContext:
    """The :class:`KernelContext` of ``ctx`` (array module, backend, device), one per context and mode."""
    key = (ctx, is_train)
    kctx = _kernel_contexts.get(key)
    if kctx is None:
        # cpu_pinned runs the CPU's kernels, with the CPU's temporaries
        backend = get_backend(ctx) if ctx.device_type == "gpu" else cpu_backend
        kctx = _kernel_contexts[key] = KernelContext(backend.xp, backend, ctx.device_id, is_train)
    return kctx


def with_generator(kctx: KernelContext, generator: Any) -> KernelContext:
    """``kctx`` for a kernel that draws random numbers from ``generator``."""
    return KernelContext(kctx.xp, kctx.backend, kctx.device_id, kctx.is_train, generator)


def elements_touched(arrays: Iterable[Any]) -> int:
    """The elements of ``arrays`` (each array once; ``None`` entries skipped): the ``work`` of an
    operation that runs several kernels over them (an executor's pass, a replayed backward pass)."""
    seen: dict[int, int] = {}
    for a in arrays:
        if a is not None:
            seen[id(a)] = int(a.size)
    return sum(seen.values())


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
    then runs on the pushing thread on the CPU only when :func:`inline_limit` is
    :data:`UNBOUNDED`).  ``kind`` is the GPU stream kind
    (``compute``, ``h2d``, ``d2h``).  ``fresh`` says that every var in ``writes`` is new
    and unknown to any other operation: a small ready CPU operation then runs at once.
    """
    if ctx.device_type == "gpu":
        push_to_device(ctx, fn, args, reads, writes, name, kind)
        return
    watcher = capture  # read once: another thread may close it meanwhile
    if watcher is not None:
        fn = watcher.note(ctx, fn, args, reads, writes, name)
    engine = engine_module._engine or get_engine()
    if (UNBOUNDED if work is None else work) > inline_limit():
        engine.push(fn, args, reads, writes, name, ctx, False)
    elif not fresh or engine.run_now(fn, args, reads) is NOT_READY:
        engine.push(fn, args, reads, writes, name, ctx, True)


def push_to_device(
    ctx: Context,
    fn: Callable[..., Any],
    args: tuple,
    reads: Sequence[Var],
    writes: Sequence[Var],
    name: str,
    kind: str = "compute",
    inline_ok: bool = True,
) -> None:
    """Push ``fn(*args)`` on the GPU ``ctx``, on its stream for ``kind``, wrapped by the device's
    backend (streams and events): :func:`push` on a GPU, and the host-device copies.

    ``inline_ok=False`` keeps the operation off the pushing thread (a copy to the host).
    """
    watcher = capture  # read once: another thread may close it meanwhile
    if watcher is not None:
        fn = watcher.note(ctx, fn, args, reads, writes, name)
    fn = get_backend(ctx).wrap(fn, reads, writes, kind)
    (engine_module._engine or get_engine()).push(fn, args, reads, writes, name, ctx, inline_ok)


def run_if_free(
    ctx: Context, fn: Callable[..., Any], args: tuple, reads: Sequence[Var], writes: Sequence[Var], name: str
) -> bool:
    """Run the CPU operation ``fn(*args)`` on this thread now if its vars are free; True if it ran.

    For an operation that reads memory its caller may change once the call returns (the
    user's NumPy array in ``x[:] = batch``): run now, it reads that memory once, with no
    snapshot; when it cannot (a var is busy, the context is a GPU, the engine's policy keeps
    operations on its workers), nothing runs, and the caller snapshots and pushes.  The
    operation runs whatever its size: its copy would be made now anyway, as the snapshot.
    """
    watcher = capture  # read once: another thread may close it meanwhile
    if watcher is not None:
        fn = watcher.note(ctx, fn, args, reads, writes, name)
    if ctx.device_type == "gpu":
        return False
    return (engine_module._engine or get_engine()).run_if_free(fn, args, reads, writes, name, ctx)
