"""``dist_sync`` and ``dist_device_sync``: synchronous data parallelism over MPI.

Start one process per worker with ``mpiexec -n 4 python train.py``.  ``init``
broadcasts rank 0's value, so every worker starts from the same weights.  A
``push`` sums each key's values on the worker, then sums across workers with an
MPI Allreduce, and every worker runs the same updater on the same sum: all
workers hold the same weights after every step, as a parameter server would
give.  Every worker must therefore init and push the same keys in the same
order; the order of the keys within one call does not matter (they are reduced in
sorted order).  Before each collective the workers check that they agree on it
(:mod:`lazynd_kv.agreement`): a worker that pushes other keys, or inits a key with
another shape or dtype, gets a clear :class:`~lazynd.errors.LazyNDError`, on every
rank, instead of sums of mismatched buffers.  ``init`` waits for that check.

Transfers: a key of ``BATCH_BYTES`` or more is reduced alone, with no updater
straight into the stored value, else into the key's persistent host buffer.  A
pushed array is left unchanged, so the sum cannot be formed in place there;
instead of MPI's out-of-place Allreduce (which first copies the pushed array
into the result) :mod:`lazynd_kv.mpi_allreduce` folds that copy into the first
sum.  Values summed locally first land in the target and are reduced there in
place, by the same exchange of messages.  Smaller keys pushed together are
packed into one buffer per dtype and reduced in one ``Iallreduce``; their sums
are copied out in one engine operation.  ``dist_device_sync`` sums on the GPU and stages through host memory (the
``mpich`` wheel is not CUDA-aware).

``pushpull`` with no updater reduces a large key straight into its first output
(in place when the output is the pushed array, as for gradients), then copies
that output into the stored value and the other outputs.  Those copies only
read the output, so they run beside whatever reads it next; a later write to it
waits for them, and a later ``pull`` returns the sum.  With an updater,
``pushpull`` is ``push`` then ``pull``.

Every MPI call runs as an engine operation writing one var of the store, so
collectives run in push order on every rank, one at a time.  A worker that fails
must not leave the others hanging: an uncaught exception on any worker aborts the
whole job (:mod:`lazynd_kv.abort`), and a watchdog ends it with ``MPI_Abort`` and a
message naming the collective once one has waited longer than ``LAZYND_KV_TIMEOUT``
seconds (default 300), sleeping between polls meanwhile (:mod:`lazynd_kv.watchdog`).
A worker whose program ends says so to the others at exit, so one that pushes more
steps than another fails at once with an error naming both (and the one that ended
waits there, however long, for the others to end too).
Log lines of lazynd say the rank (``[rank 1/2]``, see :mod:`lazynd.log`).
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazynd.context import Context, cpu, gpu, num_gpus
from lazynd.engine import get_engine, waitall
from lazynd.engine.var import Var
from lazynd.errors import LazyNDError
from lazynd.log import set_worker
from lazynd.ndarray import NDArray, empty
from lazynd.runtime import push

from .abort import abort_job_on_uncaught_exception
from .agreement import Agreement
from .base import KVStore, register
from .local import sum_arrays
from .mpi_allreduce import allreduce_into
from .pairs import Key, copy_pairs
from .watchdog import Watchdog, timeout_from_env

BATCH_BYTES = 1 << 20


def import_mpi() -> Any:
    """``mpi4py.MPI``, or a clear error saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise LazyNDError(
            "the dist_* KVStores need mpi4py and an MPI library: pip install 'lazynd[dist]' "
            "(mpi4py mpich), then start the workers with: mpiexec -n 4 python train.py"
        ) from err
    return MPI


_exit_registered = False
_agreements: list[Agreement] = []  # one per dist store, in the order every worker created them
END_OF_PROGRAM = "the end of its program"


def _finish_at_exit() -> None:
    """Drain the engine, then tell the other workers that this one will run no more collectives.

    A worker still waiting for a collective of this one's (it pushed more steps or keys) then
    fails at once with an error naming both, instead of waiting out the watchdog's timeout as
    if this worker had died.  Workers that end together agree and leave; one that ends first
    waits here for the others, however long their own work takes.
    """
    try:
        waitall()
    except LazyNDError:
        pass  # already raised to the user, or the process is exiting on an error of its own
    if import_mpi().Is_finalized():  # the program called MPI.Finalize() itself: no more messages
        return
    for agreement in _agreements:
        if agreement.failure is not None:
            continue
        try:
            agreement.check(END_OF_PROGRAM, bounded=False)
        except LazyNDError as err:
            sys.stderr.write(f"lazynd_kv: at exit: {err}\n")


