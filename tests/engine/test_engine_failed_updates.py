"""What a failed operation leaves behind: garbage outputs keep failing; a weight whose in-place
update was skipped keeps its value, and its error counts only until a wait reports it once
(see lazynd.engine.base)."""

from __future__ import annotations

import numpy as np
import pytest

from lazynd.engine import NaiveEngine, ThreadedEngine
from lazynd.engine.var import Var
from lazynd.errors import EngineError


@pytest.fixture(params=["deferring", "plain", "naive"])
def engine(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    made = NaiveEngine() if request.param == "naive" else ThreadedEngine(policy=request.param)
    yield made
    made.shutdown()


def _explode() -> None:
    raise ValueError("gradient boom")


def _subtract(weight: np.ndarray, gradient: np.ndarray) -> None:
    weight -= gradient


def _add_one(array: np.ndarray) -> None:
    array += 1


def _failed_gradient(engine, gradient: Var) -> None:  # type: ignore[no-untyped-def]
    engine.push(_explode, (), [], [gradient], "gradient")


def test_a_weight_whose_update_was_skipped_fails_once_then_keeps_its_value_and_takes_the_next_update(
    engine,  # type: ignore[no-untyped-def]
) -> None:
    # one failed batch used to fail every later one: the next update read the marked weight
    weight, weight_var = np.full(3, 10.0), Var()
    gradient, gradient_var = np.ones(3), Var()
    _failed_gradient(engine, gradient_var)
    engine.push(_subtract, (weight, gradient), [weight_var, gradient_var], [weight_var], "update")
    with pytest.raises(EngineError, match="operator 'gradient' failed: ValueError: gradient boom"):
        engine.wait_for_var(weight_var)
    engine.wait_for_var(weight_var)  # reported: the weight holds its value from before
    engine.waitall()
    np.testing.assert_array_equal(weight, 10.0)
    engine.push(lambda: None, (), [], [gradient_var], "good_gradient")  # the next batch's gradient
    engine.push(_subtract, (weight, gradient), [weight_var, gradient_var], [weight_var], "update")
    engine.wait_for_var(weight_var)
    np.testing.assert_array_equal(weight, 9.0)


def test_the_reported_error_is_not_raised_again_by_waitall(engine) -> None:  # type: ignore[no-untyped-def]
    weight, weight_var, gradient_var = np.zeros(2), Var(), Var()
    _failed_gradient(engine, gradient_var)
    engine.push(_subtract, (weight, np.ones(2)), [weight_var, gradient_var], [weight_var], "update")
    with pytest.raises(EngineError):
        engine.waitall()
    engine.waitall()
    engine.wait_for_var(weight_var)


def test_before_it_is_reported_a_skipped_update_still_fails_what_reads_the_weight(engine) -> None:  # type: ignore[no-untyped-def]
    weight, weight_var, gradient_var, output_var = np.zeros(2), Var(), Var(), Var()
    _failed_gradient(engine, gradient_var)
    engine.push(_subtract, (weight, np.ones(2)), [weight_var, gradient_var], [weight_var], "update")
    ran: list = []
    engine.push(ran.append, (1,), [weight_var], [output_var], "forward")
    with pytest.raises(EngineError, match="'gradient' failed"):
        engine.wait_for_var(output_var)
    assert ran == []
    with pytest.raises(EngineError, match="'gradient' failed"):  # its value is garbage: every read fails
        engine.wait_for_var(output_var)


def test_a_garbage_output_keeps_failing_after_the_report_even_updated_in_place(engine) -> None:  # type: ignore[no-untyped-def]
    output, output_var = np.zeros(2), Var()
    _failed_gradient(engine, output_var)
    with pytest.raises(EngineError):
        engine.wait_for_var(output_var)
    engine.push(_add_one, (output,), [output_var], [output_var], "add_one")
    for _ in range(2):
        with pytest.raises(EngineError, match="'gradient' failed"):
            engine.wait_for_var(output_var)
    np.testing.assert_array_equal(output, 0.0)  # add_one was skipped


def test_an_in_place_update_that_itself_fails_leaves_garbage(engine) -> None:  # type: ignore[no-untyped-def]
    weight_var = Var()

    def half_written() -> None:
        raise ValueError("update boom")

    engine.push(half_written, (), [weight_var], [weight_var], "update")
    for _ in range(2):
        with pytest.raises(EngineError, match="'update' failed"):
            engine.wait_for_var(weight_var)


def test_a_weight_overwritten_from_a_failed_update_keeps_its_value_once_reported(engine) -> None:  # type: ignore[no-untyped-def]
    # w[:] = w - lr * g: the copy into w reads only the failed temporary, yet w held its value
    weight, weight_var, temporary_var = np.full(2, 5.0), Var(holds_value=True), Var()
    _failed_gradient(engine, temporary_var)  # w - lr * g, failed
    engine.push(np.copyto, (weight, np.zeros(2)), [temporary_var], [weight_var], "copy")
    with pytest.raises(EngineError, match="'gradient' failed"):
        engine.wait_for_var(weight_var)
    engine.wait_for_var(weight_var)
    np.testing.assert_array_equal(weight, 5.0)


def test_a_fresh_output_of_a_skipped_operation_stays_garbage(engine) -> None:  # type: ignore[no-untyped-def]
    output_var, input_var = Var(), Var()
    _failed_gradient(engine, input_var)
    engine.push(lambda: None, (), [input_var], [output_var], "never_ran")
    for _ in range(2):
        with pytest.raises(EngineError, match="'gradient' failed"):
            engine.wait_for_var(output_var)


def test_an_error_raised_by_several_waits_shows_each_wait_once_in_its_traceback(engine) -> None:  # type: ignore[no-untyped-def]
    import traceback

    output_var = Var()
    _failed_gradient(engine, output_var)
    lengths = []
    for _ in range(3):
        try:
            engine.wait_for_var(output_var)
        except EngineError as err:
            lengths.append(len(traceback.extract_tb(err.__traceback__)))
    assert len(set(lengths)) == 1, lengths  # it grew by one wait's frames each time


def test_an_update_skipped_after_the_report_is_reported_again_once(engine) -> None:  # type: ignore[no-untyped-def]
    # a backward pushed after the forward's error was reported leaves the gradients stale: news
    weight, weight_var, gradient_var = np.full(2, 3.0), Var(holds_value=True), Var()
    _failed_gradient(engine, gradient_var)
    with pytest.raises(EngineError):
        engine.wait_for_var(gradient_var)
    engine.push(_subtract, (weight, np.ones(2)), [weight_var, gradient_var], [weight_var], "update")
    with pytest.raises(EngineError, match="'gradient' failed"):
        engine.wait_for_var(weight_var)
    engine.wait_for_var(weight_var)
    engine.waitall()
    np.testing.assert_array_equal(weight, 3.0)
