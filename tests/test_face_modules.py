"""MXNet's faces import as submodules (``from lazynd.module import Module``), as programs import them from ``mxnet``."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import lazynd as mx


def test_module_api_imports_from_the_module_face() -> None:
    from lazynd.module import BucketingModule, Module

    assert Module is mx.mod.Module and BucketingModule is mx.mod.BucketingModule


@pytest.mark.parametrize(
    ("face", "attribute"), [("model", "model"), ("symbol", "sym"), ("kvstore", "kv"), ("mod", "mod")]
)
def test_a_face_imported_as_a_submodule_is_the_attribute(face: str, attribute: str) -> None:
    assert importlib.import_module(f"lazynd.{face}") is getattr(mx, attribute)


def test_a_module_inside_a_face_is_loaded_once() -> None:
    # a second load of the file would make a second Module class, which isinstance checks reject
    from lazynd.module.module import Module

    assert Module is mx.mod.Module


def test_an_unknown_submodule_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("lazynd.no_such_face")


@pytest.mark.parametrize(
    ("module", "namespace"),
    [
        ("lazynd.contrib.ndarray", lambda: mx.nd.contrib),
        ("lazynd.contrib.symbol", lambda: mx.sym.contrib),
        ("lazynd.ndarray.contrib", lambda: mx.nd.contrib),
        ("lazynd.ndarray.linalg", lambda: mx.nd.linalg),
        ("lazynd.ndarray.random", lambda: mx.nd.random),
        ("lazynd.symbol.contrib", lambda: mx.sym.contrib),
        ("lazynd.symbol.linalg", lambda: mx.sym.linalg),
    ],
)
def test_an_operator_module_of_mxnet_imports_as_its_namespace(module: str, namespace: Any) -> None:
    # SSD programs pick their operators with __import__('mxnet.contrib.ndarray', fromlist=['ndarray'])
    assert importlib.import_module(module) is namespace()
    assert __import__(module, fromlist=["MultiBoxPrior"]) is namespace()


def test_operators_import_from_an_operator_module() -> None:
    from lazynd.contrib.ndarray import MultiBoxPrior
    from lazynd.symbol.contrib import MultiBoxPrior as MultiBoxPriorSymbol

    assert MultiBoxPrior(mx.nd.zeros((1, 3, 2, 2)), sizes=(0.5,)).shape == (1, 4, 4)
    assert MultiBoxPriorSymbol(mx.sym.Variable("x"), sizes=(0.5,)).infer_shape(x=(1, 3, 2, 2))[1] == [(1, 4, 4)]
