"""Compiling an executor runs without Python's cyclic collector, which is left as it was found.

A bind makes a graph's worth of objects that hold no cycles; every full collection walked them
all and freed nothing: a fifth of a 1000-step ``while_loop``'s bind, most of a 4000-step one's.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
from lazynd_sym.executor.executor import Executor

S = mx.sym


@pytest.fixture
def collections() -> Iterator[list[int]]:
    seen: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(count)
    yield seen
    gc.callbacks.remove(count)


def _loop() -> tuple[S.Symbol, dict]:
    out, _ = S.contrib.foreach(lambda d, s: (S.tanh(d + s[0]), [d * s[0]]), S.var("d"), [S.var("h")])
    return out, {"d": (300, 2), "h": (2,)}


def test_a_big_bind_compiles_without_a_collection(collections: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    during: list[int] = []
    compile_graph = Executor._compile

    def watched(self: Executor) -> None:
        before = len(collections)
        compile_graph(self)
        during.extend(collections[before:])

    monkeypatch.setattr(Executor, "_compile", watched)
    out, shapes = _loop()
    args = {k: mx.nd.ones(v) for k, v in shapes.items()}
    grads = {k: mx.nd.zeros(v) for k, v in shapes.items()}
    executor = out.bind(mx.cpu(), args=args, args_grad=grads)
    assert during == []
    assert gc.isenabled()
    result = executor.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(result, np.full((300, 2), np.tanh(2.0), np.float32), rtol=1e-6)


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    out, shapes = _loop()
    gc.disable()
    try:
        out.simple_bind(mx.cpu(), **shapes)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_bind_that_fails_turns_the_collector_back_on() -> None:
    out, _ = _loop()
    with pytest.raises(mx.base.MXNetError):
        out.simple_bind(mx.cpu(), d=(3, 2), h=(5,))
    assert gc.isenabled()
