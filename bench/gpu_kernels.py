"""Bandwidth of lazynd's GPU kernels on 64M float32 elements, against a device-to-device copy of
the same bytes and against PyTorch on the same card (when it has CUDA).

Rows: elementwise ``a + b``; broadcasts ``a + row`` ((rows, cols) + (cols,)), ``a + column``
((rows, cols) + (rows, 1)) and a 3-d one in which no dimensions collapse ((2048, 256, 128) +
(1, 256, 1)); a whole-array and a last-axis ``sum``; a last-axis ``softmax`` of (2048, 32768) (long
rows, a block of 1024 threads each, read twice), (65536, 1024) (short rows, several a block, in
registers), (16384, 4096) (in registers) and (4096, 16384) (a block of 512 threads a row), (64,
1048576) (few long rows, cut in pieces)
and (32, 32000) (few rows, small: launch-bound); the softmax gradient of (65536, 1024).  Each figure
is the best of ``--repeat`` timed launches after a warm-up, host clock around ``waitall`` /
``torch.cuda.synchronize``; GB/s counts the bytes each operation must read and write once.  A last table times the (65536, 1024) softmax read
and written an element at a time against 16 bytes at a time.  Run: ``python bench/gpu_kernels.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _table import best_of  # noqa: E402


def _best(run: Callable[[], object], sync: Callable[[], None], repeat: int, launches: int = 1) -> float:
    """Seconds per launch: the best of ``repeat`` samples, each ``launches`` calls back to back and one
    wait.  With one launch a sample the figure includes the host's time to issue the call and to see it
    done; with several, the host issues the next while the GPU runs one, and what is left is the kernel."""
    run()  # warm-up: kernels compiled, pool blocks cached
    sync()

    def sample() -> None:
        for _ in range(launches):
            run()
        sync()

    return best_of(sample, repeat) / launches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--elements", type=int, default=64 << 20, help="elements per array (default 64M)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--launches", type=int, default=10, help="calls back to back in each timed sample")
    args = parser.parse_args()

    import lazynd as mx

    if mx.num_gpus() == 0:
        print("bench/gpu_kernels.py: no GPU visible; nothing to measure")
        return
    try:
        import torch

        has_torch = torch.cuda.is_available()
    except ImportError:
        has_torch = False

    n, cols = args.elements, 32768
    rows = n // cols
    ctx = mx.gpu(0)
    rng = np.random.default_rng(0)
    host = rng.standard_normal((rows, cols), dtype=np.float32)
    a, b = mx.nd.array(host, ctx=ctx), mx.nd.array(host[::-1].copy(), ctx=ctx)
    row = mx.nd.array(host[:1], ctx=ctx)
    column = mx.nd.array(host[:, :1], ctx=ctx)
    cube_shape = (rows, 256, cols // 256)
    cube, middle = a.reshape(cube_shape), mx.nd.array(host[0, :256].reshape(1, 256, 1), ctx=ctx)
    small = mx.nd.array(rng.standard_normal((32, 32000), dtype=np.float32), ctx=ctx)
    short = a.reshape((a.size // 1024, 1024))  # 64M elements in rows of 1024
    few = a.reshape((64, a.size // 64))
    mid4k, mid16k = (a.size // 4096, 4096), (a.size // 16384, 16384)  # rows of 4096 and 16384, in registers
    short_y = mx.nd.softmax(short)
    out = mx.nd.empty(a.shape, ctx=ctx)
    mx.nd.waitall()
    # the first operation of a kind compiles its kernel (NVRTC; CuPy's disk cache serves later runs)
    first = time.perf_counter()
    mx.nd.elemwise_add(a[:1], b[:1]).wait_to_read()
    first_use = time.perf_counter() - first
    nbytes = a.size * 4
    cases: list[tuple[str, Callable[[], object], float, Callable[[], object] | None]] = [
        ("d2d copy", lambda: a.copyto(out), 2 * nbytes, None),
        ("a + b", lambda: mx.nd.elemwise_add(a, b, out=out), 3 * nbytes, None),
        ("a + row (broadcast)", lambda: mx.nd.broadcast_add(a, row, out=out), 2 * nbytes, None),
        ("a + column (broadcast)", lambda: mx.nd.broadcast_add(a, column, out=out), 2 * nbytes, None),
        (
            "(r, 256, 128) + (1, 256, 1)",
            lambda: mx.nd.broadcast_add(cube, middle, out=out.reshape(cube_shape)),
            2 * nbytes,
            None,
        ),
        ("sum (all)", lambda: mx.nd.sum(a), nbytes, None),
        ("sum (last axis)", lambda: mx.nd.sum(a, axis=1), nbytes, None),
        ("softmax (2048, 32768)", lambda: mx.nd.softmax(a, axis=-1, out=out), 2 * nbytes, None),
        (
            "softmax (65536, 1024)",
            lambda: mx.nd.softmax(short, axis=-1, out=out.reshape(short.shape)),
            2 * nbytes,
            None,
        ),
        (
            "softmax (16384, 4096)",
            lambda: mx.nd.softmax(a.reshape(mid4k), axis=-1, out=out.reshape(mid4k)),
            2 * nbytes,
            None,
        ),
        (
            "softmax (4096, 16384)",
            lambda: mx.nd.softmax(a.reshape(mid16k), axis=-1, out=out.reshape(mid16k)),
            2 * nbytes,
            None,
        ),
        ("softmax (64, 1048576)", lambda: mx.nd.softmax(few, axis=-1, out=out.reshape(few.shape)), 2 * nbytes, None),
        ("softmax (32, 32000)", lambda: mx.nd.softmax(small, axis=-1), 2 * small.size * 4, None),
        ("softmax grad (65536, 1024)", lambda: mx.nd._backward_softmax(short, short_y), 3 * nbytes, None),
    ]
    if has_torch:
        ta, tb = torch.from_numpy(host).cuda(), torch.from_numpy(host[::-1].copy()).cuda()
        trow, tsmall, tout = ta[:1].clone(), torch.from_numpy(small.asnumpy()).cuda(), torch.empty_like(ta)
        tcolumn, tmiddle = ta[:, :1].clone(), torch.from_numpy(middle.asnumpy()).cuda()
        tcube, tcube_out = ta.view(cube_shape), tout.view(cube_shape)
        tshort, tfew = ta.view(short.shape), ta.view(few.shape)
        tshort_y = torch.softmax(tshort, dim=-1)
        torch_runs: list[Callable[[], object]] = [
            lambda: tout.copy_(ta),
            lambda: torch.add(ta, tb, out=tout),
            lambda: torch.add(ta, trow, out=tout),
            lambda: torch.add(ta, tcolumn, out=tout),
            lambda: torch.add(tcube, tmiddle, out=tcube_out),
            lambda: ta.sum(),
            lambda: ta.sum(dim=1),
            lambda: torch.softmax(ta, dim=-1),
            lambda: torch.softmax(tshort, dim=-1),
            lambda: torch.softmax(ta.view(mid4k), dim=-1),
            lambda: torch.softmax(ta.view(mid16k), dim=-1),
            lambda: torch.softmax(tfew, dim=-1),
            lambda: torch.softmax(tsmall, dim=-1),
            lambda: torch._softmax_backward_data(tshort, tshort_y, -1, torch.float32),
        ]
        cases = [
            (name, run, moved, torch_run) for (name, run, moved, _), torch_run in zip(cases, torch_runs, strict=True)
        ]

    device = torch.cuda.get_device_name(0) if has_torch else "gpu(0)"
    print(
        f"GPU kernels, {n / 2**20:.0f}M float32 ({nbytes / 2**20:.0f} MiB per array) on {device}; "
        f"ms a launch: best of {args.repeat} samples of {args.launches} launches back to back and one wait; "
        "'one' is a sample of one launch (the host's issue and wait included)"
    )
    print(f"first a + b in this process (compiles one kernel): {first_use:.2f} s")
    print(
        f"{'operation':<28}{'lazynd ms':>10}{'GB/s':>8}{'of copy':>9}{'one ms':>8}{'torch ms':>10}{'GB/s':>8}{'one ms':>8}"
    )
    copy_rate = None
    for name, run, moved, torch_run in cases:
        seconds = _best(run, mx.nd.waitall, args.repeat, args.launches)
        single = _best(run, mx.nd.waitall, args.repeat)
        rate = moved / seconds / 1e9
        copy_rate = copy_rate or rate
        line = f"{name:<28}{seconds * 1e3:>10.3f}{rate:>8.0f}{rate / copy_rate:>8.0%} {single * 1e3:>8.3f}"
        if torch_run is not None:
            torch_seconds = _best(torch_run, torch.cuda.synchronize, args.repeat, args.launches)
            torch_single = _best(torch_run, torch.cuda.synchronize, args.repeat)
            line += f"{torch_seconds * 1e3:>10.3f}{moved / torch_seconds / 1e9:>8.0f}{torch_single * 1e3:>8.3f}"
        print(line)
    layouts(mx, short, out.reshape(short.shape), 2 * nbytes, copy_rate or 1.0, args.repeat, args.launches)


def layouts(mx: object, x: object, out: object, moved: float, copy_rate: float, repeat: int, launches: int) -> None:
    """The register path's softmax of ``x`` (rows of 1024) read and written an element at a time and
    16 bytes at a time (the default where the row and the addresses allow), with the default layout
    (``register_layout``: group threads a row x elements a thread)."""
    from lazynd.ops import softmax_gpu as softmax_module

    chosen = softmax_module.vector_width
    n = x.shape[-1]  # type: ignore[attr-defined]
    group, per_thread = softmax_module.register_layout(n)
    print(f"softmax {tuple(x.shape)} by access, layout {group} x {per_thread}:")  # type: ignore[attr-defined]
    try:
        for label, width in (("an element at a time", lambda *_: 1), ("16 bytes at a time (default)", chosen)):
            softmax_module.vector_width = width
            seconds = _best(lambda: mx.nd.softmax(x, axis=-1, out=out), mx.nd.waitall, repeat, launches)  # type: ignore[attr-defined]
            print(f"  {label:<30}{seconds * 1e3:>8.3f} ms{moved / seconds / 1e9 / copy_rate:>7.0%} of copy")
    finally:
        softmax_module.vector_width = chosen


if __name__ == "__main__":
    main()
