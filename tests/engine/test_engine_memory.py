"""What the engine keeps alive after the work is done: not the arrays of the operations it ran (an idle
worker, a failed operation's error), nor one object per failure for ever (see
lazynd.engine.unreported)."""

from __future__ import annotations

import gc
import traceback
import weakref

import numpy as np
import pytest

from lazynd.engine import NaiveEngine, ThreadedEngine
from lazynd.engine.unreported import MAX_UNREPORTED
from lazynd.engine.var import Var
from lazynd.errors import EngineError


@pytest.fixture(params=["deferring", "plain", "naive"])
def engine(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    made = NaiveEngine() if request.param == "naive" else ThreadedEngine(policy=request.param)
    yield made
    made.shutdown()


def _double(array: np.ndarray) -> None:
    array *= 2


def test_an_idle_worker_does_not_keep_the_arrays_of_the_last_operation_it_ran(engine) -> None:  # type: ignore[no-untyped-def]
    array, var = np.ones(1000), Var()
    engine.push(_double, (array,), [], [var], "double")
    engine.wait_for_var(var)
    used = weakref.ref(array)
    del array
    gc.collect()
    assert used() is None


def _explode_with(array: np.ndarray) -> None:
    temporary = array * 2  # a kernel's local: held by the traceback's frame
    raise ValueError(f"boom on {temporary.shape}")


def _push_failure(engine, output: Var) -> weakref.ref:  # type: ignore[no-untyped-def]
    """Push an operation that fails on a fresh array; return a weak reference to that array."""
    array = np.ones(1000)
    engine.push(_explode_with, (array,), [], [output], "explode")
    return weakref.ref(array)


def test_a_kept_failed_output_does_not_keep_the_arrays_its_operation_used(engine) -> None:  # type: ignore[no-untyped-def]
    output = Var()
    used = _push_failure(engine, output)
    with pytest.raises(EngineError, match="boom"):
        engine.wait_for_var(output)
    gc.collect()
    assert output.exc is not None  # the output is garbage: its error stays
    assert used() is None


def test_an_unreported_error_does_not_keep_the_arrays_its_operation_used(engine) -> None:  # type: ignore[no-untyped-def]
    used = _push_failure(engine, Var())  # the output is dropped at once: only waitall reports it
    engine.wait_idle()
    gc.collect()
    assert used() is None
    with pytest.raises(EngineError, match="boom"):
        engine.waitall()


def test_the_error_still_shows_where_the_operation_raised(engine) -> None:  # type: ignore[no-untyped-def]
    output = Var()
    _push_failure(engine, output)
    with pytest.raises(EngineError) as caught:
        engine.wait_for_var(output)
    printed = "".join(traceback.format_exception(caught.value))
    assert "in _explode_with" in printed
    assert 'raise ValueError(f"boom on {temporary.shape}")' in printed


def test_errors_no_wait_reports_stay_bounded_and_are_all_counted(engine) -> None:  # type: ignore[no-untyped-def]
    failures = 3 * MAX_UNREPORTED
    for _ in range(failures):
        _push_failure(engine, Var())
    engine.wait_idle()
    assert len(engine._unreported._errors) <= MAX_UNREPORTED
    with pytest.raises(EngineError, match="boom") as caught:
        engine.waitall()
    assert f"{failures - 1} more operator(s) failed since the last wait" in caught.value.__notes__
    engine.waitall()  # every one counts as reported


def test_an_error_on_a_live_var_is_kept_past_the_bound(engine) -> None:  # type: ignore[no-untyped-def]
    # a weight whose update was skipped counts its error until a wait reports it: never let go
    weight, weight_var, gradient_var = np.full(2, 3.0), Var(holds_value=True), Var()
    engine.push(_explode_with, (np.ones(2),), [], [gradient_var], "gradient")
    engine.push(np.subtract, (weight, 1.0, weight), [weight_var, gradient_var], [weight_var], "update")
    del gradient_var
    for _ in range(3 * MAX_UNREPORTED):
        _push_failure(engine, Var())
    engine.wait_idle()
    with pytest.raises(EngineError, match="'gradient' failed"):
        engine.wait_for_var(weight_var)
    engine.wait_for_var(weight_var)  # reported once: the weight keeps its value
    np.testing.assert_array_equal(weight, 3.0)
    with pytest.raises(EngineError):
        engine.waitall()


def test_a_note_added_to_a_raised_error_stays_on_the_copy_the_caller_caught(engine) -> None:  # type: ignore[no-untyped-def]
    first, second = Var(), Var()
    _push_failure(engine, first)
    _push_failure(engine, second)
    with pytest.raises(EngineError) as caught:  # the first error, noted "1 more operator(s) failed"
        engine.waitall()
    caught.value.add_note("the caller's note")
    with pytest.raises(EngineError) as again:  # a garbage output raises its error at every wait
        engine.wait_for_var(first)
    assert "the caller's note" not in getattr(again.value, "__notes__", [])
