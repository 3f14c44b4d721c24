"""The profiler next to MXNet 1.9.1's, as a program sees it: the names its trace gives creation
operators, the values ``set_config`` and ``dumps`` take, and the layout of ``dumps()``'s tables."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd import profiler

pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _operator_names(run) -> list[str]:
    return [event["name"] for event in profiler.trace_of(run) if event["ph"] == "X"]


def test_creation_operators_are_named_as_mxnets():
    # MXNet's trace and dumps() show nd.ones as _ones, nd.zeros(out=) as _zeros, nd.full as _full
    out = mx.nd.empty((2,))
    names = _operator_names(lambda: (mx.nd.ones((2,)), mx.nd.zeros((2,), out=out), mx.nd.full((2,), 3.0)))
    assert names == ["_ones", "_zeros", "_full"]
