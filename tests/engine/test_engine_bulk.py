"""mx.engine.set_bulk_size / mx.engine.bulk: the most operations a merged engine operation holds (lazynd.engine.bulk)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import ThreadedEngine, merging
from lazynd.engine import policy as policy_module
from lazynd.engine.var import Var

TIMEOUT = 10.0  # generous: only a broken engine comes near it


@pytest.fixture(autouse=True)
def default_bulk_size() -> Iterator[None]:
    yield
    merging.max_parts = merging.MAX_PARTS


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedEngine]:
    """An engine whose watcher never hands the deferred operation over during a test."""
    monkeypatch.setattr(policy_module, "DEFERRED_TICK_S", 600.0)
    eng = ThreadedEngine(num_workers=2)
    yield eng
    eng.shutdown()


def _push_chain(engine: ThreadedEngine, length: int) -> tuple[threading.Event, list[str], list[list[str]]]:
    """A dependent chain behind a gated operation; the names of the merged tail's parts after each push."""
    gate, log = threading.Event(), []
    blocker = Var()

    def blocked() -> None:
        assert gate.wait(TIMEOUT)
        log.append("blocker")

    engine.push(blocked, (), [], [blocker], "blocker")
    engine.push(lambda: log.append("other"), (), [], [Var()], "other")  # the blocker goes to a worker
    previous, tails = blocker, []
    for k in range(length):
        var = Var()
        engine.push(log.append, (f"link{k}",), [previous], [var], f"link{k}")
        tail = engine.policy.tail
        tails.append([part[4] for part in tail.parts] if tail.parts is not None else [tail.name])
        previous = var
    gate.set()
    engine.wait_for_var(previous)
    return gate, log, tails


def test_under_bulk_1_a_dependent_chain_is_never_merged(engine: ThreadedEngine) -> None:
    with mx.engine.bulk(1):
        _, log, tails = _push_chain(engine, 5)
    assert tails == [[f"link{k}"] for k in range(5)]
    assert log[log.index("blocker") :] == ["blocker"] + [f"link{k}" for k in range(5)]


def test_under_a_larger_bulk_size_a_chain_merges_that_many_operations_at_most(engine: ThreadedEngine) -> None:
    with mx.engine.bulk(3):
        _, log, tails = _push_chain(engine, 5)
    assert tails == [["link0"], ["link0", "link1"], ["link0", "link1", "link2"], ["link3"], ["link3", "link4"]]
    assert log[log.index("blocker") :] == ["blocker"] + [f"link{k}" for k in range(5)]


def test_set_bulk_size_returns_the_previous_size_and_holds_for_the_process() -> None:
    assert mx.engine.set_bulk_size(4) == merging.MAX_PARTS
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(mx.engine.set_bulk_size(2)))
    thread.start()
    thread.join()
    assert seen == [4] and mx.engine.set_bulk_size(np.int64(0)) == 2 and merging.max_parts == 0


def test_bulk_restores_the_previous_size_even_when_the_block_raises() -> None:
    mx.engine.set_bulk_size(5)
    with pytest.raises(RuntimeError), mx.engine.bulk(1):
        assert merging.max_parts == 1
        raise RuntimeError("inside")
    assert merging.max_parts == 5


def test_a_size_that_is_not_an_integer_is_refused() -> None:
    with pytest.raises(mx.LazyNDError, match="set_bulk_size: 'size' must be an integer, got float"):
        mx.engine.set_bulk_size(2.5)
    assert merging.max_parts == merging.MAX_PARTS


def _small_chain() -> np.ndarray:
    x = mx.nd.zeros((4,))
    for k in range(50):
        x = x * 1.5 + k
        x += mx.nd.ones((4,)) / (k + 1)
    return x.asnumpy()


def test_results_are_the_same_at_every_bulk_size() -> None:
    results = []
    for size in (0, 1, 2, 16):
        with mx.engine.bulk(size):
            results.append(_small_chain())
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
