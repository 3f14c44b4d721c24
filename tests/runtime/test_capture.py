"""lazynd.runtime.capture: what a PushCapture records of the operations its thread pushes."""

from __future__ import annotations

import threading

import numpy as np

import lazynd as mx
from lazynd.runtime import push
from lazynd.runtime.capture import PushCapture


def test_a_capture_records_its_thread_pushes_in_order_and_they_still_run() -> None:
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    with PushCapture() as seen:
        c = a + b
        d = c * 2
        a[:] = np.array([5.0, 6.0])  # an assignment from the host: run_if_free
    assert seen.complete and not seen.nested
    names = [name for *_, name in seen.pushes]
    # the assignment is noted at run_if_free, and again at its push when it could not run at once
    assert names[:3] == ["_plus", "_mul_scalar", "_set_value"] and set(names[3:]) <= {"_set_value"}
    ctx, fn, args, reads, writes, name = seen.pushes[0]
    assert ctx == mx.cpu() and reads == [a.var, b.var] and writes == [c.var]
    np.testing.assert_array_equal(d.asnumpy(), [8.0, 12.0])
    np.testing.assert_array_equal(a.asnumpy(), [5.0, 6.0])


def test_pushes_of_other_threads_are_not_part_of_a_capture() -> None:
    a = mx.nd.array([1.0, 2.0])
    with PushCapture() as seen:
        other = threading.Thread(target=lambda: (a + 1).wait_to_read())
        other.start()
        other.join()
        b = a * 3
    assert [name for *_, name in seen.pushes] == ["_mul_scalar"]
    np.testing.assert_array_equal(b.asnumpy(), [3.0, 6.0])


def test_one_capture_at_a_time_the_second_records_nothing() -> None:
    a = mx.nd.array([1.0])
    with PushCapture() as outer:
        with PushCapture() as inner:
            a + 1
        a + 2
    assert outer.complete and [name for *_, name in outer.pushes] == ["_plus_scalar", "_plus_scalar"]
    assert not inner.complete and inner.pushes == []
    with PushCapture() as after:  # the first one closed: a new one records
        a + 3
    assert after.complete and len(after.pushes) == 1


def test_an_operation_pushing_operations_of_its_own_makes_the_capture_nested() -> None:
    a = mx.nd.array([1.0, 2.0])
    out = mx.nd.zeros((2,))

    def outer(data: np.ndarray) -> None:  # runs at push (its vars are free): pushes from inside
        (a * 2).copyto(out)

    with PushCapture() as seen:
        push(a.context, outer, (a.data_array,), [a.var], [], "outer", 0)
        mx.nd.waitall()
    assert seen.nested
    assert [name for *_, name in seen.pushes][:2] == ["outer", "_mul_scalar"]
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 4.0])
    with PushCapture() as flat:
        b = a + 1
    assert not flat.nested
    np.testing.assert_array_equal(b.asnumpy(), [2.0, 3.0])
