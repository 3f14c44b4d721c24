"""Where the host's time goes in the autograd loop of ``bench/user_loops.py``: a profile.

Runs the lazynd autograd MLP loop (``user_loops_rows.lazynd_autograd``: ``autograd.record``,
``backward``, one ``sgd_update`` per parameter) for ``--batches`` batches under cProfile, on the
context given, and prints the time a batch and the functions that took the most time themselves
and in all (lazynd's and the libraries' it calls), on the main thread only (cProfile's
reach: the engine's worker threads are not seen).  On a GPU the kernels run behind the host, so
this is the host's cost of each operation: what the imperative GPU path spends besides the device.

    python bench/host_profile.py --ctx gpu --batches 200
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from user_loops_rows import BATCH, lazynd_autograd, load_data  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ctx", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--top", type=int, default=30, help="functions listed in each table")
    opts = parser.parse_args()
    x, y = load_data()
    x, y = x[: BATCH * opts.batches], y[: BATCH * opts.batches]
    lazynd_autograd(x[: BATCH * 5], y[: BATCH * 5], "SoftmaxOutput", opts.ctx)  # compiles, allocates
    seconds, _ = lazynd_autograd(x, y, "SoftmaxOutput", opts.ctx)
    print(f"autograd loop on {opts.ctx}: {seconds / opts.batches * 1e3:.3f} ms a batch, unprofiled")
    profile = cProfile.Profile()
    profile.enable()
    seconds, _ = lazynd_autograd(x, y, "SoftmaxOutput", opts.ctx)
    profile.disable()
    print(f"profiled: {seconds / opts.batches * 1e3:.3f} ms a batch; the calls below are of {opts.batches} batches")
    for order in ("tottime", "cumtime"):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(order).print_stats(opts.top)
        print(f"-- by {order} --")
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip()))


if __name__ == "__main__":
    main()
