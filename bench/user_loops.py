"""The loops users write, timed against hand-written NumPy and PyTorch eager doing the same work.

Four loops over one MNIST epoch (60,000 images, batch 128) of the 784-128-64-10 ReLU MLP with
a softmax loss, each written as a user would:

- ``seed``: bind with ``simple_bind``; per batch ``arg_dict['data'][:] = batch`` from NumPy
  batches, ``forward(is_train=True)``, ``backward()``, then ``W[:] = W - G * lr`` per weight;
- ``sgd_update``: the same loop with ``mx.nd.sgd_update(W, G, lr=lr, out=W)`` as the update;
- ``fit``: ``FeedForward.fit`` for one epoch (shuffled batches, SGD, the accuracy metric);
- ``autograd``: no symbol: ``nd.FullyConnected``/``nd.relu`` and the same ``SoftmaxOutput`` loss
  head under ``mx.autograd.record()``, ``loss.backward()``, ``mx.nd.sgd_update(W, W.grad, lr=lr,
  out=W)`` (``--autograd-loss softmax_cross_entropy`` for that loss instead; ``--autograd-layer
  dot`` for layers written from scratch, ``nd.dot(h, W, transpose_b=True) + b``); its PyTorch row
  is ``nn.Linear`` layers, ``loss.backward()`` and ``optim.SGD``.

Each has a hand NumPy and a PyTorch eager counterpart doing the same work (the same batch
copies, the same update expression, the same metric).  Every row runs in its own process
(``--row NAME``), with the libraries' default thread settings; the rows are alternated over
``--rounds`` rounds and the table gives each row's median.  Run::

    LAZYND_DATA_DIR=../shared/data python bench/user_loops.py --rounds 3

``--ctx gpu`` runs the lazynd rows on gpu(0) and the PyTorch rows on CUDA (each batch still
copied from NumPy; the hand NumPy rows stay on the CPU as the common reference).

``--clock cpu`` times each epoch by the CPU seconds of all the row's threads instead of the wall
clock: on a shared machine other processes' load slows whole rounds, and barely moves CPU time.
``--sizes 8,8,8,10`` shrinks the MLP (random data) until its arithmetic is next to nothing, so the
epoch is each library's own work per batch: calls, checks, bookkeeping.  Together they measure
where lazynd's time beside hand NumPy goes, on any machine::

    python bench/user_loops.py --rounds 3 --clock cpu --sizes 8,8,8,10

Before the timed epoch every row runs its loop over the first ``--warmup`` batches (default 5)
from fresh parameters, untimed: what a process pays once (kernels compiled or loaded, cuBLAS
handles, memory pools growing) is not part of an epoch.  Those seconds are printed as each
row's cold start; ``--warmup 0`` times a cold first epoch instead.  Then every row runs a full
garbage collection, so that Python's collector does not charge the warm-up's and the data
loading's objects to the timed epoch (a full collection there cost lazynd's ``fit`` 13 ms).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import user_loops_rows
from _table import paired_ratios
from user_loops_rows import (
    BATCH,
    SIZES,
    accuracy,
    lazynd_autograd,
    lazynd_fit,
    lazynd_loop,
    numpy_fit,
    numpy_loop,
    torch_autograd,
    torch_fit,
    torch_loop,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's lazynd, not an installed one
AUTOGRAD_LOSSES = ("SoftmaxOutput", "softmax_cross_entropy")
AUTOGRAD_LOSS = AUTOGRAD_LOSSES[0]  # the autograd loop's loss (--autograd-loss)
AUTOGRAD_LAYERS = ("FullyConnected", "dot")
AUTOGRAD_LAYER = AUTOGRAD_LAYERS[0]  # how the autograd loop's layers are written (--autograd-layer)
DEVICE = "cpu"  # where the lazynd and PyTorch rows run (--ctx); hand NumPy always runs on the CPU

# the device and the autograd loss are read when a row runs: main() sets them from the options
ROWS: dict[str, Callable[[np.ndarray, np.ndarray], tuple[float, list[np.ndarray]]]] = {
    "seed/lazynd": lambda x, y: lazynd_loop(x, y, "seed", DEVICE),
    "seed/numpy": lambda x, y: numpy_loop(x, y, "seed"),
    "seed/torch": lambda x, y: torch_loop(x, y, "seed", DEVICE),
    "sgd_update/lazynd": lambda x, y: lazynd_loop(x, y, "sgd_update", DEVICE),
    "sgd_update/numpy": lambda x, y: numpy_loop(x, y, "sgd_update"),
    "sgd_update/torch": lambda x, y: torch_loop(x, y, "sgd_update", DEVICE),
    "fit/lazynd": lambda x, y: lazynd_fit(x, y, DEVICE),
    "fit/numpy": numpy_fit,
    "fit/torch": lambda x, y: torch_fit(x, y, DEVICE),
    "autograd/lazynd": lambda x, y: lazynd_autograd(x, y, AUTOGRAD_LOSS, DEVICE, AUTOGRAD_LAYER),
    "autograd/numpy": lambda x, y: numpy_loop(x, y, "sgd_update"),
    "autograd/torch": lambda x, y: torch_autograd(x, y, DEVICE),
}


def run_row(name: str, limit: int | None, warmup: int = 0) -> None:
    """Run one row in this process, after ``warmup`` batches of it from fresh parameters;
    print ``{"seconds": ..., "accuracy": ..., "cold": <the warm-up's seconds>}``."""
    x, y = user_loops_rows.load_data()
    if limit:
        x, y = x[:limit], y[:limit]
    cold = ROWS[name](x[: warmup * BATCH], y[: warmup * BATCH])[0] if warmup else 0.0
    gc.collect()  # the warm-up's and the data loading's garbage is collected before the epoch, not in it
    seconds, params = ROWS[name](x, y)
    print(json.dumps({"seconds": seconds, "accuracy": accuracy(params, x[:10000], y[:10000]), "cold": cold}))


def torch_available(device: str) -> bool:
    """Whether PyTorch can run the rows on ``device`` (on ``gpu``, a build with CUDA that sees one:
    a CPU-only build installed beside a GPU would fail every PyTorch row)."""
    try:
        import torch
    except ImportError:
        return False
    return device != "gpu" or torch.cuda.is_available()


def main() -> None:
    global AUTOGRAD_LOSS, AUTOGRAD_LAYER, DEVICE  # the row processes' autograd loop and device, from the options
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every row; the table gives medians")
    parser.add_argument("--loops", default="seed,sgd_update,fit,autograd", help="which loops (comma-separated)")
    parser.add_argument("--limit", type=int, default=0, help="train on the first N images only (0: all)")
    parser.add_argument(
        "--autograd-loss", choices=AUTOGRAD_LOSSES, default=AUTOGRAD_LOSS, help="the autograd loop's loss"
    )
    parser.add_argument(
        "--autograd-layer",
        choices=AUTOGRAD_LAYERS,
        default=AUTOGRAD_LAYER,
        help="the autograd loop's layers: nd.FullyConnected, or nd.dot(h, W, transpose_b=True) + b",
    )
    parser.add_argument(
        "--ctx", choices=("cpu", "gpu"), default=DEVICE, help="device of the lazynd and PyTorch rows (NumPy: the CPU)"
    )
    parser.add_argument(
        "--warmup", type=int, default=5, help="batches each row runs untimed first (0: time a cold epoch)"
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time each epoch by the wall clock, or by the CPU seconds of all the row's threads (cpu: "
        "what other processes' load barely moves; not with --ctx gpu)",
    )
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, SIZES)),
        help="the MLP's layer widths; other than 784 wide, random data (tiny layers time the libraries' "
        "own work per batch: --sizes 8,8,8,10 --clock cpu)",
    )
    parser.add_argument("--row", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    AUTOGRAD_LOSS, AUTOGRAD_LAYER, DEVICE = opts.autograd_loss, opts.autograd_layer, opts.ctx
    if opts.clock == "cpu" and opts.ctx == "gpu":
        parser.error("--clock cpu times the host's work only: use the wall clock with --ctx gpu")
    sizes = tuple(int(v) for v in opts.sizes.split(","))
    if len(sizes) != 4 or min(sizes) < 1 or sizes[-1] != 10:
        parser.error(f"--sizes: four widths >= 1 ending in 10 classes, got {opts.sizes!r}")
    user_loops_rows.SIZES = sizes
    user_loops_rows.CLOCK = time.process_time if opts.clock == "cpu" else time.perf_counter
    if opts.row:
        run_row(opts.row, opts.limit, opts.warmup)
        return
    # PyTorch's CPU seconds count its thread pool's threads spinning between operations (an 8-8-8-10
    # epoch took it 1-8 CPU seconds against 0.04 wall): with --clock cpu it has no comparable row
    faces = ["lazynd", "numpy"] + (["torch"] if torch_available(opts.ctx) and opts.clock == "wall" else [])
    no_torch = "not timed (CPU clock)" if opts.clock == "cpu" else f"not installed (for {opts.ctx})"
    loops = [loop for loop in opts.loops.split(",") if loop]
    rows = [f"{loop}/{face}" for loop in loops for face in faces]
    times: dict[str, list[float]] = {row: [] for row in rows}
    colds: dict[str, list[float]] = {row: [] for row in rows}
    accuracies: dict[str, float] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for r in range(opts.rounds):
        # alternate: each round starts one row further on, so no row always runs first
        for row in rows[r % len(rows) :] + rows[: r % len(rows)]:
            command = [sys.executable, __file__, "--row", row, "--limit", str(opts.limit)]
            command += ["--autograd-loss", opts.autograd_loss, "--autograd-layer", opts.autograd_layer]
            command += ["--ctx", opts.ctx, "--warmup", str(opts.warmup)]
            command += ["--clock", opts.clock, "--sizes", opts.sizes]
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800, check=False)
            if result.returncode != 0:
                raise SystemExit(f"row {row} failed:\n{result.stderr[-3000:]}")
            record = json.loads(result.stdout.strip().splitlines()[-1])
            times[row].append(record["seconds"])
            colds[row].append(record["cold"])
            accuracies[row] = record["accuracy"]
    where = "gpu(0) and CUDA (NumPy on the CPU)" if opts.ctx == "gpu" else "the CPU"
    data = "MNIST" if sizes[0] == 784 else "random data"
    clock = "CPU seconds of every thread" if opts.clock == "cpu" else "s"
    print(
        f"user loops: one {data} epoch, MLP {'-'.join(map(str, sizes))}, batch {BATCH}, on {where}, median of "
        f"{opts.rounds} rounds ({clock}), default threads, after {opts.warmup} warm-up batches"
        + (f"; autograd loop: {opts.autograd_loss} loss, {opts.autograd_layer} layers" if "autograd" in loops else "")
    )
    print(
        "| loop | lazynd s | hand NumPy s | PyTorch eager s | lazynd / NumPy | lazynd / PyTorch | accuracy (lazynd, NumPy, torch) |"
    )
    print("|---|---|---|---|---|---|---|")
    for loop in loops:
        med = {face: statistics.median(times[f"{loop}/{face}"]) for face in faces}
        torch_s = f"{med['torch']:.3f}" if "torch" in med else no_torch
        vs_torch = f"{med['lazynd'] / med['torch']:.2f}" if "torch" in med else "-"
        acc = ", ".join(f"{accuracies[f'{loop}/{face}']:.3f}" for face in faces)
        print(
            f"| {loop} | {med['lazynd']:.3f} | {med['numpy']:.3f} | {torch_s} | "
            f"{med['lazynd'] / med['numpy']:.2f} | {vs_torch} | {acc} |"
        )
    # a shared machine's bursts of load slow whole rounds (every row alike): the best round of each
    # row, beside the medians, shows what a quiet moment gives
    print(f"\nbest of {opts.rounds} rounds (s):")
    print("| loop | lazynd s | hand NumPy s | PyTorch eager s | lazynd / NumPy | lazynd / PyTorch |")
    print("|---|---|---|---|---|---|")
    for loop in loops:
        best = {face: min(times[f"{loop}/{face}"]) for face in faces}
        torch_s = f"{best['torch']:.3f}" if "torch" in best else no_torch
        vs_torch = f"{best['lazynd'] / best['torch']:.2f}" if "torch" in best else "-"
        print(
            f"| {loop} | {best['lazynd']:.3f} | {best['numpy']:.3f} | {torch_s} | "
            f"{best['lazynd'] / best['numpy']:.2f} | {vs_torch} |"
        )
    # a row and its NumPy row run back to back in a round (but where the rotation splits them), so
    # the ratio within one round is the steadier figure on a host whose speed swings between rounds
    print("\nlazynd / hand NumPy, round by round (median, lowest and highest of the rounds):")
    for loop in loops:
        median, low, high = paired_ratios(times[f"{loop}/lazynd"], times[f"{loop}/numpy"])
        print(f"- {loop}: {median:.2f}x ({low:.2f}x to {high:.2f}x)")
    print("\nper round (s): " + "; ".join(f"{row} " + ", ".join(f"{t:.3f}" for t in times[row]) for row in rows))
    if opts.warmup:
        print(
            f"cold start ({opts.warmup} warm-up batches, s, median): "
            + "; ".join(f"{row} {statistics.median(colds[row]):.3f}" for row in rows)
        )


if __name__ == "__main__":
    main()
