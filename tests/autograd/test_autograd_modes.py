"""mx.autograd's per-thread flags: record, pause, train_mode, predict_mode, and what they change."""

from __future__ import annotations

import threading

import numpy as np

import lazynd as mx
from lazynd import autograd
from lazynd.ndarray import dispatch


def test_the_flags_are_off_outside_every_scope() -> None:
    assert not autograd.is_recording()
    assert not autograd.is_training()


def test_record_turns_on_recording_and_training_and_restores_them() -> None:
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()


def test_record_in_predict_mode_records_without_training() -> None:
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()


def test_pause_stops_recording_and_training_inside_record() -> None:
    with autograd.record():
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.pause(train_mode=True):
            assert not autograd.is_recording() and autograd.is_training()
        assert autograd.is_recording() and autograd.is_training()


def test_train_mode_and_predict_mode_leave_recording_as_it_is() -> None:
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
    with autograd.record():
        with autograd.predict_mode():
            assert not autograd.is_training() and autograd.is_recording()


def test_set_recording_and_set_training_return_the_previous_setting() -> None:
    assert autograd.set_recording(True) is False
    try:
        assert autograd.is_recording()
        assert autograd.set_training(True) is False
        assert autograd.set_training(False) is True
    finally:
        assert autograd.set_recording(False) is True
    assert dispatch.recorder is None


def test_a_scope_is_left_as_it_was_entered_when_its_block_raises() -> None:
    try:
        with autograd.record():
            raise ValueError("inside")
    except ValueError:
        pass
    assert not autograd.is_recording() and not autograd.is_training()


def test_operations_outside_record_are_not_recorded_and_cost_no_recorder() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    assert dispatch.recorder is None  # invoke's one check finds nothing to do
    y = x * 2
    z = mx.nd.relu(y)
    view = z[0:1]
    assert y._ag is None and z._ag is None and view._ag is None


def test_operations_paused_inside_record_are_not_recorded() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        with autograd.pause():
            y = x * 2
        z = x * 3
    assert y._ag is None
    assert z._ag is not None


def test_operations_on_arrays_no_variable_reaches_are_not_recorded() -> None:
    a = mx.nd.array([1.0, 2.0])
    with autograd.record():
        b = a * 2
    assert b._ag is None


def test_dropout_drops_in_training_mode_only() -> None:
    x = mx.nd.ones((2000,))
    with autograd.record():
        recorded = mx.nd.Dropout(x, p=0.5).asnumpy()
    with autograd.record(train_mode=False):
        predicted = mx.nd.Dropout(x, p=0.5).asnumpy()
    with autograd.train_mode():
        trained = mx.nd.Dropout(x, p=0.5).asnumpy()
    plain = mx.nd.Dropout(x, p=0.5).asnumpy()
    assert 0 < (recorded == 0).sum() < 2000 and 0 < (trained == 0).sum() < 2000
    np.testing.assert_array_equal(predicted, 1.0)
    np.testing.assert_array_equal(plain, 1.0)


def test_batchnorm_uses_batch_statistics_and_updates_moving_ones_in_training_mode() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    gamma, beta = mx.nd.ones((2,)), mx.nd.zeros((2,))
    moving_mean, moving_var = mx.nd.zeros((2,)), mx.nd.ones((2,))
    with autograd.record(train_mode=False):
        predicted = mx.nd.BatchNorm(x, gamma, beta, moving_mean, moving_var).asnumpy()
    np.testing.assert_allclose(moving_mean.asnumpy(), [0.0, 0.0])
    np.testing.assert_allclose(predicted, x.asnumpy() / np.sqrt(1 + 1e-3), rtol=1e-5)
    with autograd.train_mode():
        trained = mx.nd.BatchNorm(x, gamma, beta, moving_mean, moving_var).asnumpy()
    np.testing.assert_allclose(trained.mean(axis=0), [0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(moving_mean.asnumpy(), [0.2, 0.4], rtol=1e-5)  # momentum 0.9


def test_recording_in_one_thread_records_nothing_of_another() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    recording, done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def other_thread() -> None:
        recording.wait()
        seen["recording"] = autograd.is_recording()
        seen["entry"] = (x * 2)._ag
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with autograd.record():
        recording.set()
        done.wait(10)
        y = x * 3
    thread.join()
    assert seen == {"recording": False, "entry": None}
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 3.0])
    assert dispatch.recorder is None


def test_each_thread_records_its_own_graph() -> None:
    errors: list[BaseException] = []

    def train(scale: float) -> None:
        try:
            for _ in range(20):
                x = mx.nd.array([1.0, 2.0, 3.0])
                x.attach_grad()
                with autograd.record():
                    y = (x * x * scale).sum()
                y.backward()
                np.testing.assert_allclose(x.grad.asnumpy(), 2 * scale * np.array([1.0, 2.0, 3.0]))
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=train, args=(s,)) for s in (1.0, 2.0, 3.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert dispatch.recorder is None


def test_one_scope_object_entered_by_two_threads_at_once_restores_each_threads_flags() -> None:
    # a module-level scope shared by workers: entered by A, then B, left by A, then B; each thread
    # got back the other's flags (A left training, B lost the train_mode() it was in)
    scope = autograd.record()
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, tuple[bool, bool]] = {}

    def thread_a() -> None:
        with scope:
            a_inside.set()
            b_inside.wait(10)
        seen["a"] = (autograd.is_recording(), autograd.is_training())
        a_left.set()

    def thread_b() -> None:
        a_inside.wait(10)
        with autograd.train_mode():
            with scope:
                b_inside.set()
                a_left.wait(10)
            seen["b"] = (autograd.is_recording(), autograd.is_training())

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": (False, False), "b": (False, True)}
    assert dispatch.recorder is None


def test_a_thread_that_ends_with_a_flag_set_no_longer_slows_the_others() -> None:
    # a worker thread sets training mode for its whole life and never turns it off: its flags
    # end with it, and so must the recorder that every call of every thread went through
    def worker() -> None:
        autograd.set_training(True)
        autograd.set_recording(True)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert not autograd.is_training() and not autograd.is_recording()
    assert dispatch.recorder is None
    with autograd.record():  # and the count goes on from there
        assert dispatch.recorder is not None
    assert dispatch.recorder is None
