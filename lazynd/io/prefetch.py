"""Iterators that wrap others: ``PrefetchingIter`` (background loading) and ``ResizeIter``."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import DataError
from .base import DataBatch, DataDesc, DataIter


def _check_iterator(owner: str, value: Any) -> None:
    """A ``DataError`` naming ``owner`` unless ``value`` is a data iterator (a ``DataIter``, or an object
    with its ``batch_size``, ``reset`` and ``next``), before a missing attribute fails somewhere later."""
    if not isinstance(value, DataIter) and not all(hasattr(value, a) for a in ("batch_size", "reset", "next")):
        raise DataError(f"{owner}: expected a data iterator (mx.io.DataIter), got {type(value).__name__}")


class _Worker:
    """One background thread that keeps the next batch of one iterator ready.

    The thread and the consumer hand the single slot back and forth with two
    events: ``taken`` (the consumer wants another batch) and ``ready`` (the
    slot holds a batch, ``None`` at the end of the epoch, or an error).
    """

    def __init__(self, source: DataIter, pin_memory: bool = False) -> None:
        self.source = source
        self.pin_memory = pin_memory
        self.batch: DataBatch | None = None
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self.taken = threading.Event()
        self.running = True
        self.taken.set()
        self._start()

    def _start(self) -> None:
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self._loop, name="lazynd-prefetch", daemon=True)
        self.thread.start()

    def _in_this_process(self) -> None:
        """In a child made by fork (the thread stayed in the parent): a thread of its own, if the
        parent's was between batches; else a clear error rather than a wait for ever."""
        if self.pid == os.getpid():
            return
        if not self.ready.is_set():
            raise DataError(
                "PrefetchingIter: this process was forked while the iterator's thread was loading a "
                "batch, and that thread stayed in the parent; create the iterator in the child"
            )
        self._start()

    def _loop(self) -> None:
        while True:
            self.taken.wait()
            if not self.running:
                return
            self.taken.clear()
            try:
                batch = self.source.next()
                self.batch = _in_pinned_memory(batch) if self.pin_memory else batch
            except StopIteration:
                self.batch = None
            except BaseException as exc:  # handed to the consumer, who re-raises it
                self.batch, self.error = None, exc
            self.ready.set()

    def take(self) -> DataBatch | None:
        self._in_this_process()
        self.ready.wait()
        if self.error is not None:
            error, self.error = self.error, None
            if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: not a data error
                raise error
            raise DataError(f"PrefetchingIter: the wrapped iterator failed: {error!r}") from error
        return self.batch

    def request(self) -> None:
        self.ready.clear()
        self.taken.set()

    def reset(self) -> None:
        self._in_this_process()
        self.ready.wait()
        self.error = None
        self.source.reset()
        self.request()

    def stop(self) -> None:
        self.running = False
        self.taken.set()
        self.thread.join(timeout=5)


def _in_pinned_memory(batch: DataBatch) -> DataBatch:
    """``batch`` with its host arrays copied to ``cpu_pinned`` memory (GPU ones are left as they are)."""
    from ..context import cpu_pinned

    pinned = cpu_pinned()

    def pin(arrays: list[Any] | None) -> list[Any] | None:
        if arrays is None:
            return None
        return [a if a.context.device_type == "gpu" else a.as_in_context(pinned) for a in arrays]

    return DataBatch(
        data=pin(batch.data),  # type: ignore[arg-type]
        label=pin(batch.label),
        pad=batch.pad,
        index=batch.index,
        bucket_key=batch.bucket_key,
        provide_data=batch.provide_data,
        provide_label=batch.provide_label,
    )


def _check_rename_names(what: str, position: int, rename: dict[str, str], source: Any) -> None:
    """A DataError when ``rename`` (``rename_data`` or ``rename_label`` of iterator ``position``) renames
    an input that iterator does not provide: the rename would silently do nothing."""
    descs = getattr(source, "provide_data" if what == "rename_data" else "provide_label", None)
    if descs is None:  # a duck-typed iterator that does not describe its inputs
        return
    names = [d.name if isinstance(d, DataDesc) else d[0] for d in descs]
    unknown = sorted(str(name) for name in rename if name not in names)
    if unknown:
        raise DataError(
            f"PrefetchingIter: {what}[{position}] renames {unknown}, which iterator {position} does not provide "
            f"(its {'data' if what == 'rename_data' else 'labels'}: {names})"
        )


