"""MXNet's NumPy-shape switch: mx.np_shape, mx.use_np_shape, mx.is_np_shape, mx.set_np_shape."""

from __future__ import annotations

import threading

import lazynd as mx


def test_switch_is_off_by_default_and_restored_after_the_block():
    assert mx.is_np_shape() is False
    with mx.np_shape():
        assert mx.is_np_shape() is True
        with mx.np_shape(active=False):
            assert mx.is_np_shape() is False
        assert mx.is_np_shape() is True
    assert mx.is_np_shape() is False


def test_set_np_shape_returns_the_previous_state():
    assert mx.set_np_shape(True) is False
    assert mx.set_np_shape(False) is True
    assert mx.is_np_shape() is False


def test_use_np_shape_keeps_the_name_and_docstring_and_switches_on_inside():
    @mx.use_np_shape
    def scalar_one():
        """A scalar one."""
        assert mx.is_np_shape()
        return mx.nd.ones(shape=())

    assert scalar_one.__name__ == "scalar_one"
    assert scalar_one.__doc__ == "A scalar one."
    assert scalar_one().shape == ()
    assert mx.is_np_shape() is False


def test_zero_size_and_scalar_shapes_work_with_the_switch_on_or_off():
    for active in (True, False):
        with mx.np_shape(active=active):
            assert mx.nd.ones(shape=()).shape == ()
            assert mx.nd.zeros((0, 1, 3, 0)).shape == (0, 1, 3, 0)


def test_the_switch_belongs_to_the_calling_thread():
    seen = []
    with mx.np_shape():
        worker = threading.Thread(target=lambda: seen.append(mx.is_np_shape()))
        worker.start()
        worker.join()
    assert seen == [False]


def test_util_is_reachable_as_mx_util():
    assert mx.util.np_shape is mx.np_shape
