"""Random programs over aliasing arrays, run lazily and eagerly in NumPy: results must match exactly."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

N_PROGRAMS = 1000  # per engine: 2,000 in all
N_STEPS = 12
SHAPE = (6, 4)


def _run_program(seed: int, ctx: mx.Context | None = None, other_ctx: mx.Context | None = None) -> None:
    """One random program on ``ctx`` (default cpu(0)); copies go to ``other_ctx`` and back."""
    ctx = ctx or mx.cpu(0)
    other_ctx = other_ctx or mx.cpu(1)
    rng = np.random.default_rng(seed)
    ref = [rng.integers(-3, 4, SHAPE).astype(np.float32) for _ in range(3)]
    arrs = [mx.nd.array(r, ctx=ctx) for r in ref]
    for step in range(N_STEPS):
        choice = int(rng.integers(9))
        i, j = (int(v) for v in rng.integers(3, size=2))
        lo = int(rng.integers(0, SHAPE[0] - 1))
        hi = int(rng.integers(lo + 1, SHAPE[0] + 1))
        scalar = float(rng.integers(-2, 3))
        if choice == 0:  # out-of-place binary, result replaces slot i
            arrs[i], ref[i] = arrs[i] + arrs[j], ref[i] + ref[j]
        elif choice == 1:  # in-place
            arrs[i] *= arrs[j] if i != j else 1.0
            ref[i] *= ref[j] if i != j else np.float32(1.0)
        elif choice == 2:  # write through a view of the first axis
            view = arrs[i][lo:hi]
            view += scalar
            ref[i][lo:hi] += scalar
        elif choice == 3:  # slice assignment from another (aliasing) array
            arrs[i][lo:hi] = arrs[j][lo:hi] - 1
            ref[i][lo:hi] = ref[j][lo:hi] - 1
        elif choice == 4:  # copy across contexts (ctx -> other_ctx -> back)
            other = arrs[j].copyto(other_ctx)
            other += 2
            other.copyto(arrs[i])
            ref[i] = ref[j] + 2
        elif choice == 5:  # read in the middle of the program
            np.testing.assert_array_equal(arrs[i].asnumpy(), ref[i], err_msg=f"seed {seed} step {step}")
        elif choice == 6:  # fill with a scalar
            arrs[i][:] = scalar
            ref[i][:] = scalar
        elif choice == 7:  # reshape view then write
            flat = arrs[i].reshape((-1,))
            flat[2:5] = scalar * 3
            ref[i].reshape(-1)[2:5] = scalar * 3
        else:  # a row written from a lazily computed product
            arrs[i][lo] = (arrs[j][lo] * scalar).reshape((SHAPE[1],))
            ref[i][lo] = ref[j][lo] * scalar
    for k in range(3):
        np.testing.assert_array_equal(arrs[k].asnumpy(), ref[k], err_msg=f"seed {seed} final array {k}")


@pytest.mark.parametrize("chunk", range(4))
def test_random_programs_match_numpy(engine_name: str, chunk: int) -> None:
    per_chunk = N_PROGRAMS // 4
    for seed in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        _run_program(seed)
    mx.nd.waitall()


def test_random_programs_with_queued_execution(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same programs with the inline fast path off: every op goes through the worker queue."""
    from lazynd.runtime import device_push

    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", -1)
    for seed in range(10_000, 10_200):
        _run_program(seed)
    mx.nd.waitall()