class PrefetchingIter(DataIter):
    """Load the next batch of one or more iterators in background threads.

    With several iterators, each batch joins their data and labels in order.
    ``rename_data``/``rename_label`` (one dict per iterator) rename inputs.

    ``pin_memory=True`` has the background threads also copy each batch's host arrays into
    ``mx.cpu_pinned()`` memory (page-locked where CUDA is usable), so the copy to a GPU that
    the training loop makes next is a DMA it does not wait for, with no host copy of its own
    (on the training thread's time).  It is an option, off by default, rather than automatic:
    the iterator does not know where its batches go (a module binds to its contexts later; the
    same iterator may feed a CPU model), and for batches used on the CPU the extra host copy
    and the locked memory are pure cost.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.io import NDArrayIter
    >>> it = PrefetchingIter(NDArrayIter(np.arange(6), batch_size=3))
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """

    def __init__(
        self,
        iters: DataIter | list[DataIter],
        rename_data: list[dict[str, str]] | None = None,
        rename_label: list[dict[str, str]] | None = None,
        pin_memory: bool = False,
    ) -> None:
        self.iters = list(iters) if isinstance(iters, (list, tuple)) else [iters]
        if not self.iters:
            raise DataError("PrefetchingIter: needs at least one iterator")
        for source in self.iters:
            _check_iterator("PrefetchingIter", source)
        super().__init__(self.iters[0].batch_size)
        for what, renames in (("rename_data", rename_data), ("rename_label", rename_label)):
            if renames is not None and (
                not isinstance(renames, (list, tuple)) or not all(isinstance(r, dict) for r in renames)
            ):
                raise DataError(f"PrefetchingIter: {what} must be a list of dicts, one per iterator; got {renames!r}")
            if renames is not None and len(renames) != len(self.iters):
                raise DataError(
                    f"PrefetchingIter: {what} needs one dict per iterator ({len(self.iters)}), got {len(renames)}"
                )
            for i, (source, rename) in enumerate(zip(self.iters, renames or [], strict=False)):
                _check_rename_names(what, i, rename, source)
        self.n_iter = len(self.iters)  # as MXNet's
        self.rename_data = rename_data
        self.rename_label = rename_label
        self._workers = [_Worker(source, bool(pin_memory)) for source in self.iters]
        self.current_batch: DataBatch | None = None

    def __del__(self) -> None:
        for worker in getattr(self, "_workers", []):
            worker.running = False
            worker.taken.set()

    @staticmethod
    def _renamed(descs: list[DataDesc], renames: dict[str, str] | None) -> list[DataDesc]:
        if not renames:
            return list(descs)
        return [DataDesc(renames.get(d.name, d.name), d.shape, d.dtype, d.layout) for d in descs]

    def _joined(
        self, batches: list[Any], field: str, renames: Sequence[dict[str, str] | None] | None
    ) -> list[DataDesc] | None:
        descs = [getattr(b, field) for b in batches]
        if any(d is None for d in descs):
            return None
        return [
            d for desc, r in zip(descs, renames or [None] * len(descs), strict=False) for d in self._renamed(desc, r)
        ]

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_data(self) -> list[DataDesc]:
        renames: Sequence[dict[str, str] | None] = self.rename_data or [None] * len(self.iters)
        return [d for it, r in zip(self.iters, renames, strict=False) for d in self._renamed(it.provide_data, r)]

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_label(self) -> list[DataDesc]:
        renames: Sequence[dict[str, str] | None] = self.rename_label or [None] * len(self.iters)
        return [d for it, r in zip(self.iters, renames, strict=False) for d in self._renamed(it.provide_label, r)]

    def reset(self) -> None:
        for worker in self._workers:
            worker.reset()

    def iter_next(self) -> bool:
        batches = [worker.take() for worker in self._workers]
        if any(b is None for b in batches):
            if not all(b is None for b in batches):
                raise DataError("PrefetchingIter: the wrapped iterators ended after different numbers of batches")
            self.current_batch = None
            return False
        pads = {b.pad or 0 for b in batches}  # type: ignore[union-attr]
        if len(pads) != 1:
            raise DataError(f"PrefetchingIter: the wrapped iterators gave different pads {sorted(pads)}")
        self.current_batch = DataBatch(
            data=[d for b in batches for d in b.data],  # type: ignore[union-attr]
            label=[lab for b in batches for lab in (b.label or [])],  # type: ignore[union-attr]
            pad=batches[0].pad,  # type: ignore[union-attr]
            index=batches[0].index,  # type: ignore[union-attr]
            provide_data=self._joined(batches, "provide_data", self.rename_data),
            provide_label=self._joined(batches, "provide_label", self.rename_label),
        )
        for worker in self._workers:
            worker.request()
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        assert self.current_batch is not None
        return self.current_batch

    def getdata(self) -> list[Any]:
        return self._current().data

    def getlabel(self) -> list[Any] | None:
        return self._current().label

    def getpad(self) -> int:
        return self._current().pad or 0

    def getindex(self) -> Any:
        return self._current().index

    def _current(self) -> DataBatch:
        if self.current_batch is None:
            raise DataError("PrefetchingIter: no current batch; call iter_next() or next() first")
        return self.current_batch


class ResizeIter(DataIter):
    """Give exactly ``size`` batches per epoch, restarting the wrapped iterator as needed.

    Examples
    --------
    >>> import numpy as np
    >>> from lazynd.io import NDArrayIter
    >>> it = ResizeIter(NDArrayIter(np.arange(4), batch_size=2), size=3)
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        _check_iterator("ResizeIter", data_iter)
        super().__init__(data_iter.batch_size)
        if not isinstance(size, int) or size <= 0:
            raise DataError(f"ResizeIter: size must be a positive int, got {size!r}")
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_data(self) -> list[DataDesc]:
        return self.data_iter.provide_data

    @property  # type: ignore[misc]  # read-only here; DataIter lets subclasses assign it
    def provide_label(self) -> list[DataDesc]:
        return self.data_iter.provide_label

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise DataError("ResizeIter: the wrapped iterator gives no batches") from None
        self.cur += 1
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        assert self.current_batch is not None
        return self.current_batch

    def getdata(self) -> list[Any]:
        return self.current_batch.data  # type: ignore[union-attr]

    def getlabel(self) -> list[Any] | None:
        return self.current_batch.label  # type: ignore[union-attr]

    def getpad(self) -> int:
        return self.current_batch.pad or 0  # type: ignore[union-attr]

    def getindex(self) -> Any:
        return self.current_batch.index  # type: ignore[union-attr]
