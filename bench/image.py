"""Image decoding, ImageIter throughput and profiler overhead; prints one table.

Run: ``python bench/image.py`` (LAZYND_CPU_WORKERS sets the decoding threads).
"""

from __future__ import annotations

import os
import tempfile
import time

import cv2
import numpy as np

import lazynd as mx
from lazynd import image, profiler


def _jpegs(count: int = 200, size: int = 256) -> list[bytes]:
    rng = np.random.default_rng(0)
    base = cv2.resize(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8), (size, size))
    return [
        cv2.imencode(".jpg", np.roll(base, i, axis=1), [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
        for i in range(count)
    ]


def _best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_decode(bufs: list[bytes]) -> tuple[float, float]:
    def serial():
        for b in bufs:
            cv2.cvtColor(cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)

    def lazy():
        outs = [image.imdecode(b) for b in bufs]
        mx.waitall()
        return outs

    return _best(serial), _best(lazy)


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


def bench_profiler_overhead(folder: str) -> tuple[float, float]:
    x = mx.nd.ones((64, 64))
    w = mx.nd.ones((64, 64)) * 0.01

    def loop():
        y = x
        for _ in range(2000):
            y = mx.nd.dot(y, w) + x
        y.wait_to_read()

    off = _best(loop)
    profiler.set_config(mode="all", filename=os.path.join(folder, "profile.json"))
    profiler.set_state("run")
    on = _best(loop)
    profiler.set_state("stop")
    profiler.reset()
    return off, on


def main() -> None:
    bufs = _jpegs()
    with tempfile.TemporaryDirectory() as folder:
        serial, lazy = bench_decode(bufs)
        rate = bench_iter(bufs, folder)
        off, on = bench_profiler_overhead(folder)
    print(f"{'benchmark':<48} {'value':>12}")
    print(f"{'decode 200 JPEG 256x256, serial cv2 (ms)':<48} {serial * 1e3:>12.1f}")
    print(f"{'decode 200 JPEG 256x256, image.imdecode (ms)':<48} {lazy * 1e3:>12.1f}")
    print(f"{'  speed-up':<48} {serial / lazy:>11.2f}x")
    print(f"{'ImageIter 224x224 crop+mirror+normalize (img/s)':<48} {rate:>12.0f}")
    print(f"{'4000 small ops, profiler stopped (ms)':<48} {off * 1e3:>12.1f}")
    print(f"{'4000 small ops, profiler running (ms)':<48} {on * 1e3:>12.1f}")
    print(f"{'  profiler overhead':<48} {(on / off - 1) * 100:>11.1f}%")


if __name__ == "__main__":
    main()