@register("dist_sync", "dist_device_sync")
class DistSyncStore(KVStore):
    """Synchronous KVStore across MPI processes (see the module docstring).

    Examples
    --------
    >>> import lazynd as mx, lazynd_kv                       # doctest: +SKIP
    >>> kv = lazynd_kv.create('dist_sync')                  # doctest: +SKIP
    >>> kv.init('w', mx.nd.ones((2,)) * kv.rank)            # rank 0's value wins  # doctest: +SKIP
    >>> kv.push('w', mx.nd.ones((2,)))                      # summed over workers  # doctest: +SKIP
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        mpi = import_mpi()
        self._mpi = mpi
        world = mpi.COMM_WORLD
        abort_job_on_uncaught_exception(world)
        # a communicator of our own, so that our collectives never interleave with the user's; made
        # under the watchdog, as a worker that failed before creating its store never joins.  The
        # watchdog aborts on it even while it is being made (MPICH allows it), as it always has:
        # aborting COMM_WORLD itself, hydra often kills the job before the reason is printed
        self._comm, request = world.Idup()
        self._watchdog = Watchdog(mpi, self._comm, timeout_from_env())
        self._watchdog.wait_patiently([request], f"the creation of the {name} store (a duplicate of COMM_WORLD)")
        self._agreement = Agreement(mpi, self._comm, self._watchdog, name)
        # fixed for the communicator's life, and still readable once the program has finalised MPI
        self._rank, self._num_workers = self._comm.Get_rank(), self._comm.Get_size()
        set_worker(self._rank, self._num_workers)
        self._on_device = name == "dist_device_sync"
        self._comm_var = Var()
        self._next_gpu = 0
        self._host: dict[Key, NDArray] = {}  # per key: merge, staging and receive buffer on the host
        self._device_recv: dict[Key, NDArray] = {}
        self._batches: dict[tuple[Key, ...], tuple[NDArray, list[NDArray]]] = {}
        self._scratch: dict[np.dtype, np.ndarray] = {}  # one block of the reduce-scatter, from 3 workers on
        # mpi4py finalises MPI at exit, which would hang behind a collective still pending in the
        # engine; draining first (atexit runs newest first) keeps that wait under the watchdog
        _agreements.append(self._agreement)
        global _exit_registered
        if not _exit_registered:
            atexit.register(_finish_at_exit)
            _exit_registered = True

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def num_workers(self) -> int:
        return self._num_workers

    # -- engine operations -----------------------------------------------------------------------
    def _push_mpi(self, fn: Callable[..., None], args: tuple, reads: list[Var], writes: list[Var], name: str) -> None:
        failure = self._agreement.failure
        if failure is not None:
            raise LazyNDError(failure)
        push(cpu(), fn, args, reads, [*writes, self._comm_var], name)  # on a worker: MPI calls block

    def _agree(self, what: str, detail: str = "") -> None:
        """Wait until every worker is about to run the collective ``what``; raise if one is not."""
        self._watchdog.run(lambda: self._agreement.check(what, detail), what)

    def _bcast(self, buf: np.ndarray, key: Key) -> None:
        what = f"the broadcast of key {key!r} (init)"
        self._agree(what, f"shape {buf.shape}, {buf.dtype.name}")
        self._watchdog.wait(lambda: self._comm.Ibcast(buf, root=0), what)

    def _allreduce(self, send: np.ndarray, recv: np.ndarray, what: str) -> None:
        """Sum ``send`` over the workers into ``recv``; ``send is recv`` sums in place."""
        self._agree(what, f"{recv.size} elements of {recv.dtype.name}")

        def wait(requests: list[Any]) -> None:
            self._watchdog.wait_requests(requests, what)

        def scratch(size: int) -> np.ndarray:
            buf = self._scratch.get(recv.dtype)
            if buf is None or buf.size < size:
                buf = self._scratch[recv.dtype] = np.empty(size, recv.dtype)
            return buf

        self._watchdog.run(lambda: allreduce_into(self._comm, self._mpi, send, recv, scratch, wait), what)

    def _allreduce_batch(self, flat: np.ndarray, sources: list[np.ndarray], keys: tuple[Key, ...]) -> None:
        offset = 0
        for src in sources:
            flat[offset : offset + src.size] = src.reshape(-1)
            offset += src.size
        mpi = self._mpi
        what = f"the Allreduce of keys {list(keys)!r}"
        self._agree(what, f"{flat.size} elements of {flat.dtype.name}")
        self._watchdog.wait(lambda: self._comm.Iallreduce(mpi.IN_PLACE, flat, op=mpi.SUM), what)

    # -- KVStore ---------------------------------------------------------------------------------
    def _init_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        """Broadcast rank 0's values in key order, then wait until the workers have agreed on them."""
        super()._init_groups(sorted(groups, key=_key_order))
        try:
            get_engine().wait_for_var(self._comm_var)
        except LazyNDError:
            if self._agreement.failure is None:
                raise
        if self._agreement.failure is not None:
            raise LazyNDError(self._agreement.failure) from None

    def _store_context(self, value: NDArray) -> Context:
        if not self._on_device:
            return cpu()
        if value.context.device_type == "gpu":
            return value.context
        count = num_gpus()
        if count == 0:
            return cpu()
        ctx = gpu(self._next_gpu % count)
        self._next_gpu += 1
        return ctx

    def _init_key(self, key: Key, value: NDArray) -> NDArray:
        stored = value.copyto(self._store_context(value))
        host = stored if stored.context.device_type != "gpu" else stored.copyto(cpu())
        self._push_mpi(self._bcast, (host.data_array, key), [], [host.var], "_kvstore_bcast")
        if host is not stored:
            host.copyto(stored)
        return stored

    def _host_buffer(self, key: Key, stored: NDArray) -> NDArray:
        buf = self._host.get(key)
        if buf is None:
            buf = empty(stored.shape, ctx=cpu(), dtype=stored.data_array.dtype)
            self._host[key] = buf
        return buf

    def _reduce_target(self, key: Key, values: list[NDArray], stored: NDArray, out: NDArray | None) -> NDArray:
        """Where a large key's sum over the workers lands: ``out`` (the first output of a pushpull
        with no updater) when the sum can be written there, else the stored value itself when there
        is no updater and it lives on the host, else the key's persistent host buffer."""
        if self._updater is None and out is not None and _can_reduce_into(out, stored, values):
            return out
        if self._updater is None and stored.context.device_type != "gpu":
            return stored
        return self._host_buffer(key, stored)

    def _local_sum(self, key: Key, values: list[NDArray], stored: NDArray, target: NDArray) -> NDArray:
        """This worker's sum, on the host: a pushed array itself (left unchanged), or ``target``."""
        first = values[0]
        if (
            len(values) == 1
            and first.context.device_type != "gpu"
            and first.data_array.flags.c_contiguous
            and not np.may_share_memory(first.data_array, target.data_array)
        ):
            return first
        if stored.context.device_type == "gpu" and len(values) > 1:
            # sum on the GPU, move one array to the host
            return sum_arrays(values, self._device_buffer(key, stored)).copyto(target)
        return sum_arrays(values, target)

    def _device_buffer(self, key: Key, stored: NDArray) -> NDArray:
        buf = self._device_recv.get(key)
        if buf is None:
            buf = empty(stored.shape, ctx=stored.context, dtype=stored.data_array.dtype)
            self._device_recv[key] = buf
        return buf

    def _push_groups(self, groups: Sequence[tuple[Key, list[NDArray]]]) -> None:
        results = self._reduce_groups(groups, {})
        if self._updater is None:  # assign: the sum is the new value (the host sum straight to a GPU)
            copy_pairs([(results[key], self._store[key]) for key, _ in groups])
            return
        for key, _ in groups:
            stored = self._store[key]
            merged = results[key]
            if stored.context.device_type == "gpu":
                merged = merged.copyto(self._device_buffer(key, stored))
            self._apply_update(key, merged, stored)

    def _pushpull_groups(
        self, groups: Sequence[tuple[Key, list[NDArray]]], out_groups: Sequence[tuple[Key, list[NDArray]]]
    ) -> None:
        """With no updater the sum is the new value: each output and the stored value are copies of
        it (a large key's is reduced straight into its first output), so none waits for another."""
        if self._updater is not None:
            super()._pushpull_groups(groups, out_groups)
            return
        outs_of = dict(out_groups)
        # a key's sum may land in its first output only if no other key pushes that array (push then
        # pull reads every pushed value before it writes any output) or pulls into it (every sum is
        # formed before any is copied out: another key's sum written there would reach this key's
        # stored value, or this key's sum the other key's)
        used_by: dict[int, set[Key]] = {}
        for key, arrays in (*groups, *out_groups):
            for array in arrays:
                used_by.setdefault(id(array.var), set()).add(key)
        store = self._store  # an output of another dtype than its key's cannot take the sum straight
        first_outs = {k: o[0] for k, o in out_groups if used_by[id(o[0].var)] == {k} and o[0].dtype == store[k].dtype}
        results = self._reduce_groups(groups, first_outs)
        copy_pairs([(results[key], dst) for key, _ in groups for dst in (self._store[key], *outs_of[key])])

    def _reduce_groups(
        self, groups: Sequence[tuple[Key, list[NDArray]]], first_outs: dict[Key, NDArray]
    ) -> dict[Key, NDArray]:
        """Push the Allreduces of ``groups``: one per large key, one per dtype for the small ones.

        Returns where each key's sum over the workers lands.  ``first_outs`` (pushpull, no
        updater) names an output per key that a large key may be reduced straight into.  The
        collectives depend only on the keys' sizes and dtypes, so every rank issues the same
        ones in the same order whatever its arrays look like.
        """
        results: dict[Key, NDArray] = {}
        small: dict[np.dtype, list[tuple[Key, NDArray]]] = {}
        for key, values in sorted(groups, key=_key_order):
            stored = self._store[key]
            if stored.data_array.nbytes < BATCH_BYTES:
                send = self._local_sum(key, values, stored, self._host_buffer(key, stored))
                small.setdefault(stored.data_array.dtype, []).append((key, send))
                continue
            # a large key alone: reduced straight into its target, in place when summed there locally
            target = self._reduce_target(key, values, stored, first_outs.get(key))
            send = self._local_sum(key, values, stored, target)
            args = (
                target.data_array if send is target else send.data_array,
                target.data_array,
                f"the Allreduce of key {key!r}",
            )
            reads = [] if send is target else [send.var]
            self._push_mpi(self._allreduce, args, reads, [target.var], "_kvstore_allreduce")
            results[key] = target
        for dtype, items in small.items():
            keys = tuple(k for k, _ in items)
            flat, views = self._batch_buffers(keys, dtype)
            sources = [send for _, send in items]
            batch_args = (flat.data_array, [s.data_array for s in sources], keys)
            self._push_mpi(
                self._allreduce_batch, batch_args, [s.var for s in sources], [flat.var], "_kvstore_allreduce_batch"
            )
            results.update(zip(keys, views, strict=True))
        return results

    def _batch_buffers(self, keys: tuple[Key, ...], dtype: np.dtype) -> tuple[NDArray, list[NDArray]]:
        """One flat host buffer for a group of small keys, and a view of it per key (cached per group)."""
        cached = self._batches.get(keys)
        if cached is None:
            shapes = [self._store[k].shape for k in keys]
            sizes = [int(np.prod(s)) for s in shapes]
            flat = empty((sum(sizes),), ctx=cpu(), dtype=dtype)
            views, offset = [], 0
            for shape, size in zip(shapes, sizes, strict=True):
                views.append(flat[offset : offset + size].reshape(shape))  # views of part of flat's storage
                offset += size
            cached = (flat, views)
            self._batches[keys] = cached
        return cached

    def barrier(self) -> None:
        """Wait for this worker's pushed work, then for every worker to get here."""
        waitall()
        self._agree("the barrier")  # joined by every worker before it completes: a barrier itself


def _key_order(group: tuple[Key, list[NDArray]]) -> tuple[bool, Key]:
    """Sort key of ``(key, values)``: int keys first, then str keys, each in their own order."""
    return isinstance(group[0], str), group[0]


def _can_reduce_into(out: NDArray, stored: NDArray, values: list[NDArray]) -> bool:
    """Whether a key's local sum of ``values`` and then its sum over the workers can be formed in ``out``.

    ``out`` must be a C-contiguous host array of the stored dtype.  It may be one of the first
    two values itself (the local sum reads each element before writing it: gradients summed in
    place), but must not overlap any other value, which the local sum would overwrite before
    reading it.
    """
    if (
        out.context.device_type == "gpu"
        or out.data_array.dtype != stored.data_array.dtype
        or not out.data_array.flags.c_contiguous
    ):
        return False
    if len(values) == 1:
        return True  # one value is copied into out, overlapping or not
    for index, value in enumerate(values):
        if value.context.device_type == "gpu" or not np.may_share_memory(value.data_array, out.data_array):
            continue
        if index > 1 or value.data_array is not out.data_array:
            return False
    return True
