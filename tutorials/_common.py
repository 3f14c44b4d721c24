"""What the MNIST tutorials share: command-line options, devices, the KVStore, the data, the schedule.

Each ``tutorials/mnist_*.py`` script imports this module from its own folder
(``python tutorials/mnist_xxx.py`` puts that folder on ``sys.path``), adds its
own options to :func:`base_parser` and builds its run from the helpers below.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def share_cores_between_local_workers() -> None:
    """Give each MPI worker on this machine its share of the cores, before NumPy starts its BLAS threads.

    Workers started together by ``mpiexec`` each default to a BLAS thread pool
    and engine workers as large as the machine; their threads then spin against
    each other and against MPI's polling (an epoch of the MNIST MLP took 7x
    longer with two workers on two cores).  Values already set are kept.
    """
    local_workers = int(os.environ.get("MPI_LOCALNRANKS", "1"))  # set by mpiexec (hydra)
    if local_workers > 1:
        share = str(max(1, (os.cpu_count() or 1) // local_workers))
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LAZYND_CPU_WORKERS"):
            os.environ.setdefault(name, share)


share_cores_between_local_workers()

import lazynd as mx  # noqa: E402  (after the thread settings above)

KV_STORES = ("local", "device", "dist_sync", "dist_device_sync")


def base_parser(
    description: str, *, epochs: int, lr: float, lr_halve_epochs: int, several_devices: bool = True
) -> argparse.ArgumentParser:
    """A parser with the options every MNIST script takes; the defaults differ per script.

    ``several_devices`` adds ``--num-devices`` (for the scripts that train through ``FeedForward``).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ctx", choices=["cpu", "gpu"], default="cpu")
    if several_devices:
        parser.add_argument(
            "--num-devices", type=int, default=1, help="train data parallel on cpu(0..N-1) or gpu(0..N-1)"
        )
    parser.add_argument(
        "--kv-store",
        choices=KV_STORES,
        default="local",
        help="where gradients are summed: 'local' (CPU), 'device' (GPU), 'dist_sync' (MPI workers, "
        "start with mpiexec -n N)",
    )
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=100, help="per worker (split over its devices)")
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument(
        "--lr-halve-epochs", type=int, default=lr_halve_epochs, help="halve the learning rate every N epochs"
    )
    parser.add_argument("--data-dir", default=None, help="folder holding mnist/ (default: $LAZYND_DATA_DIR)")
    parser.add_argument("--max-batches", type=int, default=None, help="batches per epoch (and for the test pass)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def contexts(args: argparse.Namespace) -> list[mx.Context]:
    """``--num-devices`` contexts of the ``--ctx`` kind (one without that option)."""
    count = getattr(args, "num_devices", 1)
    if count < 1:
        raise SystemExit(f"--num-devices must be at least 1, got {count}")
    make = mx.gpu if args.ctx == "gpu" else mx.cpu
    return [make(i) for i in range(count)]


def create_kvstore(args: argparse.Namespace) -> Any:
    """The store for ``--kv-store``: created now when distributed (its rank picks the data), else its name.

    A name lets ``FeedForward`` skip the store on one device, as MXNet does.
    """
    if args.kv_store.startswith("dist"):
        return mx.kv.create(args.kv_store)
    return args.kv_store


def worker_of(kvstore: Any) -> tuple[int, int]:
    """``(rank, num_workers)`` of a store, ``(0, 1)`` for a name."""
    if isinstance(kvstore, str):
        return 0, 1
    return kvstore.rank, kvstore.num_workers


def mnist_iters(
    args: argparse.Namespace, kvstore: Any, test_batch_size: int | None = None, resize: bool = True
) -> tuple[mx.io.DataIter, mx.io.DataIter]:
    """Training and test iterators; with a distributed store each worker reads its own part of the training set.

    With ``--max-batches`` (and ``resize``) both are cut to that many batches.
    """
    rank, num_workers = worker_of(kvstore)
    test_batch_size = test_batch_size or args.batch_size
    train: mx.io.DataIter = mx.io.MNISTIter(
        batch_size=args.batch_size,
        shuffle=True,
        seed=args.seed,
        data_dir=args.data_dir,
        train=True,
        num_parts=num_workers,
        part_index=rank,
    )
    test: mx.io.DataIter = mx.io.MNISTIter(
        batch_size=test_batch_size, shuffle=False, data_dir=args.data_dir, train=False
    )
    if resize and args.max_batches is not None:
        train = mx.io.ResizeIter(train, args.max_batches)
        test = mx.io.ResizeIter(test, min(args.max_batches, 10_000 // test_batch_size))
    return train, test


def batches_per_epoch(args: argparse.Namespace, kvstore: Any) -> int:
    """Training batches each worker runs per epoch."""
    _, num_workers = worker_of(kvstore)
    return args.max_batches or 60_000 // num_workers // args.batch_size


def lr_schedule(args: argparse.Namespace, kvstore: Any) -> mx.lr_scheduler.FactorScheduler:
    """Halve the learning rate every ``--lr-halve-epochs`` epochs (counted in updates)."""
    step = batches_per_epoch(args, kvstore) * args.lr_halve_epochs
    return mx.lr_scheduler.FactorScheduler(step=step, factor=0.5)
