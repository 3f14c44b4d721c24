"""Image decoding and ImageIter throughput; prints one table.

Decoding 200 JPEGs three ways, rounds interleaved, best of each: a serial
``cv2.imdecode`` + ``cvtColor`` loop; two raw Python threads doing the same
loop over half the images each (what the machine gives two threads right now:
on a quiet 2-core machine about 2x, on a loaded one less); and
``image.imdecode`` in a list comprehension, which pushes every decode to the
engine's workers.  Process CPU time is shown beside wall time: CPU / wall is
the number of cores a run really kept busy.

Run: ``python bench/image.py`` (LAZYND_CPU_WORKERS sets the decoding threads).
Profiler overhead lives in ``bench/profiler.py``.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable

import cv2
import numpy as np

import lazynd as mx
from lazynd import image
from lazynd.engine import get_engine


def _jpegs(count: int = 200, size: int = 256) -> list[bytes]:
    rng = np.random.default_rng(0)
    base = cv2.resize(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8), (size, size))
    return [
        cv2.imencode(".jpg", np.roll(base, i, axis=1), [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
        for i in range(count)
    ]


def _best(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _decode_rgb(arrays: list[np.ndarray]) -> None:
    for a in arrays:
        cv2.cvtColor(cv2.imdecode(a, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def bench_decode(bufs: list[bytes], rounds: int = 7) -> dict[str, tuple[float, float]]:
    """Best (wall s, process CPU s) of the serial loop, two raw threads and image.imdecode."""
    arrays = [np.frombuffer(b, np.uint8) for b in bufs]

    def serial() -> None:
        _decode_rgb(arrays)

    def raw_threads() -> None:
        threads = [threading.Thread(target=_decode_rgb, args=(arrays[i::2],)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def lazy() -> None:
        outs = [image.imdecode(b) for b in bufs]
        mx.waitall()
        del outs

    runs = {"serial": serial, "raw": raw_threads, "imdecode": lazy}
    best = {name: (float("inf"), float("inf")) for name in runs}
    lazy()  # warm up the workers
    for _ in range(rounds):
        for name, fn in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def bench_iter(bufs: list[bytes], folder: str) -> float:
    rec = os.path.join(folder, "bench.rec")
    with mx.recordio.MXRecordIO(rec, "w") as writer:
        for i, b in enumerate(bufs):
            writer.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 10), i, 0), b))
    augs = image.CreateAugmenter((3, 224, 224), rand_crop=True, rand_mirror=True, mean=True, std=True)
    it = image.ImageIter(50, (3, 224, 224), path_imgrec=rec, aug_list=augs)

    def epoch():
        it.reset()
        for batch in it:
            batch.data[0].wait_to_read()

    return len(bufs) / _best(epoch, 3)


def main() -> None:
    bufs = _jpegs()
    with tempfile.TemporaryDirectory() as folder:
        decode = bench_decode(bufs)
        rate = bench_iter(bufs, folder)
    serial = decode["serial"][0]
    workers = get_engine().num_workers
    labels = {
        "serial": "serial cv2.imdecode + cvtColor loop",
        "raw": "2 raw Python threads, same loop (reference)",
        "imdecode": f"image.imdecode, {workers} engine workers",
    }
    print(f"decode 200 JPEG 256x256 to RGB; best of 7 interleaved rounds; os.cpu_count()={os.cpu_count()}")
    print(f"{'method':<46} {'wall ms':>8} {'CPU ms':>8} {'CPU/wall':>9} {'speed-up':>9}")
    for name, (wall, cpu) in decode.items():
        print(f"{labels[name]:<46} {wall * 1e3:>8.1f} {cpu * 1e3:>8.1f} {cpu / wall:>9.2f} {serial / wall:>8.2f}x")
    raw, lazy = decode["raw"][0], decode["imdecode"][0]
    print(f"{'image.imdecode vs 2 raw threads (wall ratio)':<46} {raw / lazy:>8.2f}")
    print(f"{'ImageIter 224x224 crop+mirror+normalize':<46} {rate:>8.0f} img/s")


if __name__ == "__main__":
    main()
