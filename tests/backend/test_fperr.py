"""lazynd.backend.fperr.quiet: NumPy's divide/overflow/invalid warnings off, nothing else changed."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend.fperr import quiet


def test_quiet_silences_divide_overflow_and_invalid() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with quiet():
            assert np.isinf(np.divide(np.float32(1), np.float32(0)))
            assert np.isinf(np.exp(np.float32(1000)))
            assert np.isnan(np.sqrt(np.float32(-1)))
        with pytest.raises(RuntimeWarning):  # and only inside the block
            np.divide(np.float32(1), np.float32(0))


def test_quiet_keeps_the_callers_other_settings_and_restores_them() -> None:
    with np.errstate(under="raise", divide="raise"):
        before = np.geterr()
        with quiet():
            inside = np.geterr()
            with pytest.raises(FloatingPointError):  # underflow still raises, as the caller asked
                np.multiply(np.float32(1e-30), np.float32(1e-30))
        assert np.geterr() == before
    assert inside == {**before, "divide": "ignore", "over": "ignore", "invalid": "ignore"}


def test_quiet_is_per_thread() -> None:
    default = np.geterr()
    seen: list[dict] = []
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with quiet():
            entered.set()
            leave.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(5)
    seen.append(np.geterr())  # this thread's state while the other one is inside quiet()
    leave.set()
    thread.join(5)
    assert seen[0] == default == np.geterr()


@pytest.mark.parametrize("size", [3, 100_000])  # the run-now fast path and a pushed kernel
def test_operators_give_inf_and_nan_without_warnings(size: int) -> None:
    a = mx.nd.array(np.resize(np.array([1e30, 0.0, -1.0], np.float32), size))
    zero = mx.nd.zeros((size,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quotient = (a / zero).asnumpy()
        power = (a**3.0).asnumpy()
        log = mx.nd.log(a).asnumpy()
        remainder = (a % zero).asnumpy()
    assert np.isinf(quotient[0]) and np.isnan(quotient[1])
    assert np.isinf(power[0])
    assert np.isnan(log[2]) and np.isinf(log[1])
    assert np.isnan(remainder).all()
