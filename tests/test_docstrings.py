"""The Examples blocks in the core modules' docstrings run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "lazynd.backend.blas",
    "lazynd.context",
    "lazynd.ndarray.creation",
    "lazynd.ndarray.ndarray",
    "lazynd.ndarray.serialization",
    "lazynd.random",
    "lazynd_kv.base",
    "lazynd_kv.device",
    "lazynd_kv.mpi_allreduce",
    "lazynd.monitor",
    "lazynd_sym.executor_group",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
