"""The Examples blocks in the packages' docstrings run as tests: every module that has any."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lazynd
import lazynd_kv
import lazynd_sym

OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _modules() -> list[str]:
    names = []
    for package in (lazynd, lazynd_sym, lazynd_kv):
        names.append(package.__name__)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(names)


def _has_examples(name: str) -> bool:
    # examples marked ``+SKIP`` (they need data, MPI or a GPU) do not count
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module)
    return any(not example.options.get(doctest.SKIP) for test in tests for example in test.examples)


MODULES = [name for name in _modules() if _has_examples(name)]


def test_examples_are_found() -> None:
    # the discovery itself must work: these modules are known to carry examples
    for name in ("lazynd.context", "lazynd_sym.symbol", "lazynd.image.transforms", "lazynd_kv.base"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=OPTIONS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
